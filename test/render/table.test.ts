/** Long tables are laid out in blocks; the result must be exactly what one cli-table3 table prints. */
import Table from 'cli-table3';
import { describe, expect, it } from 'vitest';
import { renderTable } from '../../src/render/table.js';

function oneTable(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r);
  return t.toString();
}

describe('renderTable', () => {
  const head = ['Service', 'VIP:port/proto', 'state'];
  const rows = Array.from({ length: 257 }, (_, i) => [`ns-${i % 7}/svc-${'x'.repeat(i % 13)}:${i}${i % 11 === 0 ? ' …' : ''}${i % 17 === 0 ? ' → é' : ''}`, `10.96.${i >> 8}.${i & 255}:${80 + (i % 3)}/tcp`, i % 5 === 0 ? '\u001b[31mbroken\u001b[39m' : 'healthy']);

  it('prints a long table exactly as one cli-table3 table would', () => {
    expect(renderTable({ head }, rows)).toBe(oneTable(head, rows));
  });

  it('prints short tables and a table of exactly one block the same way', () => {
    expect(renderTable({ head }, rows.slice(0, 3))).toBe(oneTable(head, rows.slice(0, 3)));
    expect(renderTable({ head }, rows.slice(0, 101))).toBe(oneTable(head, rows.slice(0, 101)));
  });

  it('leaves wide characters and multi-line cells to cli-table3', () => {
    const odd = rows.slice(0, 150).map((r, i) => (i === 7 ? ['名前/サービス:ü', r[1], r[2]] : i === 9 ? ['two\nlines', r[1], r[2]] : r));
    expect(renderTable({ head }, odd)).toBe(oneTable(head, odd));
  });
});
