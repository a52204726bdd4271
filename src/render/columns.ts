/**
 * Tables the way `kubectl get` prints them: no borders, upper-case headers, columns two spaces
 * apart, the last column unpadded. A table is fitted to a width: columns marked `shrink` give up
 * room (their long cells elided in the middle, where names are least informative) until the table
 * fits or they reach their minimum; then columns marked `drop` are left out, least important first
 * (`-o wide` shows them all). A `keep` column is never cut (a name an SRE must copy): a cell too
 * long for it goes alone on its line, the rest of its row below. Layout is one pass to measure and
 * one to print: linear in the table's size (a 10k-Service node prints 14k rows).
 */
import { stripVTControlCharacters } from 'node:util';

export interface Column {
  /** Printed upper-case, as kubectl does. */
  readonly head: string;
  /** May be narrowed (cells elided in the middle) to fit the width. */
  readonly shrink?: boolean;
  /** The narrowest a shrinking column gets (default: its header's width, at least 8). */
  readonly min?: number;
  /** How a cell too long for the column is cut (default: elideMiddle). */
  readonly elide?: (text: string, max: number) => string;
  /** Never cut (a name to copy): a cell wider than the column is printed alone on its line. */
  readonly keep?: boolean;
  /** May be left out to fit the width: the lowest number goes first. */
  readonly drop?: number;
}

/** A cell: plain text, or text with a colour applied after layout (colour codes take no room). */
export type Cell = string | { readonly text: string; readonly paint: (s: string) => string };

const GAP = '  ';

export interface ColumnOptions {
  /** The width to fit; Infinity for none (`-o wide`: every cell whole, as kubectl prints it). */
  readonly width: number;
}

export function renderColumns(columns: readonly Column[], rows: readonly (readonly Cell[])[], opts: ColumnOptions): string {
  return renderTable(columns, rows, opts).text;
}

/** The table, and the headers of the columns left out to fit (say so: `-o wide` shows them). */
export function renderTable(columns: readonly Column[], rows: readonly (readonly Cell[])[], opts: ColumnOptions): { text: string; dropped: string[] } {
  const measured = columns.map((c) => c.head.length);
  for (const r of rows) {
    for (let i = 0; i < measured.length; i++) {
      const w = visibleWidth(textOf(r[i]));
      if (w > measured[i]) measured[i] = w;
    }
  }
  // Leave out droppable columns, least important first, while the table does not fit.
  let shown = columns.map((_, i) => i);
  let fitted = fit(shown.map((i) => columns[i]), shown.map((i) => measured[i]), opts.width, false);
  const droppable = columns.map((c, i) => ({ c, i })).filter((x) => x.c.drop !== undefined).sort((a, b) => a.c.drop! - b.c.drop!);
  const dropped: string[] = [];
  for (const { c, i } of droppable) {
    if (tableWidth(fitted) <= opts.width) break;
    shown = shown.filter((j) => j !== i);
    dropped.push(c.head.toUpperCase());
    fitted = fit(shown.map((j) => columns[j]), shown.map((j) => measured[j]), opts.width, false);
  }
  // Still too wide with every droppable column gone: the names give up room (a longer one goes alone on its line).
  if (tableWidth(fitted) > opts.width) fitted = fit(shown.map((j) => columns[j]), shown.map((j) => measured[j]), opts.width, true);
  const cols = shown.map((i) => columns[i]);
  const pick = (r: readonly (Cell | undefined)[]) => shown.map((i) => r[i]);
  const out: string[] = [line(cols.map((c) => c.head.toUpperCase()), fitted, cols)];
  for (const r of rows) out.push(line(pick(r), fitted, cols));
  return { text: out.join('\n') + '\n', dropped };
}

const tableWidth = (w: readonly number[]) => w.reduce((n, x) => n + x, 0) + GAP.length * (w.length - 1);

/** Narrow the shrinking columns, widest first, until the table fits `width` (or cannot shrink more). */
function fit(columns: readonly Column[], widths: readonly number[], width: number, capKept: boolean): number[] {
  const w = widths.slice();
  const total = () => w.reduce((n, x) => n + x, 0) + GAP.length * (w.length - 1);
  let excess = total() - width;
  if (!(excess > 0)) return w;
  const floor = columns.map((c, i) => Math.min(widths[i], c.shrink ? Math.max(c.min ?? 8, c.head.length) : widths[i]));
  // Take one column at a time down to the next widest one's width (or its floor): the widest cells lose the most.
  while (excess > 0) {
    let widest = -1;
    for (let i = 0; i < w.length; i++) if (w[i] > floor[i] && (widest < 0 || w[i] > w[widest])) widest = i;
    if (widest < 0) break;
    let next = floor[widest];
    for (let i = 0; i < w.length; i++) if (i !== widest && w[i] > floor[i] && w[i] < w[widest] && w[i] > next) next = w[i];
    const cut = Math.min(excess, w[widest] - next, w[widest] - floor[widest]) || 1;
    w[widest] -= cut;
    excess -= cut;
  }
  // Still too wide: the `keep` columns give up room too; their longer cells go alone on a line.
  for (let i = 0; capKept && i < w.length && excess > 0; i++) {
    if (!columns[i].keep) continue;
    const cut = Math.min(excess, w[i] - Math.max(columns[i].head.length, 8));
    if (cut > 0) {
      w[i] -= cut;
      excess -= cut;
    }
  }
  return w;
}

function line(cells: readonly (Cell | undefined)[], widths: readonly number[], columns: readonly Column[]): string {
  let s = '';
  for (let i = 0; i < widths.length; i++) {
    const cell = cells[i] ?? '';
    let text = textOf(cell);
    if (columns[i].keep && visibleWidth(text) > widths[i]) {
      // A name is never cut: alone on its line (from its column), the rest of the row below it.
      const whole = typeof cell === 'string' ? text : cell.paint(text);
      return `${s}${whole}\n${line(cells.map((x, j) => (j === i ? '' : x)), widths, columns)}`;
    }
    if (visibleWidth(text) > widths[i]) text = (columns[i].elide ?? elideMiddle)(stripVTControlCharacters(text), widths[i]);
    const pad = i === widths.length - 1 ? '' : ' '.repeat(Math.max(0, widths[i] - visibleWidth(text))) + GAP;
    s += (typeof cell === 'string' ? text : cell.paint(text)) + pad;
  }
  return s.trimEnd();
}

function textOf(cell: Cell | undefined): string {
  return cell === undefined ? '' : typeof cell === 'string' ? cell : cell.text;
}

/** Printed width of a one-line cell (colour codes take no room; cells are printable() text). */
export function visibleWidth(cell: string): number {
  return cell.indexOf('\u001b') < 0 ? cell.length : stripVTControlCharacters(cell).length;
}

/**
 * `text` in at most `max` characters, the middle replaced by `…`: the start (a namespace, a
 * directory) and the end (a port name, a file name) are what tell names apart.
 */
export function elideMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return '…'.slice(0, max);
  const keep = max - 1;
  const head = Math.floor(keep / 2);
  return text.slice(0, head) + '…' + text.slice(text.length - (keep - head));
}

/** `text` in at most `max` characters, its start replaced by `…`: for paths, whose end (the file name) says the most. */
export function elideStart(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return '…'.slice(0, max);
  return '…' + text.slice(text.length - (max - 1));
}
