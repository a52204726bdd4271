/**
 * `nft list ruleset` (text or `-j` JSON) as plain readonly data. Names follow knftables
 * (`types.go`: Table, Chain{type,hook,priority,policy}, Set, Map, Element{key,value}, Rule).
 * The expression shapes are documented with examples in grammars/nft/README.md.
 */

import type { SynBinaryOp, SynElement, SynExpr, SynMapRef, SynNatTarget, SynOperand, SynRelOp, SynRule, SynSet, SynValue, SynVerdictName } from '../../grammars/common/nft-syntax.js';

export { elementText, formatNftTime, mapRefText, operandText, valueText } from '../../grammars/common/nft-syntax.js';

/** The whole listing. */
export interface NftRuleset {
  readonly tables: readonly NftTable[];
  /** Lines kept out of the model: paste noise, unsupported objects (flowtables, named counters…). */
  readonly unsupported: readonly { readonly line: number; readonly text: string; readonly reason: string }[];
  /** The nft that printed it, from `nft -j list ruleset`'s metainfo (the text listing does not say). */
  readonly nftVersion?: { readonly version: string; readonly file: string; readonly line: number };
}

export interface NftTable {
  /** ip, ip6, inet, arp, bridge, netdev; `''` for an implicit table (a fragment without `table … {`). */
  readonly family: string;
  readonly name: string;
  readonly comment?: string;
  readonly flags: readonly string[];
  readonly chains: readonly NftChain[];
  /** Sets and maps (maps have kind 'map'). */
  readonly sets: readonly NftSet[];
  readonly line: number;
  readonly endLine: number;
  readonly file: string;
  /** iptables-nft residue (xt match/target, iptables chain names, 'managed by iptables-nft' warning). */
  readonly fromIptablesNft: boolean;
  /** True when the input had no `table` header around these objects (a pasted fragment). */
  readonly implicit?: boolean;
  readonly handle?: number;
  /** The listing ended inside this table (a cut paste): chains and rules after the cut are not in it. */
  readonly truncated?: true;
}

export interface NftChain {
  readonly name: string;
  readonly type?: string;
  readonly hook?: string;
  readonly device?: string;
  /** Numeric priority (`dstnat - 10` → -110); undefined when a name is unknown for the family. */
  readonly priority?: number;
  /** Priority as printed (`dstnat - 10`, `-110`, `filter`). */
  readonly priorityText?: string;
  readonly policy?: string;
  readonly comment?: string;
  readonly rules: readonly NftRule[];
  readonly line: number;
  readonly handle?: number;
}

export type NftSet = SynSet;

/*
 * Elements, values and expressions have exactly the grammar's shapes (grammars/common/nft-syntax.ts,
 * documented with printed examples in grammars/nft/README.md); the model names them after knftables.
 */
export type NftElement = SynElement;
export type NftVerdictName = SynVerdictName;
export type NftValue = SynValue;
/** A reference to a named map (`@name`) or an inline anonymous map `{ k : v, … }`. */
export type NftMapRef = SynMapRef;
export type NftBinaryOp = SynBinaryOp;
/**
 * Everything that can stand on either side of a match or inside a statement.
 * Selectors: payload, meta, ct, fib, numgen, selector (any other). Values: value, list, set,
 * set-ref. Combinators: concat, binop, map (`EXPR map @m` / `EXPR map { … }`).
 */
export type NftOperand = SynOperand;
export type NftRelOp = SynRelOp;
/** `dnat to 10.0.0.1:80` → {text:'10.0.0.1:80', addr:'10.0.0.1', port:'80'}; `redirect to :15001` → {port}. */
export type NftNatTarget = SynNatTarget;
export type NftExpr = SynExpr;

export type NftRule = SynRule;

// ---------------------------------------------------------------------------------------------
// Pure helpers

/** The values a match's right side stands for: set elements' keys, list items, or one value. */
export function rightValues(o: NftOperand): readonly string[] | undefined {
  if (o.kind === 'value') return [o.text];
  if (o.kind === 'list') return o.items;
  if (o.kind === 'set') return o.elements.map((e) => e.key.join(' . '));
  return undefined;
}

/** The states a `ct state …` match tests, or undefined for other exprs. */
export function ctStates(e: NftExpr): { negated: boolean; states: readonly string[] } | undefined {
  if (e.kind !== 'match' || e.left.kind !== 'ct' || e.left.key !== 'state') return undefined;
  const states = rightValues(e.right);
  return states ? { negated: e.op === '!=', states } : undefined;
}

/** Elements of a map reference: inline ones, or the named set's in `table`. */
export function resolveMap(table: NftTable, m: NftMapRef): readonly NftElement[] | undefined {
  if (m.kind === 'inline') return m.elements;
  return table.sets.find((s) => s.name === m.name)?.elements;
}

/** Parse an nft integer literal (`0x00004000`, `16384`). */
export function nftNumber(text: string): number | undefined {
  if (/^0x[0-9a-f]+$/i.test(text)) return parseInt(text.slice(2), 16);
  if (/^-?\d+$/.test(text)) return Number(text);
  return undefined;
}

/** nft time strings (`3h`, `1d2h3m4s500ms`, `10800s`) to seconds. */
export function nftTimeToSeconds(text: string): number | undefined {
  const re = /(\d+)(ms|d|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const n = Number(m[1]);
    total += m[2] === 'd' ? n * 86400 : m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    consumed += m[0].length;
  }
  if (consumed !== text.length || consumed === 0) return /^\d+$/.test(text) ? Number(text) : undefined;
  return total;
}

/** Standard named priorities (nftables `src/rule.c` std_prios / bridge_std_prios). */
export function standardPriority(family: string, name: string): number | undefined {
  const bridge: Record<string, number> = { dstnat: -300, filter: -200, out: 100, srcnat: 300 };
  const std: Record<string, number> = { raw: -300, mangle: -150, dstnat: -100, filter: 0, security: 50, srcnat: 100 };
  return (family === 'bridge' ? bridge : std)[name];
}
