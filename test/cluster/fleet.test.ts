/**
 * `services --nodes` streamed (src/cluster/fleet.ts, aggregate.ts): the nodes folded in one at a
 * time give what the all-in-memory comparison gave (test/cluster/old-compare.ts, the code before
 * the change, kept as the oracle), on a generated fleet with planted disagreements, from raw dumps
 * and from summaries; and the aggregate keeps one group per Service port, its facets shared by
 * nodes that say the same — the structure that bounds memory (speed and memory are measured by
 * test/bench/fleet.mjs, not asserted here).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareFleet } from '../../src/cluster/fleet.js';
import { ServiceAggregate } from '../../src/cluster/aggregate.js';
import { loadCluster } from '../../src/cluster/load.js';
import { nodeSummary } from '../../src/cluster/summary.js';
import { servicePortKey } from '../../src/kube/types.js';
import { resolveJudged } from '../../src/judge/index.js';
import { proxyModes } from '../../src/kube/modes.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { nodeView } from '../../src/generate/cluster-bundle.js';
import { writeBundle, type Mode } from '../../src/generate/bundle.js';
import { generateCluster, type Cluster } from '../../src/generate/index.js';
import { renderNodeComparison } from '../../src/render/cluster/render.js';
import { chalkInit } from '../../src/render/colors.js';
import { renderJsonLine } from '../../src/render/json.js';
import { oldCompareNodes } from './old-compare.js';
import { tempDir } from './helpers.js';

const plain = chalkInit(false);

/** Node `i` of the cluster without some Services and with one endpoint fewer on another (a node that fell behind). */
function behind(v: Cluster, drop: number): Cluster {
  const gone = new Set(v.services.slice(drop, drop + 3).map((s) => `${s.namespace}/${s.name}`));
  const shrink = v.services.find((s) => !gone.has(`${s.namespace}/${s.name}`) && s.ports[0]?.endpoints.length >= 2)!;
  const services = v.services.filter((s) => !gone.has(`${s.namespace}/${s.name}`)).map((s) => (s === shrink ? { ...s, ports: [{ ...s.ports[0], endpoints: s.ports[0].endpoints.slice(1) }, ...s.ports.slice(1)] } : s));
  const by = new Map(services.map((s) => [`${s.namespace}/${s.name}`, s]));
  const syncOrder = v.syncOrder
    .filter((r) => !gone.has(`${r.service.namespace}/${r.service.name}`))
    .map((r) => {
      const s = by.get(`${r.service.namespace}/${r.service.name}`)!;
      return { service: s, port: s.ports[r.service.ports.indexOf(r.port)] };
    });
  return { ...v, services, syncOrder };
}

/**
 * A fleet of 7 generated nodes that disagree: two fell behind (Services missing, an endpoint
 * gone), one runs IPVS (its Service ports unnamed: they must join the named ones of the other
 * nodes, including nodes read after it), one nftables. `summaries`: these nodes as summary files.
 */
async function fleet(summaries: readonly number[]): Promise<string> {
  const gen = generateCluster({ seed: 5, services: 30, nodes: 7 });
  const dir = tempDir('fleet');
  for (const [i, n] of gen.nodes.entries()) {
    const mode: Mode = i === 2 ? 'ipvs' : i === 3 ? 'nftables' : 'iptables';
    const sub = join(dir, summaries.includes(i) ? `.${n.name}` : n.name);
    writeBundle(i === 1 || i === 5 ? behind(nodeView(gen, i), i) : nodeView(gen, i), mode, sub);
    writeFileSync(join(sub, 'manifest.json'), JSON.stringify({ kind: 'kpx-bundle', host: n.name, collectedAt: '2026-01-15T12:00:00.000Z', kpxVersion: '0.1.0', tools: {}, steps: [] }));
    if (!summaries.includes(i)) continue;
    const snapshot = await loadSnapshot([sub], { name: n.name });
    const resolution = await resolveJudged(snapshot);
    writeFileSync(join(dir, `${n.name}.json`), renderJsonLine(nodeSummary({ node: n.name, kpxVersion: '0.1.0', snapshot, resolution, modes: proxyModes(snapshot), findings: () => [] })));
  }
  return dir;
}

