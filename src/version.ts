/**
 * kpx's version, from its package.json — the one place it is written. Found by walking up from
 * this module, because the module runs from `src/` under the tests and from `dist/src/` when
 * built or installed.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'kpx' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here (or not kpx's): look further up
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`kpx's package.json was not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

export const VERSION = readVersion();
