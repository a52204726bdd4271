/** `kpx diff OLD NEW`: what changed between two snapshots, Services first, then rules. */
import { writeText } from '../output.js';
import { loadSnapshot } from '../../load/snapshot.js';
import { resolveJudged } from '../../judge/index.js';
import { diffSnapshots } from '../../diff/index.js';
import { renderDiffText } from '../../diff/render.js';
import { renderJson } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { parseIp } from '../../model/addr.js';
import { ExitCode, UsageError } from '../exit.js';
import { startProgress } from '../progress.js';
import { writeJsonOut } from '../output.js';

export interface DiffOptions {
  output: 'text' | 'json';
  nodeIp?: string[];
  color?: boolean;
  maxRules?: string;
}

export async function diffAction(oldPath: string, newPath: string, opts: DiffOptions): Promise<number> {
  for (const ip of opts.nodeIp ?? []) if (!parseIp(ip)) throw new UsageError(`--node-ip ${ip}: not an IP address`);
  const maxRules = opts.maxRules === undefined ? 20 : Number(opts.maxRules);
  if (!Number.isInteger(maxRules) || maxRules < 0) throw new UsageError(`--max-rules ${opts.maxRules}: expected a number`);
  const progress = await startProgress(opts.output === 'text', 'reading dumps');
  let loaded;
  try {
    const base = (p: string) => p.replace(/\/+$/, '').split('/').pop() || p;
    const oldSnap = await loadSnapshot([oldPath], { nodeIps: opts.nodeIp ?? [], name: base(oldPath) });
    const newSnap = await loadSnapshot([newPath], { nodeIps: opts.nodeIp ?? [], name: base(newPath) });
    loaded = { oldSnap, newSnap, oldRes: await resolveJudged(oldSnap), newRes: await resolveJudged(newSnap) };
  } finally {
    progress.stop();
  }
  const d = diffSnapshots(loaded.oldSnap, loaded.oldRes, loaded.newSnap, loaded.newRes);
  if (opts.output === 'json') writeJsonOut(renderJson(versioned('diff', d)));
  else writeText(renderDiffText(d, chalkInit(colorEnabled(opts)), { maxRules }));
  return ExitCode.Ok;
}
