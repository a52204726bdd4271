#!/usr/bin/env node
/**
 * `npm run bench` (issues 8 and 20): kpx at real cluster scale, against the JS floor, a
 * single-pass scanner and netfilter's own tools, on generated kube-proxy dumps of 1k / 10k / 30k
 * Services in each proxy mode: iptables (iptables-save), nftables (`nft list ruleset`) and IPVS
 * (`ipvsadm -Ln` + `ipset list` + the iptables-save IPVS mode keeps).
 *
 *   node test/bench/run.mjs [--sizes 1000,10000,30000] [--modes iptables,nftables,ipvs] [--reps N]
 *                           [--seed 1] [--traces 100] [--quick] [--no-restore] [--no-doc] [--check]
 *                           [--poll-rss] [--no-conntrack]
 *
 * Runs against the BUILT dist/ (`npm run build` first). For each mode and size, in one run and
 * interleaved (the order of the tasks rotates every repetition), N repetitions of:
 *   cat        `cat DUMP…` (I/O floor)
 *   floor      Node: read the files + split them into lines (the JS floor)
 *   scanner    (iptables) test/bench/scanner.mjs: one pass, no grammar, same Service resolution;
 *              its Services are checked equal to kpx's on the dump (else the run fails)
 *   services   `kpx services -i DUMP… -o json`, a child process: wall time and peak RSS
 *   phases     (iptables) kpx in one process through the dist modules: parse, resolve, render,
 *              then 100 traces to random Service VIPs after that one load (median and p95)
 *   lint       `kpx lint -i DUMP… -o json --fail-on never`
 *   restore    (iptables) `iptables-restore --test` < DUMP in a private network namespace (root)
 *   nft-check  (nftables) `nft -c -f DUMP` (parse and check the listing, commit nothing), netns
 *   ipset      (IPVS) `ipset restore` of the same sets (ipset-save.txt) in the netns, destroyed
 *              after each run; ipvsadm has no check mode and this kernel no IPVS, so the sets are
 *              the part of IPVS mode a netfilter tool can be timed on
 *   conntrack  a generated 1M-entry `conntrack -L` streamed into kpx's table (test/bench/conntrack.mjs): wall, peak RSS
 * plus, once per run, `kpx services` on the small kind sample (start-up included).
 * Medians are reported. Results: build/bench/result.json (result-quick.json for --quick), a markdown
 * table on stdout, and build/bench/bench.md (a table to paste into docs/performance.md) (not for --quick / --no-doc). Progress goes to stderr.
 *
 * --quick: one small size (300 Services), one repetition, 20 traces: a smoke check of this script
 * (exit 1 when a measured command fails or kpx's output does not match the generator's truth).
 * --check: also exit 1 when an issue-8 goal is not met.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { conntrackBench } from './conntrack.mjs';
import { comparable } from './scanner.mjs';
import { BENCH_DIR, CLI, DIST, NODE, ROOT, MODES, ensureDump, hasGnuTime, killRunning, log, machine, measure, median, mib, requireDist, round } from './lib.mjs';

// ---------------------------------------------------------------- options
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const value = (name) => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith('--')) usage(`--${name} needs a value`);
  return v;
};
function usage(msg) {
  if (msg) process.stderr.write(`bench: ${msg}\n`);
  process.stderr.write('usage: node test/bench/run.mjs [--sizes 1000,10000,30000] [--modes iptables,nftables,ipvs] [--reps N] [--seed S] [--traces N] [--quick] [--no-restore] [--no-doc] [--check] [--poll-rss] [--no-conntrack]\n');
  process.exit(2);
}
const KNOWN = new Set(['sizes', 'modes', 'reps', 'seed', 'traces', 'quick', 'no-restore', 'no-doc', 'check', 'poll-rss', 'no-conntrack', 'help']);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (!a.startsWith('--') || !KNOWN.has(a.slice(2))) usage(`unknown argument ${a}`);
  if (['sizes', 'modes', 'reps', 'seed', 'traces'].includes(a.slice(2))) i++;
}
if (flag('help')) usage();
const quick = flag('quick');
const intList = (s, name) =>
  s.split(',').map((x) => {
    const n = Number(x.trim().replace(/k$/i, '000'));
    if (!Number.isInteger(n) || n <= 0) usage(`--${name}: ${x} is not a positive integer`);
    return n;
  });
const sizes = value('sizes') ? intList(value('sizes'), 'sizes') : quick ? [300] : [1000, 10000, 30000];
const modes = value('modes') ? value('modes').split(',').map((x) => x.trim()) : MODES;
for (const x of modes) if (!MODES.includes(x)) usage(`--modes: ${x} is not one of ${MODES.join(', ')}`);
const repsOpt = value('reps') ? intList(value('reps'), 'reps')[0] : undefined;
const repsFor = (size) => repsOpt ?? (quick ? 1 : size >= 30000 ? 3 : 5);
const seed = value('seed') ? intList(value('seed'), 'seed')[0] : 1;
const traces = value('traces') ? intList(value('traces'), 'traces')[0] : quick ? 20 : 100;
const writeDoc = !quick && !flag('no-doc');
const pollRss = flag('poll-rss');
const TASK_TIMEOUT_MS = 15 * 60 * 1000;

requireDist();
mkdirSync(join(BENCH_DIR, 'out'), { recursive: true });

const notes = [];
const note = (s) => {
  notes.push(s);
  log(`note: ${s}`);
};

// ---------------------------------------------------------------- what can run here
const lintAvailable = existsSync(join(DIST, 'src', 'cli', 'commands', 'lint.js'));
if (!lintAvailable) note('kpx lint is not measured: dist/src/cli/commands/lint.js does not exist yet (src/cli/commands/lint.ts not written or not built)');

function restoreUnavailableReason() {
  if (flag('no-restore')) return '--no-restore was given';
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not running as root (a private network namespace needs root)';
  const ipt = spawnSync('iptables-restore', ['--version'], { encoding: 'utf8' });
  if (ipt.status !== 0) return 'iptables-restore is not installed';
  const ns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  if (ns.status !== 0) return `\`ip netns\` is unavailable: ${(ns.stderr || String(ns.error)).trim()}`;
  return undefined;
}
const restoreSkip = restoreUnavailableReason();
if (restoreSkip) note(`iptables-restore --test is not measured: ${restoreSkip}`);

// The private namespace: created once, deleted at the end, on failure and on SIGINT/SIGTERM.
const NETNS = `kpxb-${process.pid}`;
let netnsCreated = false;
function createNetns() {
  if (netnsCreated) return;
  const r = spawnSync('ip', ['netns', 'add', NETNS], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip netns add ${NETNS} failed: ${r.stderr}`);
  netnsCreated = true;
  spawnSync('ip', ['netns', 'exec', NETNS, 'ip', 'link', 'set', 'lo', 'up']);
}
function deleteNetns() {
  if (!netnsCreated) return;
  const pids = spawnSync('ip', ['netns', 'pids', NETNS], { encoding: 'utf8' }).stdout ?? '';
  for (const pid of pids.split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  spawnSync('ip', ['netns', 'del', NETNS]);
  netnsCreated = false;
}
process.on('exit', deleteNetns);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    killRunning();
    deleteNetns();
    process.exit(130);
  });
}

// ---------------------------------------------------------------- the tasks
const PHASES = join(ROOT, 'test', 'bench', 'phases.mjs');
const FLOOR = join(ROOT, 'test', 'bench', 'floor.mjs');
const outFile = (dump, id) => join(BENCH_DIR, 'out', `${id}-${dump.mode}-${dump.services}.json`);
const m = (cmd, args, opts = {}) => measure(cmd, args, { pollRss, timeoutMs: TASK_TIMEOUT_MS, ...opts });

const SCANNER = join(ROOT, 'test', 'bench', 'scanner.mjs');
const toolAvailable = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8' }).status === 0;
const nftSkip = restoreSkip ?? (toolAvailable('nft', ['--version']) ? undefined : 'nft is not installed');
const ipsetSkip = restoreSkip ?? (toolAvailable('ipset', ['version']) ? undefined : 'ipset is not installed');
if (modes.includes('nftables') && nftSkip && !restoreSkip) note(`nft -c -f is not measured: ${nftSkip}`);
if (modes.includes('ipvs') && ipsetSkip && !restoreSkip) note(`ipset restore is not measured: ${ipsetSkip}`);
/** The netfilter tool each mode is compared with (the task id), when it can run here. */
const TOOL = { iptables: 'restore', nftables: 'nft-check', ipvs: 'ipset' };

