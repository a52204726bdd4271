/**
 * The pager (issue 29): a long text answer on a terminal goes through KPX_PAGER, else PAGER, else
 * `less -FRX`, the way git pages; never when stdout is not a terminal, never with --no-pager,
 * never for -o json, never for an answer that fits the screen. The decision in-process (the
 * terminal faked); one real pager started: a shell script that writes what it reads to a file.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pagerFinished, pagerFor } from '../../src/cli/pager.js';
import { servicesAction } from '../../src/cli/commands/services.js';
import { kpx } from '../helpers/exec.js';

const NODE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-pager-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const tty = { isTTY: true, rows: 30 };

describe('which pager, if any', () => {
  it('a long answer on a terminal: KPX_PAGER, else PAGER, else less -FRX', () => {
    expect(pagerFor(100, tty, {})).toBe('less -FRX');
    expect(pagerFor(100, tty, { PAGER: 'most' })).toBe('most');
    expect(pagerFor(100, tty, { PAGER: 'most', KPX_PAGER: 'less -S' })).toBe('less -S');
  });

  it('never when stdout is not a terminal, with --no-pager, for a short answer, or with an empty pager or cat', () => {
    expect(pagerFor(100, { isTTY: false, rows: 30 }, {})).toBeUndefined();
    expect(pagerFor(100, {}, {})).toBeUndefined();
    expect(pagerFor(100, tty, {}, true)).toBeUndefined();
    expect(pagerFor(29, tty, {})).toBeUndefined();
    expect(pagerFor(30, tty, {})).toBe('less -FRX');
    expect(pagerFor(100, tty, { PAGER: '' })).toBeUndefined();
    expect(pagerFor(100, tty, { PAGER: 'less', KPX_PAGER: 'cat' })).toBeUndefined();
    // Rows unknown: a classic 24-row screen.
    expect(pagerFor(23, { isTTY: true }, {})).toBeUndefined();
    expect(pagerFor(24, { isTTY: true }, {})).toBe('less -FRX');
  });
});

describe('a command on a (faked) terminal', () => {
  const script = join(tmp, 'fake-pager.sh');
  const paged = join(tmp, 'paged.txt');
  const env = { ...process.env };
  let isTTY: boolean | undefined;
  let rows: number | undefined;
  beforeEach(() => {
    writeFileSync(script, `#!/bin/sh\necho "LESS=$LESS" > '${paged}'\ncat >> '${paged}'\n`);
    chmodSync(script, 0o755);
    rmSync(paged, { force: true });
    isTTY = process.stdout.isTTY;
    rows = process.stdout.rows;
    Object.assign(process.stdout, { isTTY: true, rows: 10 });
    process.env.KPX_PAGER = script;
    delete process.env.LESS;
  });
  afterEach(() => {
    Object.assign(process.stdout, { isTTY, rows });
    process.env = env;
  });

  async function run(action: () => Promise<number>): Promise<string> {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    try {
      expect(await action()).toBe(0);
      await pagerFinished();
    } finally {
      spy.mockRestore();
    }
    return out.join('');
  }

  it('services: the whole answer goes through the pager (LESS=FRX as git sets it), nothing to stdout', async () => {
    const direct = await run(() => servicesAction([], { input: [NODE], output: 'text', color: false }));
    expect(direct).toBe('');
    const text = readFileSync(paged, 'utf8').split('\n');
    expect(text[0]).toBe('LESS=FRX');
    expect(text[1]).toMatch(/^SERVICE +CLUSTER-IP/);
    expect(text.length).toBeGreaterThan(30);
  });

  it('--no-pager (the program as the binary parses it) writes straight out; the next run pages again', async () => {
    const { buildProgram } = await import('../../src/cli/program.js');
    const parse = (args: string[]) => run(async () => {
      await buildProgram({ invokedAs: 'kpx', exit: (code) => { throw new Error(`exit ${code}`); } }).parseAsync(['node', 'kpx', ...args]);
      return 0;
    });
    const out = await parse(['services', '-i', NODE, '--no-color', '--no-pager']);
    expect(out).toMatch(/^SERVICE +CLUSTER-IP/);
    expect(existsSync(paged)).toBe(false);
    expect(await parse(['services', '-i', NODE, '--no-color'])).toBe('');
    expect(readFileSync(paged, 'utf8')).toMatch(/^LESS=FRX\nSERVICE/);
  });

  it('-o json is never paged', async () => {
    const out = await run(() => servicesAction([], { input: [NODE], output: 'json' }));
    expect(JSON.parse(out)).toHaveProperty('schemaVersion');
    expect(existsSync(paged)).toBe(false);
  });

  it('an answer shorter than the screen is written straight out', async () => {
    Object.assign(process.stdout, { rows: 500 });
    const out = await run(() => servicesAction([], { input: [NODE], output: 'text', color: false }));
    expect(out).toMatch(/^SERVICE +CLUSTER-IP/);
    expect(existsSync(paged)).toBe(false);
  });
});

describe('the binary', () => {
  it('piped, with a pager set, never pages; --no-pager is accepted by every text command', () => {
    const paged = join(tmp, 'spawned.txt');
    const r = kpx(['services', '-i', NODE, '--no-pager'], undefined, { KPX_PAGER: `cat > '${paged}'` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^SERVICE/);
    expect(existsSync(paged)).toBe(false);
    expect(kpx(['diff', NODE, NODE, '--no-pager']).code).toBe(0);
  });
});
