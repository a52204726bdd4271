/** Hand-written nft listings: messy pastes, every statement kind, and error diagnostics. */
import { describe, expect, it } from 'vitest';
import { nftJsonParser, nftParser } from '../../src/extract/nft.js';
import { nftJsonSniffer, nftSniffer } from '../../grammars/nft/sniff.js';
import { operandText, type NftChain, type NftRuleset } from '../../src/model/nft.js';
import type { Diagnostic } from '../../src/source/index.js';

const T = '\t';
const chain = (r: NftRuleset, name: string): NftChain => r.tables.flatMap((t) => t.chains).find((c) => c.name === name)!;
const errors = (r: { diagnostics: readonly Diagnostic[] }) => r.diagnostics.filter((d) => d.severity === 'error');

describe('nft text: messy input', () => {
  it('BOM, CRLF, fences, prompts, markdown indentation and the iptables-nft stderr warning', () => {
    const text =
      '\ufeff```\r\n' +
      'root@node1:~# nft list ruleset\r\n' +
      '   table ip filter {\r\n' +
      `   ${T}chain INPUT {\r\n` +
      `   ${T}${T}type filter hook input priority filter; policy drop;   \r\n` +
      `   ${T}${T}ct state established,related counter packets 12 bytes 3400 accept  \r\n` +
      `   ${T}}\r\n` +
      '   }\r\n' +
      '# Warning: table ip filter is managed by iptables-nft, do not touch!\r\n' +
      '```';
    const r = nftParser.parse(text, 'paste.md');
    expect(errors(r)).toEqual([]);
    const [t] = r.data.tables;
    expect(t).toMatchObject({ family: 'ip', name: 'filter', line: 3, endLine: 8, fromIptablesNft: true });
    expect(t.chains[0]).toMatchObject({ name: 'INPUT', type: 'filter', hook: 'input', priority: 0, policy: 'drop' });
    expect(t.chains[0].rules[0]).toMatchObject({
      line: 6,
      column: 6,
      counter: { packets: 12, bytes: 3400 },
      exprs: [{ kind: 'match', left: { kind: 'ct', key: 'state' }, op: 'implicit', right: { kind: 'list', items: ['established', 'related'] } }, { kind: 'counter' }, { kind: 'verdict', verdict: 'accept' }],
    });
    expect(r.data.unsupported.map((u) => [u.line, u.reason])).toEqual([
      [1, 'noise: fence'],
      [2, 'noise: prompt'],
      [9, 'noise: iptables-nft warning (stderr)'],
      [10, 'noise: fence'],
    ]);
    expect(r.diagnostics.every((d) => d.severity === 'info')).toBe(true);
  });

  it('tab-expanded 8-space indentation, wrapped element lists and `nft -a` handles', () => {
    const s8 = ' '.repeat(8);
    const text = [
      'table inet kpx { # handle 7',
      `${s8}flags dormant`,
      `${s8}set allowed { # handle 3`,
      `${s8}${s8}type ipv4_addr . inet_service`,
      `${s8}${s8}flags interval,timeout`,
      `${s8}${s8}timeout 1h`,
      `${s8}${s8}gc-interval 1m`,
      `${s8}${s8}elements = { 10.0.0.0/8 . 22 timeout 1h expires 59m58s comment "ssh",`,
      `${s8}${s8}${s8}     192.168.1.1-192.168.1.9 . 80-88 expires 10m }`,
      `${s8}}`,
      `${s8}set byname { # handle 4`,
      `${s8}${s8}typeof ip saddr . tcp dport`,
      `${s8}${s8}size 1024`,
      `${s8}}`,
      `${s8}chain ingress-eth0 { # handle 9`,
      `${s8}${s8}type filter hook ingress device "eth0" priority -500; policy accept;`,
      `${s8}${s8}ip saddr . tcp dport @allowed accept # handle 11`,
      `${s8}}`,
      '}',
    ].join('\n');
    const r = nftParser.parse(text, 'a.txt');
    expect(r.diagnostics).toEqual([]);
    const [t] = r.data.tables;
    expect(t).toMatchObject({ family: 'inet', name: 'kpx', handle: 7, flags: ['dormant'], fromIptablesNft: false });
    const [allowed, byname] = t.sets;
    expect(allowed).toMatchObject({ handle: 3, keyType: ['ipv4_addr', 'inet_service'], flags: ['interval', 'timeout'], timeout: '1h', gcInterval: '1m' });
    expect(allowed.elements).toEqual([
      { key: ['10.0.0.0/8', '22'], timeout: '1h', expires: '59m58s', comment: 'ssh', line: 8, column: 30 },
      { key: ['192.168.1.1-192.168.1.9', '80-88'], expires: '10m', line: 9, column: 30 },
    ]);
    expect(byname).toMatchObject({ typeof: 'ip saddr . tcp dport', keyType: ['ip saddr', 'tcp dport'], size: 1024 });
    const c = t.chains[0];
    expect(c).toMatchObject({ handle: 9, hook: 'ingress', device: 'eth0', priority: -500, priorityText: '-500' });
    expect(c.rules[0]).toMatchObject({ handle: 11, exprs: [{ kind: 'match', left: { kind: 'concat' }, right: { kind: 'set-ref', name: 'allowed' } }, { kind: 'verdict', verdict: 'accept', column: 47 }] });
  });

  it('statements: nat forms, marks, logs, limits, xt, queue, unknown expressions kept with columns', () => {
    const text = [
      'table ip t {',
      '\tchain c {',
      '\t\tip protocol tcp snat ip to ip saddr map { 10.0.0.0/8 : 1.1.1.1 } persistent',
      '\t\tct mark set meta mark and 0xff',
      '\t\tmeta mark set 0x00000010 log prefix "x y" level info',
      '\t\tlimit rate over 10/second burst 5 packets drop',
      '\t\tct original saddr 10.0.0.1 ip dscp set cs1',
      '\t\txt target "MASQUERADE"',
      '\t\tsocket transparent 1 osf name "Linux" accept',
      '\t\tfrobnicate 7 drop',
      '\t\tredirect to :8080 random',
      '\t\treject with tcp reset',
      '\t\treject with icmp type host-unreachable',
      '\t}',
      '}',
    ].join('\n');
    const r = nftParser.parse(text, 's.txt');
    expect(errors(r)).toEqual([]);
    const rules = chain(r.data, 'c').rules;
    expect(rules[0].exprs[1]).toMatchObject({ kind: 'snat', family: 'ip', map: { key: { kind: 'payload', field: 'saddr' }, map: { kind: 'inline', elements: [{ key: ['10.0.0.0/8'], value: { kind: 'data', parts: ['1.1.1.1'] } }] } }, flags: ['persistent'] });
    expect(rules[1].exprs[0]).toMatchObject({ kind: 'mark-set', target: 'ct', expr: { kind: 'binop', op: '&', left: { kind: 'meta', key: 'mark' } } });
    expect(rules[2].exprs[1]).toMatchObject({ kind: 'log', prefix: 'x y', level: 'info' });
    expect(rules[3].exprs[0]).toMatchObject({ kind: 'limit', rate: '10/second', over: true, burst: '5 packets' });
    expect(rules[4].exprs).toMatchObject([{ kind: 'match', left: { kind: 'ct', dir: 'original', key: 'saddr' } }, { kind: 'assign', left: { kind: 'payload', field: 'dscp' }, expr: { text: 'cs1' } }]);
    expect(rules[5].exprs[0]).toMatchObject({ kind: 'xt', match: false, name: 'MASQUERADE' });
    expect(rules[6].exprs.map((e) => e.kind === 'match' && operandText(e.left))).toEqual(['socket transparent', 'osf name', false]);
    expect(rules[7].exprs).toEqual([{ kind: 'unsupported', text: 'frobnicate 7', column: 3 }, { kind: 'verdict', verdict: 'drop', column: 16 }]);
    expect(r.diagnostics.find((d) => d.code === 'nft/unsupported-expression')).toMatchObject({ severity: 'info', line: 10, column: 3 });
    expect(rules[8].exprs[0]).toEqual({ kind: 'redirect', to: { text: ':8080', port: '8080' }, flags: ['random'], column: 3 });
    expect(rules[9].exprs[0]).toMatchObject({ kind: 'reject', with: 'tcp reset' });
    expect(rules[10].exprs[0]).toMatchObject({ kind: 'reject', with: 'icmp type host-unreachable' });
  });

  it('unsupported objects (flowtable, named counter) are kept, not dropped', () => {
    const text = ['table inet f {', '\tflowtable ft {', '\t\thook ingress priority filter', '\t\tdevices = { eth0, eth1 }', '\t}', '\tcounter hits {', '\t\tpackets 1 bytes 2', '\t}', '\tchain c {', '\t\tflow add @ft', '\t}', '}'].join('\n');
    const r = nftParser.parse(text, 'f.txt');
    expect(errors(r)).toEqual([]);
    expect(r.diagnostics.filter((d) => d.severity === 'warning').map((d) => [d.code, d.line])).toEqual([
      ['nft/unsupported-object', 2],
      ['nft/unsupported-object', 6],
    ]);
    expect(r.data.unsupported.map((u) => u.line)).toEqual([2, 3, 4, 6, 7]);
    expect(chain(r.data, 'c').rules[0].exprs[0]).toMatchObject({ kind: 'statement', name: 'flow', text: 'flow add @ft' });
  });
});

