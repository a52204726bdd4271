/**
 * What the transaction's commands carry, read the way nft stores and lists it: references a rule
 * makes, the anonymous sets it creates, one-element sets as values, addresses and intervals as
 * nft prints them, times as `3h`, priorities as numbers.
 */
import type { SynChain, SynRule } from '../../grammars/nft/index.js';
import { formatNftTime, nftTimeToSeconds, standardPriority, type NftExpr, type NftOperand, type NftRule } from '../model/nft.js';
import { canonicalAddress, mergeAddressIntervals } from './nft-intervals.js';

/** Chain and set names a rule (or element value) refers to: `jump X`, `goto X`, `@s`, `vmap @m`, `update @s`. */
export function references(x: unknown, out: { chains: Set<string>; sets: Set<string> } = { chains: new Set(), sets: new Set() }) {
  if (Array.isArray(x)) for (const v of x) references(v, out);
  else if (x !== null && typeof x === 'object') {
    const o = x as Record<string, unknown>;
    if (o.kind === 'verdict' && typeof o.chain === 'string' && (o.verdict === 'jump' || o.verdict === 'goto')) out.chains.add(o.chain);
    if ((o.kind === 'set-ref' || o.kind === 'ref') && typeof o.name === 'string') out.sets.add(o.name);
    if (o.kind === 'update-set' && typeof o.set === 'string') out.sets.add(o.set);
    for (const v of Object.values(o)) if (v !== null && typeof v === 'object') references(v, out);
  }
  return out;
}

/** Anonymous sets and maps a rule creates (each takes a handle before the rule does). */
export function anonymousSets(x: unknown): number {
  if (Array.isArray(x)) return x.reduce((n: number, v) => n + anonymousSets(v), 0);
  if (x === null || typeof x !== 'object') return 0;
  const o = x as Record<string, unknown>;
  let n = o.kind === 'set' || o.kind === 'inline' ? 1 : 0;
  for (const v of Object.values(o)) if (v !== null && typeof v === 'object') n += anonymousSets(v);
  return n;
}

/**
 * An operand as nft lists it: a one-element anonymous set is the value itself (`ip daddr
 * { 10.0.0.0/8 }` lists as `ip daddr 10.0.0.0/8`); addresses lose host bits and `/32`;
 * anonymous sets of addresses are merged intervals (./nft-intervals.ts).
 */
function canonicalOperand(o: NftOperand): NftOperand {
  if (o.kind === 'value') {
    const a = canonicalAddress(o.text);
    return a === undefined || o.quoted ? o : { ...o, text: a };
  }
  if (o.kind !== 'set' || o.elements.some((e) => e.value !== undefined || e.key.length !== 1)) return o;
  if (o.elements.length === 1) return canonicalOperand({ kind: 'value', text: o.elements[0].key[0] });
  const merged = mergeAddressIntervals(o.elements.map((e) => e.key[0]));
  if (!merged) return o;
  const first = o.elements[0];
  return { kind: 'set', elements: merged.map((k) => ({ key: [k], line: first.line, column: first.column })) };
}

export function canonicalRule(r: SynRule): NftRule {
  const exprs = r.exprs.map((e): NftExpr => (e.kind === 'match' ? { ...e, right: canonicalOperand(e.right) } : e));
  return { ...r, exprs };
}

export function canonicalTime(t: string | undefined): string | undefined {
  if (t === undefined) return undefined;
  const s = nftTimeToSeconds(t);
  return s === undefined ? t : formatNftTime(s);
}

export function numericPriority(family: string, c: SynChain): number | undefined {
  if (c.priorityBase === undefined) return undefined;
  const base = /^-?\d+$/.test(c.priorityBase) ? Number(c.priorityBase) : standardPriority(family, c.priorityBase);
  return base === undefined ? undefined : base + (c.priorityOffset ?? 0);
}

