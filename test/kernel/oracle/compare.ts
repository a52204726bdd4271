/**
 * Differential comparison: kpx's `tracePacket` prediction against what the real kernel did
 * (test/kernel/harness). For one (dump, case):
 *  (a) outcome sets agree: every outcome kpx gives probability >= 5/N is seen, and nothing
 *      kpx calls impossible is seen;
 *  (b) verdicts agree: DNAT (destination changed) / pass (NONE or ACCEPT: destination
 *      unchanged) / DROP / REJECT;
 *  (c) masquerade agrees per outcome (the kernel's masqueraded count is all or none, and
 *      kpx says the same);
 *  (d) the kernel's split is consistent with kpx's probabilities (chi-square at
 *      DEFAULT_ALPHA), with N chosen by `packetsFor` so that a wrong ladder fails.
 *
 * kpx is given the same dump text, the node's addresses as `--node-ip`, and the SAME
 * source address the harness used (`{ ip }`), so both sides see the same packet.
 */
import { formatIp, parseIp, splitHostPort } from '../../../src/model/addr.js';
import { parseInput } from '../../../src/load/index.js';
import { assembleSnapshot } from '../../../src/load/snapshot.js';
import type { NodeSnapshot } from '../../../src/model/snapshot.js';
import { resolveServices } from '../../../src/kube/resolve.js';
import type { Resolution } from '../../../src/kube/types.js';
import { parseDestination, type Destination } from '../../../src/trace/packet.js';
import { tracePacket } from '../../../src/trace/trace.js';
import type { Trace, Verdict } from '../../../src/trace/types.js';
import { conditionText } from '../../../src/render/trace/index.js';
import {
  binomialConsistent,
  chiSquareConsistent,
  DEFAULT_ALPHA,
  outcomeKey,
  parseConntrack,
  samplesToDistinguish,
  type KernelCase,
  type KernelObservation,
  type KernelScenario,
  type KernelSource,
} from '../harness/index.js';

/** A dump replayed in the kernel and read by kpx. */
export interface OracleDump {
  readonly name: string;
  readonly scenario: KernelScenario;
  /**
   * What kpx reads. Default: the scenario's own texts. 'kernel-nft-listing': `nft list
   * ruleset` as the kernel prints it back after loading the scenario (KernelNode.nftRuleset):
   * the scenario's `nft` is then an `nft -f` script, not something users would hand kpx.
   */
  readonly kpxReads?: 'kernel-nft-listing';
}

/** What the kernel can tell apart: destination changed, unchanged, dropped, rejected. */
export type KernelVerdict = 'DNAT' | 'PASS' | 'DROP' | 'REJECT';

export interface OracleCase {
  readonly label: string;
  readonly proto: KernelCase['proto'];
  readonly dst: string;
  readonly dport: number;
  readonly from: KernelSource;
  /** Default: packetsFor(kpx's prediction). */
  readonly packets?: number;
  readonly clearRecentEachPacket?: boolean;
  readonly timeoutMs?: number;
  /**
   * The case's premise, checked against the kernel (not against kpx): guards a case from
   * silently testing something else (a VIP typo would make both sides say PASS).
   */
  readonly premise?: { readonly verdicts?: readonly KernelVerdict[]; readonly outcomes?: number; readonly masquerade?: boolean };
  /** Source is a DNAT target (hairpin): the harness sends from the pods namespace; oracle/hairpin.ts checks the source is an endpoint. */
  readonly hairpin?: boolean;
}

/** kpx's prediction reduced to what the kernel can observe, keyed like KernelObservation.outcomes. */
export interface PredictedOutcome {
  readonly key: string;
  readonly probability: number;
  readonly verdict: KernelVerdict;
  /** kpx verdicts merged into this key (DNAT, ACCEPT, NONE, …). */
  readonly kpxVerdicts: readonly Verdict[];
  /** Share of this outcome's probability that kpx says is masqueraded (0 or 1 normally). */
  readonly masqueradeShare: number;
  readonly conditions: readonly string[];
}

export interface Prediction {
  readonly outcomes: readonly PredictedOutcome[];
  /** Probabilities by key (sums to 1). */
  readonly probs: Readonly<Record<string, number>>;
}

export interface Comparison {
  readonly ok: boolean;
  /** One line per disagreement (empty when kpx and the kernel agree). */
  readonly problems: readonly string[];
  /** Premise failures (the kernel did not do what the case was written for). */
  readonly premise: readonly string[];
  readonly prediction: Prediction;
  readonly observed: Readonly<Record<string, number>>;
  readonly masqueraded: Readonly<Record<string, number>>;
  readonly chi: ReturnType<typeof chiSquareConsistent>;
  /** One-line summary for messages and the run log. */
  readonly summary: string;
}

