/** `kpx reverse POD-IP[:PORT]`: which Services and front ends of this node lead to a pod address. */
import { writeText } from '../output.js';
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { resolveJudged } from '../../judge/index.js';
import { parseReverseTarget, renderReverseText, reverseLookup } from '../../graph/reverse.js';
import { renderJson } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { parseTarget } from '../../trace/target.js';
import { ExitCode, UsageError } from '../exit.js';
import { writeJsonOut } from '../output.js';

export interface ReverseOptions extends InputOptions {
  output: 'text' | 'json';
}

export async function reverseAction(address: string, opts: ReverseOptions): Promise<number> {
  const target = parseReverseTarget(address);
  if (typeof target === 'string') {
    // A Service target (the grammar of trace and services) asks the other way round: say where to ask it.
    const t = parseTarget(address);
    if (typeof t !== 'string' && (t.kind === 'service' || t.kind === 'nodeport')) throw new UsageError(`reverse starts from a pod address (POD-IP[:PORT]); for ${address} ask kpx services --service ${address} (its endpoints) or kpx trace ${address}`);
    throw new UsageError(target);
  }
  const snapshot = await loadFromOptions([], opts, opts.output === 'text');
  const res = await resolveJudged(snapshot);
  const r = reverseLookup(snapshot, res, target);
  if (opts.output === 'json') writeJsonOut(renderJson(versioned('reverse', r)));
  else writeText(renderReverseText(r, chalkInit(colorEnabled(opts))));
  return ExitCode.Ok;
}
