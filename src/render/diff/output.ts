/** `kpx diff`: what changed between two snapshots, as text or as the SnapshotDiff itself. */
import type { SnapshotDiff } from '../../diff/index.js';
import { renderJson } from '../json.js';
import { versioned } from '../schemas/index.js';
import { jsonText, type RenderContext, type Rendered } from '../output.js';
import { renderDiffText } from './text.js';

export interface DiffResult {
  readonly kind: 'diff';
  readonly diff: SnapshotDiff;
  /** Text: at most this many changed rules per chain. */
  readonly maxRules: number;
}
export const diffText = (r: DiffResult, ctx: RenderContext): Rendered => ({ via: 'text', text: renderDiffText(r.diff, ctx.c, { maxRules: r.maxRules }) });
export const diffJson = (r: DiffResult): Rendered => jsonText(renderJson(versioned('diff', r.diff)));
