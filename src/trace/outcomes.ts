/**
 * From the branches of each scenario run to a trace's outcomes: branches that end identically
 * are merged (their shares add up), scenarios whose outcomes are the same whichever way one
 * undecided match goes are merged (that match did not matter), and every scenario's shares sum to 1.
 */
import { conditionOf, type Assignment } from './scenario.js';
import type { Scenario, TraceOutcome } from './types.js';

export interface ScenarioResult {
  readonly assignments: readonly Assignment[];
  readonly outcomes: readonly TraceOutcome[];
}

const round = (p: number) => Math.round(p * 1e10) / 1e10;

/** What makes two outcomes the same end for the packet (not the road to it). A stopped packet's address does not matter. */
function endKey(o: TraceOutcome): string {
  if (o.delivery === 'stopped') return [o.verdict, o.delivery, o.fate?.code ?? ''].join('\u0000');
  const r = o.route;
  return [o.verdict, o.destination, o.masquerade, o.snatTo ?? '', o.delivery, o.fate?.code ?? '', o.unknown ? JSON.stringify(o.unknown) : '', r ? `${r.file}:${r.line}:${r.summary}` : ''].join('\u0000');
}

const byShare = (a: TraceOutcome, b: TraceOutcome) => b.probability - a.probability || (a.destination < b.destination ? -1 : 1);

/** Merge outcomes that end identically, keeping the road of the likeliest; sorted by share. */
export function mergeEnds(outcomes: readonly TraceOutcome[]): TraceOutcome[] {
  const sorted = [...outcomes].sort(byShare);
  const byKey = new Map<string, TraceOutcome>();
  for (const o of sorted) {
    const k = endKey(o);
    const prev = byKey.get(k);
    byKey.set(k, prev ? { ...prev, probability: prev.probability + o.probability, roads: (prev.roads ?? 1) + (o.roads ?? 1) } : o);
  }
  return [...byKey.values()].map((o) => ({ ...o, probability: round(o.probability) })).sort(byShare);
}

const signature = (r: ScenarioResult) =>
  r.outcomes
    .map((o) => `${endKey(o)}\u0001${o.probability}`)
    .sort()
    .join('\u0002');

const assignmentKey = (a: Assignment) => `${a.question.key}=${a.holds}`;

/** The one question two scenarios answer differently, when they agree on every other. */
function soleDifference(a: ScenarioResult, b: ScenarioResult): string | undefined {
  if (a.assignments.length !== b.assignments.length) return undefined;
  const bKeys = new Map(b.assignments.map((x) => [x.question.key, x.holds]));
  let differs: string | undefined;
  for (const x of a.assignments) {
    const other = bKeys.get(x.question.key);
    if (other === undefined) return undefined;
    if (other !== x.holds) {
      if (differs !== undefined) return undefined;
      differs = x.question.key;
    }
  }
  return differs;
}

/** Merge scenarios that differ in one answer only and end the same: that answer does not matter. */
export function mergeScenarios(results: readonly ScenarioResult[]): ScenarioResult[] {
  let list = [...results];
  for (let changed = true; changed; ) {
    changed = false;
    outer: for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const q = soleDifference(list[i], list[j]);
        if (q === undefined || signature(list[i]) !== signature(list[j])) continue;
        const merged: ScenarioResult = { assignments: list[i].assignments.filter((a) => a.question.key !== q), outcomes: list[i].outcomes };
        list = [...list.slice(0, i), merged, ...list.slice(i + 1, j), ...list.slice(j + 1)];
        changed = true;
        break outer;
      }
    }
  }
  return list;
}

/** Flatten scenarios into the trace's outcomes (each carrying its scenario's conditions) and scenarios. */
export function flatten(results: readonly ScenarioResult[]): { outcomes: TraceOutcome[]; scenarios: Scenario[] } {
  const outcomes: TraceOutcome[] = [];
  const scenarios: Scenario[] = [];
  for (const r of results) {
    const seen = new Set<string>();
    const conditions = r.assignments.filter((a) => !seen.has(assignmentKey(a)) && seen.add(assignmentKey(a))).map(conditionOf);
    const indexes: number[] = [];
    for (const o of r.outcomes) {
      indexes.push(outcomes.length);
      outcomes.push({ ...o, conditions });
    }
    scenarios.push({ conditions, outcomes: indexes });
  }
  return { outcomes, scenarios };
}
