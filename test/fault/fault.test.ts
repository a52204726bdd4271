/**
 * Fault injection (issue 23): every command against hostile inputs and outputs, through the
 * built CLI, as a user would meet them. Each run must end with no stack trace and no internal
 * error, with the documented exit code, in bounded peak memory (measured in the kpx process:
 * peak-rss.mjs), and with the good files of a bundle still analysed. No timing is asserted (the
 * machine may be loaded); times are printed. Runs whose subject is the process — its peak memory,
 * a full or closed stdout, a closed stdin — spawn the binary (runKpx); the others (what kpx says
 * about odd inputs and unwritable paths) run it in-process (cli.ts), the same program and output.
 *
 * The heaviest cases (a real 600 MB file on disk, and 600 MB through a pipe) run only with
 * CI=true or KPX_FAULT_HEAVY=1; the rest stays within a couple of minutes.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_ENTRIES, goodFiles, hostileBundle, manyTinyFiles, ruleBomb, sparseFile, zeroBomb } from './hostile.js';
import { cli } from '../helpers/cli.js';
import { bugs, runKpx } from './run.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = join(ROOT, 'samples/iptables-mode-node');
const HEAVY = process.env.CI === 'true' || process.env.KPX_FAULT_HEAVY === '1';
const GiB = 1024;

let tmp = '';
let outN = 0;
const out = (name: string) => join(tmp, 'out', `${outN++}-${name}`);

/** Every command that reads dumps, as it would be run on input `d` (a bundle or a file). */
function commands(d: string): Record<string, string[]> {
  return {
    inspect: ['inspect', d],
    services: ['services', '-i', d, '-o', 'json'],
    trace: ['trace', '10.96.0.10:53/udp', '-i', d],
    lint: ['lint', '-i', d, '--fail-on', 'never'],
    graph: ['graph', '-i', d],
    report: ['report', '-i', d, '-o', out('report.md'), '--no-lint'],
    diff: ['diff', d, d],
    reverse: ['reverse', '10.244.1.2', '-i', d],
    redact: ['redact', d, '-o', out('redacted'), '--key', 'k'],
  };
}

function clean(r: { readonly stderr: string }, what: string): void {
  expect(bugs(r.stderr), `${what}: ${r.stderr.slice(0, 2000)}`).toEqual([]);
}

