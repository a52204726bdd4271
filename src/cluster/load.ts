/**
 * Loading a cluster bundle: a directory with one sub-directory per node (`kpx collect -o DIR/NODE`
 * bundles, or any per-node folders of dumps), or several node directories given one by one.
 * Nodes are parsed in parallel on worker threads when that pays (big dumps, more than one CPU),
 * else one after the other in this thread. Unreadable paths raise InputError, as for one node.
 * A node may also be a summary file (`kpx summarize -o json`, issue 20): it is read, not parsed,
 * and serves the comparison (`purpose: 'compare'`) only — it holds no rules to trace.
 */
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants as zlibConstants, gunzipSync } from 'node:zlib';
import { detectFormat, InputError } from '../load/index.js';
import { loadSnapshot, readSmallJson } from '../load/snapshot.js';
import { DEFAULT_INPUT_SETTINGS, type InputLimits, type InputSettings } from '../load/input.js';
import type { WorkerSettings } from './worker.js';
import { followLink, MAX_DEPTH, MAX_ENTRIES } from '../load/bundle.js';
import type { NodeSnapshot, ProxyMode } from '../model/snapshot.js';
import type { Resolution } from '../kube/types.js';
import type { ClusterNode, ClusterSnapshot } from './types.js';
import { looksLikeSummary, readSummary, SummaryError } from './summary.js';

/** One node's folder, before parsing. */
export interface NodeDir {
  readonly name: string;
  readonly dir: string;
  readonly host?: string;
  /** Bytes of the files in the folder (what parsing will chew through). */
  readonly bytes: number;
  /** `dir` is a node summary file (`kpx summarize -o json`), not a folder of dumps. */
  readonly summary?: boolean;
}

export interface ClusterProgress {
  readonly phase: 'start' | 'done';
  readonly node: string;
  /** Nodes finished so far. */
  readonly done: number;
  readonly total: number;
}

export interface ClusterLoadOptions {
  /**
   * `auto` (default): worker threads when the dumps are big enough and the machine has more
   * than one CPU; `never`: in this thread; `always`: workers whenever the worker script exists;
   * a number: at most that many workers (implies `always`).
   */
  readonly workers?: 'auto' | 'always' | 'never' | number;
  /** Load only these nodes (by name); the others are still listed by clusterNodeDirs(). */
  readonly only?: readonly string[];
  /** Node addresses to add to every node (as --node-ip does for one node). Rarely useful. */
  readonly nodeIps?: readonly string[];
  readonly onProgress?: (p: ClusterProgress) => void;
  /**
   * `full` (default): every node's whole snapshot (traces need it). `compare`: what compareNodes
   * needs; on worker threads each node is also resolved there and its rule sets stay there.
   */
  readonly purpose?: 'full' | 'compare';
  /** The limits and --follow-symlinks from the command line (default: DEFAULT_INPUT_SETTINGS); workers get them as workerData. */
  readonly input?: InputSettings;
}

/**
 * Measured (2 CPUs, generated iptables-mode nodes, 13 MB iptables-save each): parsing a node takes
 * ~3.3 s warm, but copying its full snapshot back from a worker (structured clone) takes ~8.5 s —
 * the rule objects are many and small — so full snapshots are always parsed in this thread.
 * For `purpose: 'compare'` a worker also resolves the node and sends back only the Resolution
 * (~0.4 s to copy) and routes/addresses: that pays once the dumps are big enough to amortise
 * each worker's start (loading Chevrotain and building parsers, ~1 s). Load + compare, 4 nodes,
 * 2 workers vs this thread: 52 MB of dumps 26.6 s vs 40.0 s; 8.5 MB 7.2 s vs 4.4 s.
 */
export const WORKER_MIN_BYTES = 24 * 1024 * 1024;

const IGNORED = /^(manifest\.json|\.DS_Store|README(\.md)?|.*\.source)$/;
const HEAD_BYTES = 64 * 1024;

interface Manifestish {
  readonly kind?: unknown;
  readonly host?: unknown;
}

