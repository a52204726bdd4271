/**
 * `kpx report`: a one-file incident report of a node's snapshot, Markdown or HTML, answer first —
 * the problems (the judgement's verdicts that are not healthy, lint's findings), the Services they
 * touch (verdict, where traffic goes with shares, locality as the judgement states it), the other
 * Services, then every dump line mentioned, each with an anchor the mentions link to. The header
 * says which node bundle, which kpx, and what the evidence does not show.
 *
 * The command computes the typed results (src/cli/commands/report.ts: the judgement, lint over the
 * same judged resolution, the graphs asked for); everything here only words and lays them out.
 */
import type { NodeSnapshot } from '../../model/snapshot.js';
import type { ServicePort } from '../../kube/types.js';
import { serviceGraph, toDot, toMermaid } from '../../graph/index.js';
import { renderSvg, SvgUnavailable } from '../../graph/svg.js';
import { reportDocument } from './document.js';
import { renderHtml } from './html.js';
import type { ReportGraph, ReportInput } from './input.js';
import { renderMarkdown } from './markdown.js';

export type { ReportGraph, ReportInput } from './input.js';
export type { Block, Inline, Rich } from './model.js';
export { plain } from './model.js';
export { reportDocument } from './document.js';
export { htmlEscape, renderHtml } from './html.js';
export { mdText, renderMarkdown } from './markdown.js';
export { localityText, verdictWords } from './services.js';
export { evidenceGaps } from './header.js';

export type ReportFormat = 'md' | 'html';

export function renderReport(input: ReportInput, format: ReportFormat): string {
  const blocks = reportDocument(input);
  return format === 'html' ? renderHtml(blocks) : renderMarkdown(blocks);
}

/** The SVG of a graph, or undefined when Graphviz cannot run here (the report shows the Mermaid text). */
async function svgOrUndefined(dot: string): Promise<string | undefined> {
  try {
    return await renderSvg(dot);
  } catch (e) {
    if (e instanceof SvgUnavailable) return undefined;
    throw e;
  }
}

/** The graphs of the Services each `--service` selector names: SVG for HTML (when Graphviz runs), Mermaid text always. */
export async function drawGraphs(snapshot: NodeSnapshot, selections: readonly { readonly selector: string; readonly services: readonly ServicePort[] }[], svg: boolean): Promise<ReportGraph[]> {
  const out: ReportGraph[] = [];
  for (const sel of selections) {
    if (sel.services.length === 0) {
      out.push({ selector: sel.selector, services: [] });
      continue;
    }
    const graph = serviceGraph(snapshot, sel.services, `${snapshot.name}: ${sel.selector}`);
    const mermaid = toMermaid(graph);
    const drawn = svg ? await svgOrUndefined(toDot(graph)) : undefined;
    out.push({ selector: sel.selector, services: sel.services, mermaid, ...(drawn !== undefined ? { svg: drawn } : svg ? { svgUnavailable: true } : {}) });
  }
  return out;
}