export interface KpxNode {
  readonly snapshot: NodeSnapshot;
  readonly resolution: Resolution;
}

/** Load the dump's texts into a kpx snapshot, the node addresses given as --node-ip. */
export async function loadKpx(dump: OracleDump): Promise<KpxNode> {
  const s = dump.scenario;
  const texts: [string, string | undefined][] = [
    ['iptables-save', s.iptables],
    ['ip6tables-save', s.ip6tables],
    ['ipset-save', s.ipsetSave],
    ['nft', s.nft],
  ];
  const parsed = [];
  for (const [name, text] of texts) {
    if (!text) continue;
    const file = await parseInput({ path: `${dump.name}/${name}`, text, bytes: Buffer.byteLength(text) });
    const errors = file.diagnostics.filter((d) => d.severity === 'error');
    if (file.format === 'unknown' || errors.length) {
      throw new Error(`kpx could not read ${dump.name}/${name} (${file.format}): ${errors.map((d) => `${d.line}: ${d.message}`).join('; ')}`);
    }
    parsed.push(file);
  }
  const snapshot = assembleSnapshot(parsed, { name: dump.name, nodeIps: s.nodeAddresses });
  return { snapshot, resolution: await resolveServices(snapshot) };
}

/** Canonical outcome key of an `ip:port` text (IPv6 bracketed, compressed), as the harness writes it. */
export function canonicalKey(destination: string): string {
  const hp = splitHostPort(destination);
  if (!hp) return destination;
  return outcomeKey(formatIp(hp.ip), hp.port);
}

function destinationOf(c: { dst: string; dport: number; proto: string }): Destination {
  const d = parseDestination(`${c.dst.includes(':') ? `[${c.dst}]` : c.dst}:${c.dport}/${c.proto}`);
  if (typeof d === 'string') throw new Error(d);
  return d;
}

/** kpx's trace for the packet the kernel saw (same source address and port). */
export function kpxTrace(kpx: KpxNode, c: Pick<OracleCase, 'proto' | 'dst' | 'dport'>, source: string, sport?: number): Trace {
  return tracePacket(kpx.snapshot, kpx.resolution, destinationOf(c), c.proto, {
    from: { ip: source },
    ...(sport !== undefined ? { sport } : {}),
    assumptions: { established: false, affinityHit: false },
  });
}

/** Reduce a trace to the kernel's observable outcomes (merging equal keys). */
export function predictionOf(trace: Trace): Prediction {
  const original = canonicalKey(`${trace.packet.dst.includes(':') ? `[${trace.packet.dst}]` : trace.packet.dst}:${trace.packet.dport}`);
  const acc = new Map<string, { p: number; masq: number; verdicts: Set<Verdict>; conditions: string[]; verdict: KernelVerdict }>();
  for (const o of trace.outcomes) {
    let key: string;
    let verdict: KernelVerdict;
    if (o.verdict === 'DROP' || o.verdict === 'REJECT') {
      key = o.verdict;
      verdict = o.verdict;
    } else {
      key = canonicalKey(o.destination);
      verdict = o.verdict === 'DNAT' && key !== original ? 'DNAT' : 'PASS';
    }
    const a = acc.get(key) ?? { p: 0, masq: 0, verdicts: new Set<Verdict>(), conditions: [], verdict };
    a.p += o.probability;
    if (o.masquerade) a.masq += o.probability;
    a.verdicts.add(o.verdict);
    a.conditions.push(...o.conditions.map(conditionText));
    acc.set(key, a);
  }
  const outcomes: PredictedOutcome[] = [...acc.entries()].map(([key, a]) => ({
    key,
    probability: a.p,
    verdict: a.verdict,
    kpxVerdicts: [...a.verdicts],
    // DROP/REJECT cannot be masqueraded in the kernel's eyes (no conntrack entry survives).
    masqueradeShare: a.verdict === 'DROP' || a.verdict === 'REJECT' ? 0 : a.p > 0 ? a.masq / a.p : 0,
    conditions: [...new Set(a.conditions)],
  }));
  const sum = outcomes.reduce((s, o) => s + o.probability, 0);
  const probs: Record<string, number> = {};
  for (const o of outcomes) probs[o.key] = o.probability / sum; // kpx rounds to 1e-10
  return { outcomes, probs };
}

/** What kind of outcome a kernel key is, given the original destination key. */
export function kernelVerdict(key: string, original: string): KernelVerdict {
  if (key === 'DROP' || key === 'REJECT') return key;
  return key === original ? 'PASS' : 'DNAT';
}

