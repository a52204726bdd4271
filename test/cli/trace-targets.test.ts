/**
 * `kpx trace` targets beyond VIP:PORT (issue 16): a Service by name, a NodePort on the node's
 * address (or an assumed one, said so), a bare VIP (every port it serves), "did you mean" for near
 * misses instead of a trace of nothing, and an IPv6 target on an IPv4-only bundle (cannot tell).
 * On the samples and on generated bundles of every proxy mode, checked against the generator's truth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, writeBundle, type Mode } from '../../src/generate/index.js';
import { cli } from '../helpers/cli.js';

const SAMPLE = (name: string) => new URL(`../../samples/${name}`, import.meta.url).pathname;
const NODE = SAMPLE('iptables-mode-node');
const KIND = SAMPLE('iptables-mode-kind/iptables-save.txt');

interface TraceJson {
  packet: { protocol: string; dst: string; dport: number; from: string };
  services: string[];
  assumptions: { code: string; address?: string; from?: string }[];
  outcomes: { verdict: string; destination: string; probability: number }[];
}
/** `-o json`; a target that names nothing exits 2 (the same in every command), its near misses in `noMatch`. */
const json = async (args: string[], code = 0) => {
  const r = await cli([...args, '-o', 'json']);
  expect(r.code, r.stderr).toBe(code);
  return JSON.parse(r.stdout) as { traces: TraceJson[]; noMatch?: { code: string; target: string; suggestions: { target: string; services: string[] }[] } };
};
const dests = (t: TraceJson) => t.outcomes.filter((o) => o.verdict === 'DNAT').map((o) => o.destination).sort();

describe('kpx trace ns/name[:port]', () => {
  it('without a port traces every port of the Service, from the Services the dumps name', async () => {
    const j = await json(['trace', 'kube-system/kube-dns', '-i', NODE]);
    expect(j.traces.map((t) => `${t.packet.dst}:${t.packet.dport}/${t.packet.protocol}`)).toEqual(['10.96.0.10:53/udp', '10.96.0.10:53/tcp', '10.96.0.10:9153/tcp']);
    expect(j.traces.map((t) => t.services[0])).toEqual(['kube-system/kube-dns:dns', 'kube-system/kube-dns:dns-tcp', 'kube-system/kube-dns:metrics']);
    expect(dests(j.traces[0])).toEqual(['10.244.0.2:53', '10.244.1.2:53']);
    const text = (await cli(['trace', 'kube-system/kube-dns', '-i', NODE])).stdout.split('\n');
    expect(text[0]).toBe('kube-system/kube-dns has 3 ports on this node; each is traced below:');
    expect(text.filter((l) => l.startsWith('  verdict  DNAT 100%'))).toHaveLength(3);
  });
  it('a port by name or by number; /proto narrows', async () => {
    expect((await json(['trace', 'kube-system/kube-dns:metrics', '-i', NODE])).traces.map((t) => t.packet.dport)).toEqual([9153]);
    expect((await json(['trace', 'kube-system/kube-dns:53', '-i', NODE])).traces.map((t) => t.packet.protocol)).toEqual(['udp', 'tcp']);
    expect((await json(['trace', 'kube-system/kube-dns:53/tcp', '-i', NODE])).traces.map((t) => t.services[0])).toEqual(['kube-system/kube-dns:dns-tcp']);
  });
});

describe('kpx trace nodeport:PORT', () => {
  it("is sent to the node's address from ip addr, from outside by default, and says which address", async () => {
    const [t] = (await json(['trace', 'nodeport:32658', '-i', NODE])).traces;
    expect(t.packet).toMatchObject({ dst: '172.18.0.3', dport: 32658, protocol: 'tcp', from: 'external' });
    expect(t.assumptions[0]).toEqual({ code: 'node-address', address: '172.18.0.3', from: 'ip-addr' });
    expect(t.services).toEqual(['shapes/nodeport:http']);
    expect(dests(t)).toEqual(['10.244.0.5:8080', '10.244.1.7:8080', '10.244.2.9:8080']);
  });
  it('--node-ip chooses the address; with no address known, an assumed one is traced and printed as an assumption', async () => {
    expect((await json(['trace', 'nodeport:32658', '-i', join(NODE, 'iptables-save.txt'), '--node-ip', '172.18.0.9'])).traces[0].assumptions[0]).toEqual({ code: 'node-address', address: '172.18.0.9', from: 'node-ip' });
    const [t] = (await json(['trace', 'nodeport:32658', '-i', join(NODE, 'iptables-save.txt')])).traces;
    expect(t.assumptions[0]).toEqual({ code: 'node-address', address: '192.0.2.1', from: 'assumed' });
    // Taken as the node's address: the NodePort rules match (no scenario where it is not), all three endpoints.
    expect(dests(t)).toEqual(['10.244.0.5:8080', '10.244.1.7:8080', '10.244.2.9:8080']);
    const text = (await cli(['trace', 'nodeport:32658', '-i', join(NODE, 'iptables-save.txt')])).stdout.replace(/\s+/g, ' ');
    expect(text).toContain("the node's addresses are unknown (no ip addr, no --node-ip): the NodePort is traced on 192.0.2.1, assumed to be one of them");
  });
});

