/** `kpx reverse POD-IP[:PORT]`: which Services and front ends of this node lead to a pod address (src/app/small.ts). */
import type { InputOptions } from '../input-options.js';
import { reverse } from '../../app/small.js';
import { appIO, finish } from '../emit.js';

export interface ReverseOptions extends InputOptions {
  output: 'text' | 'json';
}

export async function reverseAction(address: string, opts: ReverseOptions): Promise<number> {
  return finish(await reverse(address, appIO(opts, opts.output)), opts.output, opts);
}
