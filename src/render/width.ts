/**
 * The one width every text output fits (issue 29): `COLUMNS` when set (a script's choice), else
 * the terminal's width on a TTY, else 120 (piped output, CI logs, issue comments). Renderers fold
 * their own lines with `wrapWords`/`fold` at `textWidth()`; every command's text goes through
 * `fitText` on its way out, which wraps what is still too long under its item with a hanging
 * indent. A word is never cut: a name an SRE must copy (a Service, a chain, a file) that is longer
 * than the line stands alone on its line instead.
 */
import { stripVTControlCharacters } from 'node:util';

/** The default when nothing says otherwise: piped output, CI logs, issue comments. */
export const DEFAULT_WIDTH = 120;

/** The width text output fits: COLUMNS, else the TTY's width, else 120. */
export function textWidth(stream: { readonly isTTY?: boolean; readonly columns?: number } = process.stdout): number {
  const env = Number(process.env.COLUMNS);
  if (Number.isInteger(env) && env > 0) return env;
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns;
  return DEFAULT_WIDTH;
}

/** Printed width of one line (colour codes take no room). */
export function visibleLength(line: string): number {
  return line.indexOf('\u001b') < 0 ? line.length : stripVTControlCharacters(line).length;
}

/**
 * `text` broken at spaces into lines of at most `width`, each starting with `indent` — the first
 * with `first` instead when given (a hanging indent under a label). A word longer than a line is
 * not cut: it goes alone on its line.
 */
export function wrapWords(text: string, indent: string, width = textWidth(), first = indent): string[] {
  const out: string[] = [];
  let lead = first;
  let line = '';
  let used = 0;
  for (const word of text.split(' ')) {
    const w = visibleLength(word);
    if (line && visibleLength(lead) + used + 1 + w > width) {
      out.push(lead + line.trimEnd());
      lead = indent;
      line = word;
      used = w;
    } else {
      line = line ? `${line} ${word}` : word;
      used = line === word ? w : used + 1 + w;
    }
  }
  if (line) out.push(lead + line);
  return out;
}

/**
 * Fold `head` + `sep` + `text` into lines of at most `width` columns: on one line when it fits, else
 * `head` alone and `text` below it under `indent`, broken at spaces.
 */
export function fold(head: string, text: string, indent: string, width = textWidth(), sep = '  '): string[] {
  const one = text ? `${head}${sep}${text}` : head;
  if (visibleLength(one) <= width) return [one];
  // A separator that is a word (`: `) stays at the end of the head when the text moves below.
  const lead = head + sep.trimEnd();
  const lines = visibleLength(lead) <= width ? [lead] : wrapWords(lead.trimStart(), indent, width, lead.slice(0, lead.length - lead.trimStart().length));
  if (!text) return lines;
  return [...lines, ...wrapWords(text, indent, width)];
}

/**
 * Where a too-long line's continuation lines start: under the text after a short label
 * (`  verdict  DNAT …`, `  - rule-id  message`), else a little right of the line's own indent.
 */
function hangingIndent(plain: string, width: number): number {
  const own = plain.length - plain.trimStart().length;
  const label = /^(\s*\S+(?: \S+)?? {2,})\S/.exec(plain);
  if (label && label[1].length <= Math.min(24, width / 3)) return label[1].length;
  return Math.min(own + 4, Math.floor(width / 3));
}

/** One line fitted to `width`: itself when it fits, else wrapped at spaces under its hanging indent. */
export function fitLine(line: string, width: number): string[] {
  if (visibleLength(line) <= width) return [line];
  const plain = stripVTControlCharacters(line);
  const hang = hangingIndent(plain, width);
  // Keep the line's start (indent and label) as typed, colour codes included: find where it ends in `line`.
  let i = 0;
  let seen = 0;
  while (i < line.length && seen < hang) {
    // A colour code (ESC [ … m) takes no room: step over it whole.
    if (line.startsWith('\u001b[', i)) {
      const end = line.indexOf('m', i);
      if (end > 0) {
        i = end + 1;
        continue;
      }
    }
    i++;
    seen++;
  }
  const head = line.slice(0, i);
  const rest = line.slice(i);
  return wrapWords(rest, ' '.repeat(hang), width, head);
}

/** Every line of `text` fitted to `width` (default: the terminal's). The way out of every text output. */
export function fitText(text: string, width = textWidth()): string {
  if (!Number.isFinite(width)) return text;
  return text
    .split('\n')
    .flatMap((l) => fitLine(l, width))
    .join('\n');
}
