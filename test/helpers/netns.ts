/**
 * Throw-away network namespaces for tests that use the real tools and the real kernel.
 * Tests touch only namespaces they create (names start with `kpxt-`) and always delete them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { KERNEL_HOW_TO_RUN, kernelDecision, thisMachine } from './kernel-env.js';

let counter = 0;

export interface Netns {
  readonly name: string;
  /** Run a command inside the namespace; throws with stderr on failure. */
  exec(cmd: string, args: readonly string[], input?: string): string;
  /** Like exec but returns status/stdout/stderr instead of throwing. */
  run(cmd: string, args: readonly string[], input?: string): { status: number; stdout: string; stderr: string };
}

/**
 * Should this file's kernel-backed tests run? true: yes. false: this machine lacks root or the
 * tools and nothing requires them — the tests are skipped and the run's closing summary says so
 * (kernel-reporter.ts). Where they are required (CI, `npm run test:kernel`) this throws instead,
 * so the file fails and names what is missing.
 */
export function requireKernel(): boolean {
  const d = kernelDecision(thisMachine());
  if (d.action === 'run') return true;
  if (d.action === 'skip') return false;
  throw new Error(`kernel-backed tests cannot run: ${d.reason} (they are required here: CI or KPX_REQUIRE_KERNEL=1). ${KERNEL_HOW_TO_RUN}`);
}

function makeNetns(name: string): Netns {
  const run = (cmd: string, args: readonly string[], input?: string) => {
    const r = spawnSync('ip', ['netns', 'exec', name, cmd, ...args], { encoding: 'utf8', input, maxBuffer: 256 * 1024 * 1024 });
    return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
  };
  return {
    name,
    run,
    exec(cmd, args, input) {
      const r = run(cmd, args, input);
      if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${name} (${r.status}): ${r.stderr}`);
      return r.stdout;
    },
  };
}

export function createNetns(tag = 'ns'): Netns {
  const name = `kpxt-${tag}-${process.pid}-${++counter}`.slice(0, 48);
  execFileSync('ip', ['netns', 'add', name]);
  const ns = makeNetns(name);
  ns.exec('ip', ['link', 'set', 'lo', 'up']);
  return ns;
}

export function deleteNetns(ns: Netns | string): void {
  const name = typeof ns === 'string' ? ns : ns.name;
  spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' })
    .stdout?.split('\n')
    .filter(Boolean)
    .forEach((pid) => spawnSync('kill', ['-9', pid]));
  spawnSync('ip', ['netns', 'del', name]);
}

/** Create a namespace, run fn, and delete it whatever happens. */
export async function withNetns<T>(tag: string, fn: (ns: Netns) => T | Promise<T>): Promise<T> {
  const ns = createNetns(tag);
  try {
    return await fn(ns);
  } finally {
    deleteNetns(ns);
  }
}

/** Namespaces this process created and has not deleted (for leak checks). */
export function leftoverNetns(): string[] {
  const out = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  return out
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((n) => n.startsWith(`kpxt-`) && n.includes(`-${process.pid}-`));
}
