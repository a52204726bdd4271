/** `kpx collect -o DIR`: write this node's dumps and a manifest to a directory. */
import { collectTo } from '../../collect/live.js';
import { ExitCode } from '../exit.js';

export async function collectAction(opts: { output: string }): Promise<number> {
  const { dir, manifest } = await collectTo(opts.output);
  for (const s of manifest.steps) {
    const note = s.status === 'ok' ? `${s.bytes} bytes` : `${s.status}${s.detail ? ': ' + s.detail : ''}`;
    process.stderr.write(`${s.status === 'ok' ? 'wrote' : 'skip '} ${s.file.padEnd(20)} ${s.command}  (${note})\n`);
  }
  process.stderr.write(`bundle in ${dir}; analyse it with: kpx inspect -i ${dir}\n`);
  return ExitCode.Ok;
}
