/**
 * The in-process runner (test/helpers/cli.ts) is the binary without the process: for each exit code
 * kpx has, for help and usage errors, for COLUMNS and an option kpx passes through the environment,
 * `cli()` gives exactly what the spawned binary gives. And a run leaves nothing behind in the test
 * worker: not its environment, not its exit code, not its stdout.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { kpxSpawn } from '../helpers/exec.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = join(ROOT, 'samples/iptables-mode-node');

/** [args, env, the exit code the binary gives] — one per behaviour the runner must reproduce. */
const CASES: [string[], Record<string, string>, number][] = [
  [['services', '-i', NODE], {}, 0],
  [['services', '-i', NODE], { COLUMNS: '80' }, 0],
  [['lint', '-i', join(ROOT, 'test/fixtures/kube-proxy/klog-sync-failed.log'), '-i', NODE], {}, 1],
  [['inspect', '-i', '/nonexistent-kpx-input'], {}, 2],
  [['services', '--state', 'weird', '-i', NODE], {}, 2],
  [['services', '--no-such-option'], {}, 2],
  [['trace', '[fd00:10:96::a]:53/udp', '-i', NODE], {}, 3],
  [['trace', '--help'], {}, 0],
  [['--version'], {}, 0],
  [['services', '-i', NODE, '--max-input-size', '1K'], {}, 3],
];

describe('cli() gives what the binary gives', () => {
  for (const [args, env, code] of CASES) {
    it(`kpx ${args.join(' ').replaceAll(ROOT, '')}${Object.keys(env).length ? ` (${JSON.stringify(env)})` : ''}: exit ${code}`, async () => {
      const spawned = await kpxSpawn(args, undefined, env);
      expect(spawned.code).toBe(code);
      expect(spawned.stdout + spawned.stderr).not.toBe('');
      expect(await cli(args, env)).toEqual(spawned);
    });
  }
});

describe('a run leaves the worker as it was', () => {
  it('environment, exit code and streams are put back', async () => {
    const env = { ...process.env };
    const exitCode = process.exitCode;
    const write = process.stdout.write;
    const r = await cli(['services', '-i', NODE, '--max-input-size', '1K'], { COLUMNS: '77' });
    expect(r.code).toBe(3); // every dump over 1K is left out: no ruleset to answer from
    // kpx set KPX_MAX_INPUT_SIZE (for its workers) and the runner set NO_COLOR, CI and COLUMNS: all gone.
    expect(process.env).toEqual(env);
    expect(process.env.KPX_MAX_INPUT_SIZE).toBeUndefined();
    expect(process.exitCode).toBe(exitCode);
    expect(process.stdout.write).toBe(write);
  });

  it('runs started together do not mix their output', async () => {
    const [a, b] = await Promise.all([cli(['schema']), cli(['--version'])]);
    expect(b.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(a.stdout).toContain('services');
    expect(a.stdout).not.toContain(b.stdout.trim());
  });
});
