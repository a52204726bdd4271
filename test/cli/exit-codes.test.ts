/**
 * Honest exit status and clean errors, as a user sees them from the built CLI: "cannot tell"
 * (exit 3) is said first and is not "nothing found"; unwritable outputs and unreadable inputs
 * are one line and exit 2; the rest of a bundle is still analysed.
 */
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, kpxSpawn, run } from '../helpers/exec.js';
import { cli } from '../helpers/cli.js';
import { exitCodeFor } from '../../src/cli/exit.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = join(ROOT, 'samples/iptables-mode-node');
const tmp = mkdtempSync(join(tmpdir(), 'kpx-exit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A bundle made of some of the sample's files, plus extra files. */
function bundle(name: string, from: readonly string[], extra: Record<string, string> = {}): string {
  const dir = join(tmp, name);
  mkdirSync(dir);
  for (const f of from) copyFileSync(join(SAMPLE, f), join(dir, f));
  for (const [f, text] of Object.entries(extra)) writeFileSync(join(dir, f), text);
  return dir;
}

const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at .*(\.js|\.ts|node:)/);

describe('exit 3: the inputs cannot answer', () => {
  it('the nft view of an iptables-nft node alone: answered from that view (exit 0), saying first what the view cannot show — not "no Services", not "cannot tell"', async () => {
    // The sample's nft-ruleset.txt is `nft list ruleset` of the same node: its kube-proxy chains live in
    // iptables-nft's `table ip nat`/`filter`, read as iptables tables (without comments and xt matches' options).
    const only = bundle('iptables-nft-view', ['nft-ruleset.txt', 'ip-addr.txt', 'ip-route.txt']);
    for (const args of [['services'], ['trace', '10.96.0.10:53/udp'], ['lint']]) {
      const r = await cli([...args, '-i', only]);
      expect(r.code, args.join(' ')).toBe(0); // lint: warnings only, as on iptables-save
      expect(r.stderr).toMatch(/^kpx: .*nft-ruleset\.txt: kube-proxy's iptables-mode rules read from the nft listing of iptables-nft's tables \([^)]*table ip nat[^)]*\): .*Service names .* are unknown; iptables-save shows them/m);
      noStack(r.stderr);
    }
    expect((await cli(['services', '-i', only])).stdout).toMatch(/^<unnamed>\s+10\.96\.0\.10\s+53\/UDP\s+2 \(1 local\)\s+healthy/m);
    expect((await cli(['trace', '10.96.0.10:53/udp', '-i', only])).stdout).toMatch(/50%\s+DNAT → 10\.244\.0\.2:53/);
    // With the node's iptables-save beside it, iptables-save answers (names and all), and the view is not read.
    const both = bundle('iptables-nft-view-and-save', ['nft-ruleset.txt', 'iptables-save.txt', 'ip-addr.txt', 'ip-route.txt']);
    const r = await cli(['services', '-i', both]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('kube-system/kube-dns:dns');
    expect(r.stderr).not.toMatch(/read from the nft listing/);
  });

  it('services on a file that is not a dump says so first, prints no "no Services", exits 3', async () => {
    const r = await cli(['services', '-i', '/bin/ls']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('kpx: /bin/ls: not a dump kpx reads; not used');
    expect(lines[1]).toMatch(/^kpx: cannot tell which Services this node implements: no iptables-save, ip6tables-save, nft or ipvsadm dump/);
    noStack(r.stderr);
  });

  it('trace on a directory without rulesets, and an IPv6 VIP on an IPv4-only bundle, exit 3', async () => {
    const routes = bundle('routes-only', ['ip-route.txt', 'ip-addr.txt']);
    const r = await cli(['trace', '10.96.0.10:53/udp', '-i', routes]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^kpx: cannot tell where 10\.96\.0\.10:53\/udp goes: no iptables-save, nft or ipvsadm dump for IPv4/);
    const v6 = await cli(['trace', '[fd00:10:96::a]:53/udp', '-i', SAMPLE]);
    expect(v6.code).toBe(3);
    expect(v6.stdout).toBe('');
    expect(v6.stderr).toMatch(/cannot tell where \[fd00:10:96::a\]:53\/udp goes: no ip6tables-save, nft or ipvsadm dump for IPv6/);
    // …while the IPv4 question on the same bundle is answered.
    expect((await cli(['trace', '10.96.0.10:53/udp', '-i', SAMPLE])).code).toBe(0);
  });

  it('a bundle collected without root (manifest: Permission denied) cannot tell, and says why', async () => {
    const manifest = {
      kind: 'kpx-bundle',
      host: 'n1',
      collectedAt: '2026-01-01T00:00:00Z',
      kpxVersion: '0.1.0',
      tools: {},
      steps: [
        { file: 'iptables-save.txt', command: 'iptables-save', status: 'failed', detail: 'iptables-save v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)' },
        { file: 'nft-ruleset.txt', command: 'nft list ruleset', status: 'failed', detail: 'Operation not permitted (you must be root)' },
        { file: 'ip-route.txt', command: 'ip route show table all', status: 'ok', bytes: 1 },
      ],
    };
    const dir = bundle('non-root', ['ip-route.txt'], { 'manifest.json': JSON.stringify(manifest) });
    for (const cmd of [['services'], ['lint'], ['trace', '10.96.0.10:53/udp']]) {
      const r = await cli([...cmd, '-i', dir]);
      expect(r.code, cmd[0]).toBe(3);
      expect(r.stderr.split('\n')[0], cmd[0]).toMatch(/iptables-save\.txt: `iptables-save` failed when the bundle was collected: .*Permission denied/);
      expect(r.stderr).toMatch(/cannot tell/);
    }
    // inspect lists the missing dump as a file with an error.
    const j = JSON.parse((await cli(['inspect', '-i', dir, '-o', 'json'])).stdout);
    expect(j.files.find((f: { path: string }) => f.path.endsWith('nft-ruleset.txt')).diagnostics[0]).toMatchObject({ severity: 'error', code: 'collect/failed' });
  });

  it('lint with a stray file: says what was not used first, lints the rest, exits by findings', async () => {
    const dir = join(tmp, 'stray');
    cpSync(SAMPLE, dir, { recursive: true });
    copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    const r = await cli(['lint', '-i', dir, '-o', 'json']);
    // What it looks like is said (issue 30): package.json is JSON of no kind kpx reads.
    expect(r.stderr.split('\n')[0]).toBe(`kpx: ${join(dir, 'package.json')}: not a dump kpx reads (it looks like JSON); not used`);
    const clean = await cli(['lint', '-i', SAMPLE, '-o', 'json']);
    expect(r.code).toBe(clean.code);
    expect(r.code === 0 || r.code === 1).toBe(true);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(clean.stdout.replaceAll(SAMPLE, dir)));
  });
});

