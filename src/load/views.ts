/**
 * Two views of one ruleset: kube-proxy's `iptables-restore` input beside the `iptables-save` dump of
 * the same family, or an `nft -f` transaction beside the `nft list ruleset` listing. They are one
 * ruleset written twice (another syntax, another order), so kpx reads it once — the dump (what the
 * kernel holds) — and keeps the other as a second view: each of its rules is matched to the dump's
 * rule (by meaning, not by text: option order and spelling differ), so a line of either file stays
 * citable, and the rules of the view the dump does not hold are listed (the kernel does not hold
 * what kube-proxy last wrote: a failed or a later sync). Nothing is counted twice: Services,
 * warnings and trace headers come from the dump alone.
 *
 * Two dumps of one family (not restore input) are one ruleset only when they hold the same rules;
 * otherwise they are two rulesets (iptables-legacy and iptables-nft both in use) and stay two.
 */
import type { Rule, Ruleset } from '../model/netfilter.js';
import type { NftRule, NftRuleset, NftTable } from '../model/nft.js';
import type { SecondView } from '../model/snapshot.js';

/** At most this many rules of a view that the dump does not hold are listed (all are counted). */
const LISTED = 20;

/**
 * Addresses hold bigints (IPv6): JSON keys write them as text; an address match is its CIDR, not
 * how it was written (`-d 10.0.0.1` in restore input is `-d 10.0.0.1/32` in iptables-save).
 */
const plain = (_k: string, v: unknown): unknown => {
  if (typeof v === 'bigint') return v.toString();
  if (v !== null && typeof v === 'object' && (v as { kind?: unknown }).kind === 'address' && (v as { cidr?: unknown }).cidr !== undefined) return { ...v, text: undefined };
  return v;
};

/**
 * A rule's meaning, independent of how the line was written: table, chain, matches, target.
 */
function iptablesKey(r: Rule): string {
  // Matches of one rule are ANDed: the same set in another order (kube-proxy writes `-m tcp` before
  // `-m addrtype`, iptables-save prints them in load order) is the same rule.
  const matches = r.matches.map((m) => JSON.stringify(m, plain)).sort();
  return `${r.table}\u0000${r.chain}\u0000${matches.join('\u0001')}\u0000${JSON.stringify(r.target ?? null, plain)}`;
}

/** Positions, handles, counters and text are how a rule was written or used, not what it is. */
const WRITING = new Set(['line', 'column', 'raw', 'handle', 'file', 'endLine', 'text', 'counter', 'expires']);
const meaning = (k: string, v: unknown) => (WRITING.has(k) ? undefined : plain(k, v));

function nftKey(t: NftTable, chain: string, r: NftRule): string {
  return `${t.family}\u0000${t.name}\u0000${chain}\u0000${JSON.stringify(r.exprs, meaning)}`;
}

interface Keyed {
  readonly key: string;
  readonly line: number;
  readonly text: string;
  readonly chain: string;
}

function iptablesRules(rs: Ruleset): Keyed[] {
  const out: Keyed[] = [];
  for (const t of rs.tables) for (const c of t.chains) for (const r of c.rules) out.push({ key: iptablesKey(r), line: r.line, text: r.raw, chain: `${t.name}/${c.name}` });
  return out;
}

function nftRules(n: NftRuleset): Keyed[] {
  const out: Keyed[] = [];
  for (const t of n.tables) {
    for (const c of t.chains) for (const r of c.rules) out.push({ key: nftKey(t, c.name, r), line: r.line, text: r.raw, chain: `${t.family} ${t.name}/${c.name}` });
    for (const s of t.sets) for (const e of s.elements) out.push({ key: `${t.family}\u0000${t.name}\u0000@${s.name}\u0000${JSON.stringify(e, meaning)}`, line: e.line, text: `element ${e.key.join(' . ')}`, chain: `${t.family} ${t.name}/@${s.name}` });
  }
  return out;
}

