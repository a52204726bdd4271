/** `kpx inspect INPUT…`: what each file is, what it holds, and what is wrong with it (src/app/small.ts). */
import type { InputOptions } from '../input-options.js';
import { inspect } from '../../app/small.js';
import { appIO, finish } from '../emit.js';

export { snapshotSummary } from '../../render/inspect/output.js';

export interface InspectOptions extends InputOptions {
  output: 'text' | 'json';
}

export async function inspectAction(positional: string[], opts: InspectOptions): Promise<number> {
  return finish(await inspect(positional, appIO(opts, opts.output)), opts.output, opts);
}
