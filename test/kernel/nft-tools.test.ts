/**
 * The real `nft` is the oracle: load a kube-proxy-shaped ruleset (test/fixtures/nft/) into a
 * throw-away namespace, list it as text, with handles (`-a`) and as JSON (`-j`), and check that
 * all three parses agree with each other and with what was loaded.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nftJsonParser, nftParser } from '../../src/extract/nft.js';
import { nftNumber, operandText, valueText, type NftExpr, type NftOperand, type NftRuleset } from '../../src/model/nft.js';
import { repoRoot } from '../helpers/corpus.js';
import { requireKernel, withNetns } from '../helpers/netns.js';

const fixture = join(repoRoot, 'test', 'fixtures', 'nft', 'kube-proxy-small.nft');

/** Numbers as decimal, so `0x00004000` (text) and 16384 (JSON) compare equal. */
function lit(s: string): string {
  const n = nftNumber(s);
  return n === undefined ? s : String(n);
}

function op(o: NftOperand): unknown {
  switch (o.kind) {
    case 'value':
      return lit(o.text);
    case 'concat':
      return { concat: o.parts.map(op) };
    case 'binop':
      return { [o.op]: [op(o.left), op(o.right)] };
    case 'set':
      return { set: o.elements.map((e) => e.key.map(lit).join(' . ')) };
    case 'map':
      return { map: [op(o.key), o.map.kind === 'ref' ? o.map.name : o.map.elements.map((e) => [e.key.map(lit), e.value && valueText(e.value)])] };
    default:
      return operandText(o);
  }
}

function expr(e: NftExpr): unknown {
  const { column: _c, ...rest } = e as NftExpr & { column: number };
  void _c;
  switch (e.kind) {
    case 'match':
      return { match: [op(e.left), e.op === 'implicit' ? '==' : e.op, op(e.right)] };
    case 'vmap':
      return { vmap: [op(e.key), e.map.kind === 'ref' ? e.map.name : e.map.elements.map((x) => [x.key.map(lit), x.value && valueText(x.value)])] };
    case 'mark-set':
      return { markSet: [e.target, op(e.expr)] };
    case 'update-set':
      return { update: [e.op, e.set, op(e.key)] };
    case 'dnat':
    case 'snat':
      return {
        [e.kind]: e.map ? { map: [op(e.map.key), e.map.map.kind === 'inline' ? e.map.map.elements.map((x) => [x.key, x.value && valueText(x.value)]) : e.map.map.name] } : e.to?.text,
        flags: e.flags,
      };
    case 'log':
    case 'limit':
      return { [e.kind]: true };
    default:
      return rest;
  }
}

/** What both listings carry (nft 1.0.6 JSON omits table/chain comments and the `dynamic` set flag). */
function project(r: NftRuleset): unknown {
  return r.tables.map((t) => ({
    table: `${t.family} ${t.name}`,
    chains: t.chains.map((c) => ({
      name: c.name,
      type: c.type,
      hook: c.hook,
      priority: c.priority,
      policy: c.policy,
      rules: c.rules.map((x) => ({ comment: x.comment, exprs: x.exprs.map(expr) })),
    })),
    sets: t.sets.map((s) => ({
      name: s.name,
      kind: s.kind,
      keyType: s.keyType,
      valueType: s.valueType,
      timeout: s.timeout,
      size: s.size,
      comment: s.comment,
      elements: s.elements.map((e) => ({ key: e.key.map(lit), value: e.value && valueText(e.value), comment: e.comment })),
    })),
  }));
}

// Decided once at load: a skipped suite is reported as not run, not counted as passed.
const kernel = requireKernel();

