/**
 * Trace → words. The only place a trace's codes (steps, conditions, assumptions, unknown ends)
 * become text: a readable story (Service first, then each hop with its dump line). JSON is the
 * trace itself (json.ts). By concern: words.ts (phrases), kernel.ts (switches, MTU), steps.ts (one
 * step, a fate, where it goes), answer.ts (the first line), text.ts (the whole trace), no-match.ts.
 */
export { formatPct, unknownText, conditionText, assumptionText } from './words.js';
export { evidenceText, kernelFateText } from './kernel.js';
export { stepText, shownSteps, fateText, whereText } from './steps.js';
export { outcomeHead, stepLines, renderTraceText } from './text.js';
export { renderNoMatchText, renderPlanHeader } from './no-match.js';
export { STEP_TEXT_JSON, traceJson, boundedStep } from './json.js';
