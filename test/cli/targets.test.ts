/**
 * One grammar of targets, one way to miss (issue 29): `services --service`, `graph --service`,
 * `report --service`, `trace` and `trace --node` read the same forms (`ns/name[:port][/proto]`,
 * `VIP[:PORT][/proto]`, `nodeport:PORT[/proto]`) through src/trace/target.ts, and a target that
 * names nothing gets "did you mean" on stderr with exit 2 in every command (3 when the dumps
 * cannot name Services at all). In-process on the samples and a generated cluster bundle.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { cli } from '../helpers/cli.js';

const SAMPLE = (name: string) => new URL(`../../samples/${name}`, import.meta.url).pathname;
const NODE = SAMPLE('iptables-mode-node');
const IPVS = SAMPLE('ipvs-mode-node');

interface Svc {
  namespace: string;
  name: string;
  portName: string;
  port: number;
  protocol: string;
}
const label = (s: Svc) => `${s.namespace}/${s.name}:${s.portName}`;

async function selected(target: string): Promise<string[]> {
  const r = await cli(['services', '-i', NODE, '-o', 'json', '--service', target]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { services: Svc[] }).services.map(label).sort();
}

async function traced(target: string): Promise<string[]> {
  const r = await cli(['trace', target, '-i', NODE, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { traces: { services: string[] }[] }).traces.flatMap((t) => t.services).sort();
}

describe('one grammar: every form names the same Service ports in services --service and trace', () => {
  const forms: [string, string[]][] = [
    ['kube-system/kube-dns', ['kube-system/kube-dns:dns', 'kube-system/kube-dns:dns-tcp', 'kube-system/kube-dns:metrics']],
    ['kube-system/kube-dns:dns', ['kube-system/kube-dns:dns']],
    ['kube-system/kube-dns:53/tcp', ['kube-system/kube-dns:dns-tcp']],
    ['kube-system/kube-dns/tcp', ['kube-system/kube-dns:dns-tcp', 'kube-system/kube-dns:metrics']],
    ['10.96.0.10', ['kube-system/kube-dns:dns', 'kube-system/kube-dns:dns-tcp', 'kube-system/kube-dns:metrics']],
    ['10.96.0.10/udp', ['kube-system/kube-dns:dns']],
    ['10.96.0.10:53', ['kube-system/kube-dns:dns', 'kube-system/kube-dns:dns-tcp']],
    ['10.96.0.10:53/udp', ['kube-system/kube-dns:dns']],
    ['nodeport:31966/tcp', ['shapes/affinity-local:http']],
  ];
  for (const [target, want] of forms) {
    it(target, async () => {
      expect(await selected(target)).toEqual(want);
      expect(await traced(target)).toEqual(want);
      // graph and report take it too (the graph names each selected Service port).
      const g = await cli(['graph', '-i', NODE, '--service', target]);
      expect(g.code, g.stderr).toBe(0);
      for (const w of want) expect(g.stdout).toContain(w);
    });
  }
});

describe('one way to miss: did you mean, on stderr, exit 2, in every command', () => {
  const misses: [string, string[]][] = [
    ['services --service', ['services', '-i', NODE, '--service', 'kube-system/kube-dsn']],
    ['services --service -o json', ['services', '-i', NODE, '-o', 'json', '--service', 'kube-system/kube-dsn']],
    ['trace', ['trace', 'kube-system/kube-dsn', '-i', NODE]],
    ['graph --service', ['graph', '-i', NODE, '--service', 'kube-system/kube-dsn']],
    ['report --service', ['report', '-i', NODE, '-o', '-', '--service', 'kube-system/kube-dsn']],
  ];
  for (const [cmd, args] of misses) {
    it(cmd, async () => {
      const r = await cli(args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('no Service kube-system/kube-dsn in the dumps\ndid you mean:\n  kube-system/kube-dns\n');
    });
  }

  it('an address near a VIP, in services --service as in trace', async () => {
    for (const args of [['services', '-i', NODE, '--service', '10.96.0.11:53'], ['trace', '10.96.0.11:53', '-i', NODE]]) {
      const r = await cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n').slice(0, 3)).toEqual(['no Service on this node at 10.96.0.11:53', 'did you mean:', expect.stringMatching(/^ {2}10\.96\.0\.1 +default\/kubernetes:https 443\/tcp$/)]);
    }
  });

  it('a name asked of IPVS dumps, which name no Service: cannot tell (exit 3), with the VIPs to use instead', async () => {
    for (const args of [['services', '-i', IPVS, '--service', 'kube-system/kube-dns'], ['trace', 'kube-system/kube-dns', '-i', IPVS]]) {
      const r = await cli(args);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^the dumps name no Service [\s\S]*VIPs\s+here:\n {2}10\./);
    }
  });

  it('a target in no form of the grammar is a usage error naming the forms', async () => {
    const r = await cli(['services', '-i', NODE, '--service', 'kube-dns']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kpx: --service expected VIP:PORT\[\/proto\], a bare VIP, ns\/name\[:port\] or nodeport:PORT\[\/proto\]/);
  });
});

describe('trace --node: the same grammar across a cluster bundle', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kpx-targets-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const dir = join(tmp, 'cluster');
  const nodes = writeClusterBundle(generateCluster({ seed: 3, services: 10, nodes: 3 }), 'iptables', dir);

  it('ns/name traces every port of the Service from the node; a near miss is exit 2 with did you mean', async () => {
    const r = await cli(['trace', 'kube-system/kube-dns', '-i', dir, '-o', 'json', '--node', nodes[1]]);
    expect(r.code, r.stderr).toBe(0);
    const traces = (JSON.parse(r.stdout) as { traces: { request: { destination: string; protocol: string; node: string } }[] }).traces;
    expect(traces.map((t) => `${t.request.destination}/${t.request.protocol}`)).toEqual(['10.96.0.10:53/udp', '10.96.0.10:53/tcp', '10.96.0.10:9153/tcp']);
    expect(traces.every((t) => t.request.node === nodes[1])).toBe(true);
    const miss = await cli(['trace', 'kube-system/kube-dsn', '-i', dir, '--node', nodes[1]]);
    expect(miss.code).toBe(2);
    expect(miss.stderr).toBe('no Service kube-system/kube-dsn in the dumps\ndid you mean:\n  kube-system/kube-dns\n');
  });
});

describe('reverse starts from a pod address', () => {
  it('a Service target is pointed to services --service and trace (exit 2)', async () => {
    const r = await cli(['reverse', 'kube-system/kube-dns', '-i', NODE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kpx: reverse starts from a pod address \(POD-IP\[:PORT\]\); for kube-system\/kube-dns ask kpx services --service kube-system\/kube-dns/);
  });
});
