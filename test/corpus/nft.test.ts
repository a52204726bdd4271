/** nft listings from ../shared/corpus (read in place). */
import { describe, expect, it } from 'vitest';
import { nftParser } from '../../src/extract/nft.js';
import { nftSniffer, nftJsonSniffer } from '../../grammars/nft/sniff.js';
import { ctStates, valueText, type NftChain, type NftRuleset, type NftTable } from '../../src/model/nft.js';
import { corpusFiles, readCorpus } from '../helpers/corpus.js';
import { splitInput } from '../../grammars/common/text.js';

function parse(pattern: RegExp) {
  const [file] = corpusFiles(pattern);
  expect(file, `corpus file ${pattern}`).toBeDefined();
  const text = readCorpus(file);
  const r = nftParser.parse(text, file);
  expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return { ...r, text };
}
const table = (r: NftRuleset, family: string, name: string): NftTable => r.tables.find((t) => t.family === family && t.name === name)!;
const chainOf = (t: NftTable, name: string): NftChain => t.chains.find((c) => c.name === name)!;

describe('nft corpus', () => {
  it('every nft sample parses without errors and is sniffed as nft', () => {
    const files = corpusFiles(/(^nft\/.*\.nft$|^generated\/nft-.*\.txt$)/);
    expect(files.length).toBe(6);
    for (const f of files) {
      const text = readCorpus(f);
      const r = nftParser.parse(text, f);
      expect(r.diagnostics.filter((d) => d.severity === 'error'), f).toEqual([]);
      expect(r.counts.rules, f).toBeGreaterThan(0);
      expect(nftSniffer.sniff(splitInput(text).lines), f).toBeGreaterThan(0.5);
      expect(nftJsonSniffer.sniff(splitInput(text).lines), f).toBe(0);
    }
  });

  it('k3s kube-proxy table with tab-expanded spaces', () => {
    const r = parse(/k3s-kube-proxy-nftables-table-spaces\.nft$/);
    expect(r.diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
    expect(r.counts).toEqual({ tables: 1, chains: 43, rules: 77, sets: 7, elements: 20 });
    const kp = table(r.data, 'ip', 'kube-proxy');
    expect(kp).toMatchObject({ comment: 'rules for kube-proxy', line: 1, endLine: 270, fromIptablesNft: false });
    expect(chainOf(kp, 'filter-prerouting')).toMatchObject({ type: 'filter', hook: 'prerouting', priority: -110, priorityText: 'dstnat - 10', policy: 'accept' });
    expect(chainOf(kp, 'nat-prerouting')).toMatchObject({ type: 'nat', hook: 'prerouting', priority: -100, priorityText: 'dstnat' });
    expect(chainOf(kp, 'nat-postrouting')).toMatchObject({ priority: 100, priorityText: 'srcnat' });
    expect(chainOf(kp, 'filter-output-post-dnat')).toMatchObject({ priority: -90, priorityText: '-90' });
    expect(chainOf(kp, 'reject-chain').comment).toBe('helper for @no-endpoint-services / @no-endpoint-nodeports');

    const svcIps = kp.sets.find((s) => s.name === 'service-ips')!;
    expect(svcIps).toMatchObject({ kind: 'map', keyType: ['ipv4_addr', 'inet_proto', 'inet_service'], valueType: 'verdict', line: 14 });
    expect(svcIps.elements).toHaveLength(9);
    expect(svcIps.elements[2]).toMatchObject({
      key: ['10.43.195.72', 'tcp', '8000'],
      value: { kind: 'verdict', verdict: 'goto', chain: 'service-P6J77WGM-riset/hellopod-np-svc/tcp/' },
      line: 19,
      column: 30,
    });
    const noEp = kp.sets.find((s) => s.name === 'no-endpoint-services')!;
    expect(noEp.elements.map((e) => [e.key.join(' . '), e.comment, e.value && valueText(e.value)])).toEqual([
      ['10.43.21.102 . tcp . 4317', 'riset/otelcol-opentelemetry-collector:otlp', 'goto reject-chain'],
      ['10.43.21.102 . tcp . 4318', 'riset/otelcol-opentelemetry-collector:otlp-http', 'goto reject-chain'],
    ]);
    expect(kp.sets.find((s) => s.name === 'cluster-ips')!.elements.map((e) => e.key[0])).toEqual([
      '10.43.0.1', '10.43.0.10', '10.43.10.165', '10.43.21.102', '10.43.22.243', '10.43.34.64', '10.43.195.72',
    ]);

    const svc = chainOf(kp, 'service-P6J77WGM-riset/hellopod-np-svc/tcp/');
    const [masq, lb] = svc.rules;
    expect(masq.exprs.map((e) => e.kind)).toEqual(['match', 'match', 'match', 'verdict']);
    expect(masq.exprs[2]).toMatchObject({ left: { kind: 'payload', protocol: 'ip', field: 'saddr' }, op: '!=', right: { kind: 'value', text: '10.42.0.0/16' } });
    expect(lb.exprs).toHaveLength(1);
    const vmap = lb.exprs[0];
    expect(vmap).toMatchObject({ kind: 'vmap', key: { kind: 'numgen', mode: 'random', mod: 9, offset: 0 }, column: 17 });
    if (vmap.kind !== 'vmap' || vmap.map.kind !== 'inline') throw new Error('inline vmap expected');
    expect(vmap.map.elements).toHaveLength(9);
    expect(vmap.map.elements.map((e) => e.key[0])).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
    expect(vmap.map.elements[8].value).toEqual({ kind: 'verdict', verdict: 'goto', chain: 'endpoint-ZWSL4UYY-riset/hellopod-np-svc/tcp/__10.42.5.164/8080' });

    const ep = chainOf(kp, 'endpoint-OLBBPMRA-riset/latency-extender-svc/tcp/http__10.42.0.174/3001');
    expect(ep.rules[1].exprs[1]).toEqual({ kind: 'dnat', to: { text: '10.42.0.174:3001', addr: '10.42.0.174', port: '3001' }, flags: [], column: 34 });
    const services = chainOf(kp, 'services');
    expect(services.rules[0].exprs[0]).toMatchObject({
      kind: 'vmap',
      key: { kind: 'concat', parts: [{ kind: 'payload', protocol: 'ip', field: 'daddr' }, { kind: 'meta', key: 'l4proto' }, { kind: 'payload', protocol: 'th', field: 'dport' }] },
      map: { kind: 'ref', name: 'service-ips' },
    });
    expect(ctStates(chainOf(kp, 'filter-input').rules[0].exprs[0])).toEqual({ negated: false, states: ['new'] });
    const cic = chainOf(kp, 'cluster-ips-check').rules;
    expect(cic[0]).toMatchObject({ comment: 'Reject traffic to invalid ports of ClusterIPs', exprs: [{ kind: 'match', right: { kind: 'set-ref', name: 'cluster-ips' } }, { kind: 'reject' }] });
    expect(chainOf(kp, 'masquerading').rules[1].exprs[0]).toMatchObject({ kind: 'mark-set', target: 'meta', expr: { kind: 'binop', op: '^', right: { text: '0x00004000' } } });
  });

  it('numgen dnat map fragment (k8s ≥1.33 shape) is a fragment, not a cut', () => {
    const r = parse(/course-ch40-service-ips-numgen-dnat-map-fragment\.nft$/);
    expect(r.diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['nft/fragment']);
    const t = r.data.tables[0];
    expect(t).toMatchObject({ family: '', name: '', implicit: true, fromIptablesNft: false });
    expect(t.sets[0].elements.map((e) => e.value && valueText(e.value))).toEqual([
      'goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp',
      'goto service-FY5PMXPG-kube-system/kube-dns/udp/dns',
      'goto service-KQQRD225-ch40/web/tcp/http',
      'goto service-2QRHZV4L-default/kubernetes/tcp/https',
      'goto service-AS2KJYAD-kube-system/kube-dns/tcp/metrics',
    ]);
    expect(t.sets[0].elements[4]).toMatchObject({ line: 8, column: 9 });
    const dnat = t.chains[0].rules[0].exprs[1];
    expect(dnat).toMatchObject({ kind: 'dnat', family: 'ip', map: { key: { kind: 'numgen', mode: 'random', mod: 3, offset: 0 } } });
    if (dnat.kind !== 'dnat' || !dnat.map || dnat.map.map.kind !== 'inline') throw new Error('dnat map expected');
    expect(dnat.map.map.elements.map((e) => [e.key, e.value])).toEqual([
      [['0'], { kind: 'data', parts: ['10.244.0.9', '8080'] }],
      [['1'], { kind: 'data', parts: ['10.244.1.7', '8080'] }],
      [['2'], { kind: 'data', parts: ['10.244.1.8', '8080'] }],
    ]);
  });

  it('generated kube-proxy tables (ip and ip6)', () => {
    const r = parse(/generated\/nft-kp\.txt$/);
    expect(r.diagnostics).toEqual([]);
    const kp = table(r.data, 'ip', 'kube-proxy');
    expect(kp.fromIptablesNft).toBe(false);
    const aff = kp.sets.find((s) => s.name.startsWith('affinity-'))!;
    expect(aff).toMatchObject({ kind: 'set', keyType: ['ipv4_addr'], size: 65535, flags: ['dynamic', 'timeout'], timeout: '3h' });
    expect(kp.sets.find((s) => s.name === 'no-endpoint-nodeports')!.elements[0]).toMatchObject({ key: ['tcp', '3002'], comment: 'ns2/svc2:p80', value: { kind: 'verdict', verdict: 'drop' } });
    const svc = chainOf(kp, 'service-ULMVA6XW-ns1/svc1/tcp/p80').rules;
    expect(svc[1].exprs).toMatchObject([
      { kind: 'match', right: { kind: 'set-ref', name: 'affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80' } },
      { kind: 'verdict', verdict: 'goto', chain: 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80' },
    ]);
    expect(chainOf(kp, 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80').rules[1].exprs[0]).toMatchObject({
      kind: 'update-set', op: 'update', set: 'affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80', key: { kind: 'payload', field: 'saddr' },
    });
    expect(chainOf(kp, 'services').rules[1].exprs[0]).toMatchObject({ kind: 'match', left: { kind: 'fib', flags: ['daddr'], result: 'type' }, op: 'implicit', right: { text: 'local' } });
    expect(chainOf(kp, 'firewall-ULMVA6XW-ns1/svc1/tcp/p80').rules[0].exprs[0]).toMatchObject({
      kind: 'match', op: '!=', right: { kind: 'set', elements: [{ key: ['5.6.7.8'] }, { key: ['203.0.113.0/25'] }] },
    });
    expect(chainOf(kp, 'masquerading').rules[0].exprs[0]).toMatchObject({
      kind: 'match', op: '==', left: { kind: 'binop', op: '&', left: { kind: 'meta', key: 'mark' }, right: { text: '0x00004000' } }, right: { text: '0x00000000' },
    });

    const r6 = parse(/generated\/nft-kp6\.txt$/);
    const kp6 = table(r6.data, 'ip6', 'kube-proxy');
    expect(kp6.chains.find((c) => c.name.startsWith('endpoint-'))!.rules[0].exprs[1]).toMatchObject({ kind: 'dnat', to: { addr: 'fd00:10:180::1', port: '80' } });
    expect(kp6.sets[0].elements[0].key).toEqual(['fd00:10:96::1', 'tcp', '443']);
  });

  it('iptables-nft ruleset is recognised as iptables-nft residue', () => {
    const r = parse(/generated\/nft-ruleset-iptables-nft\.txt$/);
    expect(r.data.tables.map((t) => `${t.family} ${t.name}`)).toEqual(['ip filter', 'ip nat', 'ip mangle', 'ip raw']);
    expect(r.data.tables.every((t) => t.fromIptablesNft)).toBe(true);
    expect(r.counts).toEqual({ tables: 4, chains: 29, rules: 84, sets: 0, elements: 0 });
    const filter = table(r.data, 'ip', 'filter');
    expect(chainOf(filter, 'INPUT')).toMatchObject({ type: 'filter', hook: 'input', priority: 0, priorityText: 'filter', policy: 'accept' });
    expect(chainOf(filter, 'INPUT').rules[1]).toMatchObject({ column: 4, counter: { packets: 0, bytes: 0 }, exprs: [{ kind: 'counter' }, { kind: 'verdict', verdict: 'jump', chain: 'KUBE-NODEPORTS' }] });
    expect(chainOf(filter, 'FORWARD').rules[1].exprs[0]).toEqual({ kind: 'xt', match: true, name: 'physdev', column: 3 });
    const nat = table(r.data, 'ip', 'nat');
    expect(chainOf(nat, 'OUTPUT').rules[1].exprs[3]).toMatchObject({ kind: 'dnat', to: { addr: '10.0.0.2', port: '80-90' } });
    expect(chainOf(nat, 'POSTROUTING').rules[2].exprs[3]).toMatchObject({ kind: 'snat', to: { addr: '1.2.3.4-1.2.3.5', port: '1000-2000' }, flags: ['random', 'persistent'] });
    expect(chainOf(nat, 'KUBE-SVC-ERIFXISQEP7F7OF4').rules[2].exprs[0]).toMatchObject({ kind: 'match', op: '<', left: { kind: 'binop', op: '&', left: { kind: 'meta', key: 'random' } }, right: { text: '715827883' } });
    const mangle = table(r.data, 'ip', 'mangle');
    expect(chainOf(mangle, 'PREROUTING').rules[6].exprs.at(-1)).toMatchObject({ kind: 'xt', match: false, name: 'TPROXY' });
    expect(chainOf(mangle, 'OUTPUT')).toMatchObject({ type: 'route', priority: -150 });
    // nothing lost: no unsupported expressions in this listing
    expect(r.diagnostics.filter((d) => d.code === 'nft/unsupported-expression')).toEqual([]);
  });

  it('iptables-nft chain fragment (KUBE-SERVICES without its table)', () => {
    const r = parse(/iptables-nft-kube-services-chain-fragment\.nft$/);
    expect(r.diagnostics.filter((d) => d.severity === 'warning')).toEqual([]);
    const t = r.data.tables[0];
    expect(t).toMatchObject({ implicit: true, fromIptablesNft: true });
    const rules = t.chains[0].rules;
    expect(rules).toHaveLength(5);
    expect(rules[0].exprs.map((e) => e.kind)).toEqual(['match', 'match', 'match', 'counter', 'verdict']);
    expect(rules[4]).toMatchObject({ counter: { packets: 77, bytes: 4824 }, exprs: [{ kind: 'match', right: { text: '192.168.0.100' } }, { kind: 'counter' }, { kind: 'verdict', chain: 'KUBE-NODEPORTS' }] });
  });
});