function tasksFor(dump) {
  const f = dump.file;
  const files = dump.files;
  const inputs = files.flatMap((x) => ['-i', x]);
  const tasks = [
    { id: 'cat', label: '`cat` (I/O floor)', run: () => m('cat', files) },
    { id: 'floor', label: 'Node: read + split lines (JS floor)', run: () => m(NODE, [FLOOR, ...files]) },
  ];
  if (dump.mode === 'iptables') tasks.push({ id: 'scanner', label: 'single-pass scanner (test/bench/scanner.mjs)', run: () => m(NODE, [SCANNER, f]) });
  tasks.push({ id: 'services', label: '`kpx services -i DUMP -o json`', run: () => m(NODE, [CLI, 'services', ...inputs, '-o', 'json'], { stdout: outFile(dump, 'services') }) });
  if (dump.mode === 'iptables')
    tasks.push({
      id: 'phases',
      label: 'kpx in-process (load, resolve, render, traces)',
      run: () => m(NODE, [PHASES, '--dir', dump.dir, '--traces', String(traces), '--seed', String(seed)], { stdout: 'pipe' }),
    });
  if (lintAvailable)
    tasks.push({ id: 'lint', label: '`kpx lint -i DUMP -o json`', run: () => m(NODE, [CLI, 'lint', ...inputs, '-o', 'json', '--fail-on', 'never'], { stdout: outFile(dump, 'lint') }) });
  if (dump.mode === 'iptables' && !restoreSkip)
    tasks.push({
      id: 'restore',
      label: '`iptables-restore --test` (netns)',
      run: () => {
        createNetns();
        return m('ip', ['netns', 'exec', NETNS, 'iptables-restore', '--test'], { stdin: f });
      },
    });
  if (dump.mode === 'nftables' && !nftSkip)
    tasks.push({
      id: 'nft-check',
      label: '`nft -c -f DUMP` (netns)',
      run: () => {
        createNetns();
        return m('ip', ['netns', 'exec', NETNS, 'nft', '-c', '-f', f]);
      },
    });
  if (dump.mode === 'ipvs' && !ipsetSkip)
    tasks.push({
      id: 'ipset',
      label: '`ipset restore` of the same sets (netns)',
      run: async () => {
        createNetns();
        const r = await m('ip', ['netns', 'exec', NETNS, 'ipset', 'restore', '-f', join(dump.dir, 'ipset-save.txt')]);
        spawnSync('ip', ['netns', 'exec', NETNS, 'ipset', 'destroy']);
        return r;
      },
    });
  return tasks;
}

