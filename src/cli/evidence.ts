/**
 * Can the inputs answer the question at all? `services`, `trace` and `lint` say first which
 * inputs could not be used (unreadable, not a dump, a collection that failed) and, when no
 * ruleset is left to answer from, exit 3 ("cannot tell") instead of reporting "nothing found".
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { tableShownWhole } from '../model/netfilter.js';
import { printable } from '../source/index.js';
import { logAccounts } from '../kube/kube-proxy-account.js';
import { logAccountLine } from '../render/kube-proxy-account.js';

/** Diagnostics that mean a whole file gave no evidence (as opposed to one bad line in a dump). */
const UNUSABLE = new Set([
  'input/unreadable',
  'input/unknown-format',
  'collect/failed',
  'internal/parser-crash',
  // The input layer's refusals (src/load/input.ts, src/load/bundle.ts): listed, never read.
  'input/too-large',
  'input/special-file',
  'input/symlink-loop',
  'input/too-deep',
  'input/duplicate',
]);

/** Read only in part: the text before the damage was used. */
const PARTIAL = new Set(['input/gzip-damaged']);

export interface UnusableInput {
  readonly path: string;
  readonly why: string;
}

export function unusableInputs(s: NodeSnapshot): UnusableInput[] {
  const out: UnusableInput[] = [];
  for (const f of s.files) {
    // A listing that is not kube-proxy's (Cilium's tables, a capture) is recognised and said, never read.
    const d = f.diagnostics.find((x) => ((x.severity === 'error' || x.code === 'input/duplicate') && UNUSABLE.has(x.code)) || x.code === 'input/not-kube-proxy');
    if (!d) continue;
    const looks = d.code === 'input/unknown-format' ? /\(it looks like (.*?)\);/.exec(d.message)?.[1] : undefined;
    out.push({ path: f.path, why: d.code === 'input/unknown-format' ? `not a dump kpx reads${looks ? ` (it looks like ${looks})` : ''}` : d.message });
  }
  return out;
}

/** Files that were read but have error lines (the rest of each file was still read). */
export function filesWithLineErrors(s: NodeSnapshot): string[] {
  return s.files.filter((f) => f.diagnostics.some((d) => d.severity === 'error' && !UNUSABLE.has(d.code) && !PARTIAL.has(d.code))).map((f) => f.path);
}

/**
 * Tables iptables-nft wrote, seen through `nft list ruleset`, that hold kube-proxy's chains: kpx
 * resolves kube-proxy's iptables mode from iptables-save (which iptables-nft-save prints with every
 * match and comment), not from this view, where matches nft cannot show become `xt match …`.
 */
export function iptablesNftKubeTables(s: NodeSnapshot, family?: 4 | 6): string[] {
  const fams = family === undefined ? ['ip', 'ip6'] : [family === 4 ? 'ip' : 'ip6'];
  return s.nft.flatMap((n) => n.tables.filter((t) => t.fromIptablesNft && fams.includes(t.family) && t.chains.some((c) => c.name.startsWith('KUBE-'))).map((t) => `table ${t.family} ${t.name}`));
}

/** Is there a ruleset (iptables-save, nft, IPVS) to answer from — for one family, or any? */
export function hasRuleEvidence(s: NodeSnapshot, family?: 4 | 6): boolean {
  const nftFamilies = family === undefined ? ['ip', 'ip6', 'inet'] : ['inet', family === 4 ? 'ip' : 'ip6'];
  return (
    s.rulesets.some((r) => family === undefined || r.family === family) ||
    // An iptables-nft table viewed through nft is not evidence kpx reads (see iptablesNftKubeTables).
    s.nft.some((n) => n.tables.some((t) => nftFamilies.includes(t.family) && !t.fromIptablesNft)) ||
    s.ipvs.some((d) => d.virtualServers.some((v) => family === undefined || v.ip === undefined || v.ip.family === family))
  );
}

/**
 * Tell stderr, before any answer, which inputs were not used and which had bad lines. Returns
 * the lines written (for tests).
 */
export function reportInputProblems(s: NodeSnapshot, write: (text: string) => void = (t) => process.stderr.write(t)): string[] {
  const lines = unusableInputs(s).map((u) => `kpx: ${printable(u.path, 4096)}: ${u.why}${/\bnot (read|used)\b/.test(u.why) ? '' : '; not used'}`);
  for (const f of s.files) {
    const d = f.diagnostics.find((x) => PARTIAL.has(x.code));
    if (d) lines.push(`kpx: ${printable(f.path, 4096)}: ${d.message}`);
  }
  const partial = filesWithLineErrors(s);
  if (partial.length) lines.push(`kpx: ${partial.map((p) => printable(p, 4096)).join(', ')}: some lines could not be read (the rest was); \`kpx inspect\` shows them`);
  for (const rs of s.rulesets.filter((r) => r.viewOf === 'nft' && r.tables.some((t) => t.chains.some((c) => c.name.startsWith('KUBE-'))))) {
    lines.push(
      `kpx: ${printable(rs.file, 4096)}: kube-proxy's iptables-mode rules read from the nft listing of iptables-nft's tables ` +
        `(${rs.tables.map((t) => `table ip${rs.family === 6 ? '6' : ''} ${t.name}`).join(', ')}): it prints no rule comments and shows some matches only as \`xt match\`, ` +
        'so Service names and what those matches decide are unknown; iptables-save shows them',
    );
  }
  for (const l of lines) write(l + '\n');
  return lines;
}

