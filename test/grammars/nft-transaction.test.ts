/**
 * The `nft -f` transaction form: each command applied as nft applies it (semantics checked
 * against nftables 1.0.6 in a namespace; the differential test in test/kernel checks them again).
 */
import { describe, expect, it } from 'vitest';
import { nftParser } from '../../src/extract/nft.js';
import { detectFormat } from '../../src/load/index.js';
import type { NftChain, NftRuleset, NftTable } from '../../src/model/nft.js';

function read(text: string) {
  const p = nftParser.parse(text, 'tx.nft');
  const errors = p.diagnostics.filter((d) => d.severity === 'error');
  return { p, data: p.data as NftRuleset, errors, errorLines: errors.map((d) => d.line) };
}
const table = (r: NftRuleset, name = 't', family = 'ip'): NftTable => {
  const t = r.tables.find((x) => x.name === name && x.family === family);
  if (!t) throw new Error(`no table ${family} ${name}`);
  return t;
};
const chain = (t: NftTable, name: string): NftChain => {
  const c = t.chains.find((x) => x.name === name);
  if (!c) throw new Error(`no chain ${name}`);
  return c;
};
const raws = (c: NftChain) => c.rules.map((r) => r.raw);

const BASE = `add table ip t { comment "c1" ; }
add chain ip t a { type filter hook input priority -110 ; }
add chain ip t b
add set ip t s { type ipv4_addr ; comment "x" ; }
add map ip t m { type ipv4_addr . inet_proto . inet_service : verdict ; }
add rule ip t a ip daddr { 10.0.0.0/8, 1.2.3.4 } drop
add rule ip t a numgen random mod 2 vmap { 0 : goto b, 1 : goto b }
add rule ip t a jump b
add element ip t s { 1.2.3.4 }
add element ip t m { 1.2.3.4 . tcp . 80 comment "hi" : goto b }
add rule ip t b ip daddr @s accept
`;