/** Does the scanner name the same Service ports, with the same addresses and endpoints, as kpx? */
function checkScanner(dump) {
  const r = spawnSync(NODE, [SCANNER, dump.file, '--json'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) return { ok: false, message: `the scanner failed: ${r.stderr.slice(0, 300)}` };
  const a = JSON.parse(r.stdout).services.map(comparable).sort();
  let b;
  try {
    b = JSON.parse(readFileSync(outFile(dump, 'services'), 'utf8')).services.map(comparable).sort();
  } catch (e) {
    return { ok: false, message: `kpx's output is not JSON: ${e.message}` };
  }
  const A = new Set(a);
  const B = new Set(b);
  const onlyScanner = a.filter((x) => !B.has(x));
  const onlyKpx = b.filter((x) => !A.has(x));
  const ok = onlyScanner.length === 0 && onlyKpx.length === 0 && a.length === b.length;
  return {
    ok,
    servicePorts: a.length,
    message: ok
      ? `the scanner and kpx agree on all ${a.length} Service ports (identity, VIP, node port, external/LB IPs, endpoints)`
      : `the scanner and kpx disagree: ${a.length} vs ${b.length} Service ports; only the scanner: ${onlyScanner.slice(0, 2).join(' | ')}; only kpx: ${onlyKpx.slice(0, 2).join(' | ')}`,
  };
}

const k = (n) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));
const fmtS = (s) => (Number.isFinite(s) ? (s >= 10 ? s.toFixed(1) : s >= 1 ? s.toFixed(2) : s.toFixed(3)) : '—');
const fmtMiB = (kib) => (Number.isFinite(kib) && kib > 0 ? `${Math.round(kib / 1024)} MiB` : '—');
const fmtMs = (x) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) : '—');
const fmtX = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '—');

/** Does `kpx services -o json` say the Service ports the generator put in? */
function validateServices(dump) {
  let truth = JSON.parse(readFileSync(join(dump.dir, 'truth.json'), 'utf8')).services;
  let out;
  try {
    out = JSON.parse(readFileSync(outFile(dump, 'services'), 'utf8')).services;
  } catch (e) {
    return { ok: false, message: `the output is not JSON: ${e.message}` };
  }
  // Identity (must match: otherwise the bench measured a command that did not do the job) …
  // IPVS mode names no Service (kube-proxy comments no ipset member): there, a Service port is its
  // VIP:port/protocol, and kpx also lists each node-port and external virtual server on its own.
  const ipvs = dump.mode === 'ipvs';
  const id = ipvs ? (s) => `${s.clusterIP}:${s.port}/${s.protocol}` : (s) => `${s.namespace}/${s.name}:${s.portName ?? ''}/${s.protocol}@${s.clusterIP}:${s.port}`;
  if (ipvs) truth = truth.filter((s) => s.clusterIP !== null);
  // … and the resolved facts (differences are reported, not fatal: they are resolver findings).
  const facts = (s) => `state=${s.state} itp=${s.internalTrafficPolicy} etp=${s.externalTrafficPolicy}`;
  const byId = new Map(out.map((s) => [id(s), s]));
  const missing = truth.filter((s) => !byId.has(id(s)));
  const differing = truth.filter((s) => byId.has(id(s)) && facts(byId.get(id(s))) !== facts(s));
  const ok = missing.length === 0 && (ipvs || out.length === truth.length);
  const diffText = differing.length
    ? `; ${differing.length} differ from the truth in state or traffic policies (e.g. ${differing
        .slice(0, 2)
        .map((s) => `${id(s)}: truth ${facts(s)}, kpx ${facts(byId.get(id(s)))}`)
        .join('; ')})`
    : '';
  return {
    ok,
    truth: truth.length,
    output: out.length,
    missing: missing.length,
    differing: differing.length,
    message: ok
      ? `all ${truth.length} Service ports found (VIP, port, protocol)${diffText}`
      : `${out.length} Service ports in the output, ${truth.length} in the truth, ${missing.length} missing (e.g. ${missing.slice(0, 2).map(id).join(', ')})${diffText}`,
  };
}

