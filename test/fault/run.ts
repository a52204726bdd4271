/** Spawning the built CLI for the fault suite: exit code, output, wall time and peak memory. */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WRAPPER = fileURLToPath(new URL('./peak-rss.mjs', import.meta.url));

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Peak resident memory of the kpx process, MiB. */
  readonly peakMiB: number;
  readonly seconds: number;
}

export interface RunOptions {
  /** stdout to this file (e.g. /dev/full) instead of a pipe. */
  readonly stdoutTo?: string;
  /** Text or a generator of chunks written to stdin; `'closed'`: stdin is not connected (/dev/null). */
  readonly stdin?: string | 'closed' | (() => AsyncIterable<Buffer>);
  /** Close our end of stdout after this many bytes (the reader goes away: EPIPE). */
  readonly closeStdoutAfter?: number;
  readonly env?: Record<string, string>;
  readonly timeoutMs?: number;
}

let n = 0;

export async function runKpx(tmp: string, args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  const rssFile = join(tmp, `rss-${process.pid}-${n++}.txt`);
  const fd = opts.stdoutTo === undefined ? undefined : openSync(opts.stdoutTo, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, [WRAPPER, rssFile, ...args], {
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '', CI: '1', ...(opts.env ?? {}) },
    stdio: [opts.stdin === 'closed' ? 'ignore' : 'pipe', fd ?? 'pipe', 'pipe'],
  });
  if (fd !== undefined) closeSync(fd);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  if (child.stdout) {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (opts.closeStdoutAfter !== undefined && stdout.length >= opts.closeStdoutAfter) child.stdout!.destroy();
    });
  }
  if (child.stdin) {
    child.stdin.on('error', () => {}); // kpx may stop reading early (a limit): not our failure
    const feed = opts.stdin;
    if (typeof feed === 'string') child.stdin.end(feed);
    else if (typeof feed === 'function') {
      void (async () => {
        try {
          for await (const chunk of feed()) {
            if (child.stdin!.destroyed) return;
            if (!child.stdin!.write(chunk)) await new Promise((r) => child.stdin!.once('drain', r).once('close', r));
          }
        } catch {
          // the child went away
        }
        child.stdin!.end();
      })();
    } else child.stdin.end();
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const code = await new Promise<number>((resolve) => child.on('close', (c, sig) => resolve(c ?? (sig ? 128 : -1))));
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const peakMiB = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : NaN;
  rmSync(rssFile, { force: true });
  return { code, stdout, stderr, peakMiB, seconds };
}

/** A stack trace or an internal error in what kpx printed. */
export function bugs(stderr: string): string[] {
  const out: string[] = [];
  if (/\n\s+at .*(\.js|\.ts|node:)/.test(stderr)) out.push('stack trace');
  if (/internal error/i.test(stderr)) out.push('internal error');
  if (/Unhandled|ERR_[A-Z_]+/.test(stderr)) out.push('unhandled error');
  return out;
}
