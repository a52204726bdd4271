/**
 * Writing kpx's output: files (`graph --svg`, `report -o`, `collect -o`) and stdout. A write that
 * fails is the user's environment, not a kpx bug: one line `kpx: cannot write PATH: reason (what
 * to do)`, exit 2, no stack trace.
 */
import { writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsReason } from '../load/index.js';
import { escapeControls, printable } from '../source/index.js';
import { colorEnabled } from '../render/colors.js';

/** Output could not be written (exit 2). */
export class OutputError extends Error {}

function hint(path: string, code: string | undefined): string {
  switch (code) {
    case 'ENOENT':
      return `the directory ${printable(dirname(path), 4096)} does not exist: create it first, or choose another path`;
    case 'ENOTDIR':
      return 'a part of the path is a file, not a directory: choose another path';
    case 'EACCES':
    case 'EPERM':
      return 'choose a place you may write to';
    case 'EROFS':
      return 'the file system is read-only: choose another place';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some space, or write elsewhere';
    case 'EISDIR':
      return 'name a file, not a directory';
    case 'EEXIST':
      return 'choose a new path, or remove what is there';
    default:
      return 'check the path and the disk';
  }
}

/** The OutputError for a failed write to `path` (a file, or "standard output"). */
export function cannotWrite(path: string, e: unknown): OutputError {
  return new OutputError(`cannot write ${printable(path, 4096)}: ${fsReason(e)} (${hint(path, (e as NodeJS.ErrnoException)?.code)})`);
}

/** writeFileSync whose failure is an OutputError naming the path. */
export function writeOutputFile(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data);
  } catch (e) {
    throw cannotWrite(path, e);
  }
}

/**
 * Where a command's `-o` sends what it writes when `-o` is a destination, not a format (report,
 * redact, graph): a path, or standard output for `-` (and for no -o, where a command writes to
 * standard output by default). The one place such an `-o` is read: commands ask the Destination,
 * never compare `-o` themselves (test/house/measures.ts counts any other comparison).
 */
export type Destination = { readonly kind: 'stdout' } | { readonly kind: 'path'; readonly path: string };

export function destinationOf(output: string | undefined): Destination {
  return output === undefined || output === '-' ? { kind: 'stdout' } : { kind: 'path', path: output };
}

/**
 * The text at its destination: standard output (control characters escaped, as writeOut), or the
 * file (a failure is an OutputError naming the path), then `kpx: wrote PATH` on stderr when `announce`.
 */
export function writeToDestination(dest: Destination, text: string, opts: { readonly announce?: boolean } = {}): void {
  if (dest.kind === 'stdout') return writeOut(text);
  writeOutputFile(dest.path, text);
  if (opts.announce) writeErr(`kpx: wrote ${dest.path}\n`);
}

/**
 * stdout and stderr report write failures as 'error' events (to a file or /dev/full: ENOSPC; a
 * closed pipe: EPIPE). A closed pipe (`kpx … | head`) is the reader's choice: stop quietly with
 * the exit code so far. Anything else: one line on stderr (when that still works), exit 2.
 */
export function guardStdStreams(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    try {
      process.stderr.write(`kpx: ${cannotWrite('standard output', e).message}\n`);
    } finally {
      process.exit(2);
    }
  });
  process.stderr.on('error', (e: NodeJS.ErrnoException) => process.exit(e.code === 'EPIPE' ? (process.exitCode ?? 0) : 2));
  // Node prints process warnings (a library's, e.g. the yaml package's, which may quote dump text)
  // in its own form, raw: one kpx line instead, made printable.
  process.removeAllListeners('warning');
  process.on('warning', (w: Error) => writeErr(`kpx: warning: ${printable(w.message.replace(/\s+/g, ' '), 400)}\n`));
}

/** The width text output fits: one helper, in src/render/width.ts (COLUMNS, else the TTY's width, else 120). */
export { textWidth as outputWidth } from '../render/width.js';
import { fitText, textWidth } from '../render/width.js';
import { page, pagerFor } from './pager.js';

/**
 * The way out of every text answer: fitted to the width (src/render/width.ts: COLUMNS, the TTY's
 * width, else 120), each too-long line wrapped under its item, names never cut; through a pager
 * when it is longer than the terminal (src/cli/pager.ts). `-o wide` passes `fit: false` (every
 * cell whole, as kubectl prints it). JSON, dumps and graphs do not come here.
 */
export function writeText(text: string, opts: { readonly fit?: boolean } = {}): void {
  // Escaped first (dump text is untrusted: see writeOut), then fitted to the width it now has.
  const safe = escapeControls(text, colorEnabled({}, process.stdout));
  const out = opts.fit === false ? safe : fitText(safe, textWidth());
  const pager = pagerFor(lineCount(out));
  if (pager) page(out, pager);
  else process.stdout.write(out);
}

function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * The one way kpx writes to a terminal (stdout and stderr), whatever the renderer did: dump text
 * is untrusted, and a control character that reaches a terminal can clear it, retitle it or hide
 * lines. Text: every control character but tab and newline is written as \xNN (colour
 * sequences are kept only when colour can be on for that stream). Renderers escape dump text
 * themselves; this is the last line, for messages built anywhere.
 */
export function writeOut(text: string): void {
  process.stdout.write(escapeControls(text, colorEnabled({}, process.stdout)));
}

/** stderr, as writeOut() (kpx's messages on stderr quote paths, node names and dump text). */
export function writeErr(text: string): void {
  process.stderr.write(escapeControls(text, colorEnabled({}, process.stderr)));
}

/**
 * JSON (or YAML) on stdout. JSON.stringify leaves DEL, the C1 controls and U+2028/U+2029 raw: the
 * JSON writers (src/render/json*.ts, sarif.ts) write them as \\uXXXX escapes themselves, chunk by
 * chunk as they stringify, so the text is not scanned a second time here (a 10k-Service
 * `services -o json` is 29 MB).
 */
export function writeJsonOut(text: string): void {
  process.stdout.write(text);
}
