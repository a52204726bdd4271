/**
 * Run the built kpx binary as a user would (NO_COLOR, no TTY). `npm test` builds first.
 *
 * Spawn only where the process itself is the subject: the exit status of a signal, stdin `-`, a
 * stdout that fails (/dev/full, a closed pipe), another uid, the binary's name. Everything else
 * runs in-process with `cli()` (cli.ts): the same program, the same output and exit code, without
 * a Node start per call — which is where most of the suite's time went (docs/testing.md).
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLI_ENV, type KpxResult } from './cli.js';

export const BIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export interface KpxSpawnOptions {
  /** Send stdout to this file instead of capturing it (e.g. /dev/full, as `>/dev/full` does). */
  readonly stdoutTo?: string;
}

/**
 * The binary, synchronously (kept for tests written against it). It blocks the test worker for the
 * whole run: prefer `cli()`, or `kpxSpawn()` where the process is the subject.
 */
export function kpx(args: readonly string[], input?: string, env: Record<string, string> = {}, opts: KpxSpawnOptions = {}): KpxResult {
  const fd = opts.stdoutTo === undefined ? undefined : openSync(opts.stdoutTo, 'w');
  try {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      input,
      env: { ...process.env, ...CLI_ENV, ...env },
      maxBuffer: 256 * 1024 * 1024,
      ...(fd === undefined ? {} : { stdio: ['pipe', fd, 'pipe'] as const }),
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The binary as a child process, awaited (the worker stays responsive): same arguments and result as kpx(). */
export async function kpxSpawn(args: readonly string[], input?: string, env: Record<string, string> = {}, opts: KpxSpawnOptions = {}): Promise<KpxResult> {
  const r = await run(process.execPath, [BIN, ...args], { input, env: { ...process.env, ...CLI_ENV, ...env }, stdoutTo: opts.stdoutTo });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export interface RunOptions {
  readonly input?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly stdoutTo?: string;
  readonly uid?: number;
  readonly gid?: number;
}

export interface RunResult {
  /** The exit code; null when a signal ended the process. */
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * spawnSync's result, without blocking the test worker: a worker blocked for a minute (a slow
 * child on a loaded machine) misses vitest's own messages and the run fails with
 * `Timeout calling "onTaskUpdate"`.
 */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const fd = opts.stdoutTo === undefined ? undefined : openSync(opts.stdoutTo, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      stdio: ['pipe', fd ?? 'pipe', 'pipe'],
      ...(opts.uid === undefined ? {} : { uid: opts.uid }),
      ...(opts.gid === undefined ? {} : { gid: opts.gid }),
    });
    if (fd !== undefined) closeSync(fd);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.stdin!.on('error', () => {}); // the child may exit before reading its input: not the test's failure
    child.stdin!.end(opts.input);
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}
