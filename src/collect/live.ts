/**
 * Collecting a bundle from the node kpx runs on. Read-only commands only, run with argument
 * arrays (no shell); a missing tool is noted, never fatal. Nothing on the node is changed:
 * ipvsadm is run only when the kernel already has IPVS (it would otherwise load the module).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  /** Arguments found at collection time (a container id); undefined = nothing to collect, with the reason. */
  readonly resolve?: () => Promise<{ args: readonly string[] } | { skip: string }>;
  /**
   * Evidence beside the dataplane (kube-proxy's own log and configuration): when the tool cannot
   * give it (no such unit, no cluster to ask), the step is skipped with the reason, not failed —
   * the dumps' answers do not depend on it.
   */
  readonly optional?: boolean;
  /** Output that means "nothing here" (journalctl's `-- No entries --`): skipped, with this reason. */
  readonly empty?: { readonly pattern: RegExp; readonly reason: string };
  /** klog writes to stderr: keep the command's stderr as output too. */
  readonly stderrIsOutput?: boolean;
  /** Why an optional step found nothing when the tool exits non-zero without a word (pgrep's exit 1). */
  readonly nothingFound?: string;
  /** Read the output as a stream and keep at most this many lines (conntrack -L). */
  readonly stream?: { readonly maxEntries: number };
}

/** How many lines of kube-proxy's log a bundle keeps (the newest): enough for hours of sync failures, bounded. */
export const LOG_LINES = 5000;

/**
 * Every bridge port's hairpin switch, as `grep -H` prints it (`/sys/class/net/cni0/brif/veth1/hairpin_mode:1`):
 * the paths are listed at collection time (no shell globbing); nothing to collect on a node without bridges.
 */
async function hairpinPaths(): Promise<{ args: readonly string[] } | { skip: string }> {
  const base = '/sys/class/net';
  const paths: string[] = [];
  for (const dev of readdirSync(base).sort()) {
    let ports: string[];
    try {
      ports = readdirSync(join(base, dev, 'brif')).sort();
    } catch {
      continue; // not a bridge
    }
    for (const p of ports) paths.push(join(base, dev, 'brif', p, 'hairpin_mode'));
  }
  return paths.length ? { args: ['-H', '.', ...paths] } : { skip: 'no bridge ports on this node' };
}

/**
 * kube-proxy's own account (read-only): its log from the journal (a systemd unit) or from the
 * container runtime (a static pod or DaemonSet), its running flags, and its ConfigMap when kubectl
 * can reach the cluster. Each is optional: a node without one says so in the manifest.
 */
export const KUBE_PROXY_STEPS: readonly Step[] = [
  {
    file: 'kube-proxy-journal.log',
    cmd: 'journalctl',
    args: ['-u', 'kube-proxy', '--no-pager', '-o', 'short-iso', '-n', String(LOG_LINES)],
    optional: true,
    empty: { pattern: /^\s*-- No entries --\s*$/, reason: 'no kube-proxy unit in the journal' },
  },
  {
    file: 'kube-proxy-container.log',
    cmd: 'crictl',
    args: ['logs', '--tail', String(LOG_LINES)],
    optional: true,
    stderrIsOutput: true,
    resolve: async () => {
      const r = await run('crictl', ['ps', '-a', '--name', 'kube-proxy', '-q'], { timeout: 20_000 });
      const id = r.stdout.trim().split('\n')[0];
      return id ? { args: ['logs', '--tail', String(LOG_LINES), id] } : { skip: 'no kube-proxy container on this node' };
    },
  },
  { file: 'kube-proxy-flags.txt', cmd: 'pgrep', args: ['-a', 'kube-proxy'], optional: true, nothingFound: 'no kube-proxy process on this node' },
  {
    file: 'kube-proxy-configmap.yaml',
    cmd: 'kubectl',
    args: ['--request-timeout=10s', '-n', 'kube-system', 'get', 'configmap', 'kube-proxy', '-o', 'yaml'],
    optional: true,
  },
];

/**
 * The API server's intent (read-only `get`), for the `api-*` lint rules and for names IPVS dumps lack.
 * Optional: without a kubeconfig that reaches a cluster the step is skipped with kubectl's reason.
 */
export const API_STEPS: readonly Step[] = [
  {
    file: 'api-objects.json',
    cmd: 'kubectl',
    args: ['--request-timeout=20s', 'get', 'services,endpointslices,nodes,pods', '--all-namespaces', '-o', 'json'],
    optional: true,
  },
];

