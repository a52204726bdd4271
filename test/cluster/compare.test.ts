/** Node comparison over generated cluster bundles, with planted disagreements. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareNodes } from '../../src/cluster/compare.js';
import { nodeView } from '../../src/generate/cluster-bundle.js';
import { loadCluster } from '../../src/cluster/load.js';
import { renderNodeComparison } from '../../src/render/cluster/render.js';
import { writeBundle } from '../../src/generate/bundle.js';
import { generateCluster, planPort } from '../../src/generate/index.js';
import { chalkInit } from '../../src/render/colors.js';
import { renderJson } from '../../src/render/json.js';
import { bundle, SMALL, tempDir } from './helpers.js';

const plain = chalkInit(false);

describe('compareNodes', () => {
  it('generated nodes of one cluster agree; endpoints match the truth and are local only on their node', async () => {
    const { dir, cluster } = bundle();
    const cmp = await compareNodes(await loadCluster(dir));
    expect(cmp.nodes).toEqual(cluster.nodes.map((n) => n.name));
    expect(cmp.modes).toEqual(Object.fromEntries(cluster.nodes.map((n) => [n.name, ['iptables']])));
    expect(cmp.differences).toEqual([]);
    expect(cmp.summary).toEqual({ servicePorts: cmp.services.length, agreeing: cmp.services.length, differing: 0 });
    const dns = cmp.services.find((s) => s.label === 'kube-system/kube-dns:dns')!;
    const truth = cluster.services.find((s) => s.name === 'kube-dns')!.ports.find((p) => p.name === 'dns')!.endpoints;
    expect(dns.endpoints.map((e) => [e.endpoint, e.nodes.length, e.localOn, e.owner])).toEqual(truth.map((e) => [`${e.ip}:53`, 3, [e.nodeName], e.nodeName]));
    // internalTrafficPolicy=Local: each node lists only its own endpoints, and that is no disagreement.
    const il = cmp.services.find((s) => s.label === 'shapes/internal-local:http')!;
    expect(il.differences).toEqual([]);
    expect(renderNodeComparison(cmp, plain)).toContain(`${cmp.services.length} Service ports: ${cmp.services.length} agree on every node.`);
  });

  it('finds a Service missing on a node, an endpoint on 2 of 3 nodes, a missing chain and another proxy mode', async () => {
    const gen = generateCluster({ ...SMALL, seed: 21 });
    const dir = tempDir('diff');
    const names = gen.nodes.map((n) => n.name);
    // Node 0 as generated; node 1 lacks one endpoint of three-endpoints and all of single-endpoint;
    // node 2 runs kube-proxy in IPVS mode.
    writeBundle(nodeView(gen, 0), 'iptables', join(dir, names[0]));
    const v1 = nodeView(gen, 1);
    const three = v1.services.find((s) => s.name === 'three-endpoints')!;
    const dropped = three.ports[0].endpoints[0];
    const mutated = {
      ...v1,
      services: v1.services.filter((s) => s.name !== 'single-endpoint').map((s) => (s === three ? { ...s, ports: [{ ...s.ports[0], endpoints: s.ports[0].endpoints.slice(1) }] } : s)),
    };
    mutated.syncOrder = v1.syncOrder
      .filter((r) => r.service.name !== 'single-endpoint')
      .map((r) => (r.service === three ? { service: mutated.services.find((s) => s.name === 'three-endpoints')!, port: mutated.services.find((s) => s.name === 'three-endpoints')!.ports[0] } : r));
    writeBundle(mutated, 'iptables', join(dir, names[1]));
    writeBundle(nodeView(gen, 2), 'ipvs', join(dir, names[2]));
    const cmp = await compareNodes(await loadCluster(dir));
    expect(cmp.differences).toEqual([{ kind: 'mode', message: `${names[2]} shows ipvs (others: iptables)`, nodes: [names[2]] }]);
    const single = cmp.services.find((s) => s.label === 'shapes/single-endpoint:http')!;
    expect(single.missingOn).toEqual([names[1]]);
    expect(single.differences.find((d) => d.kind === 'missing-service')).toEqual({ kind: 'missing-service', message: `not on ${names[1]} (present on 2 of 3 nodes)`, nodes: [names[1]] });
    const t = cmp.services.find((s) => s.label === 'shapes/three-endpoints:http')!;
    expect(t.differences.filter((d) => d.kind === 'endpoints')).toEqual([
      { kind: 'endpoints', message: `endpoint ${dropped.ip}:8080 on 2 of 3 nodes (missing on ${names[1]})`, nodes: [names[1]] },
    ]);
    expect(t.differences.find((d) => d.kind === 'mode')!.message).toBe(`proxy mode ipvs on ${names[2]}; iptables elsewhere`);
    expect(t.agreeing).toEqual([names[0]]);
    // A chain deleted on node 0 (its jump left dangling): the chain is missing there.
    const plan = planPort(gen, gen.services.find((s) => s.name === 'three-endpoints')!, gen.services.find((s) => s.name === 'three-endpoints')!.ports[0]);
    const ext = join(dir, names[0], 'iptables-save.txt');
    const svcChain = `KUBE-SVC-${plan.hash}`;
    const text = readFileSync(ext, 'utf8').split('\n');
    writeFileSync(ext, text.filter((l) => !l.startsWith(`:${svcChain} `) && !l.startsWith(`-A ${svcChain} `)).join('\n'));
    const cmp2 = await compareNodes(await loadCluster(dir));
    const t2 = cmp2.services.find((s) => s.label === 'shapes/three-endpoints:http');
    const all2 = renderJson(cmp2);
    expect(all2).toContain(names[0]);
    // Node 0's KUBE-SERVICES still jumps to the deleted KUBE-SVC chain: a dump the kernel could not hold (cut
    // or edited). The Service port is there, and unknown (the judgement), not missing and not healthy.
    expect(t2!.missingOn).toEqual([]);
    expect(t2!.differences.find((d) => d.kind === 'state')).toMatchObject({ nodes: [names[0]], message: expect.stringMatching(new RegExp(`^${names[0]}: unknown \\(others: healthy\\)`)) });
    // …and unknown is not "lacks the endpoints": no endpoint difference names node 0.
    expect(t2!.differences.filter((d) => d.kind === 'endpoints' && d.nodes.includes(names[0]))).toEqual([]);
    expect(t2!.agreeing).toEqual([]);
    const txt = renderNodeComparison(cmp2, plain);
    expect(txt).toContain('shapes/three-endpoints:http');
    expect(txt).toMatch(/\d+ Service ports: \d+ agree on every node, \d+ differ\./);
    rmSync(dir, { recursive: true, force: true });
  });
});