function readManifest(dir: string): Manifestish | undefined {
  // Only a regular, small file: a FIFO or a huge file named manifest.json must not hang kpx.
  const m = readSmallJson(join(dir, 'manifest.json')) as Manifestish | undefined;
  return m && typeof m === 'object' && m.kind === 'kpx-bundle' ? m : undefined;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The first bytes of a file as text (gzip decompressed as far as it goes). */
function head(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
    const b = buf.subarray(0, n);
    if (n > 2 && b[0] === 0x1f && b[1] === 0x8b) {
      try {
        // Bounded: the first 64 KiB of a gzip bomb inflate to 64 MiB of zeros and more; real dumps, 5–40×.
        return gunzipSync(b, { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: 256 * HEAD_BYTES }).toString('utf8');
      } catch {
        return '';
      }
    }
    return b.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The files and folders directly in `dir`, as the node walk would read them: a symlink only while
 * it stays inside `root` (src/load/bundle.ts followLink), never into /proc, /sys or /dev; at most
 * MAX_ENTRIES names.
 */
/** `follow`: --follow-symlinks (follow links that leave the bundle). */
function entries(dir: string, follow: boolean, root = realRoot(dir)): { files: string[]; dirs: string[] } {
  const files: string[] = [];
  const dirs: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).sort().slice(0, MAX_ENTRIES);
  } catch {
    return { files, dirs };
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    let st: Stats;
    try {
      st = lstatSync(p);
      if (st.isSymbolicLink()) {
        const f = followLink(root, p, follow);
        if (!('st' in f)) continue;
        st = f.st;
      }
    } catch {
      continue;
    }
    if (st.isDirectory()) dirs.push(p);
    else if (st.isFile() && !IGNORED.test(name)) files.push(p);
  }
  return { files, dirs };
}

