/**
 * The command line as a newcomer meets it: every `--help` has examples (and the sample ones
 * run), the exit codes are listed, the version comes from package.json, and the same binary
 * works as the kubectl plugin `kubectl-kpx`.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, kpxSpawn, run } from '../helpers/exec.js';
import { cli, type KpxResult } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
const COMMANDS = ['dump', 'inspect', 'services', 'trace', 'lint', 'diff', 'reverse', 'graph', 'report', 'redact', 'collect', 'schema'];
const tmp = mkdtempSync(join(tmpdir(), 'kpx-help-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('--help', () => {
  const helps = new Map<string, KpxResult>();
  beforeAll(async () => {
    for (const c of COMMANDS) helps.set(c, await cli([c, '--help']));
  });

  it('every command has examples of itself and the exit codes', async () => {
    expect([...helps.keys()]).toEqual(COMMANDS);
    for (const [c, r] of helps) {
      expect(r.code, c).toBe(0);
      const ex = r.stdout.split('\nExamples:\n')[1];
      expect(ex, c).toBeDefined();
      const lines = ex.split('\n\n')[0].split('\n');
      expect(lines.length, c).toBeGreaterThanOrEqual(2);
      for (const l of lines) expect(l, c).toMatch(new RegExp(`^  \\$ (sudo (ip netns exec NS )?)?(kpx|iptables-save \\| kpx) (${c}|who-dnat)\\b`));
      expect(r.stdout, c).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 {2}cannot tell/);
    }
    // The binary itself, spawned: its --help is the program's.
    const root = await kpxSpawn(['--help']);
    expect(root.stdout).toContain('\nExamples:\n  $ kpx services -i samples/iptables-mode-node\n');
    expect(root).toEqual(await cli(['--help']));
  });

  it('the examples on the bundled samples run as written', async () => {
    let ran = 0;
    for (const [c, r] of helps) {
      for (const l of r.stdout.split('\n').filter((x) => x.startsWith('  $ kpx ') && x.includes(' samples/'))) {
        const cmd = l.slice('  $ kpx '.length);
        if (/[|>]|--svg|-o report/.test(cmd)) continue; // writes files or pipes into other tools
        const res = await cli(cmd.split(/\s+/));
        // lint exits 1 when it finds errors; every other example answers with 0.
        expect(c === 'lint' ? [0, 1] : [0], `${c}: kpx ${cmd}\n${res.stderr}`).toContain(res.code);
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(5);
  });
});

describe('version', () => {
  it('kpx --version prints package.json\'s version', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${PKG.version}\n` });
  });

  it('is read from the package.json above the module, not written in the code', async () => {
    // The built module in a package of another version reports that version.
    const dir = join(tmp, 'pkg');
    mkdirSync(join(dir, 'dist/src'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'kpx', version: '9.8.7-test' }));
    copyFileSync(join(ROOT, 'dist/src/version.js'), join(dir, 'dist/src/version.js'));
    const r = await run(process.execPath, ['--input-type=module', '-e', `import { VERSION } from ${JSON.stringify(join(dir, 'dist/src/version.js'))}; console.log(VERSION);`]);
    expect(r.stdout).toBe('9.8.7-test\n');
  });
});

describe('kubectl plugin', () => {
  it('package.json installs the CLI as kubectl-kpx too, and it names itself `kubectl kpx`', async () => {
    expect(PKG.bin['kubectl-kpx']).toBe(PKG.bin.kpx);
    const link = join(tmp, 'kubectl-kpx');
    symlinkSync(BIN, link);
    const r = await run(link, ['--help'], { env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: kubectl kpx \[options\] \[command\]/);
    const s = await run(link, ['services', '-i', join(ROOT, 'samples/iptables-mode-node'), '-o', 'json']);
    expect(s.status).toBe(0);
    expect(JSON.parse(s.stdout).services.length).toBeGreaterThan(10);
  });
});