describe('kpx trace VIP (no port)', () => {
  it('lists the ports the VIP serves and traces each', async () => {
    const r = await cli(['trace', '10.96.0.10', '-i', NODE]);
    const l = r.stdout.split('\n');
    expect(l.slice(0, 4)).toEqual([
      '10.96.0.10 serves 3 ports on this node; each is traced below:',
      '  10.96.0.10:53/udp             kube-system/kube-dns:dns',
      '  10.96.0.10:53/tcp             kube-system/kube-dns:dns-tcp',
      '  10.96.0.10:9153/tcp           kube-system/kube-dns:metrics',
    ]);
    expect((await json(['trace', '10.96.0.10/tcp', '-i', NODE])).traces.map((t) => t.packet.dport)).toEqual([53, 9153]);
  });
});

describe('did you mean: a near miss gets the nearest real targets, not a trace of nothing', () => {
  it('a typo in a VIP', async () => {
    const r = await cli(['trace', '10.96.0.11:53', '-i', NODE]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/verdict|road/);
    expect(r.stderr.split('\n').slice(0, 2)).toEqual(['no Service on this node at 10.96.0.11:53', 'did you mean:']);
    expect(r.stderr).toMatch(/^ {2}10\.96\.0\.10 +kube-system\/kube-dns:dns 53\/udp, kube-system\/kube-dns:dns-tcp 53\/tcp/m);
    const j = await json(['trace', '10.96.0.11:53', '-i', NODE], 2);
    expect(j.traces).toEqual([]);
    expect(j.noMatch?.code).toBe('unknown-address');
    expect(j.noMatch?.suggestions.map((s) => s.target)).toContain('10.96.0.10');
    // --exact traces it as asked.
    expect((await cli(['trace', '10.96.0.11:53', '-i', NODE, '--exact'])).stdout).toMatch(/^no Service on this node matches {2}10\.96\.0\.11:53\/tcp\n {2}verdict/);
  });
  it('a port the VIP does not serve lists the ports it does', async () => {
    const j = await json(['trace', '10.96.0.10:54', '-i', NODE], 2);
    expect(j.noMatch).toMatchObject({ code: 'port-not-served' });
    expect(j.noMatch?.suggestions.map((s) => s.target)).toEqual(['10.96.0.10:53/udp', '10.96.0.10:53/tcp', '10.96.0.10:9153/tcp']);
    expect((await json(['trace', '10.96.0.10:9153/udp', '-i', NODE], 2)).noMatch?.suggestions.map((s) => s.target)).toEqual(['10.96.0.10:53/udp', '10.96.0.10:53/tcp', '10.96.0.10:9153/tcp']);
  });
  it('a typo in a Service name, a port name, a NodePort', async () => {
    expect((await json(['trace', 'kube-system/kube-dsn', '-i', NODE], 2)).noMatch).toEqual({ kind: 'no-match', code: 'unknown-service', target: 'kube-system/kube-dsn', suggestions: [{ target: 'kube-system/kube-dns', services: [] }] });
    expect((await json(['trace', 'kube-system/kube-dns:dnss', '-i', NODE], 2)).noMatch?.suggestions.map((s) => s.target)).toEqual(['kube-system/kube-dns:dns/udp', 'kube-system/kube-dns:dns-tcp/tcp', 'kube-system/kube-dns:metrics/tcp']);
    const np = (await json(['trace', 'nodeport:32659', '-i', NODE], 2)).noMatch;
    expect(np?.code).toBe('unknown-nodeport');
    expect(np?.suggestions.map((s) => s.target)).toContain('nodeport:32658/tcp');
    expect((await cli(['trace', 'nodeport:32659', '-i', NODE])).stderr).toMatch(/^no Service on this node has nodeport:32659\ndid you mean:\n/);
  });
  it('a pod or node address is traced directly (not a typo of a VIP)', async () => {
    const r = await cli(['trace', '10.244.1.5:8080', '-i', NODE]);
    expect(r.stdout).toMatch(/^no Service on this node matches {2}10\.244\.1\.5:8080\/tcp\n {2}verdict {2}ACCEPT 100% to 1 destination: 1 on this node/);
  });
});