/** Service ports the good sample gives (the answer every bundle case must still reach). */
let sampleServices = 0;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'kpx-fault-'));
  mkdirSync(join(tmp, 'out'));
  const r = await cli(['services', '-i', SAMPLE, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  sampleServices = (JSON.parse(r.stdout) as { services: unknown[] }).services.length;
  expect(sampleServices).toBeGreaterThan(5);
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('a bundle with one of every bad entry', () => {
  let dir = '';
  beforeAll(() => {
    dir = join(tmp, 'hostile');
    hostileBundle(SAMPLE, dir);
  });

  it('inspect lists each bad entry with its reason, analyses the rest, and exits 1', async () => {
    const r = await runKpx(tmp, ['inspect', dir, '-o', 'json'], { timeoutMs: 60_000 });
    clean(r, 'inspect');
    expect(r.code).toBe(1);
    const files = (JSON.parse(r.stdout) as { files: { path: string; format: string; diagnostics: { code: string; message: string }[] }[] }).files;
    for (const [entry, code] of Object.entries(HOSTILE_ENTRIES)) {
      const f = files.find((x) => x.path === join(dir, entry));
      expect(f, `${entry} is listed`).toBeDefined();
      expect(f!.diagnostics.map((d) => d.code), entry).toContain(code);
    }
    // The good files are read as usual.
    for (const good of ['iptables-save.txt', 'ip-addr.txt', 'ip-route.txt', 'sysctl.txt']) {
      const f = files.find((x) => x.path === join(dir, good));
      expect(f?.diagnostics.filter((d) => d.code.startsWith('input/')), good).toEqual([]);
      expect(f?.format, good).not.toBe('unknown');
    }
    // The truncated .gz is read as far as it goes.
    const gz = files.find((x) => x.path === join(dir, 'truncated-ip-route.gz'))!;
    expect(gz.format).toBe('ip-route');
    expect(r.peakMiB).toBeLessThan(GiB);
    console.log(`hostile bundle: inspect ${r.seconds.toFixed(1)} s, ${r.peakMiB.toFixed(0)} MiB`);
  });

  it('every command answers from the good files, says what it did not use, no stack trace', async () => {
    for (const [name, args] of Object.entries(commands(dir))) {
      const r = await runKpx(tmp, args, { timeoutMs: 90_000 });
      clean(r, name);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(r.peakMiB, name).toBeLessThan(GiB);
      if (name === 'services') expect((JSON.parse(r.stdout) as { services: unknown[] }).services.length).toBe(sampleServices);
      if (['services', 'trace', 'lint'].includes(name)) {
        for (const entry of ['fifo', 'dev-zero', 'loop-a', 'bomb.gz']) expect(r.stderr, `${name} names ${entry}`).toContain(join(dir, entry));
      }
      if (name === 'redact') expect(r.stderr).toMatch(/fifo: a named pipe \(FIFO\).*not in the redacted copy/);
    }
  });
});

describe('huge input', () => {
  it('a .gz inflating to 3 GiB of zeros: refused by the ratio, in bounded memory, by every command', async () => {
    const bomb = join(tmp, 'zeros.gz');
    zeroBomb(bomb, 3);
    for (const args of [['inspect', bomb], ['services', '-i', bomb], ['dump', bomb]]) {
      const r = await runKpx(tmp, args, { timeoutMs: 60_000 });
      clean(r, args[0]);
      expect(r.code, args[0]).toBe(2);
      expect(r.stderr, args[0]).toMatch(/inflates more than 200× its compressed size.*--max-gzip-ratio/);
      expect(r.peakMiB, args[0]).toBeLessThan(GiB);
      console.log(`zeros.gz: ${args[0]} ${r.seconds.toFixed(1)} s, ${r.peakMiB.toFixed(0)} MiB`);
    }
  });

  it('a .gz of 3 GiB of iptables rules: the ratio stops it; with the ratio off, --max-input-size does; each names its flag', async () => {
    const bomb = join(tmp, 'rules.gz');
    ruleBomb(bomb, 3);
    const byRatio = await runKpx(tmp, ['inspect', bomb], { timeoutMs: 60_000 });
    clean(byRatio, 'inspect');
    expect(byRatio.code).toBe(2);
    expect(byRatio.stderr).toMatch(/--max-gzip-ratio/);
    expect(byRatio.peakMiB).toBeLessThan(GiB);
    // The bomb is ~9 MiB compressed: a smaller limit refuses it on disk before reading; 16M lets the stream start, then stops it.
    const bySize = await runKpx(tmp, ['services', '-i', bomb, '--max-gzip-ratio', '0', '--max-input-size', '16M'], { timeoutMs: 90_000 });
    clean(bySize, 'services');
    expect(bySize.code).toBe(2);
    expect(bySize.stderr).toMatch(/inflates to more than --max-input-size 16 MiB.*--max-input-size \d+M/);
    expect(bySize.peakMiB).toBeLessThan(GiB);
    console.log(`rules.gz: ratio ${byRatio.seconds.toFixed(1)} s ${byRatio.peakMiB.toFixed(0)} MiB; size ${bySize.seconds.toFixed(1)} s ${bySize.peakMiB.toFixed(0)} MiB`);
  });

  it('a 600 MB file is refused before it is read, by every command, with the flag to raise the limit', async () => {
    const big = join(tmp, 'big.txt');
    sparseFile(big);
    for (const [name, args] of Object.entries({ ...commands(big), dump: ['dump', big] })) {
      const r = await runKpx(tmp, args, { timeoutMs: 60_000 });
      clean(r, name);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, name).toMatch(/572\.2 MiB is more than kpx reads from one input \(--max-input-size 128 MiB\); not read.*--max-input-size 1G/);
      expect(r.peakMiB, name).toBeLessThan(1.5 * GiB);
    }
  });

  it.runIf(HEAVY)('heavy: a 600 MB listing on disk and 600 MB through a pipe stay in bounded memory', async () => {
    const big = join(tmp, 'conntrack.txt');
    const line = 'ipv4     2 tcp      6 86399 ESTABLISHED src=10.244.1.2 dst=10.96.0.1 sport=44444 dport=443 src=10.0.0.1 dst=10.244.1.2 sport=6443 dport=44444 [ASSURED] mark=0 use=2\n';
    const block = Buffer.from(line.repeat(8000));
    const fd = openSync(big, 'w');
    for (let n = 0; n < 600_000_000; n += block.length) writeSync(fd, block);
    closeSync(fd);
    // Raised past its size, the file is read as far as sniffing needs: it is no dump kpx reads.
    const onDisk = await runKpx(tmp, ['inspect', big, '--max-input-size', '1G'], { timeoutMs: 120_000 });
    clean(onDisk, 'inspect');
    expect(onDisk.stdout).toMatch(/unknown/);
    expect(onDisk.peakMiB).toBeLessThan(1.5 * GiB);
    rmSync(big);
    const piped = await runKpx(tmp, ['services', '-i', '-'], {
      timeoutMs: 180_000,
      stdin: async function* () {
        yield Buffer.from('*filter\n:INPUT ACCEPT [0:0]\n');
        const rules = Buffer.from('-A INPUT -s 10.0.0.1/32 -j ACCEPT\n'.repeat(30000));
        for (let n = 0; n < 600_000_000; n += rules.length) yield rules;
      },
      env: { KPX_MAX_INPUT_SIZE: String(32 * 1024 * 1024) },
    });
    clean(piped, 'services -');
    expect(piped.code).toBe(2);
    expect(piped.stderr).toMatch(/holds more than --max-input-size 32 MiB/);
    expect(piped.peakMiB).toBeLessThan(1.5 * GiB);
    console.log(`heavy: on disk ${onDisk.seconds.toFixed(1)} s ${onDisk.peakMiB.toFixed(0)} MiB; piped ${piped.seconds.toFixed(1)} s ${piped.peakMiB.toFixed(0)} MiB`);
  });
});

describe('odd inputs', () => {
  it('an empty directory: one line naming it, exit 2, for every command', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    for (const [name, args] of Object.entries(commands(empty))) {
      if (name === 'redact') continue; // redact copies what is there: nothing is nothing
      const r = await cli(args);
      clean(r, name);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trimEnd().split('\n'), name).toEqual([`kpx: ${empty}: the directory holds no files`]);
    }
  });

  it('a directory of 20,000 tiny files beside good dumps: listed, the dumps analysed', async () => {
    const dir = join(tmp, 'many');
    manyTinyFiles(SAMPLE, dir, 20_000);
    const r = await runKpx(tmp, ['inspect', dir, '-o', 'json'], { timeoutMs: 120_000 });
    clean(r, 'inspect');
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }).files;
    expect(files.filter((f) => f.path.includes('/tiny/'))).toHaveLength(20_000);
    expect(r.peakMiB).toBeLessThan(GiB);
    const ipt = files.find((f) => f.path === join(dir, 'iptables-save.txt')) as { format?: string; counts?: { rules?: number } } | undefined;
    expect(ipt?.format).toBe('iptables-save');
    expect(ipt?.counts?.rules).toBeGreaterThan(100);
    console.log(`20,000 files: inspect ${r.seconds.toFixed(1)} s ${r.peakMiB.toFixed(0)} MiB`);
  });

  it('the same dump twice: read once (the second name listed as a duplicate), the same Services', async () => {
    const f = join(SAMPLE, 'iptables-save.txt');
    const r = await cli(['services', '-i', f, '-i', SAMPLE, '-o', 'json']);
    clean(r, 'services');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`kpx: ${f}: the same file as ${f}, read once`);
    expect((JSON.parse(r.stdout) as { services: unknown[] }).services.length).toBe(sampleServices);
    for (const args of [['lint', '-i', f, '-i', f, '--fail-on', 'never'], ['diff', f, f], ['inspect', f, f]]) {
      const x = await cli(args);
      clean(x, args[0]);
      expect([0, 1], args[0]).toContain(x.code);
    }
  });

  it('/proc files beside a dump: read as streams (their size says 0), listed as not dumps', async () => {
    const procs = ['/proc/self/status', '/proc/net/dev', '/proc/sys/net/ipv4/ip_forward'].filter((p) => existsSync(p));
    expect(procs.length).toBeGreaterThan(0);
    const r = await cli(['inspect', '-o', 'json', join(SAMPLE, 'iptables-save.txt'), ...procs]);
    clean(r, 'inspect');
    const files = (JSON.parse(r.stdout) as { files: { path: string; format: string; bytes: number }[] }).files;
    for (const p of procs) {
      const f = files.find((x) => x.path === p)!;
      expect(f.format, p).toBe('unknown');
      expect(f.bytes, p).toBeGreaterThan(0);
    }
  });

  it('links out of a bundle (to /, /etc, a dump elsewhere): listed, not walked or read; --follow-symlinks reads the dump; redact never copies it', async () => {
    const dir = join(tmp, 'links');
    goodFiles(SAMPLE, dir);
    symlinkSync('/', join(dir, 'root'));
    symlinkSync('/etc', join(dir, 'etc'));
    const elsewhere = join(tmp, 'elsewhere-route.txt');
    writeFileSync(elsewhere, readFileSync(join(SAMPLE, 'ip-route.txt'), 'utf8').replace(/10\.244\./g, '10.245.'));
    symlinkSync(elsewhere, join(dir, 'other-route.txt'));
    const r = await cli(['services', '-i', dir, '-o', 'json']);
    clean(r, 'services');
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { services: unknown[] }).services).toHaveLength(sampleServices);
    for (const n of ['root', 'etc', 'other-route.txt']) expect(r.stderr).toContain(`${join(dir, n)}: a symlink to`);
    const i = await cli(['inspect', dir, '-o', 'json']);
    const files = (JSON.parse(i.stdout) as { files: { path: string; format: string; diagnostics: { code: string }[] }[] }).files;
    // One row per link: nothing under / or /etc.
    expect(files.filter((f) => !f.path.startsWith(dir))).toEqual([]);
    expect(files.filter((f) => f.diagnostics.some((d) => d.code === 'input/outside-bundle')).map((f) => f.path).sort()).toEqual(['etc', 'other-route.txt', 'root'].map((n) => join(dir, n)));
    // Asked: the dump elsewhere is read (root and etc removed: following / is bounded, not quick).
    rmSync(join(dir, 'root'));
    rmSync(join(dir, 'etc'));
    const f = await cli(['inspect', dir, '-o', 'json', '--follow-symlinks']);
    const followed = (JSON.parse(f.stdout) as { files: { path: string; format: string }[] }).files.find((x) => x.path === join(dir, 'other-route.txt'));
    expect(followed?.format).toBe('ip-route');
    // redact never copies it, asked or not.
    const red = out('links-redacted');
    const x = await cli(['redact', dir, '-o', red, '--key', 'k', '--follow-symlinks']);
    clean(x, 'redact');
    expect(existsSync(join(red, 'other-route.txt'))).toBe(false);
    expect(x.stderr).toMatch(/other-route\.txt: a symlink to .*outside the bundle.*not in the redacted copy/);
  });

  it('stdin closed: dump, services and inspect of - say so, exit 2 or 3, no stack trace', async () => {
    for (const [args, code] of [[['dump', '-'], 2], [['services', '-i', '-'], 3], [['inspect', '-'], 0]] as const) {
      const r = await runKpx(tmp, args, { stdin: 'closed' });
      clean(r, args[0]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
    }
  });
});

