/** `kpx trace` (one node): its results, and the renderers of -o text and -o json. */
import type { Trace } from '../../trace/types.js';
import type { Plan, PlannedTrace, Target } from '../../trace/target.js';
import type { FlowJudgement } from '../../judge/index.js';
import { printable } from '../../source/index.js';
import { flowJudgementJson, noServiceText, nodeNotes } from '../judgement.js';
import { writeJsonDeep } from '../json-deep-stream.js';
import { renderJson } from '../json.js';
import { versioned } from '../schemas/index.js';
import { jsonText, type RenderContext, type Rendered } from '../output.js';
import type { NodeFacts } from '../services.js';
import { renderTraceText } from './text.js';
import { renderPlanHeader, renderNoMatchText } from './no-match.js';
import { traceJson } from './json.js';

export interface TraceResult {
  readonly kind: 'trace';
  readonly target: Target;
  readonly planned: readonly PlannedTrace[];
  readonly traces: readonly Trace[];
  readonly judgements: readonly FlowJudgement[];
  readonly node: NodeFacts;
  readonly verbose: boolean;
}

/** The target names nothing here and the evidence cannot show that nothing is (exit 3). */
export interface TraceUnknownMatchResult {
  readonly kind: 'trace-unknown-match';
  readonly target: Target;
  readonly plan: Extract<Plan, { kind: 'no-match' }>;
  readonly judgement: NonNullable<FlowJudgement['noService']>;
}

/** A Service the API's objects explain (headless, ExternalName, not programmed here): said as text. */
export interface TraceApiResult {
  readonly kind: 'trace-api';
  readonly text: string;
}

/**
 * A target that names nothing here: the near misses, for people on stderr; as a JSON document
 * (`document`) on stdout where the command prints one for a miss (trace, trace across nodes).
 */
export interface NoMatchResult {
  readonly kind: 'no-match';
  readonly plan: Extract<Plan, { kind: 'no-match' }>;
  readonly document?: 'trace' | 'trace-cluster';
}

export const traceText = (r: TraceResult, ctx: RenderContext): Rendered => {
  const notes = nodeNotes(r.node, { trace: true });
  const text = `${notes.map((n) => `${n}\n`).join('')}${renderPlanHeader(r.target, r.planned, ctx.c)}${r.traces.map((t, i) => renderTraceText(t, ctx.c, { verbose: r.verbose, judgement: r.judgements[i] })).join('\n')}`;
  return { via: 'text', text };
};

// Written piece by piece: a trace of thousands of undecided statements is more text than one string holds.
export const traceJsonOut = (r: TraceResult): Rendered => ({
  via: 'json',
  write: (sink) => writeJsonDeep(versioned('trace', { traces: r.traces.map((t, i) => ({ ...traceJson(t), judgement: flowJudgementJson(r.judgements[i]) })) }), sink),
});

export const unknownMatchText = (r: TraceUnknownMatchResult, ctx: RenderContext): Rendered => ({ via: 'text', text: `${ctx.c.yellow(printable(noServiceText(r.judgement, r.target.text), 2000))}\n` });

export const unknownMatchJson = (r: TraceUnknownMatchResult): Rendered => jsonText(renderJson(versioned('trace', { traces: [], noMatch: { ...r.plan, judgement: r.judgement } })));

export const noMatchText = (r: NoMatchResult, ctx: RenderContext): Rendered => ({ via: 'stderr', text: renderNoMatchText(r.plan, ctx.cErr) });

export const noMatchJson = (r: NoMatchResult, ctx: RenderContext): Rendered => (r.document ? jsonText(renderJson(versioned(r.document, { traces: [], noMatch: r.plan }))) : noMatchText(r, ctx));

export const traceApiText = (r: TraceApiResult): Rendered => ({ via: 'text', text: r.text });
