/**
 * The input limits travel as arguments (issue 32): from the command line's flags (src/cli/input-options.ts
 * inputSettingsOf) through the cluster loader to its parser worker threads as workerData, and to the
 * loaders in this thread — never through the environment, and never as a run-wide default that
 * one run leaves behind for the next.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { bundle } from './helpers.js';

const dist = (p: string) => fileURLToPath(new URL(`../../dist/src/${p}`, import.meta.url));
type Load = typeof import('../../src/cluster/load.js');
type Input = typeof import('../../src/load/input.js');
type Program = typeof import('../../src/cli/program.js');

describe('input settings as arguments (compiled build)', () => {
  it("a worker thread applies the CLI's --max-input-size, handed as workerData, with no environment variable", async () => {
    expect(existsSync(dist('cluster/load.js')), 'build first (npm test does)').toBe(true);
    const load = (await import(pathToFileURL(dist('cluster/load.js')).href)) as Load;
    const input = (await import(pathToFileURL(dist('load/input.js')).href)) as Input;
    const program = (await import(pathToFileURL(dist('cli/program.js')).href)) as Program;
    const { dir } = bundle({ seed: 3 });
    const refused = (c: Awaited<ReturnType<Load['loadCluster']>>) =>
      c.nodes.flatMap((n) => n.snapshot.files.filter((f) => f.diagnostics.some((d) => /--max-input-size 4 KiB/.test(d.message))).map((f) => `${n.name}:${f.path.slice(dir.length)}`));

    const plain = await load.loadCluster(dir, { workers: 2 });
    expect(plain.loadedWith).toBe('workers');
    expect(refused(plain)).toEqual([]);

    const limited = await load.loadCluster(dir, { workers: 2, input: program.inputSettingsOf({ maxInputSize: input.parseSize('4K') }) });
    expect(Object.keys(process.env).filter((k) => /^KPX_(MAX|FOLLOW)/.test(k))).toEqual([]);
    expect(limited.loadedWith).toBe('workers');
    // Every node's iptables-save is over 4 KiB: each worker refused it, naming the flag.
    expect(refused(limited).filter((f) => f.endsWith('iptables-save.txt'))).toHaveLength(plain.nodes.length);
    expect(plain.nodes.length).toBeGreaterThan(1);

    // Nothing stays behind: the next load without settings reads every file again.
    expect(refused(await load.loadCluster(dir, { workers: 2 }))).toEqual([]);
  });

  it('--max-input-size on `services --nodes` reaches every node read, and the next run does not inherit it', async () => {
    const { dir } = bundle({ seed: 3 });
    const limited = await cli(['services', '--nodes', '-i', dir, '-o', 'json', '--max-input-size', '4K']);
    expect(limited.code).toBe(0);
    // Each node's inputs had errors (its iptables-save refused by the limit): said after the answer.
    expect(limited.stderr).toMatch(/kpx: some inputs had errors on .+; run `kpx inspect -i DIR --node NAME` for details/);
    const again = await cli(['services', '--nodes', '-i', dir, '-o', 'json']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(JSON.parse(again.stdout).summary.servicePorts).toBeGreaterThan(JSON.parse(limited.stdout).summary.servicePorts);
  });
});
