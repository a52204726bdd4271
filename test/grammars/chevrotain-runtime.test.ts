/**
 * kpx loads Chevrotain once, from the single-file bundle of the installed release (start-up,
 * issue 8), and every grammar takes it from grammars/common/chevrotain.ts: a second copy of the
 * library would not recognise the first one's token types.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as shim from '../../grammars/common/chevrotain.js';

const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('Chevrotain runtime', () => {
  it('is the bundle of the installed release', async () => {
    const entry = createRequire(import.meta.url).resolve('chevrotain');
    const bundle = await import(pathToFileURL(join(dirname(entry), '..', 'chevrotain.mjs')).href);
    expect(shim.Lexer).toBe(bundle.Lexer);
    expect(shim.EmbeddedActionsParser).toBe(bundle.EmbeddedActionsParser);
    expect(shim.EOF).toBe(bundle.EOF);
  });

  it('is imported by no grammar or module other than through the shim', () => {
    const offenders = [...sourceFiles(join(ROOT, 'grammars')), ...sourceFiles(join(ROOT, 'src'))]
      .filter((f) => !f.endsWith(join('common', 'chevrotain.ts')))
      .filter((f) => /^import\s+(?!type\b)[^;]*from 'chevrotain'/m.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
