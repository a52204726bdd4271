/** writeJsonDeep() writes exactly what renderJson() returns (models: Maps, bigints, toJSON), in pieces. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderJson } from '../../src/render/json.js';
import { writeJsonDeep } from '../../src/render/json-deep-stream.js';
import { parseInput, readInputs } from '../../src/load/index.js';
import { versioned } from '../../src/render/schemas/index.js';

function written(value: unknown, small?: number): { text: string; writes: number; longest: number } {
  const pieces: string[] = [];
  writeJsonDeep(value, (t) => pieces.push(t), small);
  return { text: pieces.join(''), writes: pieces.length, longest: Math.max(...pieces.map((p) => p.length)) };
}

/** A value nested `depth` objects deep, beside what JSON.stringify drops (undefined, functions). */
function nested(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { level: i, inner: v, skipped: undefined, fn: () => 1 };
  return v;
}

describe('writeJsonDeep', () => {
  it('writes what renderJson returns, for any JSON-like value with Maps, bigints, undefined and toJSON', () => {
    const leaf = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.bigInt(),
        fc.constant(undefined),
        fc.array(tie('value'), { maxLength: 5 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 5 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 3 }).map((o) => new Map(Object.entries(o))),
        fc.string().map((s) => ({ toJSON: (key: string) => `${key}:${s}` })),
      ),
    })).value;
    fc.assert(
      // small = 0..4: most subtrees are walked here, not stringified whole.
      fc.property(leaf, fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 4 }), (value, depth, small) => {
        const v = nested(depth, value);
        expect(written(v, small).text).toBe(renderJson(v));
      }),
      { numRuns: 400 },
    );
  });

  it('writes long containers deep in the value entry by entry, escaping what renderJson escapes', () => {
    const rules = Array.from({ length: 3000 }, (_, i) => ({ line: i, text: `-A X -j Y\u0085\u2028${i}`, addr: BigInt(i) << 64n, gone: undefined }));
    const value = nested(8, { chains: new Map([['KUBE-SERVICES', { rules }], ['EMPTY', { rules: [] }]]), holes: [undefined, () => 1, Symbol('s')] });
    const { text, writes, longest } = written(value);
    expect(text).toBe(renderJson(value));
    // The 3000 rules are not one piece: no piece holds more than a small part of the text.
    expect(writes).toBeGreaterThan(3000);
    expect(longest).toBeLessThan(text.length / 100);
  });

  it('prints each bundled sample model as renderJson does (kpx dump -o json)', async () => {
    const files = readdirSync('samples', { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.txt$/.test(f))
      .map((f) => join('samples', f));
    let checked = 0;
    for (const file of files) {
      const parsed = await parseInput(readInputs([file])[0]);
      if (!parsed.parsed) continue;
      const doc = versioned('dump', { file: parsed.path, format: parsed.format, counts: parsed.parsed.counts, model: parsed.parsed.data, diagnostics: parsed.diagnostics });
      expect(written(doc).text, file).toBe(renderJson(doc));
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});