// ---------------------------------------------------------------- run
const started = Date.now();
const loadBefore = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const result = {
  machine: machine(),
  loadavgBefore: loadBefore,
  noisy: null,
  config: { sizes, seed, traces, reps: Object.fromEntries(sizes.map((s) => [s, repsFor(s)])), quick, rssBy: hasGnuTime() && !pollRss ? 'GNU time %M (ru_maxrss)' : '/proc/<pid>/status VmHWM polled every 5 ms' },
  notes,
  startup: null,
  sizes: [],
  scaling: [],
  goals: [],
  errors: [],
};

// Small-dump start-up: the kind sample, and bare Node for reference.
const SAMPLE = join(ROOT, 'samples', 'iptables-mode-kind', 'iptables-save.txt');
{
  const reps = quick ? 1 : 5;
  const node = [];
  const svc = [];
  log(`start-up: kpx services on the kind sample, ${reps}×`);
  for (let i = 0; i < reps; i++) {
    node.push(await m(NODE, ['-e', '']));
    if (existsSync(SAMPLE)) svc.push(await m(NODE, [CLI, 'services', '-i', SAMPLE, '-o', 'json']));
  }
  const bad = svc.find((r) => r.status !== 0);
  if (bad) result.errors.push(`kpx services on the kind sample exited ${bad.status}: ${bad.stderr.slice(0, 500)}`);
  result.startup = {
    sample: existsSync(SAMPLE) ? relative(ROOT, SAMPLE) : null,
    sampleLines: existsSync(SAMPLE) ? readFileSync(SAMPLE, 'utf8').split('\n').filter((l) => l !== '').length : null,
    nodeBare: round(median(node.map((r) => r.wall)), 4),
    kpxServices: svc.length ? round(median(svc.map((r) => r.wall)), 4) : null,
    kpxServicesRssKiB: svc.length ? median(svc.map((r) => r.rssKiB)) : null,
  };
  log(`  bare node ${fmtS(result.startup.nodeBare)} s, kpx services (kind sample) ${fmtS(result.startup.kpxServices)} s`);
}

// Connection tracking (issue 18): a 1M-entry conntrack -L streamed into the compact table (20k with --quick).
if (!flag('no-conntrack')) {
  result.conntrack = await conntrackBench(quick ? 20_000 : 1_000_000);
  if (result.conntrack.error) result.errors.push(`conntrack bench: ${result.conntrack.error}`);
  else if (result.conntrack.errors !== 0 || result.conntrack.entries !== (quick ? 20_000 : 1_000_000)) result.errors.push(`conntrack bench: read ${result.conntrack.entries} entries with ${result.conntrack.errors} errors`);
}