/** What the manifest says about the API objects: which cluster (kubeconfig context) and when, or why not. */
export interface ApiRecord {
  readonly status: StepResult['status'];
  readonly context: string | null;
  readonly collectedAt: string;
  readonly detail?: string;
}

/** The manifest's `api` record, from the API step's result (the context is asked only when the get worked). */
export async function apiRecord(steps: readonly StepResult[], at: string): Promise<ApiRecord | undefined> {
  const s = steps.find((x) => x.file === 'api-objects.json');
  if (!s) return undefined;
  let context: string | null = null;
  if (s.status === 'ok') {
    try {
      context = (await run('kubectl', ['config', 'current-context'], { timeout: 10_000 })).stdout.trim() || null;
    } catch {
      context = null; // an in-cluster service account has no context: the get worked all the same
    }
  }
  return { status: s.status, context, collectedAt: at, ...(s.detail ? { detail: s.detail } : {}) };
}

/** How many `conntrack -L` entries a bundle keeps by default: tables can hold millions; the first ones are a sample. */
export const CONNTRACK_MAX_ENTRIES = 200_000;

export interface ConntrackCollectOptions {
  /** false: do not list the table (`--no-conntrack`); `conntrack -S` is still recorded. */
  readonly list?: boolean;
  /** Entry cap for `conntrack -L` (`--conntrack-max-entries`). */
  readonly maxEntries?: number;
}

const hasConntrack = (): boolean => existsSync('/proc/sys/net/netfilter/nf_conntrack_max');

/** `conntrack -L`, read as a stream and cut after `maxEntries` lines (the tool is then stopped). */
async function listConntrack(maxEntries: number): Promise<{ out: string; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('conntrack', ['-L'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const parts: string[] = [];
    let lines = 0;
    let truncated = false;
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (truncated) return;
      let at = -1;
      while (lines < maxEntries && (at = chunk.indexOf('\n', at + 1)) >= 0) lines++;
      if (lines >= maxEntries && at >= 0) {
        parts.push(chunk.slice(0, at + 1));
        truncated = true;
        child.kill();
        return;
      }
      parts.push(chunk);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (truncated || code === 0) resolve({ out: parts.join(''), truncated });
      else reject(Object.assign(new Error(stderr.trim() || `conntrack -L exited with ${code}`), { stderr, stdout: parts.join('') }));
    });
  });
}

export function conntrackSteps(opts: ConntrackCollectOptions = {}): Step[] {
  const max = opts.maxEntries ?? CONNTRACK_MAX_ENTRIES;
  const steps: Step[] = [{ file: 'conntrack-S.txt', cmd: 'conntrack', args: ['-S'], when: hasConntrack }];
  if (opts.list !== false) steps.push({ file: 'conntrack-L.txt', cmd: 'conntrack', args: ['-L'], when: hasConntrack, stream: { maxEntries: max } });
  return steps;
}

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
  { file: 'ip-link.txt', cmd: 'ip', args: ['-d', 'link'] },
  { file: 'bridge-link.txt', cmd: 'bridge', args: ['-d', 'link'] },
  { file: 'hairpin-mode.txt', cmd: 'grep', args: ['-H', '.', '/sys/class/net/*/brif/*/hairpin_mode'], resolve: hairpinPaths, optional: true },
  // Every key: the trace reads forwarding, rp_filter, route_localnet per interface; an absent
  // net.bridge.* key is evidence too (br_netfilter not loaded).
  { file: 'sysctl.txt', cmd: 'sysctl', args: ['-a'] },
  { file: 'uname.txt', cmd: 'uname', args: ['-a'] },
  ...KUBE_PROXY_STEPS,
  ...API_STEPS,
];

