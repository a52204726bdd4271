/** Cross-node traces over generated cluster bundles: flannel VXLAN, Calico IPIP, and what goes wrong. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCluster } from '../../src/cluster/load.js';
import { ownerOf } from '../../src/cluster/owner.js';
import { crossTraceJson, renderCrossTraceText } from '../../src/render/cluster/render.js';
import { traceAcross } from '../../src/cluster/trace.js';
import { chalkInit } from '../../src/render/colors.js';
import { renderJson } from '../../src/render/json.js';
import { bundle, dest } from './helpers.js';

const plain = chalkInit(false);

describe('traceAcross', () => {
  it('flannel: A DNATs, routes via B\'s flannel.1 address, B delivers on cni0 — with the dump lines', async () => {
    const { dir, cluster } = bundle({ cni: 'flannel' });
    const svc = cluster.services.find((s) => s.name === 'single-endpoint')!;
    const ep = svc.ports[0].endpoints[0];
    const A = cluster.nodes.find((n) => n.name !== ep.nodeName)!.name;
    const cl = await loadCluster(dir);
    const t = await traceAcross(cl, dest(`${svc.clusterIP}:80`), 'tcp', { node: A, from: 'pod' });
    expect(t.paths).toHaveLength(1);
    const p = t.paths[0];
    expect(p.nodes).toEqual([A, ep.nodeName]);
    expect(p.destination).toBe(`${ep.ip}:8080`);
    const bNode = cluster.nodes.find((n) => n.name === ep.nodeName)!;
    const flannelAddr = bNode.podCIDR.replace(/\/24$/, '');
    expect(p.hops[0].next).toMatchObject({ node: ep.nodeName, how: 'gateway', gateway: flannelAddr, dev: 'flannel.1' });
    expect(readFileSync(p.hops[0].next!.file, 'utf8').split('\n')[p.hops[0].next!.line - 1]).toBe(`${bNode.podCIDR} via ${flannelAddr} dev flannel.1 onlink `);
    expect(p.hops[1].arriving).toMatchObject({ src: t.origin.trace.packet.src, dst: ep.ip, dport: 8080, srcReason: 'unchanged' });
    expect(p.hops[1].trace!.packet.inInterface).toBe('flannel.1');
    expect(p.end).toMatchObject({ kind: 'pod', node: ep.nodeName, interface: 'cni0', owner: { kind: 'pod-subnet' } });
    // Whole dumps leave nothing undecided: one scenario on each node, the path holds unconditionally.
    expect(p.conditions).toEqual([]);
    expect([t.origin.trace.scenarios.length, p.hops[1].trace!.scenarios.length]).toEqual([1, 1]);
    // The pod source is in A's own pod subnet.
    expect(t.origin.trace.packet.src.startsWith(cluster.nodes.find((n) => n.name === A)!.podCIDR.split('.').slice(0, 3).join('.') + '.')).toBe(true);
    const json = JSON.parse(renderJson(crossTraceJson(t))) as { paths: { hops: { node: string }[] }[] };
    expect(json.paths[0].hops.map((h) => h.node)).toEqual([A, ep.nodeName]);
    const text = renderCrossTraceText(t, plain, { cluster: cl });
    expect(text).toContain(`DNAT → ${ep.ip}:8080  ${A} → ${ep.nodeName}, to a pod on ${ep.nodeName} via cni0`);
    expect(text).toMatch(/nat\/KUBE-SEP-\w+ {2}DNAT to [\d.]+:8080 {2}\(iptables-save\.txt:\d+\)/);
  });

  it('calico: IPIP via B\'s node address, the pod\'s own cali interface on B; from node: masquerade to A\'s address', async () => {
    const { dir, cluster } = bundle({ cni: 'calico' });
    const svc = cluster.services.find((s) => s.name === 'single-endpoint')!;
    const ep = svc.ports[0].endpoints[0];
    const a = cluster.nodes.find((n) => n.name !== ep.nodeName)!;
    const b = cluster.nodes.find((n) => n.name === ep.nodeName)!;
    const cl = await loadCluster(dir);
    const t = await traceAcross(cl, dest(`${svc.clusterIP}:80`), 'tcp', { node: a.name, from: 'pod' });
    const p = t.paths[0];
    expect(p.hops[0].next).toMatchObject({ node: b.name, gateway: b.ip, dev: 'tunl0' });
    expect(p.end).toMatchObject({ kind: 'pod', node: b.name, owner: { kind: 'pod-route' } });
    expect(p.end.interface).toMatch(/^cali/);
    const routeLine = readFileSync(p.end.owner!.file, 'utf8').split('\n')[p.end.owner!.line - 1];
    expect(routeLine).toBe(`${ep.ip} dev ${p.end.interface} scope link `);
    // A pod of A sends (one of A's /32 pod routes), not an address of another node's block.
    expect(ownerOf(cl, t.origin.trace.packet.src).owner?.node).toBe(a.name);
    const fromNode = await traceAcross(cl, dest(`${svc.clusterIP}:80`), 'tcp', { node: a.name, from: 'node' });
    const q = fromNode.paths[0];
    expect(q.hops[0].outcome.masquerade).toBe(true);
    expect(q.hops[1].arriving).toMatchObject({ srcReason: `masqueraded by ${a.name}` });
    expect(ownerOf(cl, q.hops[1].arriving!.src).owner).toMatchObject({ node: a.name, kind: 'node-address' });
  });

  it('a pod whose /32 route is gone on its node ends in that node\'s blackhole block, as a problem', async () => {
    const { dir, cluster } = bundle({ cni: 'calico', seed: 8 });
    const svc = cluster.services.find((s) => s.name === 'single-endpoint')!;
    const ep = svc.ports[0].endpoints[0];
    const A = cluster.nodes.find((n) => n.name !== ep.nodeName)!.name;
    const routes = join(dir, ep.nodeName, 'ip-route.txt');
    writeFileSync(routes, readFileSync(routes, 'utf8').split('\n').filter((l) => !l.startsWith(`${ep.ip} dev `)).join('\n'));
    const cl = await loadCluster(dir);
    const p = (await traceAcross(cl, dest(`${svc.clusterIP}:80`), 'tcp', { node: A, from: 'pod' })).paths[0];
    expect(p.nodes).toEqual([A, ep.nodeName]);
    expect(p.end).toMatchObject({ kind: 'dropped', node: ep.nodeName });
    expect(p.end.summary).toMatch(/blackhole route 10\.244\.\d+\.0\/24/);
    expect(p.problems.join('\n')).toMatch(new RegExp(`${ep.nodeName}: blackhole route for ${ep.ip.replace(/\./g, '\\.')}`));
  });

  it('an endpoint no node owns: the path leaves the bundle and says so; a local endpoint is one hop', async () => {
    const { dir, cluster } = bundle({ cni: 'flannel', seed: 5 });
    const cl = await loadCluster(dir);
    const three = cluster.services.find((s) => s.name === 'three-endpoints')!;
    const A = cluster.nodes[1].name;
    const t = await traceAcross(cl, dest(`${three.clusterIP}:80`), 'tcp', { node: A, from: 'pod' });
    expect(t.paths.map((p) => p.destination).sort()).toEqual(three.ports[0].endpoints.map((e) => `${e.ip}:8080`).sort());
    for (const p of t.paths) {
      const owner = three.ports[0].endpoints.find((e) => `${e.ip}:8080` === p.destination)!.nodeName;
      expect(p.end.node).toBe(owner);
      expect(p.nodes).toEqual(owner === A ? [A] : [A, owner]);
    }
    // Remove node B's cni0 route and flannel.1 address: nobody owns B's pods any more.
    const b = cluster.nodes.find((n) => n.name !== A && three.ports[0].endpoints.some((e) => e.nodeName === n.name));
    if (!b) throw new Error('seed 5 puts no three-endpoints pod off node A');
    const bRoutes = join(dir, b.name, 'ip-route.txt');
    writeFileSync(bRoutes, readFileSync(bRoutes, 'utf8').split('\n').filter((l) => !l.includes('dev cni0')).join('\n'));
    const bAddr = join(dir, b.name, 'ip-addr.txt');
    writeFileSync(bAddr, readFileSync(bAddr, 'utf8').split('\n').filter((l) => !l.includes('scope global flannel.1')).join('\n'));
    const cl2 = await loadCluster(dir);
    const t2 = await traceAcross(cl2, dest(`${three.clusterIP}:80`), 'tcp', { node: A, from: 'pod' });
    const lost = t2.paths.find((p) => three.ports[0].endpoints.find((e) => `${e.ip}:8080` === p.destination)!.nodeName === b.name)!;
    expect(lost.end.kind).toBe('unowned');
    expect(lost.nodes).toEqual([A]);
    expect(lost.problems.join('\n')).toMatch(/no node of this bundle owns 10\.244\.\d+\.\d+/);
  });

  it('an unknown --node is an input error naming the nodes', async () => {
    const { dir } = bundle();
    const cl = await loadCluster(dir);
    await expect(traceAcross(cl, dest('10.96.0.10:53'), 'udp', { node: 'nope', from: 'pod' })).rejects.toThrow(/--node nope: no such node in the bundle \(nodes: k8s-control-plane, k8s-worker, k8s-worker2\)/);
  });
});
