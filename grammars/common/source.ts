/**
 * Positions and diagnostics shared by every grammar and by the rest of kpx.
 * Lives under grammars/ because grammars must not import from src/; src/source re-exports it.
 */

export type Severity = 'error' | 'warning' | 'info';

/** A place in a dump: 1-based line and column; endColumn is exclusive. */
export interface SourceSpan {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
}

/**
 * One problem found while reading a dump. Codes are stable (`parse/unexpected-token`,
 * `input/noise`, `extract/bad-address`…); messages are for people.
 */
export interface Diagnostic {
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** What the grammar expected at that point, when known. */
  readonly expected?: string;
  /** What it found instead (already made printable). */
  readonly found?: string;
}

export function span(file: string, line: number, column: number, endColumn: number, endLine = line): SourceSpan {
  return { file, line, column, endLine, endColumn };
}

export function diagnostic(
  severity: Severity,
  code: string,
  message: string,
  file: string,
  line: number,
  column: number,
  extra?: { expected?: string; found?: string },
): Diagnostic {
  const d: Diagnostic = { severity, code, message, file, line, column };
  return extra ? { ...d, ...extra } : d;
}

/**
 * Control characters a terminal acts on: C0 except tab and newline, DEL, and the C1 controls
 * (U+0080–U+009F; a terminal in UTF-8 mode reads U+009B as CSI, like ESC [). And the Unicode
 * line and paragraph separators (U+2028, U+2029): editors, browsers and CI log viewers break the
 * line there, so one diagnostic line would show as two (found by the fuzz run, test/fuzz).
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;
// eslint-disable-next-line no-control-regex
const CONTROLS_OR_SGR = /\u001b\[[0-9;]{0,32}m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/** \xNN for a control character, \uNNNN for the separators. */
const escaped = (c: string): string => {
  const n = c.charCodeAt(0);
  return n > 0xff ? `\\u${n.toString(16)}` : `\\x${n.toString(16).padStart(2, '0')}`;
};

/**
 * A whole text for a terminal (a renderer's output, a line on stderr): every control character
 * except tab and newline becomes \xNN, as printable() writes it. `keepSgr`: colour sequences
 * (ESC [ … m, what chalk writes) are kept; nothing else is, so dump text that got this far still
 * cannot clear the screen, set the title or move the cursor. Idempotent.
 */
export function escapeControls(text: string, keepSgr = false): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS_OR_SGR, (c) => (c.length > 1 ? (keepSgr ? c : `\\x1b${c.slice(1)}`) : escaped(c)));
}

/** Render text from a dump so it is safe to show: control characters become \xNN. */
export function printable(text: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const safe = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, escaped);
  return safe.length > max ? `${safe.slice(0, max - 1)}…` : safe;
}

/**
 * Append every element of `items` to `target`. `target.push(...items)` passes each element as an
 * argument, and past ~120,000 of them V8 throws "Maximum call stack size exceeded": dumps make
 * lists of any length (routes, rules, interfaces), so kpx never spreads a list into a call (an
 * ESLint rule forbids it).
 */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const x of items) target.push(x);
  return target;
}

/** The largest of `values` (`init` when there are none), without spreading them into Math.max. */
export function maxOf(values: Iterable<number>, init = -Infinity): number {
  let m = init;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** The smallest of `values` (`init` when there are none), without spreading them into Math.min. */
export function minOf(values: Iterable<number>, init = Infinity): number {
  let m = init;
  for (const v of values) if (v < m) m = v;
  return m;
}