try {
  for (const mode of modes) for (const size of sizes) {
    const dump = ensureDump(size, seed, mode);
    const reps = repsFor(size);
    for (const f of dump.files) readFileSync(f); // warm the page cache
    const tasks = tasksFor(dump);
    const runs = Object.fromEntries(tasks.map((t) => [t.id, []]));
    const errors = [];
    log(`${mode} mode, ${size} Services: ${dump.lines} lines, ${mib(dump.bytes)} MiB; ${reps} repetitions of ${tasks.map((t) => t.id).join(', ')}`);
    for (let rep = 0; rep < reps; rep++) {
      const order = tasks.map((_, i) => tasks[(i + rep) % tasks.length]);
      for (const task of order) {
        const r = await task.run();
        if (r.status !== 0) {
          const msg = `${size}: ${task.id} exited ${r.status}${r.timedOut ? ' (timed out)' : ''}: ${r.stderr.split('\n').slice(-5).join(' | ').slice(0, 600)}`;
          errors.push(msg);
          log(`  ERROR ${msg}`);
        } else if (task.id === 'phases') {
          try {
            r.data = JSON.parse(r.stdout.trim().split('\n').pop());
          } catch (e) {
            errors.push(`${size}: phases printed no JSON (${e.message})`);
          }
        }
        delete r.stdout;
        runs[task.id].push(r);
        const extra = r.data ? ` (parse ${fmtS(r.data.phases.parse)} s, resolve ${fmtS(r.data.phases.resolve)} s, trace median ${r.data.trace.medianMs} ms)` : '';
        log(`  rep ${rep + 1}/${reps} ${task.id.padEnd(8)} ${fmtS(r.wall).padStart(6)} s  ${fmtMiB(r.rssKiB).padStart(9)}${r.status !== 0 ? '  FAILED' : ''}${extra}`);
      }
    }

    const summary = {};
    for (const t of tasks) {
      const ok = runs[t.id].filter((r) => r.status === 0);
      summary[t.id] = {
        label: t.label,
        walls: runs[t.id].map((r) => round(r.wall, 4)),
        // CPU time (user+sys, GNU time): a loaded machine inflates it far less than wall time.
        cpuMedian: ok.length && ok.every((r) => r.cpu !== null && r.cpu !== undefined) ? round(median(ok.map((r) => r.cpu)), 3) : null,
        median: ok.length ? round(median(ok.map((r) => r.wall)), 4) : null,
        min: ok.length ? round(Math.min(...ok.map((r) => r.wall)), 4) : null,
        peakRssKiB: ok.length ? median(ok.map((r) => r.rssKiB)) : null,
        failures: runs[t.id].length - ok.length,
      };
    }
    const phaseRuns = (runs.phases ?? []).map((r) => r.data).filter(Boolean);
    const medOf = (get) => (phaseRuns.length ? round(median(phaseRuns.map(get)), 4) : null);
    const phaseNames = phaseRuns.length ? Object.keys(phaseRuns[0].phases) : [];
    const inProcess = phaseRuns.length
      ? {
          phases: Object.fromEntries(phaseNames.map((p) => [p, medOf((d) => d.phases[p])])),
          loadResolve: medOf((d) => d.loadResolve),
          maxRssKiB: medOf((d) => d.maxRssKiB),
          heapAfterLoadMiB: medOf((d) => d.heapAfterLoadMiB),
          diagnostics: phaseRuns[0].diagnosticsBySeverity,
          servicePorts: phaseRuns[0].servicePorts,
          trace: {
            count: phaseRuns[0].trace.count,
            failures: phaseRuns[0].trace.failures,
            failureSamples: phaseRuns[0].trace.failureSamples,
            firstMs: medOf((d) => d.trace.firstMs),
            medianMs: medOf((d) => d.trace.medianMs),
            p95Ms: medOf((d) => d.trace.p95Ms),
            maxMs: medOf((d) => d.trace.maxMs),
            reachedEndpoint: `${phaseRuns[0].trace.reachedEndpoint}/${phaseRuns[0].trace.withEndpoints}`,
          },
        }
      : null;
    if (inProcess && inProcess.trace.failures > 0) errors.push(`${size}: ${inProcess.trace.failures} traces threw (e.g. ${inProcess.trace.failureSamples.join('; ')})`);
    if (inProcess && phaseRuns[0].trace.reachedEndpoint !== phaseRuns[0].trace.withEndpoints)
      errors.push(`${size}: only ${inProcess.trace.reachedEndpoint} traces to Services with endpoints reached one of them`);

    const validation = summary.services.median !== null ? validateServices(dump) : { ok: false, message: 'kpx services did not succeed' };
    if (!validation.ok) errors.push(`${mode} ${size}: kpx services output check: ${validation.message}`);
    else if (validation.differing) note(`${mode} ${size}: kpx services output check: ${validation.message}`);
    log(`  output check: ${validation.message}`);
    const scannerCheck = summary.scanner && summary.services.median !== null ? checkScanner(dump) : null;
    if (scannerCheck) {
      if (!scannerCheck.ok) errors.push(`${mode} ${size}: ${scannerCheck.message}`);
      log(`  scanner check: ${scannerCheck.message}`);
    }

    const s = summary;
    const tool = s[TOOL[mode]];
    // Ratios per repetition (the two runs of a pair are minutes apart at most, under the same
    // load), then their median and spread: on a shared machine these say more than a ratio of medians.
    const pair = (aId, bId, get = (r) => r.wall) => {
      if (!runs[aId] || !runs[bId]) return null;
      const xs = [];
      for (let i = 0; i < reps; i++) {
        const x = runs[aId][i];
        const y = runs[bId][i];
        if (x?.status === 0 && y?.status === 0 && get(y) > 0 && Number.isFinite(get(x))) xs.push(get(x) / get(y));
      }
      return xs.length ? { median: round(median(xs), 3), min: round(Math.min(...xs), 3), max: round(Math.max(...xs), 3), n: xs.length } : null;
    };
    const cpuOf = (r) => r.cpu ?? NaN;
    const pairRatios = {
      servicesVsToolCpu: pair('services', TOOL[mode], cpuOf),
      servicesVsScannerCpu: pair('services', 'scanner', cpuOf),
      servicesVsTool: pair('services', TOOL[mode]),
      servicesVsScanner: pair('services', 'scanner'),
      rssVsScanner: pair('services', 'scanner', (r) => r.rssKiB),
      servicesVsFloor: pair('services', 'floor'),
    };
    const ratios = {
      servicesVsRestore: s.restore?.median ? round(s.services.median / s.restore.median, 3) : null,
      servicesVsTool: tool?.median ? round(s.services.median / tool.median, 3) : null,
      servicesVsScanner: s.scanner?.median && s.services.median ? round(s.services.median / s.scanner.median, 2) : null,
      rssVsScanner: s.scanner?.peakRssKiB && s.services.peakRssKiB ? round(s.services.peakRssKiB / s.scanner.peakRssKiB, 2) : null,
      servicesVsFloor: s.services.median && s.floor.median ? round(s.services.median / s.floor.median, 2) : null,
      lintVsServices: s.lint?.median && s.services.median ? round(s.lint.median / s.services.median, 2) : null,
      restoreVsFloor: s.restore?.median && s.floor.median ? round(s.restore.median / s.floor.median, 2) : null,
    };
    result.sizes.push({
      mode,
      tool: tool ? TOOL[mode] : null,
      services: size,
      servicePorts: dump.servicePorts,
      endpoints: dump.endpoints,
      lines: dump.lines,
      bytes: dump.bytes,
      dump: relative(ROOT, dump.file),
      files: dump.files.map((f) => relative(ROOT, f)),
      perFile: dump.perFile,
      reps,
      tasks: summary,
      inProcess,
      ratios,
      pairRatios,
      linesPerSecond: s.services.median ? Math.round(dump.lines / s.services.median) : null,
      linesPerSecondParse: inProcess?.phases.parse ? Math.round(dump.lines / inProcess.phases.parse) : null,
      validation,
      scannerCheck,
      errors,
    });
    result.errors.push(...errors);
  }
} finally {
  deleteNetns();
}

