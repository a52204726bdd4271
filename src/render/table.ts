/**
 * Tables for people, through cli-table3, at any size. cli-table3 lays a table out in time that
 * grows with the square of its rows (its span-conflict checks) and spends real time per cell:
 * 14k Service ports took 25 s. A long table of one-line cells is drawn here instead, character
 * for character as cli-table3 draws it (a test compares the two), in time linear in its size.
 */
import Table from 'cli-table3';
import { stripVTControlCharacters } from 'node:util';

/**
 * One line of characters one column wide each: printable ASCII, Latin-1, and the punctuation and
 * arrows kpx prints (`…`, `→`); colour codes allowed.
 */
// eslint-disable-next-line no-control-regex -- ESC is allowed on purpose: colour codes
const ASCII_LINE = /^[\x20-\x7e\u001b\u00a0-\u00ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff]*$/;

/** Tables up to this many rows go through cli-table3 itself. */
const LIBRARY_ROWS = 100;

export interface TableOptions {
  readonly head: readonly string[];
}

export function renderTable(opts: TableOptions, rows: readonly (readonly string[])[]): string {
  // Cells on several lines, or whose width is not their length (wide or combining characters), are left to cli-table3.
  const plain = rows.length > LIBRARY_ROWS && rows.every((r) => r.every((cell) => ASCII_LINE.test(cell)));
  if (!plain) {
    const t = new Table({ head: [...opts.head], style: { head: [], border: [] } });
    for (const r of rows) t.push([...r]);
    return t.toString();
  }
  // cli-table3's default look: one space of padding, a rule between all rows.
  const widths = opts.head.map((h) => visibleWidth(h));
  for (const r of rows) for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i], visibleWidth(r[i] ?? ''));
  const rule = (left: string, mid: string, right: string) => left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const line = (cells: readonly string[]) => '│' + widths.map((w, i) => ` ${cells[i] ?? ''}${' '.repeat(w - visibleWidth(cells[i] ?? ''))} `).join('│') + '│';
  const between = rule('├', '┼', '┤');
  const out: string[] = [rule('┌', '┬', '┐'), line(opts.head)];
  for (const r of rows) out.push(between, line(r));
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}

/** Printed width of a one-line cell (colour codes take no room; cells are printable() text). */
function visibleWidth(cell: string): number {
  return cell.indexOf('\u001b') < 0 ? cell.length : stripVTControlCharacters(cell).length;
}
