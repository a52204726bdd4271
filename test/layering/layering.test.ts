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
import { describeCycle, importCycles, importGraph, readSources } from './imports.js';

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

  it('spreading a list into push() or Math.max() is an error in src and grammars (a crash past ~120,000 items)', async () => {
    const errors = async (file: string, source: string) => {
      const [r] = await eslint.lintText(source, { filePath: `${ROOT}${file}` });
      return r.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
    };
    expect(await errors('src/load/probe.ts', 'export function f(a: number[], b: number[]) {\n  a.push(...b);\n  return Math.max(...a);\n}\n')).toEqual([
      'push(...list) overflows the stack on long lists: use appendAll() (src/source)',
      'Math.max(...list) overflows the stack on long lists: use maxOf()/minOf() (src/source)',
    ]);
    expect(await errors('grammars/nft/probe.ts', 'export function f(a: string[], b: string[]) {\n  a.unshift(...b);\n  return a;\n}\n')).toHaveLength(1);
    expect(await errors('src/load/probe.ts', 'export function f(a: number[], b: number[]) {\n  for (const x of b) a.push(x);\n  return [...a, ...b];\n}\n')).toEqual([]);
  });

  it('a core area importing a command-line or terminal package is an error, naming the package', async () => {
    expect(await layerErrors('src/model/probe.ts', "import chalk from 'chalk';\nexport const red = chalk.red;\n")).toEqual([
      'src/model may not import the package chalk — a command-line/terminal package: the analysis returns data, src/cli and src/render meet the terminal (allowed: ipaddr.js)',
    ]);
    expect(await layerErrors('src/trace/probe.ts', "import { isatty } from 'tty';\nexport const t = isatty(1);\n")).toEqual([
      'src/trace may not import the package node:tty — a command-line/terminal package: the analysis returns data, src/cli and src/render meet the terminal (allowed: no packages)',
    ]);
    expect(await layerErrors('src/kube/probe.ts', "export type O = typeof import('ora');\n")).toHaveLength(1);
    expect(await layerErrors('src/lint/probe.ts', "export { Command } from 'commander';\n")).toHaveLength(1);
    expect(await layerErrors('src/load/probe.ts', "import Table from 'cli-table3';\nexport const t = new Table();\n")).toHaveLength(1);
    // A grammar reads syntax: Chevrotain comes through grammars/common, nothing else but YAML.
    expect(await layerErrors('grammars/nft/probe.ts', "import { Lexer } from 'chevrotain';\nexport const L = Lexer;\n")).toEqual([
      'grammars/nft may not import the package chevrotain (allowed: yaml)',
    ]);
    // Only src/cli parses arguments, even among the areas that may use most packages.
    expect(await layerErrors('src/render/probe.ts', "import ora from 'ora';\nexport const s = ora;\n")).toEqual([
      'src/render may not import ora: only src/cli parses arguments and drives the terminal',
    ]);
  });

  it('a core area importing src/cli is an error', async () => {
    expect(await layerErrors('src/model/probe.ts', "import { ExitCode } from '../cli/exit.js';\nexport const c = ExitCode;\n")).toEqual([
      'src/model may not import src/cli (allowed: src/source, grammars/common)',
    ]);
  });

  it('imports along the direction pass', async () => {
    expect(await layerErrors('src/model/probe.ts', "import ipaddr from 'ipaddr.js';\nexport const p = ipaddr;\n")).toEqual([]);
    expect(await layerErrors('src/render/probe.ts', "import chalk from 'chalk';\nexport const red = chalk.red;\n")).toEqual([]);
    expect(await layerErrors('src/cli/probe.ts', "import ora from 'ora';\nexport const s = ora;\n")).toEqual([]);
    expect(await layerErrors('src/trace/probe.ts', "import type { ServicePort } from '../kube/types.js';\nexport type X = ServicePort;\n")).toEqual([]);
    expect(await layerErrors('src/model/probe.ts', "export type { SynRule } from '../../grammars/common/nft-syntax.js';\n")).toEqual([]);
  });
});

/** The import cycles of a tree (repository-relative path → text), each described with the lines that close it. */
const cycleReport = (sources: ReadonlyMap<string, string>) => importCycles(importGraph(sources)).map(describeCycle);

describe('import cycles', () => {
  const cyclesOf = (files: Record<string, string>) => importCycles(importGraph(new Map(Object.entries(files))));

  it('no file imports another that imports it back, through any chain (type-only imports count)', () => {
    expect(cycleReport(readSources(ROOT)), 'import cycles: move what both files need into a third file (a types module, or the lower layer)').toEqual([]);
  });

  it('a probe cycle added to the real tree fails that check, named with its lines', () => {
    const sources = new Map(readSources(ROOT));
    expect(sources.size).toBeGreaterThan(300);
    // A probe: src/kube/basics.ts (the words src/kube/types.ts is made of) importing a type back from types.ts.
    sources.set('src/kube/basics.ts', `${sources.get('src/kube/basics.ts')}\nimport type { ServicePort } from './types.js';\nexport type Probe = ServicePort;\n`);
    const found = cycleReport(sources);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/src\/kube\/basics\.ts:\d+ imports the types of src\/kube\/types\.ts/);
    expect(found[0]).toMatch(/src\/kube\/types\.ts:\d+ imports the types of src\/kube\/basics\.ts/);
  });

  it('a two-file cycle is found, type-only or not, inside a folder or across areas', () => {
    const two = cyclesOf({
      'src/model/a.ts': "import { b } from './b.js';\nexport const a = b + 1;\n",
      'src/model/b.ts': "import type { A } from './a.js';\nexport const b = 1;\nexport type B = A;\n",
      'src/model/c.ts': "import { a } from './a.js';\nexport const c = a;\n",
    });
    expect(two).toHaveLength(1);
    expect(two[0].files).toEqual(['src/model/a.ts', 'src/model/b.ts']);
    expect(describeCycle(two[0])).toBe(
      'src/model/a.ts → src/model/b.ts → src/model/a.ts\n    src/model/a.ts:1 imports src/model/b.ts\n    src/model/b.ts:1 imports the types of src/model/a.ts',
    );
    // Through an index file, a re-export and a dynamic import, across areas.
    const three = cyclesOf({
      'src/load/index.ts': "export * from './bundle.js';\n",
      'src/load/bundle.ts': "export const f = () => import('../kube/x.js');\n",
      'src/kube/x.ts': "export type T = typeof import('../load/index.js');\n",
    });
    expect(three).toHaveLength(1);
    expect(three[0].component).toEqual(['src/kube/x.ts', 'src/load/bundle.ts', 'src/load/index.ts']);
    expect(cyclesOf({ 'src/a.ts': "import './a.js';\n" })).toHaveLength(1);
  });

  it('a chain without a loop is no cycle', () => {
    expect(
      cyclesOf({
        'src/model/a.ts': "import { b } from './b.js';\nimport { c } from './c.js';\nexport const a = b + c;\n",
        'src/model/b.ts': "import { c } from './c.js';\nexport const b = c;\n",
        'src/model/c.ts': "import chalk from 'chalk';\nexport const c = 1;\n",
      }),
    ).toEqual([]);
  });
});
