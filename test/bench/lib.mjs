/**
 * Shared helpers of the benchmark scripts (plain Node ESM; they run against the BUILT dist/).
 *  - where things live (repo root, dist/, build/bench/),
 *  - generated dumps cached by size + seed + a hash of the built generator,
 *  - running a child process while measuring its wall time and peak RSS,
 *  - small statistics.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = join(ROOT, 'dist');
export const CLI = join(DIST, 'src', 'cli', 'main.js');
/** The dump generator is not shipped in dist/: `npm run build` compiles it to build/tools/. */
export const GENERATOR_DIR = join(ROOT, 'build', 'tools', 'src', 'generate');
export const BENCH_DIR = join(ROOT, 'build', 'bench');
export const DUMPS_DIR = join(BENCH_DIR, 'dumps');
export const NODE = process.execPath;

export function log(msg) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

/** The built dist/ (and build/tools/) must exist; say how to build it when it does not. */
export function requireDist(...rel) {
  const missing = ['src/cli/main.js', ...rel].filter((r) => !existsSync(join(DIST, r)));
  if (!existsSync(join(GENERATOR_DIR, 'main.js'))) missing.push('build/tools/src/generate/main.js');
  if (missing.length > 0) {
    process.stderr.write(`bench: dist/ is not built (missing ${missing.join(', ')}); run \`npm run build\` first\n`);
    process.exit(2);
  }
}

/** A hash of the built generator, so cached dumps are regenerated when it changes. */
export function generatorHash() {
  const dir = GENERATOR_DIR;
  const h = createHash('sha256');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.js')).sort()) {
    h.update(name);
    h.update(readFileSync(join(dir, name)));
  }
  return h.digest('hex').slice(0, 12);
}

/** What kpx reads in each proxy mode (the node's dumps the resolver needs), and the main file. */
export const MODE_FILES = {
  iptables: ['iptables-save.txt'],
  nftables: ['nft-ruleset.txt'],
  ipvs: ['ipvsadm-Ln.txt', 'ipset-list.txt', 'iptables-save.txt'],
};
export const MODES = Object.keys(MODE_FILES);

function countLines(buf) {
  let lines = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
  return lines;
}

/**
 * The generated bundle for `services` Services in proxy mode `mode` (IPv4): the mode's dumps,
 * ip-addr.txt, ip-route.txt and truth.json (IPVS also ipset-save.txt, what `ipset restore`
 * loads), generated once and cached under build/bench/dumps/. `files` are the dumps kpx reads
 * (MODE_FILES), `file` the first of them; `lines`/`bytes` are their sums, `perFile` each one's.
 */
