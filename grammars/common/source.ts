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

/** Render text from a dump so it is safe to show: control characters become \xNN. */
export function printable(text: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const safe = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return safe.length > max ? `${safe.slice(0, max - 1)}…` : safe;
}
