/** A trace as `-o json` prints it. */
import type { Trace, TraceStep } from '../../trace/types.js';

/** The most characters of a rule's text each JSON trace step carries (what the text renderer shows under -v). */
export const STEP_TEXT_JSON = 400;

/**
 * A trace for `-o json`: as the engine made it, but a step's rule text longer than STEP_TEXT_JSON
 * is cut there (`textTruncated: true`; file and rule say where the whole line is). Every step of
 * a rule repeats its text: a rule of 6,000 undecided statements has 6,000 steps, and their texts
 * would make the JSON grow with the square of the rule's length.
 */
export function traceJson(t: Trace): Trace {
  const long = t.outcomes.some((o) => o.steps.some((s) => s.text !== undefined && s.text.length > STEP_TEXT_JSON));
  if (!long) return t;
  return { ...t, outcomes: t.outcomes.map((o) => ({ ...o, steps: o.steps.map(boundedStep) })) };
}

export function boundedStep<S extends TraceStep>(s: S): S {
  return s.text !== undefined && s.text.length > STEP_TEXT_JSON ? { ...s, text: `${s.text.slice(0, STEP_TEXT_JSON - 1)}…`, textTruncated: true } : s;
}