describe('nft text: errors with positions', () => {
  it('one bad rule gives one located error; the rest still parse', () => {
    const text = [
      'table ip kube-proxy {',
      '\tchain services {',
      '\t\tip daddr 10.0.0.1 jump svc-a',
      '\t\tip daddr == jump',
      '\t\tjump',
      '\t\tip saddr 10.0.0.2 comment "unterminated',
      '\t\tip daddr { 10.0.0.3, 10.0.0.4 drop',
      '\t\tip daddr 10.0.0.5 } accept',
      '\t\tip daddr 10.0.0.6 goto svc-b',
      '\t}',
      '}',
    ].join('\n');
    const r = nftParser.parse(text, 'bad.txt');
    const errs = errors(r).map((d) => [d.line, d.column, d.code]);
    expect(errs).toEqual([
      [4, 15, 'parse/unexpected-token'],
      [5, 7, 'parse/unexpected-token'],
      [6, 29, 'parse/unexpected-token'],
      [7, 12, 'parse/unclosed-brace'],
      [8, 21, 'parse/unexpected-token'],
    ]);
    const e4 = errors(r)[0];
    expect(e4).toMatchObject({ file: 'bad.txt', expected: 'value', found: 'jump' });
    expect(e4.message).toContain('ip daddr ==');
    const rules = chain(r.data, 'services').rules;
    expect(rules).toHaveLength(7);
    expect(rules[0].exprs[1]).toMatchObject({ kind: 'verdict', verdict: 'jump', chain: 'svc-a' });
    expect(rules[6]).toMatchObject({ line: 9, exprs: [{ kind: 'match', right: { text: '10.0.0.6' } }, { kind: 'verdict', verdict: 'goto', chain: 'svc-b' }] });
    expect(rules[3].comment).toBe('unterminated');
  });

  it('a dump cut in the middle of an element list warns once per open object and keeps what was read', () => {
    const text = ['table ip kube-proxy {', '\tmap service-ips {', '\t\ttype ipv4_addr . inet_proto . inet_service : verdict', '\t\telements = { 10.96.0.1 . tcp . 443 : goto svc-a,', '\t\t\t     10.96.0.10 . udp . 53 : goto sv'].join('\n');
    const r = nftParser.parse(text, 'cut.txt');
    const m = r.data.tables[0].sets[0];
    expect(m.elements.map((e) => e.key.join(' . '))).toEqual(['10.96.0.1 . tcp . 443', '10.96.0.10 . udp . 53']);
    expect(r.diagnostics.filter((d) => d.severity === 'warning').map((d) => [d.code, d.message])).toEqual([
      ['nft/truncated', 'map service-ips is not closed at end of input (dump cut?)'],
      ['nft/truncated', 'table ip kube-proxy is not closed at end of input (dump cut?)'],
    ]);
    expect(errors(r).map((d) => [d.code, d.line, d.column])).toEqual([['parse/unclosed-brace', 4, 14]]);
  });

  it('garbage outside any table and unknown table lines are errors with positions', () => {
    const r = nftParser.parse('hello world\ntable ip x {\n\tbogus 1\n}\n', 'g.txt');
    expect(errors(r).map((d) => [d.line, d.column, d.code])).toEqual([
      [1, 1, 'parse/unexpected-line'],
      [3, 2, 'parse/unexpected-line'],
    ]);
    expect(r.data.unsupported.map((u) => u.line)).toEqual([1, 3]);
    expect(r.data.tables[0]).toMatchObject({ family: 'ip', name: 'x', endLine: 4 });
  });

  it('a chain left open before the next chain is reported where it was noticed', () => {
    const r = nftParser.parse(['table ip t {', '\tchain a {', '\t\taccept', '\tchain b {', '\t\tdrop', '\t}', '}'].join('\n'), 'o.txt');
    expect(errors(r)).toMatchObject([{ code: 'parse/missing-close', line: 4, message: 'chain a is not closed before chain at line 4' }]);
    expect(r.data.tables[0].chains.map((c) => [c.name, c.rules.length])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });
});

describe('nft JSON', () => {
  const json = `{"nftables": [
  {"metainfo": {"version": "1.0.9", "json_schema_version": 1}},
  {"table": {"family": "ip", "name": "kube-proxy", "handle": 2, "comment": "rules for kube-proxy"}},
  {"map": {"family": "ip", "name": "service-ips", "table": "kube-proxy", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 5, "map": "verdict",
    "elem": [[{"elem": {"val": {"concat": ["10.96.0.10", "udp", 53]}, "comment": "kube-system/kube-dns:dns"}}, {"goto": {"target": "service-X"}}]]}},
  {"set": {"family": "ip", "name": "aff", "table": "kube-proxy", "type": "ipv4_addr", "handle": 6, "flags": ["dynamic", "timeout"], "timeout": 10800,
    "elem": [{"elem": {"val": "10.0.0.9", "timeout": 10800, "expires": 10799}}]}},
  {"chain": {"family": "ip", "table": "kube-proxy", "name": "nat-prerouting", "handle": 1, "type": "nat", "hook": "prerouting", "prio": -100, "policy": "accept"}},
  {"rule": {"family": "ip", "table": "kube-proxy", "chain": "nat-prerouting", "handle": 9, "comment": "c1",
    "expr": [{"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": ["new", "related"]}}, {"counter": {"packets": 3, "bytes": 180}},
             {"vmap": {"key": {"concat": [{"payload": {"protocol": "ip", "field": "daddr"}}, {"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "data": "@service-ips"}}]}},
  {"rule": {"family": "ip", "table": "kube-proxy", "chain": "nat-prerouting", "handle": 10,
    "expr": [{"dnat": {"addr": "fd00::1", "port": 8080}}, {"masquerade": {"flags": ["random", "persistent"]}}, {"frob": {"x": 1}}]}},
  {"flowtable": {"family": "ip", "table": "kube-proxy", "name": "ft"}}
]}`;

  it('maps to the same model with object positions', () => {
    const r = nftJsonParser.parse(json, 'r.json');
    expect(errors(r)).toEqual([]);
    expect(r.counts).toEqual({ tables: 1, chains: 1, rules: 2, sets: 2, elements: 2 });
    const [t] = r.data.tables;
    expect(t).toMatchObject({ family: 'ip', name: 'kube-proxy', comment: 'rules for kube-proxy', line: 3, handle: 2 });
    expect(t.sets[0]).toMatchObject({ kind: 'map', line: 4, valueType: 'verdict', keyType: ['ipv4_addr', 'inet_proto', 'inet_service'] });
    expect(t.sets[0].elements[0]).toMatchObject({ key: ['10.96.0.10', 'udp', '53'], comment: 'kube-system/kube-dns:dns', value: { kind: 'verdict', verdict: 'goto', chain: 'service-X' } });
    expect(t.sets[1]).toMatchObject({ timeout: '3h', flags: ['dynamic', 'timeout'] });
    expect(t.sets[1].elements[0]).toMatchObject({ key: ['10.0.0.9'], timeout: '3h', expires: '2h59m59s' });
    expect(t.chains[0]).toMatchObject({ name: 'nat-prerouting', priority: -100, hook: 'prerouting', line: 8 });
    const [r1, r2] = t.chains[0].rules;
    expect(r1).toMatchObject({ line: 9, column: 3, handle: 9, comment: 'c1', counter: { packets: 3, bytes: 180 } });
    expect(r1.exprs[0]).toMatchObject({ kind: 'match', op: 'implicit', right: { kind: 'list', items: ['new', 'related'] } });
    expect(r1.exprs[2]).toMatchObject({ kind: 'vmap', map: { kind: 'ref', name: 'service-ips' } });
    expect(r2.exprs[0]).toMatchObject({ kind: 'dnat', to: { text: '[fd00::1]:8080', addr: 'fd00::1', port: '8080' } });
    expect(r2.exprs[1]).toMatchObject({ kind: 'masquerade', flags: ['random', 'persistent'] });
    expect(r2.exprs[2]).toMatchObject({ kind: 'unsupported' });
    expect(r.diagnostics.filter((d) => d.severity === 'warning')).toMatchObject([{ code: 'nft/unsupported-object', line: 14 }]);
  });

  it('bad JSON is one located error, never a throw', () => {
    const r = nftJsonParser.parse('{"nftables": [\n  {"table": {"family": "ip",}}\n]}', 'bad.json');
    expect(errors(r)).toHaveLength(1);
    expect(errors(r)[0]).toMatchObject({ code: 'parse/bad-json', line: 2 });
    expect(r.data.tables).toEqual([]);
  });
});

describe('nft sniffers', () => {
  it('tell text listings and JSON apart', () => {
    expect(nftSniffer.sniff(['table ip kube-proxy {', '\tcomment "rules for kube-proxy"'])).toBeGreaterThan(0.5);
    expect(nftSniffer.sniff(['\tmap service-ips {', '\t\ttype ipv4_addr . inet_proto . inet_service : verdict', '\t\telements = { 1.2.3.4 . tcp . 80 : goto x }'])).toBeGreaterThan(0.3);
    expect(nftSniffer.sniff(['*nat', ':PREROUTING ACCEPT [0:0]', '-A PREROUTING -j KUBE-SERVICES', 'COMMIT'])).toBe(0);
    expect(nftJsonSniffer.sniff(['{"nftables": [{"metainfo": {"version": "1.0.6"}}]}'])).toBe(1);
    expect(nftJsonSniffer.sniff(['[{"dst": "default"}]'])).toBe(0);
  });
});
