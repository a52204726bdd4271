/** The CLI with the API's objects beside the dumps (runs dist/ in-process: `npm run build` first). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCluster, writeBundle } from '../../src/generate/index.js';
import { cli } from '../helpers/cli.js';

const kpx = async (...args: string[]) => {
  const r = await cli(args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
};

let dir: string;
let driftDir: string;
beforeAll(() => {
  const cluster = generateCluster({ seed: 5, services: 30 });
  dir = mkdtempSync(join(tmpdir(), 'kpx-api-cli-'));
  writeBundle(cluster, 'ipvs', dir, { api: {} });
  driftDir = mkdtempSync(join(tmpdir(), 'kpx-api-cli-drift-'));
  writeBundle(cluster, 'iptables', driftDir, { api: { drift: ['endpoint-stale'] } });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(driftDir, { recursive: true, force: true });
});

describe('kpx services / trace with the API objects (IPVS node)', () => {
  it('services -o json names the virtual servers and lists the Services without rules', async () => {
    const r = await kpx('services', '-i', dir, '-o', 'json');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { services: { id: string; namespace: string | null; identifiedBy: string }[]; withoutRules: { namespace: string; name: string; reason: string }[] };
    expect(out.services.every((s) => s.namespace !== null)).toBe(true);
    expect(out.services.some((s) => s.identifiedBy === 'api')).toBe(true);
    expect(out.withoutRules.map((w) => `${w.namespace}/${w.name} ${w.reason}`).sort()).toEqual(['data/db-headless headless', 'default/mail-relay external-name']);
  });

  it('trace ns/name:port traces the Service port named by the API', async () => {
    const r = await kpx('trace', 'kube-system/kube-dns:dns', '-i', dir);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^kube-system\/kube-dns:dns\s+10\.96\.0\.10:53\/udp/);
  });

  it('a headless or ExternalName Service is explained, not "not found"', async () => {
    const h = await kpx('trace', 'data/db-headless', '-i', dir);
    expect(h.status).toBe(0);
    // Wrapped to the width under its first line: read as one sentence.
    expect(h.stdout.replace(/\n +/g, ' ')).toMatch(/^data\/db-headless is headless \(clusterIP: None\): no VIP and no dataplane rules on any node; DNS returns the pod addresses \(10\.244\./);
    const e = await kpx('services', '--service', 'default/mail-relay', '-i', dir);
    expect(e.status).toBe(0);
    expect(e.stdout).toBe('default/mail-relay is an ExternalName Service: a DNS CNAME to smtp.example.com; no dataplane rules on any node\n');
    // A Service without a selector and without endpoints: where its endpoints would come from.
    const api = JSON.parse(readFileSync(join(dir, 'api-objects.json'), 'utf8')) as { items: { kind: string; metadata: { name: string }; spec?: { selector?: unknown } }[] };
    const svc = api.items.find((o) => o.kind === 'Service' && o.metadata.name === 'no-endpoints')!;
    delete svc.spec!.selector;
    writeFileSync(join(dir, 'api-objects.json'), JSON.stringify(api, null, 2));
    const sl = await kpx('services', '--service', 'shapes/no-endpoints', '-i', dir);
    expect(sl.status).toBe(0);
    expect(sl.stdout.replace(/\n +/g, ' ')).toMatch(/shapes\/no-endpoints has no selector and no EndpointSlice lists an endpoint for it: its endpoints are written by hand or by another controller, and none exists/);
    const none = await kpx('trace', 'default/no-such', '-i', dir);
    // Not in the dumps nor in the API: a target that names nothing (exit 2, as in every command), with the nearest names when there are any.
    expect(none.status).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^no Service default\/no-such in the dumps/);
  });
});

it('kpx lint reports the stale endpoint as an error with the API object as evidence (exit 1)', async () => {
  const r = await kpx('lint', '-i', driftDir, '-o', 'json');
  expect(r.status).toBe(1);
  const out = JSON.parse(r.stdout) as { findings: { ruleId: string; severity: string; related?: { file: string }[] }[] };
  const api = out.findings.filter((f) => f.ruleId.startsWith('api-'));
  expect(api.map((f) => [f.ruleId, f.severity])).toEqual([['api-endpoint-stale', 'error']]);
  expect(api[0].related?.[0].file).toMatch(/api-objects\.json$/);
});
