/**
 * Tables for people, through cli-table3, at any size. cli-table3 lays a table out in time that
 * grows with the square of its rows (its span-conflict checks): 14k Service ports took 25 s. A
 * long table is laid out in blocks of rows that share column widths computed over all rows,
 * and the blocks are joined into one table, border for border what one table would print.
 */
import Table from 'cli-table3';
import { stripVTControlCharacters } from 'node:util';

/** Rows per cli-table3 call: small enough to stay linear, large enough to cost nothing extra. */
const BLOCK_ROWS = 100;

export interface TableOptions {
  readonly head: readonly string[];
}

export function renderTable(opts: TableOptions, rows: readonly (readonly string[])[]): string {
  const style = { head: [] as string[], border: [] as string[] };
  if (rows.length <= BLOCK_ROWS) {
    const t = new Table({ head: [...opts.head], style });
    for (const r of rows) t.push([...r]);
    return t.toString();
  }
  // Content width of each column (+2 for cli-table3's one-space padding on each side).
  const widths = opts.head.map((h) => visibleWidth(h));
  for (const r of rows) for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i], visibleWidth(r[i] ?? ''));
  const colWidths = widths.map((w) => w + 2);
  const blocks: string[][] = [];
  for (let from = 0; from < rows.length; from += BLOCK_ROWS) {
    const t = new Table({ ...(from === 0 ? { head: [...opts.head] } : {}), colWidths, style });
    for (const r of rows.slice(from, from + BLOCK_ROWS)) t.push([...r]);
    blocks.push(t.toString().split('\n'));
  }
  // Between blocks, a block's bottom border and the next one's top border become one row separator.
  const separator = blocks[0].find((line) => line.startsWith('├')) ?? blocks[0][blocks[0].length - 1];
  const out: string[] = [];
  blocks.forEach((lines, b) => {
    const body = lines.slice(b === 0 ? 0 : 1, b === blocks.length - 1 ? lines.length : -1);
    if (b > 0) out.push(separator);
    out.push(...body);
  });
  return out.join('\n');
}

/** Printed width of a cell (colour codes take no room). Cells are printable() text. */
function visibleWidth(cell: string): number {
  let max = 0;
  for (const line of stripVTControlCharacters(cell).split('\n')) max = Math.max(max, line.length);
  return max;
}