// ---------------------------------------------------------------- goals (issues 8 and 20)
const GiB = 1024 * 1024;
function goal(size, text, target, measured, met) {
  result.goals.push({ size, goal: text, target, measured, met });
}
const spreadText = (x) => (x ? `${fmtX(x.median)} (${fmtX(x.min)}–${fmtX(x.max)})` : 'not measured');
for (const r of result.sizes) {
  const svc = r.tasks.services;
  const rss = svc.peakRssKiB;
  const at = `${r.mode} ${k(r.services)}`;
  const toolName = r.tool ? r.tasks[r.tool].label : null;
  if (r.services >= 10000 && r.services < 30000) {
    const vsTool = r.pairRatios.servicesVsTool;
    if (r.mode !== 'ipvs') goal(at, `kpx services vs ${toolName ?? 'the netfilter tool'}`, '≤ 0.4×', spreadText(vsTool), vsTool ? vsTool.median <= 0.4 : null);
    if (r.mode === 'iptables') goal(at, 'kpx services vs the single-pass scanner', '≤ 1.5×', spreadText(r.pairRatios.servicesVsScanner), r.pairRatios.servicesVsScanner ? r.pairRatios.servicesVsScanner.median <= 1.5 : null);
    goal(at, 'kpx services peak RSS', '≤ 300 MiB', fmtMiB(rss), rss === null ? null : rss <= 300 * 1024);
  }
  if (r.services >= 30000) {
    goal(at, 'kpx services vs JS floor', '≤ 10×', spreadText(r.pairRatios.servicesVsFloor), r.pairRatios.servicesVsFloor ? r.pairRatios.servicesVsFloor.median <= 10 : null);
    goal(at, 'kpx services peak RSS', '≤ 1 GiB', fmtMiB(rss), rss === null ? null : rss <= GiB);
  }
  if (r.inProcess) goal(at, 'one trace after loading (p95 of the traces)', '≤ 10 ms', `${fmtMs(r.inProcess.trace.p95Ms)} ms (median ${fmtMs(r.inProcess.trace.medianMs)} ms)`, r.inProcess.trace.p95Ms <= 10);
  if (lintAvailable) goal(at, 'kpx lint vs kpx services (the load)', '≤ 2×', fmtX(r.ratios.lintVsServices), r.ratios.lintVsServices === null ? null : r.ratios.lintVsServices <= 2);
}
if (result.startup?.kpxServices !== null && result.startup?.kpxServices !== undefined)
  goal('kind sample', 'small dump, start-up included ("well under a second")', '≤ 0.5 s', `${fmtS(result.startup.kpxServices)} s`, result.startup.kpxServices <= 0.5);
// Linear growth: the exponent b in t ∝ lines^b between consecutive sizes, on kpx's in-process
// load+resolve (start-up excluded) and on the whole `kpx services` wall time.
for (const mode of modes) {
const bySize = result.sizes.filter((x) => x.mode === mode).sort((a, b) => a.lines - b.lines);
for (let i = 1; i < bySize.length; i++) {
  const a = bySize[i - 1];
  const b = bySize[i];
  const exp = (ta, tb) => (ta && tb ? round(Math.log(tb / ta) / Math.log(b.lines / a.lines), 2) : null);
  const inproc = exp(a.inProcess?.loadResolve, b.inProcess?.loadResolve);
  const wall = exp(a.tasks.services.median, b.tasks.services.median);
  result.scaling.push({ mode, from: a.services, to: b.services, exponentLoadResolve: inproc, exponentServicesWall: wall });
  if (inproc !== null) goal(`${mode} ${k(a.services)}→${k(b.services)}`, 'linear growth (t ∝ lines^b, in-process load+resolve)', 'b ≤ 1.15', `b = ${inproc}`, inproc <= 1.15);
  else goal(`${mode} ${k(a.services)}→${k(b.services)}`, 'linear growth (t ∝ lines^b, whole kpx services)', 'b ≤ 1.15', wall === null ? '—' : `b = ${wall}`, wall === null ? null : wall <= 1.15);
}
}
result.loadavgAfter = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
// The bench itself keeps about one CPU busy; more than nproc runnable means other work competed.
{
  const peak = Math.max(Number(loadBefore.split(' ')[0]), Number(result.loadavgAfter.split(' ')[0]));
  const cpus = Number(result.machine.nproc) || 1;
  if (peak > cpus) result.noisy = `the machine was busy with other work during this run (1-minute load average up to ${peak} on ${cpus} CPUs): the timings are noisy, ratios taken in the same run are the more meaningful figures`;
}
result.seconds = Math.round((Date.now() - started) / 1000);

