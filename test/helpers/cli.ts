/**
 * Run kpx in this test worker, as the binary would run (the built program, dist/src/cli/program.js,
 * so `npm test` builds first), without spawning a process: stdout and stderr are captured, the
 * exit code is the one the binary would exit with. Use it wherever the process itself is not the
 * subject; spawn the binary (exec.ts `kpx()`) for exit by signal, stdin `-`, a stdout that fails,
 * colour on a TTY, and the few end-to-end runs that prove the binary is the same program.
 *
 * What the binary gets from its process and this runner gives it the same way:
 * - the environment: NO_COLOR=1, FORCE_COLOR empty, CI=1, then the test's own variables (as
 *   exec.ts passes them to the child); the whole environment is put back afterwards (kpx itself
 *   sets no KPX_ variable: --max-input-size and the other settings travel as arguments);
 * - no TTY: stdout and stderr say isTTY false and no columns, so widths come from COLUMNS or
 *   120, colour is off and no spinner starts;
 * - the exit code: process.exitCode as kpx sets it, or the code it exits with (help, usage
 *   errors); process.exitCode is put back afterwards, so a test's run never fails the worker.
 * Runs are serialised: they share process.stdout, process.env and process.exitCode.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { breathe } from './breathe.js';
import type * as ProgramModule from '../../src/cli/program.js';

export interface KpxResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export const PROGRAM = fileURLToPath(new URL('../../dist/src/cli/program.js', import.meta.url));
const BIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** What kpx() in exec.ts puts into the child's environment before the test's own variables. */
export const CLI_ENV: Readonly<Record<string, string>> = { NO_COLOR: '1', FORCE_COLOR: '', CI: '1' };

/** Thrown by the program's exit hook: the run ends with this code (process.exit in the binary). */
class Exit extends Error {
  constructor(readonly code: number) {
    super(`kpx exited with ${code}`);
  }
}

let program: Promise<typeof ProgramModule> | undefined;
const load = () => (program ??= import(pathToFileURL(PROGRAM).href) as Promise<typeof ProgramModule>);

let queue: Promise<unknown> = Promise.resolve();

/** `kpx ARGS…` in-process: its exit code, stdout and stderr. */
export function cli(args: readonly string[], env: Record<string, string> = {}): Promise<KpxResult> {
  const result = queue.then(async () => {
    await breathe();
    const r = await runOnce(args, env);
    await breathe();
    return r;
  });
  queue = result.catch(() => undefined);
  return result;
}

type Write = typeof process.stdout.write;

interface Saved {
  readonly env: NodeJS.ProcessEnv;
  readonly exitCode: typeof process.exitCode;
  readonly streams: { stream: NodeJS.WriteStream; write: Write; own: PropertyDescriptor[] }[];
}

/** Replace a stream's write with one that collects the text, and make it say it is not a TTY. */
function capture(stream: NodeJS.WriteStream, into: string[]): Saved['streams'][number] {
  const saved = { stream, write: stream.write, own: ['isTTY', 'columns'].map((k) => Object.getOwnPropertyDescriptor(stream, k) ?? { value: undefined, configurable: true, writable: true, enumerable: true }) };
  stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void) => {
    into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8'));
    const done = typeof encoding === 'function' ? encoding : cb;
    if (done) process.nextTick(done);
    return true;
  }) as Write;
  Object.defineProperty(stream, 'isTTY', { value: false, configurable: true, writable: true, enumerable: true });
  Object.defineProperty(stream, 'columns', { value: undefined, configurable: true, writable: true, enumerable: true });
  return saved;
}

function restore(saved: Saved): void {
  for (const s of saved.streams) {
    s.stream.write = s.write;
    for (const [i, k] of ['isTTY', 'columns'].entries()) Object.defineProperty(s.stream, k, s.own[i]);
  }
  for (const k of Object.keys(process.env)) if (!(k in saved.env)) delete process.env[k];
  Object.assign(process.env, saved.env);
  process.exitCode = saved.exitCode;
}

async function runOnce(args: readonly string[], env: Record<string, string>): Promise<KpxResult> {
  const { buildProgram } = await load();
  const out: string[] = [];
  const err: string[] = [];
  const saved: Saved = { env: { ...process.env }, exitCode: process.exitCode, streams: [] };
  let code: number;
  try {
    Object.assign(process.env, CLI_ENV, env);
    process.exitCode = undefined;
    saved.streams.push(capture(process.stdout, out), capture(process.stderr, err));
    const exit = (c: number): never => {
      throw new Exit(c);
    };
    try {
      await buildProgram({ invokedAs: 'kpx', exit }).parseAsync([process.execPath, BIN, ...args]);
      code = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0);
    } catch (e) {
      if (!(e instanceof Exit)) throw e;
      code = e.code;
    }
  } finally {
    restore(saved);
  }
  return { code, stdout: out.join(''), stderr: err.join('') };
}
