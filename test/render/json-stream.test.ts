/** writeJson() writes exactly what renderJson() returns, in pieces. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderJson } from '../../src/render/json.js';
import { writeJson } from '../../src/render/json-stream.js';

function written(value: Record<string, unknown>): { text: string; writes: number } {
  let text = '';
  let writes = 0;
  writeJson(value, (t) => {
    text += t;
    writes++;
  });
  return { text, writes };
}

describe('writeJson', () => {
  it('writes what renderJson returns, for any plain object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.array(fc.jsonValue()), fc.constant(undefined))), (value) => {
        expect(written(value).text).toBe(renderJson(value, { plain: true }));
      }),
      { numRuns: 300 },
    );
  });

  it('escapes what renderJson escapes, and writes big arrays in several pieces', () => {
    const value = { services: Array.from({ length: 30000 }, (_, i) => ({ name: `svc-${i}\u0085\u2028`, n: i, list: [i, `x${i}`] })), others: [], problems: [] };
    const { text, writes } = written(value);
    expect(text).toBe(renderJson(value, { plain: true }));
    expect(text).toContain('\\u0085');
    expect(writes).toBeGreaterThan(1);
  });

  it('prints mapped elements as if the mapped array had been given', () => {
    const items = Array.from({ length: 1500 }, (_, i) => ({ id: i, secret: `s${i}` }));
    const show = (x: { id: number }) => ({ id: x.id, twice: x.id * 2 });
    for (const list of [items, items.slice(0, 10)]) {
      let text = '';
      writeJson({ list, n: list.length }, (t) => (text += t), { list: show });
      expect(text).toBe(renderJson({ list: list.map(show), n: list.length }, { plain: true }));
    }
  });
});
