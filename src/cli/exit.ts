/** Exit codes and the errors that map to them. No stack traces for user errors. */
import { InputError } from '../load/index.js';

export const ExitCode = { Ok: 0, Findings: 1, Error: 2 } as const;

/** Bad flags or arguments: exit 2 with a hint. */
export class UsageError extends Error {}

export function exitCodeFor(e: unknown): { code: number; message: string } {
  if (e instanceof UsageError || e instanceof InputError) return { code: ExitCode.Error, message: e.message };
  const err = e as Error & { code?: string };
  if (err && (err.code === 'commander.invalidArgument' || err.code === 'commander.missingArgument')) return { code: ExitCode.Error, message: err.message };
  return { code: ExitCode.Error, message: `internal error: ${err?.stack ?? String(e)}` };
}
