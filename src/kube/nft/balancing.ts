/**
 * nftables balancing: a service-/local- chain's masquerade rule, affinity gotos, and its numgen
 * vmap (to endpoint chains) or numgen DNAT map (1.36+), or a lone `dnat to` (1.37+). Probabilities
 * are exact: (numgen keys mapping to the endpoint) / N.
 */
import type { NftChain, NftElement, NftExpr, NftRule } from '../../model/nft.js';
import { valueText } from '../../model/nft.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { Evidence, Protocol } from '../types.js';
import { isIpText, nftNames } from './identity.js';
import { asPort, asProtocol, isMatch, keyNumbers, payloadIs, ruleEvidence, ruleTarget, verdictTarget, type Ctx } from './table.js';

export interface BalanceRead {
  chain: NftChain;
  /** Endpoint targets in first-key order with how many numgen keys map to each. */
  targets: { chain?: string; ip?: string; port?: number | null; keys: number; evidence: Evidence[] }[];
  mod?: number;
  affinity: { set: string; endpointChain: string; rule: NftRule }[];
  masq?: { ip?: string; port?: number; protocol?: Protocol; rule: NftRule };
  problems: ServiceProblem[];
}

/** The service chain's `ip daddr VIP tcp dport PORT … goto mark-for-masquerade`: the cluster IP and port it names. */
function masqueradeRule(r: NftRule): NonNullable<BalanceRead['masq']> {
  let ip: string | undefined;
  let port: number | undefined;
  let protocol: Protocol | undefined;
  for (const e of r.exprs) {
    if (!isMatch(e) || e.op === '!=') continue;
    if (payloadIs(e.left, 'daddr') && e.right.kind === 'value') ip = e.right.text;
    if (e.left.kind === 'payload' && e.left.field === 'dport' && e.right.kind === 'value') {
      port = asPort(e.right.text);
      protocol = asProtocol(e.left.protocol);
    }
  }
  return { rule: r, ...(ip ? { ip } : {}), ...(port !== undefined ? { port } : {}), ...(protocol ? { protocol } : {}) };
}

/** Read a service-/local- chain: masquerade rule, affinity gotos, numgen vmap or numgen dnat map. */
export function readBalancing(ctx: Ctx, chain: NftChain): BalanceRead {
  const out: BalanceRead = { chain, targets: [], affinity: [], problems: [] };
  const numgens: Numgen[] = [];
  for (const r of chain.rules) {
    const target = ruleTarget(r);
    if (target?.chain === nftNames.markMasqChain) {
      out.masq = masqueradeRule(r);
      continue;
    }
    const setMatch = r.exprs.find((e): e is Extract<NftExpr, { kind: 'match' }> => isMatch(e) && payloadIs(e.left, 'saddr') && e.right.kind === 'set-ref');
    if (setMatch && target && setMatch.right.kind === 'set-ref') {
      out.affinity.push({ set: setMatch.right.name, endpointChain: target.chain, rule: r });
      continue;
    }
    for (const e of r.exprs) {
      if (e.kind === 'vmap' && e.key.kind === 'numgen' && e.map.kind === 'inline') numgens.push({ mod: e.key.mod, offset: e.key.offset, elements: e.map.elements, rule: r, kind: 'vmap' });
      else if (e.kind === 'dnat' && e.map && e.map.key.kind === 'numgen' && e.map.map.kind === 'inline') numgens.push({ mod: e.map.key.mod, offset: e.map.key.offset, elements: e.map.map.elements, rule: r, kind: 'dnat' });
      else if (e.kind === 'vmap' && e.key.kind === 'numgen') out.problems.push(problem('nft-numgen-named-map', { chain: chain.name, map: e.map.kind === 'ref' ? e.map.name : null }));
    }
  }
  if (numgens.length > 1) out.problems.push(problem('nft-numgen-several', { chain: chain.name, rules: numgens.length }));
  const ng = numgens[0];
  if (!ng) {
    // 1.37+ (PR #140723): a lone endpoint without affinity is a plain `dnat to IP:PORT` in the service chain.
    const d = out.affinity.length === 0 ? dnatOf(chain) : undefined;
    if (d) {
      out.mod = 1;
      out.targets = [{ ip: d.ip, port: d.port, keys: 1, evidence: [ruleEvidence(ctx, chain, d.rule)] }];
    }
    return out;
  }
  out.mod = ng.mod;
  countNumgenKeys(ctx, chain, ng, out);
  return out;
}

export function dnatOf(chain: NftChain): { ip: string; port: number | null; rule: NftRule } | undefined {
  for (const r of chain.rules) {
    for (const e of r.exprs) {
      if (e.kind === 'dnat' && e.to?.addr && isIpText(e.to.addr)) return { ip: e.to.addr, port: asPort(e.to.port) ?? null, rule: r };
    }
  }
  return undefined;
}

interface Numgen {
  mod: number;
  offset: number;
  elements: readonly NftElement[];
  rule: NftRule;
  kind: 'vmap' | 'dnat';
}

/** How many of the numgen's keys go to each target; dead keys, gaps and elements that are no target are problems. */
function countNumgenKeys(ctx: Ctx, chain: NftChain, ng: Numgen, out: BalanceRead): void {
  const ruleEv = ruleEvidence(ctx, chain, ng.rule);
  const byTarget = new Map<string, BalanceRead['targets'][number]>();
  const covered = new Set<number>();
  const outOfRange: string[] = [];
  for (const el of ng.elements) {
    const nums = keyNumbers(el.key[0] ?? '');
    if (!nums) {
      out.problems.push(problem('nft-numgen-key-not-number', { chain: chain.name, key: el.key.join(' . ') }));
      continue;
    }
    let id: string;
    let entry: BalanceRead['targets'][number];
    if (ng.kind === 'vmap') {
      const t = verdictTarget(el);
      if (!t) {
        out.problems.push(problem('nft-numgen-not-endpoint-goto', { chain: chain.name, key: el.key[0] ?? '', verdict: el.value ? valueText(el.value) : null }));
        continue;
      }
      id = t;
      entry = byTarget.get(id) ?? { chain: t, keys: 0, evidence: [ruleEv] };
    } else {
      const parts = el.value?.kind === 'data' ? el.value.parts : [];
      const ip = parts[0]?.replace(/^\[|\]$/g, '');
      const port = parts.length > 1 ? (asPort(parts[1]) ?? null) : null;
      if (!ip || !isIpText(ip)) {
        out.problems.push(problem('nft-numgen-not-address', { chain: chain.name, key: el.key[0] ?? '', value: el.value ? valueText(el.value) : null }));
        continue;
      }
      id = `${ip}|${port}`;
      entry = byTarget.get(id) ?? { ip, port, keys: 0, evidence: [ruleEv] };
    }
    let inRange = 0;
    for (const n of nums) {
      const k = n - ng.offset;
      if (k < 0 || k >= ng.mod) outOfRange.push(String(n));
      else if (!covered.has(k)) {
        covered.add(k);
        inRange++;
      }
    }
    entry.keys += inRange;
    byTarget.set(id, entry);
  }
  out.targets = [...byTarget.values()];
  if (outOfRange.length > 0) out.problems.push(problem('nft-numgen-dead-keys', { chain: chain.name, mod: ng.mod, offset: ng.offset, keys: outOfRange }));
  if (covered.size < ng.mod) {
    const missing = Array.from({ length: ng.mod }, (_, i) => i).filter((i) => !covered.has(i));
    out.problems.push(problem('nft-numgen-gap', { chain: chain.name, mod: ng.mod, missing: missing.map((i) => i + ng.offset) }));
  }
}