export function ensureDump(services, seed, mode = 'iptables') {
  const key = `${mode === 'iptables' ? '' : `${mode}-`}svc${services}-seed${seed}-gen${generatorHash()}`;
  const dir = join(DUMPS_DIR, key);
  const metaPath = join(dir, 'meta.json');
  const paths = MODE_FILES[mode].map((f) => join(dir, f));
  if (existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    if (meta.perFile) return { ...meta, mode, dir, file: paths[0], files: paths, cached: true };
  }
  mkdirSync(DUMPS_DIR, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  log(`generating ${services} Services (seed ${seed}, ${mode} mode) → ${key}`);
  const t0 = performance.now();
  const extra = mode === 'ipvs' ? ['--load-forms'] : [];
  const r = spawnSync(NODE, [join(GENERATOR_DIR, 'main.js'), '--services', String(services), '--seed', String(seed), '--mode', mode, '--out', tmp, ...extra], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`generator failed (${r.status}): ${r.stderr}`);
  }
  const perFile = {};
  for (const f of MODE_FILES[mode]) {
    const text = readFileSync(join(tmp, f));
    perFile[f] = { lines: countLines(text), bytes: text.length };
  }
  const truth = JSON.parse(readFileSync(join(tmp, 'truth.json'), 'utf8'));
  const meta = {
    key,
    mode,
    services,
    seed,
    servicePorts: truth.services.length,
    endpoints: truth.services.reduce((n, s) => n + s.endpoints.length, 0),
    lines: Object.values(perFile).reduce((n, x) => n + x.lines, 0),
    bytes: Object.values(perFile).reduce((n, x) => n + x.bytes, 0),
    perFile,
    generatedInSeconds: round((performance.now() - t0) / 1000, 2),
  };
  writeFileSync(join(tmp, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  log(`  ${meta.lines} lines, ${mib(meta.bytes)} MiB, ${meta.servicePorts} Service ports in ${meta.generatedInSeconds} s`);
  return { ...meta, dir, file: paths[0], files: paths, cached: false };
}

let gnuTime;
/** GNU time (`/usr/bin/time -f %M`) reports a child's peak RSS exactly; without it, /proc is polled. */
export function hasGnuTime() {
  if (gnuTime === undefined) {
    const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', 'true'], { encoding: 'utf8' });
    gnuTime = r.status === 0 && /^\d+ [\d.]+ [\d.]+\s*$/m.test(r.stderr ?? '');
  }
  return gnuTime;
}

/** Process groups of the children measure() is waiting for. */
const running = new Set();
function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}
/** End the children this process started and still waits for (by their process group ids). */
export function killRunning() {
  for (const pid of running) killGroup(pid);
  running.clear();
}

function vmHwmKiB(pid) {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Run cmd args; returns {wall (s), cpu (s, user+sys, with GNU time; else null), rssKiB (peak), status, stderr, stdout?}. stdin: a file path
 * or undefined; stdout: a file path, 'pipe' (captured) or undefined (discarded).
 * The wall time is taken here (hrtime) around spawn..exit; GNU time adds ~1 ms.
 */
export async function measure(cmd, args, opts = {}) {
  const fds = [];
  const open = (p, flags) => {
    const fd = openSync(p, flags);
    fds.push(fd);
    return fd;
  };
  const stdin = opts.stdin ? open(opts.stdin, 'r') : 'ignore';
  const stdout = opts.stdout === 'pipe' ? 'pipe' : open(opts.stdout ?? '/dev/null', 'w');
  const timeOut = join(BENCH_DIR, `.time-${process.pid}`);
  const useTime = hasGnuTime() && !opts.pollRss;
  // %U %S: the child's CPU time, which a machine loaded by other work inflates far less than wall time.
  const argv = useTime ? ['-f', '%M %U %S', '-o', timeOut, cmd, ...args] : args;
  const t0 = performance.now();
  // Own process group, so a timeout (or the bench being interrupted) can end the whole child tree.
  const child = spawn(useTime ? '/usr/bin/time' : cmd, argv, { stdio: [stdin, stdout, 'pipe'], env: opts.env ?? process.env, cwd: ROOT, detached: true });
  running.add(child.pid);
  let timedOut = false;
  const killer = opts.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        killGroup(child.pid);
      }, opts.timeoutMs)
    : undefined;
  let polled = 0;
  const timer = useTime
    ? undefined
    : setInterval(() => {
        polled = Math.max(polled, vmHwmKiB(child.pid));
      }, 5);
  let err = '';
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (err.length < 64 * 1024) err += d;
  });
  if (child.stdout) child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  const status = await new Promise((res) => {
    child.on('error', (e) => {
      err += String(e);
      res(-1);
    });
    child.on('close', (code, signal) => res(code ?? (signal ? 128 : -1)));
  });
  const wall = (performance.now() - t0) / 1000;
  running.delete(child.pid);
  if (killer) clearTimeout(killer);
  if (timer) clearInterval(timer);
  for (const fd of fds) closeSync(fd);
  let rssKiB = polled;
  let cpu = null;
  if (useTime) {
    try {
      const lines = readFileSync(timeOut, 'utf8').trim().split('\n');
      const [m, u, s] = lines[lines.length - 1].trim().split(/\s+/).map(Number);
      rssKiB = m || 0;
      cpu = Number.isFinite(u) && Number.isFinite(s) ? u + s : null;
      rmSync(timeOut, { force: true });
    } catch {
      rssKiB = 0;
    }
  }
  return { wall, cpu, rssKiB, status, timedOut, stderr: err.trim(), ...(opts.stdout === 'pipe' ? { stdout: out } : {}) };
}

export function median(xs) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile. */
export function percentile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export function round(x, digits = 3) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const mib = (bytes) => round(bytes / 1048576, 1);

/** Deterministic PRNG (mulberry32) for picking trace destinations. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown';
  const nproc = spawnSync('nproc', [], { encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const memTotal = /^MemTotal:\s+(\d+) kB/m.exec(existsSync('/proc/meminfo') ? readFileSync('/proc/meminfo', 'utf8') : '')?.[1];
  const ipt = spawnSync('iptables-restore', ['--version'], { encoding: 'utf8' });
  return {
    nproc,
    cpu: model,
    memGiB: memTotal ? round(Number(memTotal) / 1048576, 1) : null,
    node: process.version,
    kernel: spawnSync('uname', ['-r'], { encoding: 'utf8' }).stdout?.trim() ?? 'unknown',
    iptables: ipt.status === 0 ? (ipt.stdout || ipt.stderr).trim() : null,
    date: new Date().toISOString(),
  };
}
