/**
 * Targets on the command line: one grammar for every command (`ns/name[:port][/proto]`,
 * `VIP[:PORT][/proto]`, `nodeport:PORT[/proto]`, parsed in src/trace/target.ts) and one way to
 * miss: the near misses ("did you mean") on stderr, exit 2 — or 3 when the dumps cannot name
 * Services at all (IPVS dumps without API objects), which is "cannot tell", not a typo.
 */
import { parseTarget, type Plan, type Target } from '../trace/target.js';
import { renderNoMatchText } from '../render/trace/index.js';
import { chalkInit, colorEnabled } from '../render/colors.js';
import { fitText, textWidth } from '../render/width.js';
import { ExitCode, UsageError } from './exit.js';

export type NoMatch = Extract<Plan, { kind: 'no-match' }>;

/** The target, or a usage error naming the flag it came from. */
export function parseTargetArg(text: string, flag?: string): Target {
  const t = parseTarget(text);
  if (typeof t === 'string') throw new UsageError(flag ? `${flag} ${t}` : t);
  return t;
}

/** The exit code of a target that names nothing here: the same in every command. */
export function noMatchExit(m: NoMatch): number {
  return m.code === 'services-unnamed' ? ExitCode.CannotTell : ExitCode.Error;
}

/** Say the miss (stderr, coloured when stderr is a terminal) and give its exit code. */
export function reportNoMatch(m: NoMatch, opts: { readonly color?: boolean }): number {
  process.stderr.write(fitText(renderNoMatchText(m, chalkInit(colorEnabled(opts, process.stderr))), textWidth(process.stderr)));
  return noMatchExit(m);
}
