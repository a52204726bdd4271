import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { generateCluster, writeBundle } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { computeDrift } from '../../src/kube/drift.js';

for (const mode of ['iptables', 'ipvs', 'nftables'] as const) {
  it(mode, async () => {
    const c = generateCluster({ seed: 7, services: 40 });
    const dir = mkdtempSync(join(tmpdir(), 'kpx-api-'));
    writeBundle(c, mode, dir, { api: {} });
    const snap = await loadSnapshot([dir]);
    console.log(mode, snap.files.map((f) => `${f.path.split('/').pop()}:${f.format}:${f.diagnostics.length}`).join(' '));
    const res = await resolveServices(snap);
    const d = computeDrift(snap, res)!;
    console.log(mode, 'node', d.intent.node?.name, d.intent.nodeIdentifiedBy, 'families', d.families, 'ports', d.intent.ports.length, 'svc', res.services.length, 'matched', d.matched.size);
    for (const x of d.drift.slice(0, 30)) console.log(mode, x.kind, x.service, x.address, x.expected ?? '', x.found ?? '', x.why ?? '');
    console.log(mode, 'total drift', d.drift.length);
  }, 60000);
}
