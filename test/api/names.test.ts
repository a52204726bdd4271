/** Names from the API: IPVS-mode `kpx services` names every Service port exactly; a name the dumps give stays. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, writeBundle, servicePortName } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function resolved(mode: 'ipvs' | 'iptables', api: boolean) {
  const cluster = generateCluster({ seed: 11, services: 50 });
  const dir = mkdtempSync(join(tmpdir(), 'kpx-api-names-'));
  dirs.push(dir);
  writeBundle(cluster, mode, dir, api ? { api: {} } : {});
  return { cluster, res: await resolveServices(await loadSnapshot([dir])) };
}

/** The truth: cluster IP:port/proto → kube-proxy's ServicePortName. */
function truth(cluster: ReturnType<typeof generateCluster>): Map<string, string> {
  const m = new Map<string, string>();
  for (const s of cluster.services) for (const p of s.ports) m.set(`${s.clusterIP}:${p.port}/${p.protocol}`, servicePortName(s, p));
  return m;
}

describe('IPVS mode', () => {
  it('without the API, virtual servers carry no names (what the API adds is real)', async () => {
    const { res } = await resolved('ipvs', false);
    expect(res.services.filter((s) => s.namespace === null).length).toBeGreaterThan(20);
  }, 60_000);

  it('with the API, every Service port is named, and named exactly', async () => {
    const { cluster, res } = await resolved('ipvs', true);
    const want = truth(cluster);
    expect(res.services.length).toBeGreaterThanOrEqual(want.size);
    for (const s of res.services) {
      expect(s.namespace, s.id).not.toBeNull();
      const spn = s.portName ? `${s.namespace}/${s.name}:${s.portName}` : `${s.namespace}/${s.name}`;
      if (s.clusterIP !== null) expect(spn, s.id).toBe(want.get(`${s.clusterIP}:${s.port}/${s.protocol}`));
      else expect([...want.values()], s.id).toContain(spn);
      expect(s.id).toBe(`${spn}/${s.protocol}`);
    }
    // Every Service port of the cluster is among them.
    const named = new Set(res.services.filter((s) => s.clusterIP !== null).map((s) => `${s.clusterIP}:${s.port}/${s.protocol}`));
    for (const k of want.keys()) expect(named.has(k), k).toBe(true);
    expect(res.services.some((s) => s.identifiedBy === 'api')).toBe(true);
  }, 60_000);
});

it('iptables mode: names from comments are kept (the API adds nothing there)', async () => {
  const without = await resolved('iptables', false);
  const withApi = await resolved('iptables', true);
  expect(withApi.res.services.map((s) => [s.id, s.identifiedBy])).toEqual(without.res.services.map((s) => [s.id, s.identifiedBy]));
}, 60_000);
