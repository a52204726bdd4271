/** `kpx redact INPUT… -o DIR`: rewrite dumps for sharing; kpx reads the result the same way. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { redactBundle, type SkippedFile } from '../../redact/bundle.js';
import { printable } from '../../source/index.js';
import { ExitCode, UsageError } from '../exit.js';
import { destinationOf, writeErr, writeToDestination } from '../output.js';
import { inputSettingsOf, type LimitOptions } from '../input-options.js';

export interface RedactOptions extends LimitOptions {
  output: string;
  key?: string;
  hostname?: string[];
  force?: boolean;
  input?: string[];
}

export async function redactAction(positional: string[], opts: RedactOptions): Promise<number> {
  const paths = [...positional, ...(opts.input ?? [])];
  if (paths.length === 0) throw new UsageError('redact needs at least one input file or bundle directory');
  if (paths.includes('-')) throw new UsageError('redact reads files and directories, not stdin');
  // `-o -`: one dump file, redacted to stdout; a bundle is a folder and needs one.
  const dest = destinationOf(opts.output);
  if (dest.kind === 'stdout' && (paths.length !== 1 || isDirectory(paths[0]))) throw new UsageError('-o - writes one redacted file to standard output: give one dump file, or name an output directory for a bundle');
  if (dest.kind === 'path' && existsSync(dest.path) && readdirSync(dest.path).length > 0 && !opts.force) throw new UsageError(`${dest.path} is not empty (use --force to write into it)`);
  let key = opts.key ?? process.env.KPX_REDACT_KEY;
  if (!key) {
    key = randomBytes(16).toString('hex');
    writeErr('kpx: no --key (or KPX_REDACT_KEY): using a random key, so another run will give other names and addresses\n');
  }
  const skipped: SkippedFile[] = [];
  const { files } = await redactBundle(paths, dest.kind === 'path' ? dest.path : '.', { key, hostnames: opts.hostname ?? [], input: inputSettingsOf(opts) }, skipped, dest.kind === 'stdout' ? (_path, text) => writeToDestination(dest, text) : undefined);
  // Nothing is left out silently: the copy lacks these, and the person sharing it should know.
  for (const s of skipped) writeErr(`kpx: ${printable(s.input, 4096)}: ${s.why}; not in the redacted copy\n`);
  if (dest.kind === 'path') writeErr(`kpx: wrote ${files.length} redacted file${files.length === 1 ? '' : 's'} to ${dest.path}\n`);
  else if (files.length === 0) return ExitCode.Error;
  return ExitCode.Ok;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
