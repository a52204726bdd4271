/** `kpx collect -o DIR`: write this node's dumps and a manifest to a directory. */
import { CollectTargetError, checkCollectTarget, collectTo } from '../../collect/live.js';
import { ExitCode, UsageError } from '../exit.js';
import { cannotWrite, writeOutputFile, writeErr } from '../output.js';

export async function collectAction(opts: { output: string; force?: boolean; conntrack?: boolean; conntrackMaxEntries?: string }): Promise<number> {
  const maxEntries = opts.conntrackMaxEntries === undefined ? undefined : Number(opts.conntrackMaxEntries);
  if (maxEntries !== undefined && !(Number.isInteger(maxEntries) && maxEntries > 0)) throw new UsageError(`--conntrack-max-entries ${opts.conntrackMaxEntries}: expected a positive whole number`);
  try {
    // A non-empty directory may be a baseline bundle: never overwritten without --force.
    checkCollectTarget(opts.output, Boolean(opts.force));
  } catch (e) {
    if (e instanceof CollectTargetError) throw new UsageError(e.message);
    throw e;
  }
  let made;
  try {
    made = await collectTo(opts.output, undefined, writeOutputFile, { list: opts.conntrack !== false, ...(maxEntries !== undefined ? { maxEntries } : {}) });
  } catch (e) {
    // mkdir of the bundle directory (the files' own writes already name themselves).
    if ((e as NodeJS.ErrnoException).syscall === 'mkdir') throw cannotWrite(opts.output, e);
    throw e;
  }
  const { dir, manifest } = made;
  for (const s of manifest.steps) {
    const note = s.status === 'ok' ? `${s.bytes} bytes` : `${s.status}${s.detail ? ': ' + s.detail : ''}`;
    writeErr(`${s.status === 'ok' ? 'wrote' : 'skip '} ${s.file.padEnd(20)} ${s.command}  (${note})\n`);
  }
  const failed = manifest.steps.filter((s) => s.status === 'failed');
  if (failed.length) {
    const root = typeof process.getuid === 'function' && process.getuid() !== 0 ? ' kpx is not running as root: run it with sudo.' : '';
    writeErr(`kpx: ${failed.map((s) => s.command).join(', ')} failed: the bundle lacks ${failed.length === 1 ? 'that dump' : 'those dumps'} (manifest.json records why).${root}\n`);
  }
  const api = manifest.api;
  if (api && api.status === 'ok') writeErr(`API objects from kubectl context ${api.context ?? '(in-cluster, no context)'} at ${api.collectedAt}\n`);
  else if (api) writeErr(`kpx: no API objects: kubectl cannot reach a cluster${api.detail ? ` (${api.detail})` : ''}; the api- lint rules will not run and IPVS Services stay unnamed\n`);
  writeErr(`bundle in ${dir}; analyse it with: kpx inspect -i ${dir}\n`);
  return ExitCode.Ok;
}
