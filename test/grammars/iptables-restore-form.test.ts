/**
 * Restore-form input (issue 14): what iptables-restore accepts in any order, spelling and
 * abbreviation is read with the meaning of the canonical line iptables-save prints for it;
 * what it refuses is an error at file:line:column. Each expectation below was checked against
 * iptables-restore v1.8.9 (nf_tables); the kernel suite repeats this at scale
 * (test/kernel/iptables-differential.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import type { Rule } from '../../src/model/netfilter.js';

function read(rules: string[], table = 'nat') {
  const chains = new Set(rules.map((r) => r.split(' ')[1]));
  const text = [`*${table}`, ...[...chains].map((c) => `:${c} - [0:0]`), ':KUBE-MARK-MASQ - [0:0]', ':KUBE-NODEPORTS - [0:0]', ':KUBE-SEP-X - [0:0]', ...rules, 'COMMIT', ''].join('\n');
  const { data, diagnostics } = extractIptablesSave(text, 'restore.txt');
  const all: Rule[] = data.tables.flatMap((t) => t.chains.flatMap((c) => c.rules));
  const firstRule = 2 + chains.size + 3;
  return { rules: all.sort((a, b) => a.line - b.line), errors: diagnostics.filter((d) => d.severity === 'error'), firstRule };
}

const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? String(v) : v);
/** The typed reading, without the address text (`172.30.0.43` and `172.30.0.43/32` are one address). */
function meaning(r: Rule): string {
  return JSON.stringify({ matches: r.matches.map((m) => (m.kind === 'address' ? { ...m, text: undefined } : m)), target: r.target }, big);
}

/** The restore-form line reads like the canonical line iptables-save printed after loading it. */
function same(restore: string, saved: string, table = 'nat') {
  const a = read([restore], table);
  const b = read([saved], table);
  expect(a.errors).toEqual([]);
  expect(b.errors).toEqual([]);
  expect(meaning(a.rules[0])).toBe(meaning(b.rules[0]));
}

