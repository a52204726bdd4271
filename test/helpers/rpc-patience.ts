/**
 * A vitest setup file (every project). vitest's worker reports progress to the main process with
 * `onTaskUpdate` and waits at most 60 s for the answer (birpc's default; vitest 3 has no option for
 * it). The answer comes at once, but a worker whose event loop is busy for a minute — a kernel test
 * that runs `nft -f` a hundred times through spawnSync on a loaded 2-core machine — reads it only
 * after its timer phase has fired the 60 s timeout: the file then ends with "Unhandled Error: Timeout
 * calling onTaskUpdate" although the main process received the update and every assertion held
 * (vitest-dev/vitest#6479, #8164), and in the kernel project's single fork the files after it are
 * not run. The update is not lost, so that one rejection is dropped here and said on stderr; any
 * other error still fails the run. Long tests also breathe (test/helpers/breathe.ts) so that it
 * rarely happens at all.
 */
const LATE_PROGRESS = /^\[vitest-worker\]: Timeout calling "onTaskUpdate"/;

interface WorkerState {
  rpc: Record<string | symbol, unknown>;
}
// The rpc object answers every property name with a call (a Proxy): patched ones are remembered here.
const patched = new WeakSet<object>();
const state = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__;
if (state && !patched.has(state.rpc)) {
  const inner = state.rpc;
  state.rpc = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'onTaskUpdate' || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => Promise<unknown>)(...args).catch((e: unknown) => {
          if (!(e instanceof Error) || !LATE_PROGRESS.test(e.message)) throw e;
          process.stderr.write('test worker: a progress report to vitest was answered after its 60 s timeout (a long synchronous test step); it was delivered, the run goes on\n');
          return undefined;
        });
    },
  });
  patched.add(state.rpc);
}
