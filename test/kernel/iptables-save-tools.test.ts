/**
 * Dumps made by the real iptables-save: load rules with iptables-restore into a namespace this
 * test creates (and deletes), save them back with iptables-save / -c / ip6tables-save, and
 * check kpx reads exactly those rules and re-emits them unchanged.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { allRules, parse, roundTripDiffs } from '../helpers/iptables.js';
import { generateCluster, iptablesSave } from '../../src/generate/index.js';

const kernel = requireKernel();

// Hand-written restore input covering the modules kube-proxy and CNIs use (labelled: not a real node).
const MIXED = `*mangle
:PREROUTING ACCEPT [0:0]
:KUBE-IPTABLES-HINT - [0:0]
-A PREROUTING -m mark --mark 0x200/0xf00 -j MARK --set-mark 0x4000/0x4000
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:cali-fw-cali1234 - [0:0]
-A INPUT -p tcp -m multiport --dports 22,80:90 -m conntrack --ctstate NEW -j ACCEPT
-A INPUT -m set --match-set kpxtest dst,dst -m comment --comment "quote \\"inside\\" it's" -j ACCEPT
-A FORWARD -o cali+ -m addrtype ! --dst-type LOCAL -g cali-fw-cali1234
-A FORWARD -p tcp --syn -m limit --limit 3/min -j LOG --log-prefix "kpx: "
-A cali-fw-cali1234 -m recent --rcheck --seconds 60 --reap --name X --rsource -j REJECT --reject-with icmp-port-unreachable
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -d 10.96.0.10/32 -p udp -m udp --dport 53 -m statistic --mode random --probability 0.33333333349 -j DNAT --to-destination 10.244.0.3:53
-A POSTROUTING -s 10.244.0.0/16 ! -d 10.244.0.0/16 -j MASQUERADE --random-fully
COMMIT
`;

describe.runIf(kernel)('kpx reads what the real iptables-save prints', () => {
  it('round-trips hand-written restore input through the kernel, with and without -c', async () => {
    await withNetns('ipt', (ns) => {
      ns.exec('ipset', ['create', 'kpxtest', 'hash:ip,port']);
      ns.exec('iptables-restore', [], MIXED);
      for (const args of [[], ['-c']]) {
        const saved = ns.exec('iptables-save', args);
        const { data, diagnostics } = parse(saved, 'iptables-save');
        expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
        expect(data.backend).toBe('nf_tables');
        expect(data.ruleCount).toBe(8);
        expect(roundTripDiffs(data)).toEqual([]);
        const rules = allRules(data);
        expect(rules.find((r) => r.chain === 'INPUT' && r.comment)?.comment).toBe(`quote "inside" it's`);
        const syn = rules.find((r) => r.matches.some((m) => m.kind === 'tcp-flags'))!;
        expect(syn.matches.find((m) => m.kind === 'tcp-flags')).toMatchObject({ mask: ['FIN', 'SYN', 'RST', 'ACK'], comp: ['SYN'] });
        const mark = rules.find((r) => r.table === 'mangle')!;
        expect(mark.target).toEqual({ kind: 'mark', connmark: false, value: 0x4000, mask: 0x4000 });
        expect(rules.find((r) => r.target?.kind === 'goto')?.target).toEqual({ kind: 'goto', chain: 'cali-fw-cali1234' });
        if (args.length) expect(rules.every((r) => r.counters)).toBe(true);
      }
    });
  });

  it('reads a generated kube-proxy node dump after the kernel loaded it (IPv4 and IPv6)', async () => {
    for (const family of [4, 6] as const) {
      const cluster = generateCluster({ seed: 7, services: 40, family });
      const text = iptablesSave(cluster);
      await withNetns(`ipt${family}`, (ns) => {
        ns.exec(family === 4 ? 'iptables-restore' : 'ip6tables-restore', [], text);
        const saved = ns.exec(family === 4 ? 'iptables-save' : 'ip6tables-save', []);
        const { data, diagnostics } = parse(saved, 'saved');
        expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
        expect(data.family).toBe(family);
        expect(roundTripDiffs(data)).toEqual([]);
        const input = parse(text, 'generated').data;
        expect(allRules(data).map((r) => r.raw)).toEqual(allRules(input).map((r) => r.raw));
      });
    }
  });

  it('reads the seed kind sample after the kernel loaded it', async () => {
    const text = readFileSync(new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url), 'utf8');
    await withNetns('iptkind', (ns) => {
      ns.exec('iptables-restore', [], text);
      const saved = ns.exec('iptables-save', []);
      const { data, diagnostics } = parse(saved, 'saved');
      expect(diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
      expect(allRules(data).map((r) => r.raw)).toEqual(allRules(parse(text).data).map((r) => r.raw));
    });
  });
});