describe('restore-form rules read as iptables-save prints them back', () => {
  it("reads kube-proxy's own order: `!` after a module option's value belongs to the next option", () => {
    same(
      '-A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
      '-A KUBE-SVC-X27LE4BHSL4DOUIK ! -s 10.0.0.0/8 -d 172.30.0.43/32 -p tcp -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ',
    );
    same(
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS',
      '-A KUBE-SERVICES ! -d 127.0.0.0/8 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    );
  });

  it('reads implicit protocol matches, options after -j, long spellings and unique-prefix abbreviations', () => {
    same('-A X -p tcp --dport 80 -j ACCEPT', '-A X -p tcp -m tcp --dport 80 -j ACCEPT', 'filter');
    same('-A X -p tcp -j ACCEPT --dpo 80', '-A X -p tcp -m tcp --dport 80 -j ACCEPT', 'filter');
    same('-A X --proto tcp --source-port 22 --jump ACCEPT', '-A X -p tcp -m tcp --sport 22 -j ACCEPT', 'filter');
    same('-A X --sou 10.1.0.0/255.255.0.0 --match comment --comm x -j ACCEPT', '-A X -s 10.1.0.0/16 -m comment --comment x -j ACCEPT', 'filter');
    same('-A X -m tcp -m comment --comment x -p tcp --dport 80 -j ACCEPT', '-A X -p tcp -m tcp --dport 80 -m comment --comment x -j ACCEPT', 'filter');
    same('-A X -p tcp -m comment --comment x --dport 80 -j ACCEPT', '-A X -p tcp -m comment --comment x -m tcp --dport 80 -j ACCEPT', 'filter');
    same('-A X -j DNAT --to-d 10.1.2.3 --rand', '-A X -j DNAT --to-destination 10.1.2.3 --random');
    same('-A X -p tcp --syn -j ACCEPT', '-A X -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -j ACCEPT', 'filter');
  });

  it('reads MARK variants as the (value, mask) the kernel stores, marks in hex, decimal or octal', () => {
    same('-A X -j MARK --or-mark 0x4000', '-A X -j MARK --set-xmark 0x4000/0x4000', 'mangle');
    same('-A X -j MARK --xor-mark 16384', '-A X -j MARK --set-xmark 0x4000/0x0', 'mangle');
    same('-A X -j MARK --and-mark 0x5', '-A X -j MARK --set-xmark 0x0/0xfffffffa', 'mangle');
    same('-A X -j MARK --set-mark 5/0xff', '-A X -j MARK --set-xmark 0x5/0xff', 'mangle');
    same('-A X -j MARK --set-mark 010', '-A X -j MARK --set-xmark 0x8/0xffffffff', 'mangle');
    same('-A X -m connmark ! --mark 010/0xff -j ACCEPT', '-A X -m connmark ! --mark 0x8/0xff -j ACCEPT', 'mangle');
  });

  it('reads a probability written with 10 digits as the kernel value printed with 11', () => {
    same('-A X -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-X', '-A X -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-X');
  });
});

describe('what iptables-restore refuses is an error on that line, and the next line is read', () => {
  const refused: [string, number, string][] = [
    ['-A X -j DNAT --to-destination 10.1.2.3:80 // the backend', 43, 'Bad argument'],
    ['-A X -p tcp -m tcp --d 80 -j ACCEPT', 20, 'unknown option "--d"'],
    ['-A X -p tcp -j ACCEPT --dpo 80 --sou 1.2.3.4', 32, 'unknown option "--sou"'],
    ['-A X -j ACCEPT !', 16, 'nothing appropriate following !'],
    ['-A X ! -m tcp -p tcp -j ACCEPT', 6, 'unexpected ! flag before --match'],
    ['-A X ! -j ACCEPT', 6, 'cannot have ! before -j'],
    ['-A X ! ! -s 1.2.3.4 -j ACCEPT', 8, 'multiple consecutive ! not allowed'],
    ['-A X -p tcp -m tcp --dport 80 --dport 81 -j ACCEPT', 31, 'can only be used once'],
    ['-A X -m comment ! --comment x -j ACCEPT', 17, 'cannot be inverted'],
    ['-A X -m comment -j ACCEPT', 6, 'must be specified'],
    ['-A X -j MARK --set-mark 1 --or-mark 2', 6, 'cannot be used together'],
    ['-A X -j MARK --set-mark 0x100000000', 25, 'bad value'],
    ['-A X -s 1.2.3.4 --src 1.2.3.5 -j ACCEPT', 17, 'multiple --src flags'],
    ['-A X -m tcp --dport 80 -j ACCEPT', 6, "TCP match requires '-p tcp'"],
    ['-A X -m multiport --dports 80 -p tcp -j ACCEPT', 19, 'multiport needs'],
    ['-A X -m statistic --mode random --every 2 --probability 0.5 -j ACCEPT', 6, 'cannot be used together'],
    ['-A X -j SNAT --to-source 1.2.3.4:1000-2000', 26, 'Need TCP, UDP, SCTP or DCCP'],
    ['-A X -p tcp --dport 70000 -j ACCEPT', 21, 'invalid port'],
  ];
  for (const [line, column, reason] of refused) {
    it(line, () => {
      const { rules, errors, firstRule } = read([line, '-A Y -j ACCEPT']);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ file: 'restore.txt', line: firstRule, column });
      expect(errors[0].message).toContain(reason);
      expect(errors[0].expected).toBeTruthy();
      expect(rules.map((r) => r.chain)).toEqual(['Y']);
    });
  }

  it('keeps reading options of extensions it has no table for (any words), and pre-2009 `--opt ! value`', () => {
    const { rules, errors } = read(['-A X -m policy --dir in --pol ipsec -j ACCEPT', '-A X -p tcp -m tcp --dport ! 80 -j ACCEPT', '-A X -s ! 10.0.0.0/8 -j ACCEPT'], 'filter');
    expect(errors).toEqual([]);
    expect(rules[1].matches).toContainEqual(expect.objectContaining({ kind: 'port', negated: true }));
    expect(rules[2].matches[0]).toMatchObject({ kind: 'address', negated: true });
  });

  it('decides by the words after -m/-j/-p too, so lines of one token shape do not share a wrong plan', () => {
    // Same token types and option spellings; only the target, protocol or module name differs.
    for (const order of [0, 1]) {
      const pair = ['-A X -j DNAT --to-destination 10.1.2.3 stray', '-A X -j FOO --to-destination 10.1.2.3 stray'];
      const { errors, firstRule } = read(order ? pair.reverse() : pair);
      expect(errors.map((e) => e.line)).toEqual([firstRule + (order ? 1 : 0)]);
      const protos = ['-A X -p tcp --dport 80 -j ACCEPT', '-A X -p all --dport 80 -j ACCEPT'];
      const p = read(order ? protos.reverse() : protos, 'filter');
      expect(p.errors.map((e) => e.line)).toEqual([p.firstRule + (order ? 0 : 1)]);
      const mods = ['-A X -m comment --comment x -j ACCEPT', '-A X -m state --comment x -j ACCEPT'];
      const m = read(order ? mods.reverse() : mods, 'filter');
      expect(m.errors.map((e) => e.line)).toEqual([m.firstRule + (order ? 0 : 1)]);
    }
  });
});