describe('an IPv6 target on an IPv4-only bundle', () => {
  it('cannot tell (exit 3): no IPv6 ruleset was read; no invented pod', async () => {
    for (const target of ['[fe80::a]:53', 'fe80::a', '[fd00:10:96::a]:53/udp']) {
      for (const input of [KIND, NODE, SAMPLE('nftables-mode-node')]) {
        const r = await cli(['trace', target, '-i', input]);
        expect(r.code, `${target} ${input}`).toBe(3);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/^kpx: cannot tell where .* goes: no ip6tables-save, nft or ipvsadm dump for IPv6 was read/);
        expect(r.stderr).not.toMatch(/a pod fe80/);
      }
    }
  });
});

describe('generated bundles, every proxy mode: names and NodePorts resolve to the truth', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kpx-trace-targets-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const cluster = generateCluster({ seed: 11, services: 12 });
  for (const mode of ['iptables', 'nftables', 'ipvs'] as Mode[]) {
    it(mode, async () => {
      const dir = join(tmp, mode);
      writeBundle(cluster, mode, dir);
      // A multi-port Service with endpoints and Cluster policies: every port, its endpoints.
      const svc = cluster.services.find((s) => s.ports.length > 1 && s.ports.every((p) => p.endpoints.length > 0) && s.internalTrafficPolicy === 'Cluster' && !s.sessionAffinity)!;
      expect(svc, 'a multi-port Service in the generated cluster').toBeDefined();
      // IPVS mode names no Service (ipvsadm shows addresses): the name gets the VIPs to trace instead.
      // IPVS dumps cannot name a Service: "cannot tell" (exit 3), not a typo.
      const byName = await json(['trace', `${svc.namespace}/${svc.name}`, '-i', dir], mode === 'ipvs' ? 3 : 0);
      if (mode === 'ipvs') {
        expect(byName).toMatchObject({ traces: [], noMatch: { code: 'services-unnamed' } });
        expect(byName.noMatch!.suggestions.map((s) => s.target)).toContain(svc.clusterIP);
      }
      const j = mode === 'ipvs' ? (await json(['trace', svc.clusterIP, '-i', dir])) : byName;
      expect(j.traces.map((t) => `${t.packet.dport}/${t.packet.protocol}`).sort()).toEqual(svc.ports.map((p) => `${p.port}/${p.protocol}`).sort());
      for (const t of j.traces) {
        const port = svc.ports.find((p) => p.port === t.packet.dport && p.protocol === t.packet.protocol)!;
        expect(dests(t), `${svc.name} ${port.port}`).toEqual(port.endpoints.map((e) => `${e.ip}:${port.targetPort}`).sort());
      }
      // A NodePort with Cluster policy, from outside: every endpoint.
      const np = cluster.services.find((s) => s.externalTrafficPolicy === 'Cluster' && !s.sessionAffinity && s.loadBalancerSourceRanges.length === 0 && s.ports.some((p) => p.nodePort !== null && p.endpoints.length > 0))!;
      const npPort = np.ports.find((p) => p.nodePort !== null && p.endpoints.length > 0)!;
      const [t] = (await json(['trace', `nodeport:${npPort.nodePort}/${npPort.protocol}`, '-i', dir])).traces;
      expect(t.assumptions[0]).toMatchObject({ code: 'node-address', address: cluster.node.ip, from: 'ip-addr' });
      expect(dests(t)).toEqual(npPort.endpoints.map((e) => `${e.ip}:${npPort.targetPort}`).sort());
    });
  }
});
