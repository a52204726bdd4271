/**
 * What the evidence behind each table is (types.ts EvidenceKind): whole, cut, a grep, restore
 * input, edited, a second view. Computed once per snapshot from what the readers recorded (a
 * table's COMMIT, its `*table` line or the inference that replaced it, restore-input marks, nft
 * truncation, second views), and the one place the judgement asks "may absence be claimed here?".
 */
import { BUILTIN_CHAINS, chainsPastCut, type Ruleset, type Table } from '../model/netfilter.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatIp, type Ip } from '../model/addr.js';
import type { Mention, TableEvidence } from './types.js';

const cache = new WeakMap<NodeSnapshot, readonly TableEvidence[]>();

/** Every table's evidence, in snapshot order (iptables rulesets, nft rulesets, IPVS dumps, second views). */
export function evidenceOf(snapshot: NodeSnapshot): readonly TableEvidence[] {
  let out = cache.get(snapshot) as TableEvidence[] | undefined;
  if (out) return out;
  out = [];
  for (const rs of snapshot.rulesets) for (const t of rs.tables) out.push(iptablesEvidence(rs, t));
  for (const n of snapshot.nft) {
    for (const t of n.tables) {
      if (t.fromIptablesNft && snapshot.rulesets.some((r) => r.viewOf === 'nft')) continue;
      const base = { file: t.file, dialect: 'nft' as const, table: `${t.family} ${t.name}` };
      out.push(t.truncated ? { ...base, kind: 'cut', line: t.endLine } : t.implicit ? { ...base, kind: 'grep' } : { ...base, kind: 'whole' });
    }
  }
  for (const d of snapshot.ipvs) {
    const file = d.virtualServers[0]?.file ?? '';
    out.push(d.truncated ? { file, dialect: 'ipvs', table: 'ipvs', kind: 'cut', line: d.truncated.line } : { file, dialect: 'ipvs', table: 'ipvs', kind: 'whole' });
  }
  for (const v of snapshot.secondViews ?? []) {
    out.push({ file: v.file, dialect: v.kind === 'nft-transaction' ? 'nft' : 'iptables', ...(v.family ? { family: v.family } : {}), table: '*', kind: 'second-view', of: v.of });
  }
  cache.set(snapshot, out);
  return out;
}

function iptablesEvidence(rs: Ruleset, t: Table): TableEvidence {
  const base = { file: rs.file, dialect: 'iptables' as const, family: rs.family, table: t.name };
  if (rs.restoreInput) return { ...base, kind: 'restore-input' };
  if (t.implicit) return { ...base, kind: 'grep', ...(t.inferred ? { inferred: t.inferred } : {}) };
  if (!t.committed) return { ...base, kind: 'cut', line: chainsPastCut(t).line };
  const missing = missingChains(t);
  return missing.length ? { ...base, kind: 'edited', missing } : { ...base, kind: 'whole' };
}

/**
 * Chains a whole table's rules jump or go to that it does not hold. iptables-restore refuses such a
 * table, and the kernel cannot hold such a jump: a dump showing one was cut or edited after the fact.
 */
function missingChains(t: Table): { chain: string; line: number; text: string }[] {
  const out = new Map<string, { chain: string; line: number; text: string }>();
  const builtins = BUILTIN_CHAINS[t.name] ?? [];
  for (const c of t.chains) {
    for (const r of c.rules) {
      const target = r.target;
      if (!target || (target.kind !== 'jump' && target.kind !== 'goto')) continue;
      const name = target.chain;
      if (t.chainsByName.has(name) || builtins.includes(name) || out.has(name)) continue;
      out.set(name, { chain: name, line: r.line, text: r.raw });
    }
  }
  return [...out.values()];
}

/** Can a claim of absence rest on this evidence? */
export const isWhole = (e: TableEvidence): boolean => e.kind === 'whole';

/** The evidence of the table `table` of `file` (iptables), or of `file`'s nft table / IPVS dump. */
export function tableEvidence(snapshot: NodeSnapshot, file: string, table?: string): TableEvidence | undefined {
  return evidenceOf(snapshot).find((e) => e.file === file && (table === undefined || e.table === table));
}

/** Evidence that is not whole (what could hide a rule, a chain, an element), excluding second views. */
export function partialEvidence(snapshot: NodeSnapshot): TableEvidence[] {
  return evidenceOf(snapshot).filter((e) => e.kind !== 'whole' && e.kind !== 'second-view');
}

/** Lines of the inputs kpx could not read: iptables lines it kept unsupported or as noise, nft lines it could not read. */
function unreadLines(snapshot: NodeSnapshot): Mention[] {
  const out: Mention[] = [];
  for (const rs of snapshot.rulesets) {
    for (const u of rs.unsupported) out.push({ file: rs.file, line: u.line, text: u.text });
    for (const n of rs.noise) out.push({ file: rs.file, line: n.line, text: n.text });
  }
  for (const n of snapshot.nft) {
    const file = n.tables[0]?.file;
    if (file !== undefined) for (const u of n.unsupported) out.push({ file, line: u.line, text: u.text });
  }
  return out;
}

/**
 * Unread lines that name this address (and, when given, this port): a paste that mixes an
 * `iptables -L` listing with save lines names a Service kpx did not resolve. Whole words only: 10.32.0.1
 * does not match 10.32.0.10.
 */
export function mentionsOf(snapshot: NodeSnapshot, ip: Ip, port?: number): Mention[] {
  const text = formatIp(ip);
  const word = new RegExp(`(^|[^0-9a-fA-F.:])${text.replace(/[.:]/g, (c) => `\\${c}`)}(?![0-9a-fA-F])(\\/(32|128))?(?![.0-9])`);
  const portWord = port === undefined ? undefined : new RegExp(`(dpt:|dport |:|\\s)${port}(?![0-9])`);
  return unreadLines(snapshot).filter((m) => word.test(m.text) && (portWord === undefined || portWord.test(m.text) || !/\b(dpt|dport|spt)\b/.test(m.text)));
}

/** Unread lines that name a Service (`ns/name`, as kube-proxy's comments write it). */
export function mentionsName(snapshot: NodeSnapshot, namespace: string, name: string): Mention[] {
  const needle = `${namespace}/${name}`;
  return unreadLines(snapshot).filter((m) => m.text.includes(needle) && !/[a-z0-9-]/.test(m.text.charAt(m.text.indexOf(needle) + needle.length)));
}