/**
 * The iptables evidence that is not whole (issue 30): listings of some chains, `-S` of one chain or
 * through grep, greps without a `*table` line — one phrase per file, or undefined when every table
 * read is whole. A claim that something is absent cannot rest on such evidence.
 */
export function partialRulesNote(s: NodeSnapshot): string | undefined {
  const parts: string[] = [];
  for (const rs of s.rulesets) {
    const partial = rs.tables.filter((t) => !tableShownWhole(t));
    if (partial.length === 0) continue;
    const what = partial.map((t) => {
      const table = t.coverage?.tableFrom === 'guessed' || t.implicit ? `table ${t.name}, guessed` : `table ${t.name}`;
      if (!t.coverage) return `a fragment (${table})`;
      const listed = [...t.coverage.listed];
      const kind = t.coverage.source === 'rules' ? '`iptables -S`' : 'a listing';
      return listed.length ? `${kind} of ${listed.length <= 3 ? `chain${listed.length > 1 ? 's' : ''} ${listed.join(', ')}` : `${listed.length} chains`} (${table})` : `${kind} shown in part (${table})`;
    });
    parts.push(`${printable(rs.file, 4096)}: ${what.join('; ')}`);
  }
  return parts.length ? parts.join('; ') : undefined;
}

/** The "cannot tell" sentence when no ruleset answers `question`, else undefined. */
export function cannotTell(s: NodeSnapshot, question: string, family?: 4 | 6): string | undefined {
  if (hasRuleEvidence(s, family)) return undefined;
  const fam = family === undefined ? '' : ` for IPv${family}`;
  const viaNft = iptablesNftKubeTables(s, family);
  if (viaNft.length)
    return (
      `kpx: cannot tell ${question}: the nft ruleset holds kube-proxy's iptables-mode chains written by iptables-nft (${viaNft.join(', ')}); ` +
      'kpx resolves them from iptables-save, which prints every match and comment that the nft view shows only as `xt match`: ' +
      'run iptables-save (and ip6tables-save) as root on the node, or kpx collect -o DIR'
    );
  const dumps = family === 6 ? 'ip6tables-save, nft or ipvsadm' : family === 4 ? 'iptables-save, nft or ipvsadm' : 'iptables-save, ip6tables-save, nft or ipvsadm';
  return `kpx: cannot tell ${question}: no ${dumps} dump${fam} was read from the inputs (collect one as root: kpx collect -o DIR)`;
}

/** One line per kube-proxy log: what it shows, for when the question itself cannot be answered. */
export function logAccountLines(s: NodeSnapshot): string[] {
  return logAccounts(s).map((a) => `kpx: ${logAccountLine(a)}`);
}

/** The inputs lint can judge on their own, by what they are (for the line said before such a lint). */
function standaloneInputs(s: NodeSnapshot): string[] {
  const out: string[] = [];
  for (const l of s.kubeProxy?.logs ?? []) out.push(`kube-proxy's log ${l.file}`);
  for (const c of s.kubeProxy?.configs ?? []) out.push(`kube-proxy's configuration ${c.file}`);
  if (s.sysctls.size) out.push('the sysctl values');
  if (s.interfaces.some((i) => i.linkInfo !== undefined)) out.push('the links');
  if ((s.conntrack?.stats.length ?? 0) > 0) out.push('the conntrack statistics');
  return out.map((x) => printable(x, 200));
}

/** Said first when lint checks only what inputs show on their own (no ruleset was given). */
export function standaloneNotice(s: NodeSnapshot, question: string): string {
  const inputs = standaloneInputs(s);
  const list = inputs.length > 1 ? `${inputs.slice(0, -1).join(', ')} and ${inputs[inputs.length - 1]}` : (inputs[0] ?? 'the inputs');
  return `kpx: no iptables-save, ip6tables-save, nft or ipvsadm dump was read: lint checks only what ${list} show${inputs.length === 1 ? 's' : ''} on ${inputs.length === 1 ? 'its' : 'their'} own; ${question} cannot be told (collect the dumps as root: kpx collect -o DIR)`;
}
