/**
 * Live mode (a command without input collects this node into a temporary bundle) leaves nothing in
 * the temp directory: the bundle holds the node's whole rule set and its connection table. Removed
 * after an answer, after an error, and when kpx is interrupted (SIGINT, SIGTERM) mid-collection.
 *
 * The node's tools are stand-ins on PATH (shell scripts): `iptables-save` prints the kind sample and
 * notes the live folder it is collected into, so each test knows the folder existed during the
 * run; every other tool is missing (noted in the manifest, not fatal). TMPDIR is a private folder.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { BIN } from '../helpers/exec.js';

const KIND = fileURLToPath(new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'kpx-live-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;

interface Stage {
  /** TMPDIR for kpx: empty before the run. */
  readonly temp: string;
  /** PATH for kpx: the stand-in tools only. */
  readonly bin: string;
  /** Where `iptables-save` wrote the live folder it saw (one line per call). */
  readonly seen: string;
  readonly env: Record<string, string>;
}

/** A private TMPDIR and a bin/ whose `iptables-save` notes the live folder, then runs `then`. */
function stage(then: string): Stage {
  const root = join(tmp, `run-${++n}`);
  const temp = join(root, 'tmp');
  const bin = join(root, 'bin');
  mkdirSync(temp, { recursive: true });
  mkdirSync(bin);
  const seen = join(root, 'seen.txt');
  const script = join(bin, 'iptables-save');
  writeFileSync(script, `#!/bin/sh\nPATH=/usr/bin:/bin\nls -d "$TMPDIR"/kpx-live-* >> ${seen}\n${then}\n`);
  chmodSync(script, 0o755);
  return { temp, bin, seen, env: { TMPDIR: temp, PATH: bin } };
}

/** The live folders `iptables-save` was collected into (it must have been called: otherwise nothing was tested). */
function seenFolders(s: Stage): string[] {
  const lines = readFileSync(s.seen, 'utf8').trim().split('\n');
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines) expect(l.startsWith(join(s.temp, 'kpx-live-')), l).toBe(true);
  return lines;
}

async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('live mode leaves no kpx-live-* folder behind', () => {
  it('after an answer', async () => {
    const s = stage(`cat ${KIND}`);
    const r = await cli(['services'], s.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^kube-system\/kube-dns:dns +10\.96\.0\.10 +53\/UDP/m);
    const [folder] = seenFolders(s);
    expect(existsSync(folder)).toBe(false);
    expect(readdirSync(s.temp)).toEqual([]);
  });

  it('after an error during collection', async () => {
    // The tool makes the bundle's own file name a directory: writing iptables-save.txt fails (EISDIR).
    const s = stage(`mkdir "$(ls -d "$TMPDIR"/kpx-live-* | head -n 1)/iptables-save.txt"; cat ${KIND}`);
    const r = await cli(['trace', '10.96.0.10:53/udp'], s.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kpx: .*kpx-live-\w+\/iptables-save\.txt: .*\(EISDIR\)\n$/);
    seenFolders(s);
    expect(readdirSync(s.temp)).toEqual([]);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`when kpx is stopped by ${signal} mid-collection, and it dies of that signal`, async () => {
      // iptables-save hangs (as on a node with a huge table) until the test has sent the signal.
      const s = stage('echo $$ > "$TMPDIR/../tool.pid"; exec sleep 60');
      const pidFile = join(s.temp, '..', 'tool.pid');
      const child = spawn(process.execPath, [BIN, 'services'], { env: { ...s.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig })));
      try {
        await until('the stand-in iptables-save to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
        const [folder] = seenFolders(s);
        expect(existsSync(folder)).toBe(true);
        child.kill(signal);
        const end = await exited;
        expect(end, stderr).toEqual({ code: null, signal });
        expect(stderr).not.toMatch(/\n\s+at /);
        expect(readdirSync(s.temp)).toEqual([]);
      } finally {
        child.kill('SIGKILL');
        const pid = Number(existsSync(pidFile) ? readFileSync(pidFile, 'utf8') : NaN);
        if (pid > 0) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    });
  }
});
