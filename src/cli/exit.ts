/**
 * Exit codes and the errors that map to them. No stack traces for user errors: a stack trace is
 * printed only for a bug in kpx, with how to report it.
 */
import { InputError, fsReason } from '../load/index.js';
import { OutputError, cannotWrite } from './output.js';
import { printable } from '../source/index.js';
import { ExitCode } from '../judge/inputs.js';
import { UsageError } from '../app/io.js';
import { RenderError } from '../render/output.js';

// ExitCode (what each code means) lives beside the evidence that decides "cannot tell": src/judge/inputs.ts.
export { ExitCode, UsageError };

/** The exit-code table for `--help` (the README says the same). */
export const EXIT_CODES_HELP = `Exit codes:
  0  ok: an answer (which may be that nothing matches)
  1  lint findings at --fail-on; inspect: input files with errors
  2  usage error (a target naming nothing here gets "did you mean"), or a path not readable/writable
  3  cannot tell: the inputs hold no evidence for the question (no ruleset for the family,
     only unreadable or unrecognised files, a collection that was refused), or the answer is
     wholly unknown: trace — every traced flow's verdict is UNKNOWN, or the target names nothing
     and the evidence (a grep, a cut dump, lines kpx could not read that name it) cannot show that
     nothing is there; services — every Service port shown is unknown, or none was resolved from
     evidence that is not whole; a Service name asked of dumps that name no Service`;


export function exitCodeFor(e: unknown): { code: number; message: string } {
  if (e instanceof UsageError || e instanceof RenderError || e instanceof InputError || e instanceof OutputError) return { code: ExitCode.Error, message: e.message };
  const err = e as Error & { code?: string; path?: string; syscall?: string };
  if (err && (err.code === 'commander.invalidArgument' || err.code === 'commander.missingArgument')) return { code: ExitCode.Error, message: err.message };
  // A filesystem error not wrapped where it happened is still the environment's, not a bug.
  if (err && typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code) && typeof err.syscall === 'string') {
    if (typeof err.path === 'string') return { code: ExitCode.Error, message: `${printable(err.path, 4096)}: ${fsReason(err)}` };
    if (err.syscall === 'write') return { code: ExitCode.Error, message: cannotWrite('standard output', err).message };
  }
  return {
    code: ExitCode.Error,
    message:
      `internal error (a bug in kpx): ${err?.stack ?? String(e)}\n` +
      `kpx: please report it with the command line you ran and, if it needs your dumps, a redacted bundle: ` +
      `kpx redact -i BUNDLE -o redacted/ (names, addresses and hashes replaced; kpx reads it the same way)`,
  };
}