function realRoot(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** Is this file a node summary (`kpx summarize -o json`, gzipped or not)? */
export function isSummaryFile(path: string): boolean {
  return !isDir(path) && looksLikeSummary(head(path));
}

/** The node named in a summary's first bytes (the writer puts `node` among the first fields). */
function summaryNodeName(path: string): string | undefined {
  const m = /"node"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(head(path));
  try {
    return m ? (JSON.parse(m[1]) as string) : undefined;
  } catch {
    return undefined;
  }
}

/** Does this folder directly hold at least one file kpx recognises as a dump? */
function holdsDumps(dir: string, follow: boolean): boolean {
  return entries(dir, follow).files.some((f) => detectFormat(head(f)) !== undefined);
}

/**
 * Is this directory a cluster bundle? Yes when it is not itself a node (no kpx manifest, no
 * recognisable dump at its top level) and its sub-directories are nodes: at least one `kpx
 * collect` bundle, or at least two folders that directly hold dumps. `follow`: --follow-symlinks.
 */
export function isClusterBundle(dir: string, follow = DEFAULT_INPUT_SETTINGS.followSymlinks): boolean {
  if (!isDir(dir)) return false;
  if (readManifest(dir)) return false;
  const { files, dirs } = entries(dir, follow);
  const summaries = files.filter(isSummaryFile).length;
  if (files.some((f) => !isSummaryFile(f) && detectFormat(head(f)) !== undefined)) return false;
  let manifests = 0;
  let dumpDirs = 0;
  for (const d of dirs) {
    if (readManifest(d)) manifests++;
    else if (holdsDumps(d, follow)) dumpDirs++;
  }
  return manifests >= 1 || summaries >= 1 || dumpDirs >= 2;
}

/** Bytes of a node folder's files, each directory once (a symlink loop is not walked twice), MAX_DEPTH deep at most. */
function folderBytes(dir: string, follow: boolean): number {
  let total = 0;
  const root = realRoot(dir);
  const seen = new Set<string>();
  const walk = (d: string, depth: number) => {
    const key = realRoot(d);
    if (seen.has(key) || depth > MAX_DEPTH) return;
    seen.add(key);
    const { files, dirs } = entries(d, follow, root);
    for (const f of files) {
      try {
        total += statSync(f).size;
      } catch {
        // gone since it was listed: the walk will say so
      }
    }
    for (const x of dirs) walk(x, depth + 1);
  };
  walk(dir, 0);
  return total;
}

/**
 * The nodes of a bundle (one path that isClusterBundle) or of several paths (each a node).
 * Names: the manifests' hosts when every node has one and they are all different (folders
 * collected in network namespaces of one machine share its hostname), else the folder names.
 * `follow`: --follow-symlinks.
 */
export function clusterNodeDirs(paths: string | readonly string[], follow = DEFAULT_INPUT_SETTINGS.followSymlinks): NodeDir[] {
  const list = typeof paths === 'string' ? [paths] : [...paths];
  if (list.length === 0) throw new InputError('no node directories given');
  let dirs: string[];
  if (list.length === 1) {
    const only = list[0];
    if (!existsSync(only)) throw new InputError(`${only}: no such file or directory`);
    if (!isClusterBundle(only, follow)) throw new InputError(`${only}: not a cluster bundle (expected one sub-directory per node, as \`kpx collect -o ${only}/NODE\` writes them)`);
    const { dirs: subs, files } = entries(only, follow);
    dirs = [...subs.filter((d) => readManifest(d) !== undefined || holdsDumps(d, follow)), ...files.filter(isSummaryFile)];
  } else {
    for (const p of list) {
      if (!existsSync(p)) throw new InputError(`${p}: no such file or directory`);
      if (!isDir(p) && !isSummaryFile(p)) throw new InputError(`${p}: a node must be a directory of dumps or a node summary (kpx summarize -o json)`);
    }
    dirs = list;
  }
  const raw = dirs.map((dir) => {
    if (isSummaryFile(dir)) return { dir, host: summaryNodeName(dir), folder: basename(resolve(dir)).replace(/\.json(\.gz)?$/, ''), summary: true };
    const m = readManifest(dir);
    const host = m && typeof m.host === 'string' && m.host.trim() !== '' ? m.host.trim() : undefined;
    return { dir, host, folder: basename(resolve(dir)), summary: false };
  });
  const hosts = raw.map((r) => r.host);
  const useHosts = hosts.every((h) => h !== undefined) && new Set(hosts).size === hosts.length;
  const seen = new Map<string, number>();
  const out: NodeDir[] = raw.map((r) => {
    let name = useHosts ? r.host! : r.folder;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    if (n > 1) name = `${name}#${n}`;
    return { name, dir: r.dir, ...(r.host ? { host: r.host } : {}), bytes: r.summary ? statSync(r.dir).size : folderBytes(r.dir, follow), ...(r.summary ? { summary: true } : {}) };
  });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The compiled worker next to this module (absent when running from TypeScript sources). */
function workerScript(): URL | undefined {
  const url = new URL('./worker.js', import.meta.url);
  try {
    return existsSync(fileURLToPath(url)) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** How many workers to use for these nodes (0 = in this thread), and why. */
export function workerPlan(nodes: readonly NodeDir[], mode: ClusterLoadOptions['workers'] = 'auto', purpose: ClusterLoadOptions['purpose'] = 'full'): { workers: number; reason: string } {
  if (mode === 'never') return { workers: 0, reason: 'workers disabled' };
  if (mode === 'auto' && purpose === 'full') return { workers: 0, reason: 'full snapshots cost more to copy from a worker than to parse' };
  if (nodes.length < 2) return { workers: 0, reason: 'one node' };
  if (!workerScript()) return { workers: 0, reason: 'no compiled worker script (running from sources)' };
  const cpus = availableParallelism();
  const cap = typeof mode === 'number' ? Math.max(1, Math.floor(mode)) : 8;
  const n = Math.min(nodes.length, cap, typeof mode === 'number' || mode === 'always' ? nodes.length : cpus);
  if (mode === 'auto') {
    if (cpus < 2) return { workers: 0, reason: 'one CPU' };
    const bytes = nodes.reduce((s, x) => s + x.bytes, 0);
    if (bytes < WORKER_MIN_BYTES) return { workers: 0, reason: `only ${bytes} bytes of dumps` };
  }
  return { workers: n, reason: `${n} workers` };
}

interface WorkerReply {
  readonly id: number;
  readonly snapshot?: NodeSnapshot;
  readonly resolution?: Resolution;
  readonly modes?: readonly ProxyMode[];
  readonly error?: string;
  readonly inputError?: boolean;
}

async function loadInWorkers(nodes: readonly NodeDir[], count: number, opts: ClusterLoadOptions, progress: (phase: 'start' | 'done', node: string) => void): Promise<WorkerReply[]> {
  const { Worker } = await import('node:worker_threads');
  const script = workerScript()!;
  const results: WorkerReply[] = new Array(nodes.length);
  let next = 0;
  const runOne = (worker: InstanceType<typeof Worker>): Promise<void> =>
    new Promise((resolveAll, rejectAll) => {
      const take = () => {
        if (next >= nodes.length) {
          resolveAll();
          return;
        }
        const id = next++;
        progress('start', nodes[id].name);
        worker.postMessage({ id, dir: nodes[id].dir, name: nodes[id].name, nodeIps: opts.nodeIps ?? [], resolve: opts.purpose === 'compare' });
      };
      worker.on('message', (m: WorkerReply) => {
        if (m.error !== undefined) {
          rejectAll(m.inputError ? new InputError(m.error) : new Error(m.error));
          return;
        }
        results[m.id] = m;
        progress('done', nodes[m.id].name);
        take();
      });
      worker.on('error', rejectAll);
      worker.on('exit', (code) => {
        if (next < nodes.length || code !== 0) rejectAll(new Error(`a parser worker exited early (code ${code})`));
      });
      take();
    });
  const workerData: WorkerSettings = { input: opts.input ?? DEFAULT_INPUT_SETTINGS };
  const workers = Array.from({ length: count }, () => new Worker(script, { workerData }));
  try {
    await Promise.all(workers.map(runOne));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}

/** A node summary read back: its resolution and a snapshot without rule sets (as a compare worker answers). */
function readSummaryNode(n: NodeDir, limits: InputLimits): WorkerReply {
  let text: string;
  try {
    // Bounded like every other input (src/load/input.ts): the file's size, and what a .gz may inflate to.
    const { maxBytes } = limits;
    if (statSync(n.dir).size > maxBytes) throw new InputError(`${n.dir}: larger than --max-input-size (${maxBytes} bytes); not read`);
    const buf = readFileSync(n.dir);
    text = (buf.length > 2 && buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf, { maxOutputLength: maxBytes }) : buf).toString('utf8');
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`${n.dir}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    const r = readSummary(text, n.dir);
    return { id: 0, snapshot: { ...r.snapshot, name: n.name }, resolution: r.resolution, modes: r.modes };
  } catch (e) {
    if (e instanceof SummaryError) throw new InputError(e.message);
    throw e;
  }
}

/** A node given that could not be read (a summary that is not one): said, and the others used. */
export interface SkippedNode {
  readonly node: string;
  readonly dir: string;
  readonly reason: string;
}

/** What reading the nodes found besides them: the nodes skipped, and how the dumps were parsed. */
export interface ClusterReadReport {
  readonly skipped: SkippedNode[];
  loadedWith: ClusterSnapshot['loadedWith'];
}

/** The nodes to read (after `only`), refusing summaries unless the purpose is a comparison. */
function nodesToRead(paths: string | readonly string[], opts: ClusterLoadOptions): NodeDir[] {
  const all = clusterNodeDirs(paths, (opts.input ?? DEFAULT_INPUT_SETTINGS).followSymlinks);
  let nodes = all;
  if (opts.only) {
    const unknown = opts.only.filter((n) => !all.some((x) => x.name === n));
    if (unknown.length) throw new InputError(`no node named ${unknown.join(', ')} in this bundle (nodes: ${all.map((x) => x.name).join(', ')})`);
    nodes = all.filter((x) => opts.only!.includes(x.name));
  }
  const summaries = nodes.filter((n) => n.summary);
  if (summaries.length && opts.purpose !== 'compare')
    throw new InputError(`${summaries.map((n) => n.dir).join(', ')}: a node summary holds no rules; this command needs each node's dumps (summaries serve \`kpx services --nodes\`)`);
  return nodes;
}

/** The dumps parsed on worker threads when that pays (workerPlan), by node; undefined: parse them here, one at a time. */
async function dumpsInWorkers(dumps: readonly NodeDir[], opts: ClusterLoadOptions, progress: (phase: 'start' | 'done', node: string) => void): Promise<Map<NodeDir, WorkerReply> | undefined> {
  const plan = workerPlan(dumps, opts.workers, opts.purpose);
  if (plan.workers === 0) return undefined;
  try {
    const replies = await loadInWorkers(dumps, plan.workers, opts, progress);
    return new Map(dumps.map((n, i) => [n, replies[i]]));
  } catch (e) {
    if (e instanceof InputError) throw e;
    // A worker that cannot start (or crashed) must not take the command down: parse here.
    return undefined;
  }
}

/**
 * The nodes of a cluster bundle (or of several node paths), one at a time in name order: a summary
 * is read when its turn comes, dumps are parsed then too (or, on worker threads, beforehand), so a
 * consumer that folds each node in and lets it go holds one node at a time. A summary that cannot
 * be read (damaged, edited, another kpx's) is one node's problem: it goes to `skipped` and the
 * others are read; when no node is left, InputError with every reason.
 */
export async function* clusterNodes(paths: string | readonly string[], opts: ClusterLoadOptions = {}, report: ClusterReadReport = { skipped: [], loadedWith: 'in-process' }): AsyncGenerator<ClusterNode> {
  const skipped = report.skipped;
  const nodes = nodesToRead(paths, opts);
  let done = 0;
  const progress = (phase: 'start' | 'done', node: string) => {
    if (phase === 'done') done++;
    opts.onProgress?.({ phase, node, done, total: nodes.length });
  };
  const parsed = await dumpsInWorkers(nodes.filter((n) => !n.summary), opts, progress);
  if (parsed) report.loadedWith = 'workers';
  else done = 0; // workers that failed may have finished some nodes: they are parsed here again
  let given = 0;
  for (const n of nodes) {
    let r: WorkerReply | undefined = parsed?.get(n);
    if (!r) {
      progress('start', n.name);
      if (n.summary) {
        try {
          r = readSummaryNode(n, (opts.input ?? DEFAULT_INPUT_SETTINGS).limits);
        } catch (e) {
          if (!(e instanceof InputError)) throw e;
          skipped.push({ node: n.name, dir: n.dir, reason: e.message.startsWith(`${n.dir}: `) ? e.message.slice(n.dir.length + 2) : e.message });
        }
      } else r = { id: 0, snapshot: await loadSnapshot([n.dir], { name: n.name, nodeIps: opts.nodeIps ?? [], ...(opts.input ? { input: opts.input } : {}) }) };
      progress('done', n.name);
    }
    if (!r) continue;
    given++;
    const extra = r.resolution ? { partial: true, resolution: r.resolution, modes: r.modes ?? [] } : {};
    yield { name: n.name, dir: n.dir, ...(n.host ? { host: n.host } : {}), snapshot: r.snapshot!, ...extra };
  }
  if (given === 0 && skipped.length > 0) throw new InputError(skipped.map((s) => `${s.dir}: ${s.reason}`).join('\n'));
}

/**
 * Load a cluster bundle directory, or several node directories, into one ClusterSnapshot.
 * Throws InputError for unreadable paths or a path that is not a cluster bundle.
 */
export async function loadCluster(paths: string | readonly string[], opts: ClusterLoadOptions = {}): Promise<ClusterSnapshot> {
  const report: ClusterReadReport = { skipped: [], loadedWith: 'in-process' };
  const out: ClusterNode[] = [];
  for await (const n of clusterNodes(paths, opts, report)) out.push(n);
  const { skipped, loadedWith } = report;
  return { root: typeof paths === 'string' ? paths : paths.join(', '), nodes: out, loadedWith, ...(skipped.length ? { skipped } : {}) };
}