describe('services --nodes streamed', () => {
  it('prints what the all-in-memory comparison printed, on a fleet with disagreements, from dumps and from summaries', async () => {
    for (const summaries of [[], [0, 2, 4, 6]]) {
      const dir = await fleet(summaries);
      const streamed = await compareFleet(dir, { workers: 'never' });
      const before = await oldCompareNodes(await loadCluster(dir, { purpose: 'compare', workers: 'never' }));
      // The planted disagreements are there (else equality would prove little).
      const kinds = new Set(streamed.comparison.services.flatMap((s) => s.differences.map((d) => d.kind)));
      expect([...kinds].sort()).toEqual(expect.arrayContaining(['endpoints', 'missing-service', 'mode']));
      expect(streamed.comparison.differences.length).toBe(2);
      expect(streamed.comparison.nodes.length).toBe(7);
      expect(JSON.stringify(streamed.comparison)).toBe(JSON.stringify(before));
      expect(renderNodeComparison(streamed.comparison, plain, { all: true, width: 100 })).toBe(renderNodeComparison(before, plain, { all: true, width: 100 }));
      expect(streamed.skipped).toEqual([]);
    }
  }, 240_000);

  it('a summary that cannot be read is skipped with its path and reason; the others are compared', async () => {
    const dir = await fleet([0, 4]);
    writeFileSync(join(dir, 'zz-broken.json'), '{"kind":"kpx-node-summary","schemaVersion":1,"node":"zz-broken","files":[');
    const streamed = await compareFleet(dir, { workers: 'never' });
    expect(streamed.skipped).toEqual([{ node: 'zz-broken', dir: join(dir, 'zz-broken.json'), reason: expect.stringMatching(/^not JSON/) as unknown as string }]);
    expect(streamed.comparison.nodes.length).toBe(7);
  }, 240_000);
});

describe('the aggregate', () => {
  it('keeps one group per Service port and one facet per distinct view, however many identical nodes are added', async () => {
    const gen = generateCluster({ seed: 3, services: 12, nodes: 3 });
    const dir = tempDir('agg');
    mkdirSync(dir, { recursive: true });
    writeBundle(nodeView(gen, 0), 'iptables', dir);
    const { services } = await resolveJudged(await loadSnapshot([dir], { name: 'n' }));
    const ports = new Set(services.map((s) => `${servicePortKey(s)}|v${s.family}`)).size;
    expect(ports).toBeGreaterThan(10);
    const sizes = [1, 5, 40].map((count) => {
      const agg = new ServiceAggregate();
      for (let i = 0; i < count; i++) agg.addNode(`node-${String(i).padStart(2, '0')}`, services);
      const groups = agg.groups();
      expect(groups.length).toBe(ports);
      // One member per node and Service port (what the output lists per node), no more.
      for (const g of groups) expect(g.members.map((m) => m.node)).toEqual([...Array(count).keys()]);
      // …and every node refers to the same facet object: one kept, not one per node.
      for (const g of groups) expect(new Set(g.members.map((m) => m.facet)).size).toBe(1);
      expect(agg.memberCount).toBe(count * ports);
      return { groups: agg.groupCount, facets: agg.facetCount };
    });
    // Identical nodes share their facets: the aggregate does not grow with the node count.
    expect(sizes[1]).toEqual(sizes[0]);
    expect(sizes[2]).toEqual(sizes[0]);
    expect(sizes[0].facets).toBe(ports);
  }, 120_000);

  it('a node that differs adds its own facet for the Service ports it sees differently, and only those', async () => {
    const gen = generateCluster({ seed: 3, services: 12, nodes: 3 });
    const a = tempDir('agg-a');
    const b = tempDir('agg-b');
    writeBundle(nodeView(gen, 0), 'iptables', a);
    writeBundle(nodeView(gen, 1), 'iptables', b);
    const sa = (await resolveJudged(await loadSnapshot([a], { name: 'a' }))).services;
    const sb = (await resolveJudged(await loadSnapshot([b], { name: 'b' }))).services;
    const agg = new ServiceAggregate();
    for (let i = 0; i < 20; i++) agg.addNode(`a${i}`, sa);
    const before = agg.facetCount;
    agg.addNode('b', sb);
    // Node b marks its own endpoints local: the Service ports with an endpoint on a or b differ, the others share.
    const differing = sb.filter((s, i) => s.endpoints.some((e) => e.local) || sa[i]?.endpoints.some((e) => e.local)).length;
    expect(differing).toBeGreaterThan(0);
    expect(agg.facetCount - before).toBeGreaterThan(0);
    expect(agg.facetCount - before).toBeLessThanOrEqual(differing);
  }, 120_000);
});
