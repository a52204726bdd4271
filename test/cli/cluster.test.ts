/** The cluster commands through the binary: --nodes comparison, --node cross-node trace, --node selection. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-cluster-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const dir = join(tmp, 'cluster');
const nodes = writeClusterBundle(generateCluster({ seed: 3, services: 10, nodes: 3 }), 'iptables', dir);

describe('cluster bundles on the command line', () => {
  it('services --nodes: every node agrees on a generated cluster, in text and JSON', async () => {
    const t = await cli(['services', '--nodes', '-i', dir]);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/3 nodes: .*k8s-worker2/);
    const j = JSON.parse((await cli(['services', '--nodes', '-i', dir, '-o', 'json'])).stdout);
    expect(j.nodes).toHaveLength(3);
    expect(j.services.length).toBeGreaterThan(20);
    expect(j.services.every((s: { missingOn: string[] }) => s.missingOn.length === 0)).toBe(true);
  });

  it('trace --node follows a packet from one node to the node that owns the pod', async () => {
    const doc = JSON.parse((await cli(['trace', '10.96.0.10:53/udp', '-i', dir, '--node', nodes[0], '-o', 'json'])).stdout);
    expect(doc.traces).toHaveLength(1);
    const j = doc.traces[0];
    const across = j.paths.find((p: { nodes: string[] }) => p.nodes.length === 2);
    expect(across.nodes[0]).toBe(nodes[0]);
    expect(across.end).toMatchObject({ kind: 'pod' });
    expect(j.paths.reduce((n: number, p: { probability: number }) => n + p.probability, 0)).toBeCloseTo(1, 9);
  });

  it('trace --node text is answer first: the verdict and every path, the first node\'s shared road once, 120 columns', async () => {
    const r = await cli(['trace', '10.96.0.10:53/udp', '-i', dir, '--node', nodes[0]]);
    const l = r.stdout.split('\n');
    expect(l[1]).toMatch(/^ {2}verdict {2}DNAT 100% to 2 endpoints: 1 on k8s-\S+ \(50%\), 1 on k8s-\S+ \(50%\); no masquerade$/);
    const heads = l.slice(4, l.indexOf('', 4));
    expect(heads).toHaveLength(2);
    expect(heads.every((h) => /^ {4}50% {2}DNAT → 10\.244\.\d+\.\d+:53 {2}.*to a pod on k8s-\S+ via cni0$/.test(h))).toBe(true);
    expect(l.findIndex((x) => x.startsWith('  assume'))).toBeGreaterThan(5);
    expect(l.filter((x) => /^ {4}nat\/PREROUTING {2}jump KUBE-SERVICES/.test(x))).toHaveLength(1);
    expect(l.filter((x) => x.length > 120)).toEqual([]);
  });

  it('other commands read one node of a bundle with --node, and ask for it when missing', async () => {
    expect(JSON.parse((await cli(['services', '-i', dir, '--node', nodes[1], '-o', 'json'])).stdout).services.length).toBeGreaterThan(20);
    const r = await cli(['services', '-i', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--node/);
  });
});
