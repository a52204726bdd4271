/** `kpx reverse`: which Service ports lead to a pod address, as text or JSON. */
import type { ReverseResult } from '../../graph/reverse.js';
import { renderJson } from '../json.js';
import { versioned } from '../schemas/index.js';
import { jsonText, type RenderContext, type Rendered } from '../output.js';
import { renderReverseText } from './text.js';

export interface ReverseOutcomeResult {
  readonly kind: 'reverse';
  readonly lookup: ReverseResult;
}
export const reverseText = (r: ReverseOutcomeResult, ctx: RenderContext): Rendered => ({ via: 'text', text: renderReverseText(r.lookup, ctx.c) });
export const reverseJson = (r: ReverseOutcomeResult): Rendered => jsonText(renderJson(versioned('reverse', r.lookup)));