const VERSION_ARGS: Readonly<Record<string, readonly string[]>> = {
  'iptables-save': ['--version'],
  ip6tables: ['--version'],
  ipset: ['--version'],
  ipvsadm: ['--version'],
  ip: ['-V'],
  bridge: ['-V'],
  nft: ['--version'],
  conntrack: ['--version'],
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
  /** The API objects step: the kubeconfig context and time, or why there are none. */
  readonly api?: ApiRecord;
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

/** Run the steps into `dir`: each step's output file, and what happened to it. */
export async function runSteps(dir: string, list: readonly Step[], write: BundleWriter): Promise<StepResult[]> {
  const steps: StepResult[] = [];
  for (const s of list) {
    let args = s.args;
    let command = [s.cmd, ...args].join(' ');
    if (s.when && !s.when()) {
      steps.push({ file: s.file, command, status: 'skipped', detail: 'not available in this kernel' });
      continue;
    }
    // Only the command is inside the try: a failure to write the bundle is not the command's.
    let out: string | undefined;
    let result: StepResult;
    try {
      if (s.resolve) {
        const found = await s.resolve();
        if ('skip' in found) {
          steps.push({ file: s.file, command, status: 'skipped', detail: found.skip });
          continue;
        }
        args = found.args;
        command = [s.cmd, ...args].join(' ');
      }
      let note: string | undefined;
      if (s.stream) {
        const r = await listConntrack(s.stream.maxEntries);
        out = r.out;
        if (r.truncated) note = `truncated: the first ${s.stream.maxEntries} entries (--conntrack-max-entries)`;
      } else {
        const r = await run(s.cmd, [...args], { timeout: 120_000, maxBuffer: 1024 * 1024 * 1024 });
        out = s.stderrIsOutput ? r.stdout + r.stderr : r.stdout;
      }
      if (s.empty && s.empty.pattern.test(out)) {
        steps.push({ file: s.file, command, status: 'skipped', detail: s.empty.reason });
        continue;
      }
      result = { file: s.file, command, status: 'ok', bytes: Buffer.byteLength(out), ...(note ? { detail: note } : {}) };
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      const why = (err.stderr || err.message).trim().split('\n')[0];
      if (err.code === 'ENOENT') result = { file: s.file, command, status: 'missing', detail: `${s.cmd} is not installed` };
      else if (s.optional) result = { file: s.file, command, status: 'skipped', detail: (err.stderr ?? '').trim() ? why : (s.nothingFound ?? why) };
      else {
        // sysctl -e still exits 0; others may print partial output before failing: keep it.
        out = err.stdout || undefined;
        result = { file: s.file, command, status: 'failed', detail: why };
      }
    }
    if (out !== undefined) write(join(dir, s.file), out);
    steps.push(result);
  }
  return steps;
}

export async function collectTo(
  dir: string,
  kpxVersion = VERSION,
  write: BundleWriter = (p, d) => writeFileSync(p, d),
  conntrack: ConntrackCollectOptions = {},
): Promise<{ dir: string; host: string; manifest: Manifest }> {
  mkdirSync(dir, { recursive: true });
  const steps = await runSteps(dir, [...STEPS, ...conntrackSteps(conntrack)], write);
  // The API step runs after the node's dumps (only the connection table comes later): its time is now, within that listing's time.
  const api = await apiRecord(steps, new Date().toISOString());
  const tools: Record<string, string> = {};
  for (const cmd of Object.keys(VERSION_ARGS)) {
    const v = await version(cmd);
    if (v) tools[cmd] = v;
  }
  const host = hostname();
  const manifest: Manifest = { kind: 'kpx-bundle', host, collectedAt: new Date().toISOString(), kpxVersion, tools, steps, ...(api ? { api } : {}) };
  write(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return { dir, host, manifest };
}

/**
 * The signals that end kpx while it collects: Ctrl-C, `kill`, a closed terminal. Each removes
 * the temporary bundle, then ends kpx by the same signal (the shell sees 130 for Ctrl-C).
 */
const CLEANUP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Run fn with a fresh temporary directory (`<tmp>/<prefix>XXXXXX`) that is removed on every way
 * out: fn's answer or error, process.exit (a closed stdout), SIGINT/SIGTERM/SIGHUP. A live
 * bundle holds the node's whole rule set and its connection table: it must not stay behind.
 */
export async function withTemporaryDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const onSignal = (signal: NodeJS.Signals) => {
    release();
    remove();
    // No handler is left for it now: the default action ends the process, as if kpx had none.
    process.kill(process.pid, signal);
  };
  const handlers = CLEANUP_SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  function release() {
    for (const [signal, h] of handlers) process.removeListener(signal, h);
    process.removeListener('exit', remove);
  }
  for (const [signal, h] of handlers) process.once(signal, h);
  process.once('exit', remove);
  try {
    return await fn(dir);
  } finally {
    release();
    remove();
  }
}

/**
 * Collect this node into a temporary bundle and hand it to fn (used when a command gets no input);
 * the bundle is removed when fn is done, whatever happens (withTemporaryDir).
 */
export async function withLiveBundle<T>(fn: (bundle: { dir: string; host: string; manifest: Manifest }) => Promise<T>): Promise<T> {
  return withTemporaryDir(LIVE_PREFIX, async (dir) => fn(await collectTo(dir)));
}

/** The temporary live bundle's folder name: `kpx-live-` and six random characters, in the temp directory. */
export const LIVE_PREFIX = 'kpx-live-';
