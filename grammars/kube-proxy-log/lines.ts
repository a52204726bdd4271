/**
 * The lines of a pasted log made ready for the record reader: each unwrapped (./envelope.ts), a
 * CRI partial line (`P`) joined to the line that completes it, and the paste's terminal geometry
 * found. Terminals either wrap a long line onto the next (`more`, a narrow window: the message goes
 * on at column 1 of the next line, with no header) or cut it (`journalctl` without `-l`, `less
 * -S`, `systemctl status`: the rest is lost). Both leave the same trace: no line is longer than the
 * terminal, and several lines are exactly as long as it. `width` is that length when the paste
 * shows it; the reader joins a record's wrapped lines without a separator and marks cut ones.
 */
import { unwrap, type Unwrapped } from './envelope.js';
import { klogHeader, LOGRUS, LOGRUS_TTY } from './klog.js';

export interface PreparedLine {
  /** 1-based line in the file where this (possibly joined) line starts, and where it ends. */
  readonly line: number;
  readonly endLine: number;
  readonly raw: string;
  readonly u: Unwrapped;
}

export interface Geometry {
  /** The terminal's width when the paste shows one (lines never longer, several exactly as long). */
  readonly width?: number;
  /** Lines cut at the terminal's edge lose their end: true when no line continues a full-width one. */
  readonly cuts: boolean;
}

/** Does this unwrapped body start an entry (klog, logrus)? */
export function startsEntry(body: string): boolean {
  const b = body.trimStart();
  return klogHeader(b) !== undefined || LOGRUS.test(b) || LOGRUS_TTY.test(b);
}

export function prepareLines(lines: readonly string[]): PreparedLine[] {
  const out: PreparedLine[] = [];
  let partial: PreparedLine | undefined;
  lines.forEach((raw, i) => {
    const u = unwrap(raw);
    if (partial && u.envelope.kinds.includes('cri') && u.envelope.stream === partial.u.envelope.stream) {
      // CRI `P`: the runtime split one long line; this one continues it.
      const joined: Unwrapped = { body: partial.u.body + u.body, column: partial.u.column, envelope: { ...partial.u.envelope, ...(u.envelope.partial ? {} : { partial: false }) } };
      partial = { line: partial.line, endLine: i + 1, raw: partial.raw, u: joined };
      if (!u.envelope.partial) {
        out.push(partial);
        partial = undefined;
      }
      return;
    }
    if (partial) out.push(partial);
    partial = undefined;
    const p = { line: i + 1, endLine: i + 1, raw, u };
    if (u.envelope.partial) partial = p;
    else out.push(p);
  });
  if (partial) out.push(partial);
  return out;
}

/**
 * The terminal width the paste was taken at, if it shows: the longest line length W (at least 60)
 * shared by at least three lines, no line longer. `cuts`: no full-width line is followed by a
 * headerless one (the terminal cut lines instead of wrapping them).
 */
export function geometryOf(prepared: readonly PreparedLine[]): Geometry {
  let max = 0;
  for (const p of prepared) if (p.raw.length > max) max = p.raw.length;
  if (max < 60) return { cuts: false };
  let atMax = 0;
  let long = 0;
  let continued = 0;
  prepared.forEach((p, i) => {
    if (p.raw.length >= 60) long++;
    if (p.raw.length !== max) return;
    atMax++;
    const next = prepared[i + 1];
    if (next && next.raw.trim() !== '' && !startsEntry(next.u.body)) continued++;
  });
  // Two full-width lines each followed by a headerless one: wrapped. Cut lines need more of them.
  if (continued >= 2) return { width: max, cuts: false };
  if (atMax >= 3 && atMax * 5 >= long && continued === 0) return { width: max, cuts: true };
  return { cuts: false };
}