/**
 * The classic subtle mistake in a `-m statistic` ladder, for sizing N: every rung off by one
 * (1/(n+1), 1/n, … instead of 1/n, 1/(n-1), …), i.e. shares 1/(n+1) each and 2/(n+1) for
 * the last endpoint (for n = 2: 1/3 and 2/3 instead of 1/2 and 1/2).
 */
export function offByOneLadder(probs: Readonly<Record<string, number>>): Record<string, number> {
  const keys = Object.keys(probs).filter((k) => probs[k] > 0);
  const n = keys.length;
  const out: Record<string, number> = {};
  keys.forEach((k, i) => (out[k] = i === n - 1 ? 2 / (n + 1) : 1 / (n + 1)));
  return out;
}

export const MIN_PACKETS = 40;
export const MAX_PACKETS = 2000;

/**
 * Packets for a case: enough that the off-by-one ladder fails (the most separable cell at
 * 99.9% power: samplesToDistinguish; the ladder's order is not known here, so both orders of
 * kpx's outcomes are tried and the larger N kept), enough that every outcome of probability p
 * is expected at least 20 times (so "never seen" is not luck), and at least MIN_PACKETS.
 */
export function packetsFor(probs: Readonly<Record<string, number>>): number {
  const keys = Object.keys(probs).filter((k) => probs[k] > 0);
  let n = MIN_PACKETS;
  if (keys.length > 1) {
    for (const order of [keys, [...keys].reverse()]) {
      const wrong = offByOneLadder(Object.fromEntries(order.map((k) => [k, probs[k]])));
      const needs = order.map((k) => (Math.abs(probs[k] - wrong[k]) > 1e-9 ? samplesToDistinguish(probs[k], wrong[k]) : Infinity)).filter(Number.isFinite);
      if (needs.length) n = Math.max(n, Math.min(...needs));
    }
    n = Math.max(n, Math.ceil(20 / Math.min(...keys.map((k) => probs[k]))));
  }
  return Math.min(n, MAX_PACKETS);
}

/** The source address the kernel used: the harness's, or (from the node) conntrack's original source. */
export function observedSource(obs: KernelObservation, c: Pick<OracleCase, 'proto' | 'dst' | 'dport'>, nodeAddresses: readonly string[]): string {
  if (obs.source) return obs.source;
  const family = parseIp(c.dst)!.family;
  const dst = formatIp(parseIp(c.dst)!);
  for (const e of parseConntrack(obs.raw)) {
    const o = parseIp(e.orig.dst);
    if (e.proto === c.proto && o && formatIp(o) === dst && e.orig.dport === c.dport) return e.orig.src;
  }
  // Nothing confirmed (dropped/rejected on the OUTPUT path): the route's source, the node's first address.
  const mine = nodeAddresses.find((a) => parseIp(a)?.family === family);
  if (!mine) throw new Error(`no IPv${family} node address to send from`);
  return mine;
}

