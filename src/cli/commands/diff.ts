/** `kpx diff OLD NEW`: what changed between two snapshots, Services first, then rules (src/app/small.ts). */
import { diff, diffLoad, diffMaxRules } from '../../app/small.js';
import { startProgress } from '../progress.js';
import { finish, forPeople } from '../emit.js';
import { inputSettingsOf, type LimitOptions } from '../input-options.js';

export interface DiffOptions extends LimitOptions {
  output: 'text' | 'json';
  nodeIp?: string[];
  color?: boolean;
  maxRules?: string;
}

export async function diffAction(oldPath: string, newPath: string, opts: DiffOptions): Promise<number> {
  const query = { oldPath, newPath, nodeIp: opts.nodeIp ?? [], maxRules: opts.maxRules, input: inputSettingsOf(opts) };
  const maxRules = diffMaxRules(query);
  const progress = await startProgress(forPeople(opts.output), 'reading dumps');
  let loaded;
  try {
    loaded = await diffLoad(query);
  } finally {
    progress.stop();
  }
  return finish(diff(loaded, maxRules), opts.output, opts);
}
