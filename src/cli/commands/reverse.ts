/** `kpx reverse POD-IP[:PORT]`: which Services and front ends of this node lead to a pod address. */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { resolveJudged } from '../../judge/index.js';
import { parseReverseTarget, renderReverseText, reverseLookup } from '../../graph/reverse.js';
import { renderJson } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { ExitCode, UsageError } from '../exit.js';
import { writeOut, writeJsonOut } from '../output.js';

export interface ReverseOptions extends InputOptions {
  output: 'text' | 'json';
}

export async function reverseAction(address: string, opts: ReverseOptions): Promise<number> {
  const target = parseReverseTarget(address);
  if (typeof target === 'string') throw new UsageError(target);
  const snapshot = await loadFromOptions([], opts, opts.output === 'text');
  const res = await resolveJudged(snapshot);
  const r = reverseLookup(snapshot, res, target);
  if (opts.output === 'json') writeJsonOut(renderJson(versioned('reverse', r)));
  else writeOut(renderReverseText(r, chalkInit(colorEnabled(opts))));
  return ExitCode.Ok;
}
