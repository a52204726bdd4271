/**
 * Listings that are not a kube-proxy dump, pasted in its place (issue 30): Cilium's service and BPF
 * load-balancer tables and tcpdump captures, real pastes under test/fixtures/foreign-pastes (each with
 * its .source). Each is recognised and said in one line (inspect, services, trace, lint): what it is
 * and that kpx reads kube-proxy's dataplane — never "unknown format", never read as rules.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseInput } from '../../src/load/index.js';
import type { ForeignDump } from '../../src/model/foreign.js';
import { cli } from '../helpers/cli.js';

const FIX = 'test/fixtures/foreign-pastes';
const read = (f: string) => readFileSync(`${FIX}/${f}`, 'utf8');
const parse = async (f: string) => {
  const text = read(f);
  const p = await parseInput({ path: f, text, bytes: text.length });
  return { format: p.format, data: p.parsed?.data as ForeignDump, counts: p.parsed?.counts, codes: p.diagnostics.filter((d) => d.severity !== 'info').map((d) => [d.severity, d.code, d.line]) };
};

const CASES: readonly [string, ForeignDump['kind'], Record<string, number>][] = [
  // cilium/cilium#16776: a CI report's `cmd: … -- cilium service list` block, `\t ` before each row.
  ['cilium-service-list-ci.txt', 'cilium-service-list', { services: 5, backends: 4 }],
  // cilium/cilium#24136: `cilium service get` (the same table), backend states (active)/(maintenance).
  ['cilium-service-get-states.txt', 'cilium-service-list', { services: 1, backends: 3 }],
  // cilium/cilium#44301: cilium-dbg, /TCP /UDP after each address, the last row cut inside its backend.
  ['cilium-dbg-service-list-cut.txt', 'cilium-service-list', { services: 8, backends: 10 }],
  // cilium/cilium#25861: a session indented as a whole, no ID column, frontends as ip:port:PROTO; the
  // same frontend in two tables counts once.
  ['cilium-frontends-as-ids.txt', 'cilium-service-list', { services: 2, backends: 3 }],
  // cilium/cilium#33076: IPv6 frontends and backends in brackets.
  ['cilium-dbg-ipv6-frontends.txt', 'cilium-service-list', { services: 7, backends: 8 }],
  // cilium/cilium#3905: the 2018 `bpf lb list`; slot-0 entries (0.0.0.0:0) are the service's own, not backends.
  ['cilium-bpf-lb-list-old.txt', 'cilium-bpf-lb-list', { services: 8, backends: 14 }],
  // cilium/cilium#31503: (REVNAT_ID) (SLOT) and [flags], the L7LB proxy port after them.
  ['cilium-dbg-bpf-lb-list-flags.txt', 'cilium-bpf-lb-list', { services: 5, backends: 3 }],
  // kubernetes/kubernetes#66432: packets with a resolved host name on one side, host(1)'s words among them.
  ['tcpdump-hostnames-nxdomain.txt', 'tcpdump', { packets: 6 }],
  // kubernetes/kubernetes#14533: tcpdump's two header lines.
  ['tcpdump-listening-header.txt', 'tcpdump', { packets: 8 }],
  // kubernetes/kubernetes#27161: packets without a time (tcpdump -t, or removed by the author).
  ['tcpdump-no-timestamps.txt', 'tcpdump', { packets: 7 }],
  // kubernetes/kubernetes#33790: tcpdump -v: the IP header line, then the addresses on an indented line.
  ['tcpdump-verbose-weave.txt', 'tcpdump', { packets: 5 }],
];

describe('not a kube-proxy dump: recognised, said, not read', () => {
  for (const [file, kind, counts] of CASES)
    it(`real: ${file} is ${kind}`, async () => {
      const r = await parse(file);
      expect(r.format).toBe('foreign');
      expect(r.data.kind).toBe(kind);
      expect(r.counts).toEqual(counts);
      // One warning at 1:1 saying what the file is; nothing of it is an error line.
      expect(r.codes).toEqual([['warning', 'input/not-kube-proxy', 1]]);
    });

  it('constructed: tcpdump -i any (interface and direction) and -tttt (a date) are the same capture', async () => {
    const text = [
      '2024-03-01 10:00:00.000001 eth0  Out IP 10.244.1.5.40000 > 10.96.0.10.53: 1+ A? kubernetes.default. (36)',
      '2024-03-01 10:00:00.000101 eth0  In  IP 10.96.0.10.53 > 10.244.1.5.40000: 1 0/0/0 (36)',
      '',
    ].join('\n');
    const p = await parseInput({ path: 'cap.txt', text, bytes: text.length });
    expect(p.format).toBe('foreign');
    expect(p.parsed?.counts).toEqual({ packets: 2 });
  });
});

describe('services, trace and lint say it in one line, exit 3', () => {
  it('cilium service list: Cilium implements the Services; kpx reads kube-proxy\'s dataplane', async () => {
    const f = `${FIX}/cilium-service-list-ci.txt`;
    for (const args of [['services', '-i', f], ['trace', '10.96.0.10:53/udp', '-i', f], ['lint', '-i', f]]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(3);
      const lines = r.stderr.trim().split('\n');
      expect(lines[0]).toBe(
        `kpx: ${f}: \`cilium service list\` output: Cilium's own load-balancer table (Cilium implements the Services, replacing kube-proxy, on this node); kpx reads kube-proxy's dataplane (iptables-save, nft list ruleset, ipvsadm -Ln and what goes with them), so this file is not used`,
      );
      expect(lines[1]).toMatch(/^kpx: cannot tell /);
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toMatch(/unknown format|cannot tell what this file is/);
    }
  });
  it('tcpdump beside an iptables-save: the capture is named as not used, the ruleset answers', async () => {
    const r = await cli(['services', '-i', `${FIX}/tcpdump-listening-header.txt`, '-i', 'samples/iptables-mode-node']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('tcpdump-listening-header.txt: tcpdump output: a packet capture, not a dump of the rules packets meet;');
    expect(r.stdout).toContain('kube-dns');
  });
  it('inspect names the listing and its counts, not an error', async () => {
    const r = await cli(['inspect', '-o', 'json', '-i', `${FIX}/cilium-bpf-lb-list-old.txt`]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { files: { format: string; variant: string; counts: Record<string, number> }[] };
    expect(j.files[0]).toMatchObject({ format: 'foreign', variant: 'cilium-bpf-lb-list', counts: { services: 8, backends: 14 } });
  });
});

describe('what an unread paste looks like (input/unknown-format)', () => {
  const say = async (text: string) => (await parseInput({ path: 'x.txt', text, bytes: text.length })).diagnostics[0].message;
  it("constructed: another program's klog, YAML of another kind, a terminal session, prose", async () => {
    expect(await say('I0101 10:00:00.000000    1234 kubelet.go:100] Starting kubelet\nE0101 10:00:01.000000    1234 pod_workers.go:200] Error syncing pod\n')).toContain(
      '(it looks like a klog-format log of a program other than kube-proxy (source files `kubelet.go`, `pod_workers.go`));',
    );
    expect(await say('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n')).toContain('(it looks like YAML of kind `Deployment`);');
    expect(await say('Hi, I tried everything and the service does not answer.\nAny idea what is going on here please?\n')).toContain('(it looks like prose, without command output kpx recognises);');
  });
});