/** Compare one kernel observation with kpx's prediction. */
export function compare(
  prediction: Prediction,
  obs: Pick<KernelObservation, 'total' | 'outcomes' | 'masqueraded'>,
  original: string,
  premise?: OracleCase['premise'],
  alpha = DEFAULT_ALPHA,
): Comparison {
  const problems: string[] = [];
  const N = obs.total;
  const byKey = new Map(prediction.outcomes.map((o) => [o.key, o]));
  // (a) outcome sets.
  for (const o of prediction.outcomes) {
    if (o.probability * N >= 5 && !(obs.outcomes[o.key] > 0)) {
      problems.push(`kpx predicts ${o.key} (${o.verdict}, p=${fmt(o.probability)}) but the kernel never did it in ${N} packets`);
    }
  }
  for (const [k, n] of Object.entries(obs.outcomes)) {
    if (n > 0 && !((byKey.get(k)?.probability ?? 0) > 0)) {
      problems.push(`the kernel gave ${k} (${kernelVerdict(k, original)}) ${n}/${N} times; kpx says it cannot happen`);
    }
  }
  // (b) verdicts, (c) masquerade, per outcome both sides have.
  for (const [k, n] of Object.entries(obs.outcomes)) {
    const p = byKey.get(k);
    if (!p || n === 0) continue;
    const kv = kernelVerdict(k, original);
    if (kv !== p.verdict) problems.push(`${k}: the kernel's verdict is ${kv}, kpx's is ${p.verdict} (${p.kpxVerdicts.join('/')})`);
    const m = obs.masqueraded[k] ?? 0;
    if (p.masqueradeShare === 0 || p.masqueradeShare === 1) {
      const want = p.masqueradeShare === 1 ? n : 0;
      if (m !== want) {
        problems.push(`${k}: the kernel masqueraded ${m}/${n}, kpx says ${p.masqueradeShare === 1 ? 'always' : 'never'}`);
      }
    } else if (!binomialConsistent(m, n, p.masqueradeShare, alpha)) {
      problems.push(`${k}: the kernel masqueraded ${m}/${n}, kpx says a share of ${fmt(p.masqueradeShare)}`);
    }
  }
  // kpx was given everything these dumps need (node addresses, no ipsets/interfaces used):
  // a match it left undecided means its outcome set is a union of guesses.
  const undecided = [...new Set(prediction.outcomes.flatMap((o) => o.conditions))];
  if (undecided.length) problems.push(`kpx left matches undecided: ${undecided.join('; ')}`);
  // (d) the split.
  const chi = chiSquareConsistent(obs.outcomes, prediction.probs, alpha);
  if (!chi.consistent) problems.push(`split: ${chi.reason} (kernel ${fmtCounts(obs.outcomes)}, kpx ${fmtProbs(prediction.probs)})`);
  else {
    // The chi-square test spreads its power over every outcome; packetsFor() sizes N so that one
    // wrong share is caught by its own binomial test. Check each outcome too (Bonferroni: α/k each).
    const keys = Object.keys(prediction.probs).filter((k) => prediction.probs[k] > 0);
    const total = Object.values(obs.outcomes).reduce((a, b) => a + b, 0);
    for (const k of keys) {
      const seen = obs.outcomes[k] ?? 0;
      if (keys.length > 1 && !binomialConsistent(seen, total, prediction.probs[k], alpha / keys.length)) {
        problems.push(`split: chi2 passed but ${k} got ${seen}/${total}, far from kpx's ${(prediction.probs[k] * 100).toFixed(2)}% (binomial, α=${alpha}/${keys.length}; kernel ${fmtCounts(obs.outcomes)})`);
      }
    }
  }

  const premiseProblems: string[] = [];
  if (premise?.verdicts) {
    const seen = [...new Set(Object.keys(obs.outcomes).filter((k) => obs.outcomes[k] > 0).map((k) => kernelVerdict(k, original)))].sort();
    const want = [...premise.verdicts].sort();
    if (seen.join() !== want.join()) premiseProblems.push(`premise: the kernel's verdicts are ${seen.join('+') || 'none'}, the case expects ${want.join('+')}`);
  }
  if (premise?.outcomes !== undefined) {
    const seen = Object.values(obs.outcomes).filter((v) => v > 0).length;
    if (seen !== premise.outcomes) premiseProblems.push(`premise: the kernel gave ${seen} distinct outcomes, the case expects ${premise.outcomes}`);
  }
  if (premise?.masquerade !== undefined) {
    const m = Object.values(obs.masqueraded).reduce((a, b) => a + b, 0);
    const pass = Object.entries(obs.outcomes).filter(([k]) => k !== 'DROP' && k !== 'REJECT').reduce((a, [, v]) => a + v, 0);
    if (premise.masquerade ? m !== pass || pass === 0 : m !== 0) premiseProblems.push(`premise: the kernel masqueraded ${m}/${pass}, the case expects ${premise.masquerade ? 'all' : 'none'}`);
  }
  const summary = `kernel ${fmtCounts(obs.outcomes)}${Object.keys(obs.masqueraded).length ? ` masq ${fmtCounts(obs.masqueraded)}` : ''} | kpx ${prediction.outcomes
    .map((o) => `${o.key} ${o.verdict} ${fmt(o.probability)}${o.masqueradeShare ? ' masq' : ''}`)
    .join(', ')} | chi2 p=${Number.isFinite(chi.pValue) ? chi.pValue.toPrecision(3) : chi.pValue}`;
  return { ok: problems.length === 0, problems, premise: premiseProblems, prediction, observed: obs.outcomes, masqueraded: obs.masqueraded, chi, summary };
}

function fmt(p: number): string {
  return Number(p.toFixed(4)).toString();
}
function fmtCounts(m: Readonly<Record<string, number>>): string {
  return `{${Object.entries(m)
    .sort()
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')}}`;
}
function fmtProbs(m: Readonly<Record<string, number>>): string {
  return fmtCounts(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Number(v.toFixed(4))])));
}

/** The original destination as an outcome key. */
export function originalKey(c: Pick<OracleCase, 'dst' | 'dport'>): string {
  return outcomeKey(c.dst, c.dport);
}
