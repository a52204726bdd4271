/** One place decides colour: only on a TTY, never with NO_COLOR or --no-color. */
import { Chalk, type ChalkInstance } from 'chalk';

export type Colors = ChalkInstance;

export function colorEnabled(opts: { color?: boolean }, stream: NodeJS.WriteStream = process.stdout): boolean {
  if (opts.color === false) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY);
}

export function chalkInit(enabled: boolean): Colors {
  return new Chalk({ level: enabled ? 1 : 0 });
}
