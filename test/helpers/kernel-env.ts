/**
 * Can the kernel-backed suites run here, and must they?
 *
 * They need root (to create network namespaces) and the real dataplane tools. On a fresh
 * machine (a laptop, a clone without the tools) `npm test` leaves them out and the end of the
 * run says so (kernel-reporter.ts). Where they must run — CI, and `npm run test:kernel` — a
 * missing tool is a failure, never a skip: a green run must not hide that nothing was compared
 * with the kernel.
 *
 * Pure over a probe, so the selection itself is tested with fake machines (kernel-env.test.ts).
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What the suites under test/kernel run (iproute2, iptables-legacy/nft, nftables, ipset, conntrack-tools, procps, python3 for the packet harness). */
export const KERNEL_TOOLS = ['ip', 'iptables-save', 'iptables-restore', 'ip6tables-save', 'ip6tables-restore', 'nft', 'ipset', 'conntrack', 'sysctl', 'python3'] as const;

export interface MachineProbe {
  readonly root: boolean;
  has(tool: string): boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export type KernelDecision =
  | { readonly action: 'run' }
  | { readonly action: 'skip'; readonly reason: string }
  | { readonly action: 'fail'; readonly reason: string };

/** Why the kernel suites cannot run on this machine (not root, which tools are missing), or undefined. */
export function kernelMissing(probe: MachineProbe): string | undefined {
  const missing = KERNEL_TOOLS.filter((t) => !probe.has(t));
  const why: string[] = [];
  if (!probe.root) why.push('not running as root');
  if (missing.length) why.push(`missing on PATH: ${missing.join(', ')}`);
  return why.length ? why.join('; ') : undefined;
}

/** CI=true (as .ci/run is run) or KPX_REQUIRE_KERNEL=1 (`npm run test:kernel`): the suites must run. */
export function kernelRequired(env: MachineProbe['env']): boolean {
  const ci = env.CI;
  return env.KPX_REQUIRE_KERNEL === '1' || (ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false');
}

export function kernelDecision(probe: MachineProbe): KernelDecision {
  const reason = kernelMissing(probe);
  if (reason === undefined) return { action: 'run' };
  return kernelRequired(probe.env) ? { action: 'fail', reason } : { action: 'skip', reason };
}

/** Is an executable named `tool` on PATH? (No spawning: `which` itself may be missing.) */
export function onPath(tool: string, path = process.env.PATH ?? ''): boolean {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

export function thisMachine(): MachineProbe {
  return { root: typeof process.getuid === 'function' && process.getuid() === 0, has: (t) => onPath(t), env: process.env };
}

export const KERNEL_HOW_TO_RUN =
  'to run them: as root, install iproute2 iptables nftables ipset conntrack procps python3 (Debian/Ubuntu: apt-get install …), then `npm run test:kernel`';

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

/** The closing banner of a run that left the kernel suites out. */
export function kernelBanner(reason: string, suites: readonly { file: string; notRun: number }[]): string {
  const bar = '!'.repeat(78);
  const lines = [
    '',
    bar,
    `!! KERNEL-BACKED SUITES DID NOT RUN: ${reason}`,
    `!! ${plural(suites.reduce((n, s) => n + s.notRun, 0), 'test')} in ${plural(suites.length, 'file')} left out; nothing was compared with the real kernel:`,
    ...suites.map((s) => `!!   ${s.file} (${s.notRun} not run)`),
    `!! ${KERNEL_HOW_TO_RUN}`,
    bar,
    '',
  ];
  return lines.join('\n');
}
