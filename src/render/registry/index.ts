/**
 * The output registry (as knip's reporters): every command's app function (src/app) returns a
 * typed result; this table maps (result kind, output format) to the renderer that turns it into
 * words. The CLI never chooses a format by hand: it asks `renderResult`. A pair that is not here
 * is a RenderError (exit 2), never a silent default; test/render/registry.test.ts checks that
 * every (command, -o) pair the CLI accepts has a renderer for each result kind its command makes.
 *
 * A new output format: a renderer under src/render/<result>/, one line per result kind below, and
 * the choice in the command's `-o` option (src/cli/program.ts). See docs/ARCHITECTURE.md.
 *
 * A folder of its own (an area in test/layering/layers.js): the table sits above every renderer,
 * the node's (src/render) and the cluster's (src/render/cluster, which reads src/cluster's types).
 */
import type { Renderer, Rendered, RenderContext } from '../output.js';
import { RenderError } from '../output.js';
import { servicesJson, servicesText, servicesYaml, type ServicesResult } from '../services/output.js';
import { noMatchJson, noMatchText, traceApiText, traceJsonOut, traceText, unknownMatchJson, unknownMatchText, type NoMatchResult, type TraceApiResult, type TraceResult, type TraceUnknownMatchResult } from '../trace/output.js';
import { lintGithub, lintJson, lintSarif, lintText, rulesJson, rulesText, type LintOutcomeResult, type LintRulesResult } from '../lint/output.js';
import { inspectJson, inspectText, type InspectResult } from '../inspect/output.js';
import { dumpIptablesSave, dumpJson, type DumpResult } from '../dump/output.js';
import { diffJson, diffText, type DiffResult } from '../diff/output.js';
import { reverseJson, reverseText, type ReverseOutcomeResult } from '../reverse/output.js';
import { schemaJson, schemaListText, type SchemaListResult, type SchemaResult } from '../schema/output.js';
import { summaryJson, type SummaryResult } from '../summary/output.js';
import { servicesNodesJson, servicesNodesText, servicesNodesYaml, traceClusterJson, traceClusterText, type ServicesNodesResult, type TraceClusterResult } from '../cluster/output.js';

export type Result =
  | ServicesResult
  | TraceResult
  | TraceUnknownMatchResult
  | TraceApiResult
  | NoMatchResult
  | LintOutcomeResult
  | LintRulesResult
  | InspectResult
  | DumpResult
  | DiffResult
  | ReverseOutcomeResult
  | SchemaListResult
  | SchemaResult
  | SummaryResult
  | ServicesNodesResult
  | TraceClusterResult;

export type ResultKind = Result['kind'];
type Table = { readonly [K in ResultKind]: Readonly<Record<string, Renderer<Extract<Result, { kind: K }>>>> };

const text = <R>(r: Renderer<R>) => ({ text: r });
/** A miss is said the same way whatever the format (on stderr), except where a command prints a JSON document for it. */
const noMatch = { text: noMatchText, wide: noMatchText, yaml: noMatchText, json: noMatchJson };

export const RENDERERS: Table = {
  services: { text: servicesText(false), wide: servicesText(true), json: servicesJson, yaml: servicesYaml },
  trace: { text: traceText, json: traceJsonOut },
  'trace-unknown-match': { text: unknownMatchText, json: unknownMatchJson },
  // The API's explanation is only asked for text; -o json says the miss as a document.
  'trace-api': { text: traceApiText },
  'no-match': noMatch,
  lint: { text: lintText, json: lintJson, sarif: lintSarif, github: lintGithub },
  // The catalogue is JSON or text: -o sarif and -o github list it as text.
  'lint-rules': { text: rulesText, json: rulesJson, sarif: rulesText, github: rulesText },
  inspect: { text: inspectText, json: inspectJson },
  dump: { 'iptables-save': dumpIptablesSave, json: dumpJson },
  diff: { text: diffText, json: diffJson },
  reverse: { text: reverseText, json: reverseJson },
  'schema-list': text(schemaListText),
  schema: { json: schemaJson },
  summary: { json: summaryJson },
  'services-nodes': { text: servicesNodesText, wide: servicesNodesText, json: servicesNodesJson, yaml: servicesNodesYaml },
  'trace-cluster': { text: traceClusterText, json: traceClusterJson },
};

/** The result kinds each command's app function may return (what the registry test checks against each command's -o choices). */
export const COMMAND_RESULTS: Readonly<Record<string, readonly ResultKind[]>> = {
  services: ['services', 'no-match', 'services-nodes'],
  trace: ['trace', 'trace-unknown-match', 'trace-api', 'no-match', 'trace-cluster'],
  lint: ['lint', 'lint-rules'],
  'migrate-check': ['lint', 'lint-rules'],
  inspect: ['inspect'],
  dump: ['dump'],
  diff: ['diff'],
  reverse: ['reverse'],
  summarize: ['summary'],
};

/** Results made only for people (the app is told `forPeople`): a trace's explanation from the API's objects. */
export const PEOPLE_ONLY: ReadonlySet<ResultKind> = new Set(['trace-api']);

/** Formats for people at a terminal (a spinner may show while the inputs are read); the others are for programs. */
export const FOR_PEOPLE: ReadonlySet<string> = new Set(['text', 'wide']);

/** The renderer of (kind, format), or undefined. */
export function rendererOf(kind: ResultKind, format: string): Renderer<Result> | undefined {
  const row = RENDERERS[kind] as Readonly<Record<string, Renderer<Result>>>;
  return Object.hasOwn(row, format) ? row[format] : undefined;
}

/** The result in the format asked for; a pair without a renderer is a RenderError (exit 2). */
export function renderResult(result: Result, format: string, ctx: RenderContext): Rendered {
  const render = rendererOf(result.kind, format);
  if (!render) throw new RenderError(`-o ${format}: no ${format} output for ${result.kind} (formats: ${Object.keys(RENDERERS[result.kind]).join(', ')})`);
  return render(result, ctx);
}
