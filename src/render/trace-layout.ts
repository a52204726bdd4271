/**
 * The shape of a trace on screen, without words: which outcome comes first, which steps every
 * outcome shares (printed once), and how a line is folded to fit the terminal width. The words
 * are in trace.ts.
 */
import { splitHostPort } from '../model/addr.js';
import type { TraceOutcome, TraceStep } from '../trace/types.js';
import { minOf } from '../source/index.js';

/** Outcomes by share (largest first), then by destination address and port, then verdict. */
export function compareOutcomes(a: TraceOutcome, b: TraceOutcome): number {
  // Shares from iptables' 11-digit probabilities differ in the last bits: 1/7 and 1/7 are equal here.
  if (Math.abs(a.probability - b.probability) > 1e-9) return b.probability - a.probability;
  const x = splitHostPort(a.destination);
  const y = splitHostPort(b.destination);
  if (x && y) {
    if (x.ip.family !== y.ip.family) return x.ip.family - y.ip.family;
    if (x.ip.value !== y.ip.value) return x.ip.value < y.ip.value ? -1 : 1;
    if ((x.port ?? 0) !== (y.port ?? 0)) return (x.port ?? 0) - (y.port ?? 0);
  } else if (a.destination !== b.destination) return a.destination < b.destination ? -1 : 1;
  return a.verdict < b.verdict ? -1 : a.verdict > b.verdict ? 1 : 0;
}

/**
 * Two steps are the same step when every field is (same rule, same action, same share). The rule's
 * text is left out of the key: it is the same for the same file and rule, and a rule of thousands
 * of statements would make every key as long as the rule (issue 34: quadratic in the statements).
 */
const stepKey = (s: TraceStep) => JSON.stringify(s, (k, v) => (k === 'text' ? undefined : v));

/**
 * Where roads agree: the steps every road starts with (`before`) and ends with (`after`). Each
 * road's own steps are `road.slice(before, road.length - after)`. With one road, nothing is shared.
 */
export function sharedSteps(roads: readonly (readonly TraceStep[])[], opts: { kernelTails?: boolean } = {}): { before: number; after: number; tails: number[] } {
  // The kernel's checks on the way out (bridge netfilter, MTU) differ per outcome and come last: with
  // `kernelTails`, each road's trailing kernel steps are set aside (its tail) so the netfilter steps
  // every outcome shares before them are still found.
  const tails = roads.map((r) => {
    let t = 0;
    if (opts.kernelTails) while (t < r.length && r[r.length - 1 - t].dialect === 'kernel') t++;
    return t;
  });
  if (roads.length < 2) return { before: 0, after: 0, tails: tails.map(() => 0) };
  const keys = roads.map((r, i) => r.slice(0, r.length - tails[i]).map(stepKey));
  const shortest = minOf(keys.map((k) => k.length));
  let before = 0;
  while (before < shortest && keys.every((k) => k[before] === keys[0][before])) before++;
  let after = 0;
  while (after < shortest - before && keys.every((k) => k[k.length - 1 - after] === keys[0][keys[0].length - 1 - after])) after++;
  // Without a shared suffix the tails stay in place (nothing is printed between a road and its tail).
  return { before, after, tails: after > 0 ? tails : tails.map(() => 0) };
}

export { fold, wrapWords } from './width.js';
