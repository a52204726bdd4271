/** Where ../shared/corpus is; corpus tests run only from `npm run test:corpus`. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');

export function corpusDir(): string {
  const dir = process.env.KPX_CORPUS ?? resolve(repoRoot, '..', 'shared', 'corpus');
  if (!existsSync(dir)) throw new Error(`corpus not found at ${dir} (set KPX_CORPUS)`);
  return dir;
}

/** Every file below the corpus whose path matches `pattern`. */
export function corpusFiles(pattern: RegExp): string[] {
  const root = corpusDir();
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (pattern.test(p.slice(root.length + 1))) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

export function readCorpus(path: string): string {
  return readFileSync(path, 'utf8');
}
