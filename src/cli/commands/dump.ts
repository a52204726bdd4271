/** `kpx dump FILE`: print a parsed dump back (iptables-save) or its model (json) (src/app/small.ts). */
import { dump } from '../../app/small.js';
import { writeErr } from '../output.js';
import { finish } from '../emit.js';
import { inputSettingsOf, type LimitOptions } from '../input-options.js';

export interface DumpOptions extends LimitOptions {
  input?: string[];
  output: 'iptables-save' | 'json';
}

export async function dumpAction(file: string | undefined, opts: DumpOptions): Promise<number> {
  const paths = [...(file ? [file] : []), ...(opts.input ?? [])];
  return finish(await dump(paths, inputSettingsOf(opts), { notice: (line) => writeErr(line + '\n') }), opts.output, {});
}