describe.runIf(kernel)('nft listings from the real tool', () => {
  it('text, -a text and -j JSON parse to the same ruleset, matching what was loaded', async () => {
    await withNetns('nft', (ns) => {
      ns.exec('nft', ['-f', '-'], readFileSync(fixture, 'utf8'));
      const text = ns.exec('nft', ['list', 'ruleset']);
      const handles = ns.exec('nft', ['-a', 'list', 'ruleset']);
      const json = ns.exec('nft', ['-j', 'list', 'ruleset']);

      const t = nftParser.parse(text, 'ruleset.txt');
      const a = nftParser.parse(handles, 'ruleset-a.txt');
      const j = nftJsonParser.parse(json, 'ruleset.json');
      for (const r of [t, a, j]) expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
      expect(t.counts).toEqual({ tables: 2, chains: 16, rules: 24, sets: 5, elements: 8 });
      expect(a.counts).toEqual(t.counts);
      expect(j.counts).toEqual(t.counts);

      // the three agree
      expect(project(a.data)).toEqual(project(t.data));
      expect(project(j.data)).toEqual(project(t.data));

      // handles: every rule and chain of the -a listing has one, and they match the JSON ones
      const aRules = a.data.tables.flatMap((x) => x.chains.flatMap((c) => c.rules));
      const jRules = j.data.tables.flatMap((x) => x.chains.flatMap((c) => c.rules));
      expect(aRules.every((r) => typeof r.handle === 'number')).toBe(true);
      expect(aRules.map((r) => r.handle)).toEqual(jRules.map((r) => r.handle));
      expect(a.data.tables.map((x) => x.handle)).toEqual(j.data.tables.map((x) => x.handle));
      expect(t.data.tables[0].chains.every((c) => c.handle === undefined)).toBe(true);

      // and what was loaded
      const kp = t.data.tables.find((x) => x.family === 'ip' && x.name === 'kube-proxy')!;
      expect(kp.comment).toBe('rules for kube-proxy');
      expect(kp.fromIptablesNft).toBe(false);
      const chain = (n: string) => kp.chains.find((c) => c.name === n)!;
      expect(chain('nat-postrouting')).toMatchObject({ type: 'nat', hook: 'postrouting', priority: 100, priorityText: 'srcnat', policy: 'accept' });
      expect(chain('filter-forward')).toMatchObject({ priority: -110, priorityText: '-110' }); // named only for prerouting
      expect(chain('reject-chain').comment).toBe('helper for @no-endpoint-services / @no-endpoint-nodeports');
      const affinity = kp.sets.find((s) => s.name.startsWith('affinity-'))!;
      expect(affinity).toMatchObject({ kind: 'set', keyType: ['ipv4_addr'], timeout: '3h' });
      expect(affinity.flags).toEqual(expect.arrayContaining(['dynamic', 'timeout']));
      const svcIps = kp.sets.find((s) => s.name === 'service-ips')!;
      expect(svcIps.valueType).toBe('verdict');
      expect(svcIps.elements.map((e) => [e.key.join(' . '), e.value && valueText(e.value)]).sort()).toEqual([
        ['10.100.5.20 . tcp . 80', 'goto service-ABCD1234-demo/web/tcp/http'],
        ['10.100.9.9 . tcp . 9000', 'goto service-WXYZ5678-demo/api/tcp/grpc'],
      ]);
      const noEp = kp.sets.find((s) => s.name === 'no-endpoint-services')!;
      expect(noEp.elements.map((e) => [e.key, e.comment, e.value]).sort()).toEqual([
        [['10.100.3.3', 'udp', '53'], 'demo/empty:dns', { kind: 'verdict', verdict: 'goto', chain: 'reject-chain' }],
        [['10.100.3.4', 'tcp', '443'], 'demo/gone:https', { kind: 'verdict', verdict: 'drop' }],
      ]);
      const web = chain('service-ABCD1234-demo/web/tcp/http').rules[2].exprs[0];
      expect(web.kind).toBe('vmap');
      if (web.kind === 'vmap' && web.map.kind === 'inline') {
        expect(web.key).toEqual({ kind: 'numgen', mode: 'random', mod: 3, offset: 0 });
        expect(web.map.elements.map((e) => e.value && valueText(e.value))).toEqual([
          'goto endpoint-EEEE0001-demo/web/tcp/http__10.244.7.11/8080',
          'goto endpoint-EEEE0002-demo/web/tcp/http__10.244.7.12/8080',
          'goto endpoint-EEEE0003-demo/web/tcp/http__10.244.7.13/8080',
        ]);
      }
      const api = chain('service-WXYZ5678-demo/api/tcp/grpc').rules[1].exprs[1];
      expect(api).toMatchObject({ kind: 'dnat', family: 'ip', map: { key: { kind: 'numgen', mod: 2 } } });
      if (api.kind === 'dnat' && api.map?.map.kind === 'inline') {
        expect(api.map.map.elements.map((e) => [e.key[0], e.value])).toEqual([
          ['0', { kind: 'data', parts: ['10.244.8.1', '9000'] }],
          ['1', { kind: 'data', parts: ['10.244.8.2', '9000'] }],
        ]);
      }
      const ep1 = chain('endpoint-EEEE0001-demo/web/tcp/http__10.244.7.11/8080').rules;
      expect(ep1[2].exprs[1]).toMatchObject({ kind: 'dnat', to: { addr: '10.244.7.11', port: '8080' } });
      expect(ep1[1].exprs[0]).toMatchObject({ kind: 'update-set', op: 'update', key: { kind: 'payload', protocol: 'ip', field: 'saddr' } });
      const masq = chain('masquerading').rules;
      expect(masq[0].exprs[0]).toMatchObject({ kind: 'match', op: '==', left: { kind: 'binop', op: '&', left: { kind: 'meta', key: 'mark' } } });
      expect(masq[2].exprs[0]).toEqual({ kind: 'masquerade', flags: ['fully-random'], column: 3 });

      const kp6 = t.data.tables.find((x) => x.family === 'ip6')!;
      const ep6 = kp6.chains.find((c) => c.name.startsWith('endpoint-'))!;
      expect(ep6.rules[0].exprs[1]).toMatchObject({ kind: 'dnat', to: { addr: 'fd00:10:244::7', port: '8080' } });
    });
  });
});
