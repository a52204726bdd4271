/**
 * Can the inputs answer the question at all? Which inputs gave no evidence (unreadable, not a dump,
 * a collection that failed), which were read in part, and whether a ruleset is left to answer from.
 * Without one, a command says "cannot tell" (exit 3, ExitCode.CannotTell) instead of "nothing found";
 * the sentences are src/render/evidence.ts's.
 */
import type { NodeSnapshot } from '../model/snapshot.js';

/**
 * 0 ok (an answer, possibly "nothing found" from whole evidence); 1 findings (lint at --fail-on) or
 * input files with errors (inspect); 2 usage, input or output error; 3 cannot tell: the inputs hold
 * no evidence that answers the question (no ruleset for the family, only unreadable or unknown
 * files), or the judgement (src/judge) finds the answer wholly unknown — every traced flow UNKNOWN,
 * every Service port shown unknown, or "nothing here" resting on evidence that is not whole.
 */
export const ExitCode = { Ok: 0, Findings: 1, Error: 2, CannotTell: 3 } as const;

/** Diagnostics that mean a whole file gave no evidence (as opposed to one bad line in a dump). */
export const UNUSABLE = new Set([
  'input/unreadable',
  'input/unknown-format',
  'collect/failed',
  'collect/incomplete',
  'internal/parser-crash',
  // The input layer's refusals (src/load/input.ts, src/load/bundle.ts): listed, never read.
  'input/too-large',
  'input/special-file',
  'input/symlink-loop',
  'input/too-deep',
  'input/too-many-entries',
  'input/duplicate',
  'input/outside-bundle',
]);

/** Read only in part: the text before the damage was used. */
export const PARTIAL = new Set(['input/gzip-damaged']);

export interface UnusableInput {
  readonly path: string;
  readonly why: string;
}

export function unusableInputs(s: NodeSnapshot): UnusableInput[] {
  const out: UnusableInput[] = [];
  for (const f of s.files) {
    // A listing that is not kube-proxy's (Cilium's tables, a capture) is recognised and said, never read.
    const d = f.diagnostics.find((x) => ((x.severity === 'error' || x.code === 'input/duplicate' || x.code === 'input/outside-bundle') && UNUSABLE.has(x.code)) || x.code === 'input/not-kube-proxy');
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

/** Cannot tell (services): every Service port shown is unknown — unless unknown ones were asked for (--state). */
export function servicesWhollyUnknown(shown: readonly { readonly state: string }[], stateAsked: boolean): boolean {
  return !stateAsked && shown.length > 0 && shown.every((s) => s.state === 'unknown');
}

/** Cannot tell (trace): every traced flow's answer is wholly unknown. */
export function flowsWhollyUnknown(judgements: readonly { readonly cannotTell: boolean }[]): boolean {
  return judgements.length > 0 && judgements.every((j) => j.cannotTell);
}