// ---------------------------------------------------------------- report
const TOOL_SHORT = { restore: '`iptables-restore --test`', 'nft-check': '`nft -c -f`', ipset: '`ipset restore` (sets only)' };
const ratioCell = (x) => (x ? `${fmtX(x.median)} (${fmtX(x.min)}–${fmtX(x.max)})` : '—');
function markdown() {
  const L = [];
  L.push('| mode | Services (ports) | lines | size | JS floor | scanner | `kpx services -o json` | peak RSS | netfilter tool | kpx ÷ tool (wall) | kpx ÷ tool (CPU) | kpx ÷ scanner (wall) | kpx ÷ scanner (CPU) | kpx ÷ floor | trace median / p95 | `kpx lint` |');
  L.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of result.sizes) {
    const t = r.tasks;
    const tool = r.tool ? t[r.tool] : null;
    L.push(
      `| ${r.mode} | ${k(r.services)} (${r.servicePorts}) | ${r.lines.toLocaleString('en')} | ${mib(r.bytes)} MiB | ${fmtS(t.floor.median)} s | ${t.scanner ? `${fmtS(t.scanner.median)} s, ${fmtMiB(t.scanner.peakRssKiB)}` : '—'} | ${fmtS(t.services.median)} s | ${fmtMiB(t.services.peakRssKiB)} | ${tool ? `${TOOL_SHORT[r.tool]} ${fmtS(tool.median)} s` : 'not run'} | ${ratioCell(r.pairRatios.servicesVsTool)} | ${ratioCell(r.pairRatios.servicesVsToolCpu)} | ${ratioCell(r.pairRatios.servicesVsScanner)} | ${ratioCell(r.pairRatios.servicesVsScannerCpu)} | ${ratioCell(r.pairRatios.servicesVsFloor)} | ${r.inProcess ? `${fmtMs(r.inProcess.trace.medianMs)} / ${fmtMs(r.inProcess.trace.p95Ms)} ms` : '—'} | ${t.lint ? `${fmtS(t.lint.median)} s` : 'not built'} |`,
    );
  }
  return L.join('\n');
}
function phasesMarkdown() {
  const L = [];
  const names = ['import', 'parserLoad', 'read', 'parse', 'assemble', 'resolve', 'render'];
  L.push(`| mode, Services | ${names.join(' | ')} | load+resolve | lines/s (parse) | peak RSS | first trace |`);
  L.push(`|---|${names.map(() => '---').join('|')}|---|---|---|---|`);
  for (const r of result.sizes) {
    const p = r.inProcess;
    if (!p) continue;
    L.push(`| ${r.mode} ${k(r.services)} | ${names.map((n) => fmtS(p.phases[n])).join(' | ')} | ${fmtS(p.loadResolve)} s | ${r.linesPerSecondParse?.toLocaleString('en') ?? '—'} | ${fmtMiB(p.maxRssKiB)} | ${fmtMs(p.trace.firstMs)} ms |`);
  }
  return L.join('\n');
}
function goalsMarkdown() {
  const L = ['| size | goal | target | measured | met |', '|---|---|---|---|---|'];
  for (const g of result.goals) L.push(`| ${g.size} | ${g.goal} | ${g.target} | ${g.measured} | ${g.met === null ? 'not measured' : g.met ? 'yes' : '**no**'} |`);
  return L.join('\n');
}
const mach = result.machine;
const machineLine = `${mach.nproc} CPUs (\`nproc\`), ${mach.cpu}, ${mach.memGiB ?? '?'} GiB RAM, Linux ${mach.kernel}, Node ${mach.node}, ${mach.iptables ?? 'no iptables'}; ${mach.date.slice(0, 10)}`;

const resultPath = join(BENCH_DIR, quick ? 'result-quick.json' : 'result.json');
writeFileSync(resultPath, `${JSON.stringify(result, null, 2)}\n`);
const table = markdown();
process.stdout.write(`\n${machineLine}\n\n${table}\n\n${phasesMarkdown()}\n\n${goalsMarkdown()}\n\n`);
if (notes.length) process.stdout.write(`${notes.map((n) => `- ${n}`).join('\n')}\n\n`);
log(`wrote ${relative(ROOT, resultPath)} (${result.seconds} s in all; load average ${loadBefore} → ${result.loadavgAfter})`);