/**
 * How the view's rules fall in the primary: `lines` maps each primary rule (`line`) to the view's
 * line of the same rule (one for one: a rule written twice in the view matches two in the primary).
 */
function compare(kind: SecondView['kind'], file: string, of: string, primary: readonly Keyed[], view: readonly Keyed[], family?: 4 | 6): SecondView {
  const byKey = new Map<string, number[]>();
  for (const r of primary) {
    const list = byKey.get(r.key);
    if (list) list.push(r.line);
    else byKey.set(r.key, [r.line]);
  }
  const lines = new Map<number, number>();
  const differing: SecondView['differing'][number][] = [];
  let differingCount = 0;
  for (const r of view) {
    const at = byKey.get(r.key);
    const line = at?.shift();
    if (line !== undefined) lines.set(line, r.line);
    else {
      differingCount++;
      if (differing.length < LISTED) differing.push({ line: r.line, text: r.text, chain: r.chain });
    }
  }
  return { kind, file, of, ...(family ? { family } : {}), rules: view.length, matched: view.length - differingCount, differing, differingCount, lines };
}

/** Does every rule of `a` have its match in `b`, and the other way round? */
function sameRules(a: readonly Keyed[], b: readonly Keyed[]): boolean {
  if (a.length !== b.length) return false;
  const count = new Map<string, number>();
  for (const r of a) count.set(r.key, (count.get(r.key) ?? 0) + 1);
  for (const r of b) {
    const n = count.get(r.key) ?? 0;
    if (n === 0) return false;
    count.set(r.key, n - 1);
  }
  return true;
}

/**
 * The rulesets to read, and the second views set aside: per family, restore input beside a dump is
 * a view of the dump, and a dump identical in rules to an earlier one is a view of it.
 */
export function separateIptablesViews(rulesets: readonly Ruleset[]): { rulesets: Ruleset[]; views: SecondView[] } {
  const kept: Ruleset[] = [];
  const views: SecondView[] = [];
  for (const fam of [4, 6] as const) {
    const mine = rulesets.filter((r) => r.family === fam);
    const dumps = mine.filter((r) => !r.restoreInput);
    const primary = dumps.find((r) => r.viewOf === undefined) ?? dumps[0];
    if (!primary || mine.length === 1) {
      kept.push(...mine);
      continue;
    }
    const primaryRules = iptablesRules(primary);
    for (const r of mine) {
      if (r === primary) continue;
      if (r.viewOf === 'nft') {
        kept.push(r);
        continue;
      }
      const rules = iptablesRules(r);
      if (r.restoreInput) views.push(compare('iptables-restore-input', r.file, primary.file, primaryRules, rules, fam));
      else if (sameRules(primaryRules, rules)) views.push(compare('iptables-save', r.file, primary.file, primaryRules, rules, fam));
      else kept.push(r);
    }
    kept.push(primary);
  }
  // In the order they came (the first dump of each family first, as before).
  return { rulesets: rulesets.filter((r) => kept.includes(r)), views };
}

/** nft: a transaction (`nft -f` input) beside a listing of the same tables is a view of the listing. */
export function separateNftViews(rulesets: readonly NftRuleset[], transactionFiles: ReadonlySet<string>): { nft: NftRuleset[]; views: SecondView[] } {
  const fileOf = (n: NftRuleset) => n.tables[0]?.file;
  const listings = rulesets.filter((n) => !transactionFiles.has(fileOf(n) ?? ''));
  const kept: NftRuleset[] = [];
  const views: SecondView[] = [];
  for (const n of rulesets) {
    const file = fileOf(n);
    if (file === undefined || !transactionFiles.has(file)) {
      kept.push(n);
      continue;
    }
    const names = new Set(n.tables.map((t) => `${t.family} ${t.name}`));
    const listing = listings.find((l) => l.tables.some((t) => names.has(`${t.family} ${t.name}`)));
    if (!listing) kept.push(n);
    else views.push(compare('nft-transaction', file, fileOf(listing)!, nftRules(listing), nftRules(n)));
  }
  return { nft: kept, views };
}
