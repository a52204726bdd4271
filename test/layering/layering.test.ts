/**
 * The layers are checked, not described: ESLint (typescript-eslint's recommended rules and the
 * kpx/layers rule of test/layering/layers.js) must pass on the whole tree, and the layers rule must
 * catch an import that goes the wrong way.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { run } from '../helpers/exec.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

/**
 * ESLint's per-file cache, in a file named by what the results depend on besides each file's own
 * content (which ESLint checks itself): the config, the layers rule's code and the installed
 * versions. ESLint does not see a change to a local plugin's code, hence the key.
 */
function cacheFile(): string {
  const h = createHash('sha256');
  for (const f of ['eslint.config.js', 'test/layering/layers.js', 'package-lock.json']) h.update(readFileSync(join(ROOT, f)));
  return join(ROOT, 'build', 'eslint-cache', `${h.digest('hex').slice(0, 16)}.json`);
}

async function layerErrors(file: string, source: string): Promise<string[]> {
  const [r] = await eslint.lintText(source, { filePath: `${ROOT}${file}` });
  return r.messages.filter((m) => m.ruleId === 'kpx/layers').map((m) => m.message);
}

describe('layers and lint', () => {
  it('the tree passes ESLint with no errors or warnings', async () => {
    // ESLint's own command line, as `npm run lint` runs it, in a child process: the test worker stays
    // free (a minute of linting in it would starve vitest's own messages on a loaded machine).
    const bin = join(ROOT, 'node_modules/eslint/bin/eslint.js');
    const r = await run(process.execPath, [bin, '--format', 'json', '--cache', '--cache-strategy', 'content', '--cache-location', cacheFile(), 'src', 'grammars', 'test'], { cwd: ROOT });
    expect(r.status === 0 || r.status === 1, r.stderr).toBe(true);
    const results = JSON.parse(r.stdout) as ESLint.LintResult[];
    const problems = results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(ROOT.length)}:${m.line}:${m.column} ${m.ruleId ?? ''} ${m.message}`));
    expect(results.length).toBeGreaterThan(300);
    expect(problems).toEqual([]);
  }, 600_000); // a bound for a hang, not for speed: the first, uncached run on a loaded machine takes minutes

  it('an import against the direction is an error, naming both layers', async () => {
    expect(await layerErrors('src/model/probe.ts', "import type { ServicePort } from '../kube/types.js';\nexport type X = ServicePort;\n")).toEqual([
      'src/model may not import src/kube (allowed: src/source, grammars/common)',
    ]);
    expect(await layerErrors('grammars/nft/probe.ts', "export { printable } from '../../src/source/index.js';\n")).toEqual([
      'grammars/nft may not import src/source (allowed: grammars/*)',
    ]);
    expect(await layerErrors('src/cli/probe.ts', "export const m = () => import('../generate/index.js');\n")).toEqual([
      'src/cli imports src/generate: the dump generator is test support and is not shipped',
    ]);
    expect(await layerErrors('src/model/probe.ts', "export type { SynRule } from '../../grammars/nft/rule.js';\n")).toEqual([
      'src/model may not import grammars/nft (allowed: src/source, grammars/common)',
    ]);
  });

  it('imports along the direction pass', async () => {
    expect(await layerErrors('src/trace/probe.ts', "import type { ServicePort } from '../kube/types.js';\nexport type X = ServicePort;\n")).toEqual([]);
    expect(await layerErrors('src/model/probe.ts', "export type { SynRule } from '../../grammars/common/nft-syntax.js';\n")).toEqual([]);
  });
});
