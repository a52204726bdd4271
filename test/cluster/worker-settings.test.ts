/**
 * The input limits reach cluster parser workers as workerData, not through the environment
 * (issue 32): the CLI's settings for the run (src/cli/program.ts inputSettingsOf, as its
 * --max-input-size flag makes them) are applied inside the worker threads, with no KPX_ variable set.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { bundle } from './helpers.js';

const dist = (p: string) => fileURLToPath(new URL(`../../dist/src/${p}`, import.meta.url));
type Load = typeof import('../../src/cluster/load.js');
type Input = typeof import('../../src/load/input.js');
type Program = typeof import('../../src/cli/program.js');

describe('input settings in worker threads (compiled build)', () => {
  let input: Input | undefined;
  afterEach(() => input?.useInputSettings(input.DEFAULT_INPUT_SETTINGS));

  it("a worker thread applies the CLI's --max-input-size, with no environment variable", async () => {
    expect(existsSync(dist('cluster/load.js')), 'build first (npm test does)').toBe(true);
    const load = (await import(pathToFileURL(dist('cluster/load.js')).href)) as Load;
    input = (await import(pathToFileURL(dist('load/input.js')).href)) as Input;
    const program = (await import(pathToFileURL(dist('cli/program.js')).href)) as Program;
    const { dir } = bundle({ seed: 3 });
    const refused = (c: Awaited<ReturnType<Load['loadCluster']>>) =>
      c.nodes.flatMap((n) => n.snapshot.files.filter((f) => f.diagnostics.some((d) => /--max-input-size 4 KiB/.test(d.message))).map((f) => `${n.name}:${f.path.slice(dir.length)}`));

    const plain = await load.loadCluster(dir, { workers: 2 });
    expect(plain.loadedWith).toBe('workers');
    expect(refused(plain)).toEqual([]);

    input.useInputSettings(program.inputSettingsOf({ maxInputSize: input.parseSize('4K') }));
    expect(Object.keys(process.env).filter((k) => /^KPX_(MAX|FOLLOW)/.test(k))).toEqual([]);
    const limited = await load.loadCluster(dir, { workers: 2 });
    expect(limited.loadedWith).toBe('workers');
    // Every node's iptables-save is over 4 KiB: each worker refused it, naming the flag.
    expect(refused(limited).filter((f) => f.endsWith('iptables-save.txt'))).toHaveLength(plain.nodes.length);
    expect(plain.nodes.length).toBeGreaterThan(1);
  });
});
