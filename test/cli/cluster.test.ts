/** The cluster commands through the binary: --nodes comparison, --node cross-node trace, --node selection. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { kpx } from '../helpers/exec.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-cluster-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const dir = join(tmp, 'cluster');
const nodes = writeClusterBundle(generateCluster({ seed: 3, services: 10, nodes: 3 }), 'iptables', dir);

describe('cluster bundles on the command line', () => {
  it('services --nodes: every node agrees on a generated cluster, in text and JSON', () => {
    const t = kpx(['services', '--nodes', '-i', dir]);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/3 nodes: .*k8s-worker2/);
    const j = JSON.parse(kpx(['services', '--nodes', '-i', dir, '-o', 'json']).stdout);
    expect(j.nodes).toHaveLength(3);
    expect(j.services.length).toBeGreaterThan(20);
    expect(j.services.every((s: { missingOn: string[] }) => s.missingOn.length === 0)).toBe(true);
  });

  it('trace --node follows a packet from one node to the node that owns the pod', () => {
    const doc = JSON.parse(kpx(['trace', '10.96.0.10:53/udp', '-i', dir, '--node', nodes[0], '-o', 'json']).stdout);
    expect(doc.traces).toHaveLength(1);
    const j = doc.traces[0];
    const across = j.paths.find((p: { nodes: string[] }) => p.nodes.length === 2);
    expect(across.nodes[0]).toBe(nodes[0]);
    expect(across.end).toMatchObject({ kind: 'pod' });
    expect(j.paths.reduce((n: number, p: { probability: number }) => n + p.probability, 0)).toBeCloseTo(1, 9);
  });

  it('other commands read one node of a bundle with --node, and ask for it when missing', () => {
    expect(JSON.parse(kpx(['services', '-i', dir, '--node', nodes[1], '-o', 'json']).stdout).services.length).toBeGreaterThan(20);
    const r = kpx(['services', '-i', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--node/);
  });
});
