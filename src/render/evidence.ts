/**
 * What the inputs could not answer, in words for stderr: the inputs not used, those read in part,
 * and the "cannot tell" sentence when no ruleset answers the question (src/judge/inputs.ts decides).
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { printable } from '../source/index.js';
import { logAccounts } from '../kube/kube-proxy-account.js';
import { logAccountLine } from './kube-proxy-account.js';
import { PARTIAL, filesWithLineErrors, hasRuleEvidence, iptablesNftKubeTables, unusableInputs } from '../judge/inputs.js';
import type { PartialListing } from '../judge/types.js';

/**
 * Said on stderr before any answer: which inputs were not used and which had bad lines.
 */
export function inputProblemLines(s: NodeSnapshot): string[] {
  const lines = unusableInputs(s).map((u) => `kpx: ${printable(u.path, 4096)}: ${u.why}${/\bnot (read|used)\b|not the whole node/.test(u.why) ? '' : '; not used'}`);
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
  return lines;
}

/**
 * The judgement's iptables tables shown only in part (src/judge/evidence.ts partialListings: listings
 * of some chains, `-S` of one chain or through grep, greps without a `*table` line) in words — one
 * phrase per file, or undefined when there are none. A claim that something is absent cannot rest on such evidence.
 */
export function partialRulesNote(listings: readonly PartialListing[]): string | undefined {
  const parts = listings.map((l) => {
    const what = l.tables.map((t) => {
      const table = t.guessed ? `table ${t.table}, guessed` : `table ${t.table}`;
      if (!t.shown) return `a fragment (${table})`;
      const listed = t.shown.chains;
      const kind = t.shown.source === 'rules' ? '`iptables -S`' : 'a listing';
      return listed.length ? `${kind} of ${listed.length <= 3 ? `chain${listed.length > 1 ? 's' : ''} ${listed.join(', ')}` : `${listed.length} chains`} (${table})` : `${kind} shown in part (${table})`;
    });
    return `${printable(l.file, 4096)}: ${what.join('; ')}`;
  });
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
