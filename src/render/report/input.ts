/** What the report is made from: typed results only (the command computes them; the renderers word them). */
import type { NodeJudgement } from '../../judge/index.js';
import type { ServicePort } from '../../kube/types.js';
import type { LintResult } from '../../lint/run.js';

/** A graph of the Services one `--service` selector names. */
export interface ReportGraph {
  readonly selector: string;
  readonly services: readonly ServicePort[];
  /** Graphviz's SVG (HTML), when it could be drawn. */
  readonly svg?: string;
  /** The same graph as Mermaid text (Markdown, and HTML when Graphviz could not run). */
  readonly mermaid?: string;
  /** HTML asked for SVG and Graphviz could not run here. */
  readonly svgUnavailable?: boolean;
}

export interface ReportInput {
  /** The node's judgement: its judged Service ports, the evidence kinds, stale rules, leftovers. */
  readonly node: NodeJudgement;
  /** Lint's result over the same judged resolution; null when lint was not run (`--no-lint`). */
  readonly lint: LintResult | null;
  readonly graphs?: readonly ReportGraph[];
  /** kpx's version (src/version.ts). */
  readonly version: string;
  /** When the report was made (ISO time; fixed in tests). */
  readonly generatedAt: string;
  /** At most this many problems listed (default 200; the count says how many there are). */
  readonly maxProblems?: number;
  /** At most this many Services shown in detail (default 100). */
  readonly maxServices?: number;
}
