/** `kpx summarize -o json`: one node's compact summary for fleets (src/app/summarize.ts). */
import type { InputOptions } from '../input-options.js';
import { summarize } from '../../app/summarize.js';
import { appIO, finish } from '../emit.js';

export interface SummarizeOptions extends InputOptions {
  output: 'json';
  /** The node's name in the summary (default: the bundle's manifest host, else its folder name). */
  nodeName?: string;
  /** Leave the linter out (findings: []). */
  lint?: boolean;
}

export async function summarizeAction(positional: string[], opts: SummarizeOptions): Promise<number> {
  return finish(await summarize({ inputs: positional, nodeName: opts.nodeName, lint: opts.lint }, appIO(opts, opts.output)), opts.output, opts);
}
