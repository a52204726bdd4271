/**
 * Collecting a bundle from the node kpx runs on. Read-only commands only, run with argument
 * arrays (no shell); a missing tool is noted, never fatal. Nothing on the node is changed:
 * ipvsadm is run only when the kernel already has IPVS (it would otherwise load the module).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { VERSION } from '../version.js';

const run = promisify(execFile);

interface Step {
  readonly file: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly when?: () => boolean;
}

/** The sysctls kube-proxy and CNIs depend on (KUBE-PROXY.md). `-e` ignores unknown keys. */
const SYSCTLS = [
  'net.ipv4.ip_forward',
  'net.ipv6.conf.all.forwarding',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
  'net.ipv4.vs.conntrack',
  'net.ipv4.vs.conn_reuse_mode',
  'net.ipv4.vs.expire_nodest_conn',
  'net.ipv4.vs.expire_quiescent_template',
  'net.ipv4.conf.all.arp_ignore',
  'net.ipv4.conf.all.arp_announce',
  'net.ipv4.conf.all.rp_filter',
  'net.ipv4.conf.default.rp_filter',
  'net.ipv4.conf.all.route_localnet',
];

export const STEPS: readonly Step[] = [
  { file: 'iptables-save.txt', cmd: 'iptables-save', args: [] },
  { file: 'ip6tables-save.txt', cmd: 'ip6tables-save', args: [] },
  { file: 'ipset-list.txt', cmd: 'ipset', args: ['list'] },
  { file: 'ipvsadm-Ln.txt', cmd: 'ipvsadm', args: ['-Ln'], when: () => existsSync('/proc/net/ip_vs') },
  { file: 'ip-route.txt', cmd: 'ip', args: ['route', 'show', 'table', 'all'] },
  { file: 'ip6-route.txt', cmd: 'ip', args: ['-6', 'route', 'show', 'table', 'all'] },
  { file: 'ip-rule.txt', cmd: 'ip', args: ['rule', 'show'] },
  { file: 'ip6-rule.txt', cmd: 'ip', args: ['-6', 'rule', 'show'] },
  { file: 'ip-addr.txt', cmd: 'ip', args: ['addr'] },
  { file: 'nft-ruleset.txt', cmd: 'nft', args: ['list', 'ruleset'] },
  { file: 'sysctl.txt', cmd: 'sysctl', args: ['-e', ...SYSCTLS] },
];

const VERSION_ARGS: Readonly<Record<string, readonly string[]>> = {
  'iptables-save': ['--version'],
  ip6tables: ['--version'],
  ipset: ['--version'],
  ipvsadm: ['--version'],
  ip: ['-V'],
  nft: ['--version'],
};

export interface StepResult {
  readonly file: string;
  readonly command: string;
  readonly status: 'ok' | 'missing' | 'failed' | 'skipped';
  readonly detail?: string;
  readonly bytes?: number;
}

export interface Manifest {
  readonly kind: 'kpx-bundle';
  readonly host: string;
  readonly collectedAt: string;
  readonly kpxVersion: string;
  readonly tools: Readonly<Record<string, string>>;
  readonly steps: readonly StepResult[];
}

async function version(cmd: string): Promise<string | undefined> {
  try {
    const r = await run(cmd, [...(VERSION_ARGS[cmd] ?? ['--version'])], { timeout: 10_000 });
    return (r.stdout || r.stderr).trim().split('\n')[0];
  } catch {
    return undefined;
  }
}

/**
 * Where a bundle may be written: a new or empty directory, or (force) any directory. Throws
 * CollectTargetError saying why not — an existing file, or a non-empty directory that may be a
 * baseline bundle someone wants to keep.
 */
export class CollectTargetError extends Error {}

export function checkCollectTarget(dir: string, force: boolean): void {
  let st;
  try {
    st = statSync(dir);
  } catch {
    return; // does not exist yet: it will be made
  }
  if (!st.isDirectory()) throw new CollectTargetError(`${dir} exists and is not a directory: name a new directory`);
  if (!force && readdirSync(dir).length > 0) throw new CollectTargetError(`${dir} is not empty (a bundle collected earlier?): name a new directory, or use --force to write into it`);
}

/** Write one file of the bundle; a failure names the file (the caller turns it into one line). */
export type BundleWriter = (path: string, data: string) => void;

export async function collectTo(dir: string, kpxVersion = VERSION, write: BundleWriter = (p, d) => writeFileSync(p, d)): Promise<{ dir: string; host: string; manifest: Manifest }> {
  mkdirSync(dir, { recursive: true });
  const steps: StepResult[] = [];
  for (const s of STEPS) {
    const command = [s.cmd, ...s.args].join(' ');
    if (s.when && !s.when()) {
      steps.push({ file: s.file, command, status: 'skipped', detail: 'not available in this kernel' });
      continue;
    }
    // Only the command is inside the try: a failure to write the bundle is not the command's.
    let out: string | undefined;
    let result: StepResult;
    try {
      const r = await run(s.cmd, [...s.args], { timeout: 120_000, maxBuffer: 1024 * 1024 * 1024 });
      out = r.stdout;
      result = { file: s.file, command, status: 'ok', bytes: Buffer.byteLength(r.stdout) };
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      if (err.code === 'ENOENT') result = { file: s.file, command, status: 'missing', detail: `${s.cmd} is not installed` };
      else {
        // sysctl -e still exits 0; others may print partial output before failing: keep it.
        out = err.stdout || undefined;
        result = { file: s.file, command, status: 'failed', detail: (err.stderr ?? err.message).trim().split('\n')[0] };
      }
    }
    if (out !== undefined) write(join(dir, s.file), out);
    steps.push(result);
  }
  const tools: Record<string, string> = {};
  for (const cmd of Object.keys(VERSION_ARGS)) {
    const v = await version(cmd);
    if (v) tools[cmd] = v;
  }
  const host = hostname();
  const manifest: Manifest = { kind: 'kpx-bundle', host, collectedAt: new Date().toISOString(), kpxVersion, tools, steps };
  write(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return { dir, host, manifest };
}

/** Collect into a fresh temporary directory (used when a command gets no input). */
export async function collectLive(): Promise<{ dir: string; host: string; manifest: Manifest }> {
  return collectTo(mkdtempSync(join(tmpdir(), 'kpx-live-')));
}
