/** `kpx summarize -o json`: one node's compact summary, one JSON line. */
import { renderJsonLine } from '../json.js';
import { jsonText, type Rendered } from '../output.js';

export interface SummaryResult {
  readonly kind: 'summary';
  /** The summary document (src/cluster/summary.ts nodeSummary). */
  readonly summary: unknown;
}
export const summaryJson = (r: SummaryResult): Rendered => jsonText(renderJsonLine(r.summary));
