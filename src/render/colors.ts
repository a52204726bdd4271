/** One place decides colour: only on a TTY, never with NO_COLOR or --no-color. */
import { Chalk, type ChalkInstance } from 'chalk';
import { escapeControls } from '../source/index.js';

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

/**
 * A renderer's finished text: any control character from the dumps that got this far is written
 * as \xNN; the colour sequences chalk wrote are kept when colour is on.
 */
export function terminalText(text: string, c: { readonly level?: number }): string {
  return escapeControls(text, (c.level ?? 0) > 0);
}