describe('input errors', () => {
  it('a missing input alone: one line naming it, exit 2', async () => {
    const r = await cli(['services', '-i', join(tmp, 'nope')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`kpx: ${join(tmp, 'nope')}: no such file or directory (ENOENT)\n`);
  });

  it('a missing input beside readable ones, and a symlink loop in a bundle: the rest is analysed, the problem reported', async () => {
    const r = await cli(['services', '-i', join(tmp, 'nope'), '-i', SAMPLE, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe(`kpx: ${join(tmp, 'nope')}: cannot read: no such file or directory (ENOENT); not used`);
    expect(JSON.parse(r.stdout).services.length).toBeGreaterThan(10);

    const dir = join(tmp, 'loop');
    cpSync(SAMPLE, dir, { recursive: true });
    symlinkSync('b', join(dir, 'a'));
    symlinkSync('a', join(dir, 'b'));
    const s = await cli(['services', '-i', dir, '-o', 'json']);
    expect(s.code).toBe(0);
    expect(s.stderr).toContain(`kpx: ${join(dir, 'a')}: cannot read: too many levels of symbolic links (a symlink loop) (ELOOP); not used`);
    expect(JSON.parse(s.stdout).services.length).toBe(JSON.parse(r.stdout).services.length);
    noStack(s.stderr);
  });
});

describe('permissions', () => {
  // As root every file is readable: run kpx as nobody (65534) to meet EACCES as a user does.
  const asUser = (args: string[]) =>
    run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
      ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
    });

  it('an unreadable file in a bundle is reported and the rest analysed; alone it is one line, exit 2', async (ctx) => {
    // A clone inside a private folder (mode 0700, as mktemp -d makes) cannot be run by nobody at all: say so, not fail.
    const probe = await asUser(['--version']);
    if (probe.status !== 0 && /Cannot find module|EACCES/.test(probe.stderr)) {
      process.stderr.write(`exit-codes: the permission test did not run: user nobody cannot reach ${BIN} (a parent folder is private)\n`);
      ctx.skip();
      return;
    }
    const dir = join(tmp, 'perm');
    cpSync(SAMPLE, dir, { recursive: true });
    const secret = join(dir, 'ip6tables-save.txt');
    writeFileSync(secret, '*filter\nCOMMIT\n');
    chmodSync(secret, 0o000);
    for (const d of [tmp, dir]) chmodSync(d, 0o755);
    for (const f of readdirSync(dir)) if (f !== 'ip6tables-save.txt') chmodSync(join(dir, f), 0o644);
    const r = await asUser(['services', '-i', dir, '-o', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe(`kpx: ${secret}: cannot read: permission denied (EACCES); not used`);
    expect(JSON.parse(r.stdout).services.length).toBeGreaterThan(10);
    const alone = await asUser(['services', '-i', secret]);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toBe(`kpx: ${secret}: permission denied (EACCES)\n`);
  });
});

describe('output errors: one line, exit 2', () => {
  const cases: [string, string[], RegExp][] = [
    ['graph --svg into a missing directory', ['graph', '-i', SAMPLE, '--svg', '/nonexistent-kpx/dir/x.svg'], /^kpx: cannot write \/nonexistent-kpx\/dir\/x\.svg: no such file or directory \(ENOENT\) \(the directory \/nonexistent-kpx\/dir does not exist: create it first/],
    ['report -o into a missing directory', ['report', '-i', SAMPLE, '-o', '/nonexistent-kpx/r.md'], /^kpx: cannot write \/nonexistent-kpx\/r\.md: no such file or directory \(ENOENT\)/],
    ['stdout on a full disk', ['services', '-i', SAMPLE], /^kpx: cannot write standard output: no space left on device \(ENOSPC\) \(free some space, or write elsewhere\)$/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      // stdout on a full disk is the process's own stream: spawned, with stdout on /dev/full.
      const r = what.startsWith('stdout') ? await kpxSpawn(args, undefined, {}, { stdoutTo: '/dev/full' }) : await cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr.trimEnd()).toMatch(message);
    });
  }

  it('collect refuses an existing file and a non-empty directory (a baseline bundle) without --force', async () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const f = await cli(['collect', '-o', file]);
    expect(f.code).toBe(2);
    expect(f.stderr).toBe(`kpx: ${file} exists and is not a directory: name a new directory\n`);
    const dir = bundle('baseline', ['ip-route.txt']);
    const before = readFileSync(join(dir, 'ip-route.txt'), 'utf8');
    const d = await cli(['collect', '-o', dir]);
    expect(d.code).toBe(2);
    expect(d.stderr).toMatch(/is not empty \(a bundle collected earlier\?\): name a new directory, or use --force/);
    expect(readdirSync(dir)).toEqual(['ip-route.txt']);
    expect(readFileSync(join(dir, 'ip-route.txt'), 'utf8')).toBe(before);
    // --force writes into it (collect only reads this machine; missing tools are noted, not fatal).
    const forced = await cli(['collect', '-o', dir, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(existsSync(join(dir, 'manifest.json'))).toBe(true);
  });
});

describe('internal errors', () => {
  it('only for bugs, and they say how to report one', () => {
    const bug = exitCodeFor(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(bug.code).toBe(2);
    expect(bug.message).toMatch(/^internal error \(a bug in kpx\): TypeError/);
    expect(bug.message).toContain('kpx redact -i BUNDLE -o redacted/');
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    expect(exitCodeFor(enospc)).toEqual({ code: 2, message: 'cannot write standard output: no space left on device (ENOSPC) (free some space, or write elsewhere)' });
    const eacces = Object.assign(new Error("EACCES: permission denied, open '/x'"), { code: 'EACCES', syscall: 'open', path: '/x' });
    expect(exitCodeFor(eacces)).toEqual({ code: 2, message: '/x: permission denied (EACCES)' });
  });
});