describe('nft -f transaction form', () => {
  it('builds tables, chains (hook, priority, default policy), sets, maps, elements and rules', () => {
    const { p, data, errors } = read(BASE);
    expect(errors).toEqual([]);
    expect(p.variant).toBe('transaction');
    expect(p.counts).toMatchObject({ commands: 11, tables: 1, chains: 2, rules: 4, sets: 2, elements: 2 });
    const t = table(data);
    expect(t.comment).toBe('c1');
    expect(chain(t, 'a')).toMatchObject({ type: 'filter', hook: 'input', priority: -110, policy: 'accept', line: 2 });
    expect(chain(t, 'b').policy).toBeUndefined();
    expect(raws(chain(t, 'a'))).toEqual(['ip daddr { 10.0.0.0/8, 1.2.3.4 } drop', 'numgen random mod 2 vmap { 0 : goto b, 1 : goto b }', 'jump b']);
    const m = t.sets.find((s) => s.name === 'm')!;
    expect(m).toMatchObject({ kind: 'map', keyType: ['ipv4_addr', 'inet_proto', 'inet_service'], valueType: 'verdict' });
    expect(m.elements).toEqual([expect.objectContaining({ key: ['1.2.3.4', 'tcp', '80'], comment: 'hi', value: { kind: 'verdict', verdict: 'goto', chain: 'b' } })]);
    expect(chain(t, 'b').rules[0].exprs[0]).toMatchObject({ kind: 'match', right: { kind: 'set-ref', name: 's' } });
  });

  it('is recognised by content (and ipset save is not taken for it)', () => {
    expect(detectFormat(BASE)).toBe('nft');
    expect(detectFormat('create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536\nadd KUBE-CLUSTER-IP 10.96.0.1,tcp:443\nadd KUBE-CLUSTER-IP 10.96.0.10,udp:53\n')).toBe('ipset-save');
  });

  it('reads what the listing shows: a one-element anonymous set is a value, timeouts as nft prints them', () => {
    const { data, errors } = read(`add table ip t
add chain ip t c
add set ip t aff { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
add rule ip t c ip daddr { 10.96.0.0/12 } drop
`);
    expect(errors).toEqual([]);
    const t = table(data);
    expect(t.sets[0]).toMatchObject({ timeout: '3h', flags: ['dynamic', 'timeout'] });
    expect(chain(t, 'c').rules[0].exprs[0]).toMatchObject({ right: { kind: 'value', text: '10.96.0.0/12' } });
  });

  it('add of an existing table keeps its comment; create of an existing one is refused', () => {
    const { data, errors } = read(`${BASE}add table ip t { comment "c2" ; }\ncreate table ip t\n`);
    expect(table(data).comment).toBe('c1');
    expect(errors.map((e) => [e.line, e.code])).toEqual([[13, 'nft/object-exists']]);
    expect(errors[0].column).toBe(17);
  });

  it('re-adding a base chain changes its policy only; another hook is refused; create of an existing chain is refused', () => {
    const { data, errorLines, errors } = read(`${BASE}add chain ip t a { type filter hook input priority -110 ; policy drop ; }
add chain ip t a { type filter hook output priority -110 ; }
create chain ip t b
`);
    expect(chain(table(data), 'a')).toMatchObject({ policy: 'drop', hook: 'input' });
    expect(errorLines).toEqual([13, 14]);
    expect(errors.map((e) => e.code)).toEqual(['nft/not-supported', 'nft/object-exists']);
  });

  it('flush chain empties it; delete chain takes its rules with it unless something still jumps to it', () => {
    const { data, errorLines, errors } = read(`${BASE}add chain ip t c
add rule ip t c accept
delete chain ip t c
delete chain ip t b
flush chain ip t a
delete chain ip t zz
destroy chain ip t zz
`);
    const t = table(data);
    expect(t.chains.map((c) => c.name)).toEqual(['a', 'b']);
    expect(chain(t, 'a').rules).toEqual([]);
    // b is referenced by the map element even after `flush chain a` removed the jumps (line 15 is before the flush)
    expect(errorLines).toEqual([15, 17]);
    expect(errors.map((e) => e.code)).toEqual(['nft/object-busy', 'nft/no-such-object']);
  });

  it('rules by position and handle: handles are allocated per table as the kernel does (anonymous sets included)', () => {
    // handles: a=1 b=2 s=3 m=4, anon set 5, rule 6, anon map 7, rule 8, rule 9, rule (in b) 10
    const { data, errors } = read(`${BASE}delete rule ip t a handle 8
insert rule ip t a counter
add rule ip t a handle 6 log
insert rule ip t a index 1 return
replace rule ip t a handle 9 goto b
add rule ip t a position 6 accept
delete rule ip t a handle 99
`);
    expect(raws(chain(table(data), 'a'))).toEqual(['counter', 'return', 'ip daddr { 10.0.0.0/8, 1.2.3.4 } drop', 'accept', 'log', 'goto b']);
    expect(errors.map((e) => [e.line, e.code])).toEqual([[18, 'nft/no-such-object']]);
  });

  it('sets and elements: flush, delete (busy while a rule uses it), duplicates, create, missing elements', () => {
    const { data, errors } = read(`${BASE}add element ip t s { 5.6.7.8, 1.2.3.4 }
create element ip t s { 1.2.3.4 }
delete element ip t s { 9.9.9.9 }
add element ip t m { 1.2.3.4 . tcp . 80 : goto a }
add element ip t m { 2.2.2.2 . udp . 53 : goto zz }
delete set ip t s
flush map ip t m
add set ip t s { type ipv4_addr ; flags interval ; }
delete element ip t s { 5.6.7.8 }
`);
    const t = table(data);
    expect(t.sets.find((s) => s.name === 's')!.elements.map((e) => e.key)).toEqual([['1.2.3.4']]);
    expect(t.sets.find((s) => s.name === 'm')!.elements).toEqual([]);
    expect(errors.map((e) => [e.line, e.code])).toEqual([
      [13, 'nft/object-exists'],
      [14, 'nft/no-such-object'],
      [15, 'nft/not-supported'],
      [16, 'nft/no-such-object'],
      [17, 'nft/object-busy'],
      [19, 'nft/object-exists'],
    ]);
  });

  it('rules must name chains and sets that exist', () => {
    const { errors } = read(`${BASE}add rule ip t a jump zz\nadd rule ip t a ip saddr @nope drop\nadd rule ip t zz accept\n`);
    expect(errors.map((e) => [e.line, e.column])).toEqual([
      [12, 17],
      [13, 17],
      [14, 15],
    ]);
  });

  it('jumps: never to a base chain; a loop (or a path of 16 jumps) reached from a base chain is refused, an unreached loop is not', () => {
    const { data, errors } = read(`add table ip t
add chain ip t base { type filter hook input priority 0 ; }
add chain ip t a
add chain ip t b
add rule ip t a jump b
add map ip t m { type ipv4_addr : verdict ; }
add rule ip t b ip daddr vmap @m
add rule ip t b jump a
add element ip t m { 1.1.1.1 : jump a }
add rule ip t a jump base
add rule ip t base jump a
add chain ip t c
add chain ip t d
add rule ip t c jump d
add rule ip t base jump c
add rule ip t d jump c
`);
    // lines 8 and 9 make loops no base chain reaches (accepted, as nft does); line 11 reaches them
    expect(errors.map((e) => [e.line, e.code])).toEqual([
      [10, 'nft/not-supported'],
      [11, 'nft/jump-loop'],
      [16, 'nft/jump-loop'],
    ]);
    expect(raws(chain(table(data), 'base'))).toEqual(['jump c']);
    expect(raws(chain(table(data), 'd'))).toEqual([]);
    const deep = ['add table ip t', 'add chain ip t base { type filter hook input priority 0 ; }'];
    for (let k = 1; k <= 17; k++) deep.push(`add chain ip t c${k}`);
    for (let k = 1; k < 17; k++) deep.push(`add rule ip t c${k} jump c${k + 1}`);
    // checked with nft 1.0.6 on Linux 6.x: base → c3 … c17 (15 jumps) is taken, 16 jumps are refused
    deep.push('add rule ip t base jump c3', 'add rule ip t base jump c2', 'add rule ip t base jump c1');
    expect(read(`${deep.join('\n')}\n`).errorLines).toEqual([deep.length - 1, deep.length]);
  });

  it('flush table empties chains but keeps set elements; delete table and flush ruleset remove tables', () => {
    const flushed = read(`${BASE}flush table ip t\n`).data;
    expect(table(flushed).chains.every((c) => c.rules.length === 0)).toBe(true);
    expect(table(flushed).chains).toHaveLength(2);
    expect(table(flushed).sets.map((s) => s.elements.length)).toEqual([1, 1]);
    expect(read(`${BASE}delete table ip t\n`).data.tables).toEqual([]);
    const r = read(`${BASE}add table ip6 u\nflush ruleset ip\n`).data;
    expect(r.tables.map((t) => `${t.family} ${t.name}`)).toEqual(['ip6 u']);
    expect(read(`${BASE}add table ip6 u\nflush ruleset\n`).data.tables).toEqual([]);
    expect(read('delete table ip nope\n').errorLines).toEqual([1]);
  });

  it('table blocks among commands add their chains, sets and rules (nested and multi-line forms)', () => {
    const { data, errors } = read(`${BASE}table ip t {
  chain c {
    ip saddr 1.1.1.1 drop
  }
  set s {
    type ipv4_addr
    elements = { 7.7.7.7 }
  }
}
add table ip u {
  chain x {
    type nat hook postrouting priority srcnat; policy accept;
    masquerade
  }
}
delete rule ip t c handle 12
`);
    expect(errors).toEqual([]);
    const t = table(data);
    expect(chain(t, 'c').rules).toEqual([]);
    expect(t.sets.find((s) => s.name === 's')!.elements.map((e) => e.key[0])).toEqual(['1.2.3.4', '7.7.7.7']);
    expect(chain(table(data, 'u'), 'x')).toMatchObject({ hook: 'postrouting', priority: 100, rules: [expect.objectContaining({ raw: 'masquerade' })] });
  });

  it('a bad command is reported at its line and column and the rest is still read', () => {
    const { data, errors } = read(`add table ip t
frob table ip t
add chain ip t
add rule ip t
add chain ip t ok
add element ip t s 1.2.3.4
add rule ip t ok accept
`);
    expect(errors.map((e) => [e.line, e.column])).toEqual([
      [2, 1],
      [3, 15],
      [4, 14],
      [6, 20],
    ]);
    expect(raws(chain(table(data), 'ok'))).toEqual(['accept']);
  });

  it('a listing without commands is not a transaction', () => {
    const p = nftParser.parse('table ip t {\n\tchain c {\n\t\taccept\n\t}\n}\n', 'l.nft');
    expect(p.variant).toBeUndefined();
    expect(p.counts).not.toHaveProperty('commands');
  });
});