describe('hostile outputs: one line naming the path and what to do, exit 2', () => {
  const oneLine = (r: { readonly code: number; readonly stderr: string }, what: string, pattern: RegExp) => {
    clean(r, what);
    expect(r.code, `${what}: ${r.stderr}`).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines, what).toHaveLength(1);
    expect(lines[0], what).toMatch(pattern);
  };

  it('stdout on a full disk (/dev/full), for every command that prints', async () => {
    const cmds = { ...commands(SAMPLE), dump: ['dump', join(SAMPLE, 'iptables-save.txt')] };
    for (const name of ['inspect', 'services', 'trace', 'lint', 'graph', 'diff', 'reverse', 'dump']) {
      const r = await runKpx(tmp, cmds[name as keyof typeof cmds], { stdoutTo: '/dev/full' });
      oneLine(r, name, /^kpx: cannot write standard output: no space left on device \(ENOSPC\) \(free some space, or write elsewhere\)$/);
    }
  });

  it('files into a missing directory, onto a directory, and collect onto an existing file', async () => {
    const missing = join(tmp, 'no-such-dir');
    oneLine(await cli(['report', '-i', SAMPLE, '-o', join(missing, 'r.md'), '--no-lint']), 'report', /^kpx: cannot write .*r\.md: no such file or directory \(ENOENT\) \(the directory .* does not exist: create it first/);
    oneLine(await cli(['graph', '-i', SAMPLE, '--svg', join(missing, 'g.svg')]), 'graph --svg', /^kpx: cannot write .*g\.svg: no such file or directory \(ENOENT\)/);
    oneLine(await cli(['graph', '-i', SAMPLE, '--output', join(missing, 'g.dot')]), 'graph --output', /^kpx: cannot write .*g\.dot: no such file or directory \(ENOENT\)/);
    oneLine(await cli(['report', '-i', SAMPLE, '-o', tmp, '--format', 'md', '--no-lint']), 'report onto a directory', /^kpx: cannot write .*: is a directory \(EISDIR\) \(name a file, not a directory\)$/);
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    oneLine(await cli(['collect', '-o', file]), 'collect', /^kpx: .*a-file exists and is not a directory: name a new directory$/);
    oneLine(await cli(['redact', SAMPLE, '-o', file, '--key', 'k']), 'redact', /a-file/);
  });

  it('a reader that goes away (EPIPE): kpx stops quietly, no stack trace', async () => {
    for (const args of [['dump', join(SAMPLE, 'iptables-save.txt')], ['graph', '-i', SAMPLE]]) {
      const r = await runKpx(tmp, args, { closeStdoutAfter: 1 });
      clean(r, args[0]);
      expect([0, 1], `${args[0]}: ${r.stderr}`).toContain(r.code);
    }
  });
});