if (writeDoc) {
  const ct = result.conntrack;
const ctLine = ct && !ct.error ? `Connection tracking: a generated \`conntrack -L\` of ${ct.entries.toLocaleString('en')} entries (${Math.round(ct.bytes / 1048576)} MiB) streamed into kpx's table in ${ct.wallS.toFixed(1)} s (load ${ct.loadS.toFixed(1)} s, kube-proxy's cleanup test ${ct.cleanupS.toFixed(2)} s), peak RSS ${ct.peakRssMiB} MiB.\n\n` : '';
const doc = `# kpx benchmark

Generated by \`npm run bench\` (\`node test/bench/run.mjs\`) on ${mach.date.slice(0, 10)}. Re-run it to refresh this page.

**Machine:** ${machineLine}.
Load average before / after the run: ${loadBefore} / ${result.loadavgAfter}.${result.noisy ? ` Note: ${result.noisy}.` : ''}

## What is measured

Dumps are made by kpx's own generator (\`src/generate\`, seed ${seed}, IPv4) in each proxy mode (${modes.join(', ')}) and cached
under \`build/bench/dumps/\` (keyed by mode, size, seed and a hash of the built generator). For each mode and size the
tasks below run interleaved (their order rotates each repetition; ${Object.entries(result.config.reps).map(([s, n]) => `${k(Number(s))}: ${n}×`).join(', ')}) and the
**median** is reported; ratios are taken per repetition (kpx and the other task in the same rotation) and given as
median (min–max). Wall times are taken around the child process (Node start-up included);
peak RSS is the child's ${result.config.rssBy}.

- **JS floor** — \`node test/bench/floor.mjs DUMP…\`: start Node, read the files, split them into lines.
- **scanner** (iptables mode) — \`node test/bench/scanner.mjs DUMP\`: one pass with indexOf, no grammar, no diagnostics,
  the same Service resolution (identity, VIP, node port, external/LB IPs, endpoints); checked equal to kpx's Services on the dump.
- **\`kpx services -i DUMP… -o json\`** — the built CLI, output to a file: parse, model, resolve, render. The inputs:
  iptables mode \`iptables-save.txt\`; nftables mode \`nft-ruleset.txt\` (\`nft list ruleset\`); IPVS mode
  \`ipvsadm-Ln.txt\`, \`ipset-list.txt\` and the \`iptables-save.txt\` IPVS mode keeps.
- **netfilter's tools**, inside a private network namespace: \`iptables-restore --test < DUMP\` (${mach.iptables ?? 'n/a'});
  \`nft -c -f nft-ruleset.txt\` (parses and checks the listing, commits nothing); for IPVS mode \`ipset restore\` of the
  same sets (ipvsadm has no check mode and this kernel has no IPVS: the sets are the part a tool can be timed on).
- **In-process phases** — \`test/bench/phases.mjs\` imports the dist modules and times each phase;
  then ${traces} traces (\`tracePacket\`, from a pod) to random Service VIPs from the generator's truth, after one load.
- **\`kpx lint -i DUMP -o json\`** — ${lintAvailable ? 'the built CLI' : 'not measured yet (the lint command is not built)'}.

## Results

${table}

In-process phases (seconds, medians):

${phasesMarkdown()}

Start-up on a small dump (\`${result.startup?.sample ?? 'n/a'}\`, ${result.startup?.sampleLines ?? '?'} lines): \`kpx services -o json\` ${fmtS(result.startup?.kpxServices)} s
(bare \`node -e ''\`: ${fmtS(result.startup?.nodeBare)} s).

Growth with the dump (t ∝ lines^b): ${result.scaling.map((x) => `${x.mode} ${k(x.from)}→${k(x.to)}: b = ${x.exponentLoadResolve ?? '—'} in-process load+resolve, ${x.exponentServicesWall ?? '—'} whole \`kpx services\``).join('; ') || 'one size only'}.

## Goals (issues 8 and 20)

${goalsMarkdown()}
${notes.length ? `\n## Notes\n\n${notes.map((n) => `- ${n}`).join('\n')}\n` : ''}${result.errors.length ? `\n## Errors during the run\n\n${result.errors.map((e) => `- ${e.replace(/\|/g, '\\|')}`).join('\n')}\n` : ''}
## Reproduce

\`\`\`sh
npm run build
npm run bench                                   # 1k, 10k, 30k Services, every mode
node test/bench/run.mjs --modes nftables --sizes 10000   # one mode, one size
node test/bench/run.mjs --sizes 1000,10000      # some sizes only
node test/bench/run.mjs --quick                 # smoke check of the script (CI)
node test/bench/profile.mjs --size 10000        # CPU profile of kpx services: top self-time functions
\`\`\`

${ctLine}Machine-readable figures: \`build/bench/result.json\`.
`;
  mkdirSync(join(ROOT, 'build', 'bench'), { recursive: true });
  writeFileSync(join(ROOT, 'build', 'bench', 'bench.md'), doc);
  log('wrote build/bench/bench.md');
}

if (result.errors.length) {
  log(`${result.errors.length} error(s):\n  ${result.errors.join('\n  ')}`);
  process.exitCode = 1;
}
if (flag('check') && result.goals.some((g) => g.met === false)) {
  log('--check: some issue-8 goals are not met');
  process.exitCode = 1;
}
