/**
 * Cluster bundles with the API's objects: each node is compared with the intent for that node, so
 * zone-filtered endpoint sets (topology hints) are explained, not reported as disagreement — and
 * each node agrees with its own intent (no api- finding), which checks kpx's hint rules end to end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { loadCluster } from '../../src/cluster/load.js';
import { compareNodes } from '../../src/cluster/compare.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { lintSnapshot } from '../../src/lint/run.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('kpx services --nodes with topology hints', () => {
  const cluster = generateCluster({ seed: 23, services: 40, nodes: 3 });
  const withApi = mkdtempSync(join(tmpdir(), 'kpx-api-cluster-'));
  dirs.push(withApi);
  const nodes = writeClusterBundle(cluster, 'iptables', withApi, { api: { hints: true } });

  it('each node programs its zone\'s endpoints and agrees with its intent (no api- finding)', async () => {
    for (const n of nodes) {
      const snap = await loadSnapshot([join(withApi, n)]);
      expect(snap.api?.slices.some((s) => s.endpoints.some((e) => (e.hints?.forZones.length ?? 0) > 0))).toBe(true);
      const r = await lintSnapshot(snap);
      expect(r.findings.filter((f) => f.ruleId.startsWith('api-')).map((f) => f.message), n).toEqual([]);
    }
  }, 120_000);

  it('zone-filtered endpoint sets are explained by the API, reported without it', async () => {
    const loaded = await loadCluster(withApi);
    const cmp = await compareNodes(loaded);
    expect(cmp.services.flatMap((s) => s.differences).filter((d) => d.kind === 'endpoints')).toEqual([]);
    // The same dumps without the API objects: the zone-filtered sets look like disagreement.
    const bare = mkdtempSync(join(tmpdir(), 'kpx-api-cluster-bare-'));
    dirs.push(bare);
    writeClusterBundle(cluster, 'iptables', bare, { api: { hints: true } });
    for (const n of nodes) rmSync(join(bare, n, 'api-objects.json'));
    const cmpBare = await compareNodes(await loadCluster(bare));
    expect(cmpBare.services.flatMap((s) => s.differences).filter((d) => d.kind === 'endpoints').length).toBeGreaterThan(3);
  }, 120_000);
});
