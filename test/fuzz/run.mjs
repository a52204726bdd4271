#!/usr/bin/env node
/**
 * kpx fuzz run (issue 34): `npm run fuzz -- --cases 10000` (after `npm run build`).
 *
 * Cases are real dumps mutated by a seeded generator (cases.mjs) — the repo's samples and real
 * pastes (samples/, test/fixtures/) and the shared corpus when present (--corpus DIR, default
 * /work/shared/corpus) — each run through a kpx command in-process in a pool of worker threads
 * (--workers, default 1). A case that takes longer than --timeout ms is a hang: its worker is
 * terminated and replaced. The run reports crashes, hangs, raw control characters on stdout or
 * stderr and unparsable JSON/SARIF/YAML, each with the seed and index to replay it
 * (`--only N` prints that case's input path, output and problems).
 *
 * Slices: `--start K --cases N` runs cases K … K+N-1 of the seed, so CI can run the run in pieces.
 * Exit 0: no problem; 1: problems found.
 */
import { Worker } from 'node:worker_threads';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { seeds } from './cases.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values: opt } = parseArgs({
  options: {
    cases: { type: 'string', default: '10000' },
    start: { type: 'string', default: '0' },
    seed: { type: 'string', default: '34' },
    workers: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '30000' },
    corpus: { type: 'string', default: process.env.KPX_CORPUS ?? '/work/shared/corpus' },
    'no-corpus': { type: 'boolean', default: false },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const int = (name) => {
  const n = Number(opt[name]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: not a whole number: ${opt[name]}`);
  return n;
};
const seed = int('seed');
const timeoutMs = int('timeout');
const roots = [join(ROOT, 'samples'), join(ROOT, 'test/fixtures'), ...(!opt['no-corpus'] && existsSync(opt.corpus) ? [opt.corpus] : [])];
const pool = seeds(roots);
const indexes = opt.only !== undefined ? [int('only')] : Array.from({ length: int('cases') }, (_, i) => int('start') + i);
const workers = Math.max(1, Math.min(int('workers'), indexes.length));
const dist = join(ROOT, 'dist');
if (!existsSync(join(dist, 'src/cli/main.js'))) {
  process.stderr.write('kpx fuzz: dist/ is missing: npm run build first\n');
  process.exit(2);
}
const tmp = mkdtempSync(join(tmpdir(), 'kpx-fuzz-'));
const RECYCLE_AFTER = 500; // a fresh worker now and then: what one case leaks cannot add up

const results = [];
const problems = [];
const started = performance.now();
let next = 0;

function record(r) {
  results.push(r);
  for (const p of r.problems) problems.push({ ...p, case: r });
  if (!opt.json && results.length % 500 === 0) {
    process.stderr.write(`kpx fuzz: ${results.length}/${indexes.length} cases, ${problems.length} problems, ${Math.round((performance.now() - started) / 1000)} s\n`);
  }
}

function lane() {
  return new Promise((resolveLane) => {
    let worker;
    let current;
    let timer;
    let served = 0;
    const spawn = () => {
      served = 0;
      worker = new Worker(new URL('./worker.mjs', import.meta.url), {
        workerData: { dist, roots, seed, tmp, keepOutput: opt.only !== undefined },
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', COLUMNS: '120' },
        resourceLimits: { maxOldGenerationSizeMb: 1536 },
        stdout: true,
        stderr: true,
      });
      worker.on('message', (m) => {
        if (m !== 'ready') {
          clearTimeout(timer);
          record(m);
          current = undefined;
          if (++served >= RECYCLE_AFTER) return void worker.terminate(); // its exit starts the next one
        }
        feed();
      });
      worker.on('error', (e) => {
        // The worker died in a case (out of memory, an exception outside the command): a crash.
        clearTimeout(timer);
        if (current !== undefined) record({ index: current, problems: [{ kind: 'crash', detail: `worker died: ${String(e?.message ?? e).slice(0, 300)}` }] });
        current = undefined;
      });
      worker.on('exit', (code) => {
        clearTimeout(timer);
        if (current !== undefined) {
          // process.exit() inside a command ends only the worker: a command must return its code.
          record({ index: current, problems: [{ kind: 'crash', detail: `the command called process.exit(${code})` }] });
          current = undefined;
        }
        if (next < indexes.length) spawn();
        else if (next >= indexes.length) resolveLane();
      });
    };
    const feed = () => {
      if (next >= indexes.length) return void worker.terminate();
      current = indexes[next++];
      const index = current;
      timer = setTimeout(() => {
        record({ index, problems: [{ kind: 'hang', detail: `no answer in ${timeoutMs} ms` }] });
        current = undefined;
        void worker.terminate();
      }, timeoutMs);
      worker.postMessage(index);
    };
    spawn();
  });
}

await Promise.all(Array.from({ length: workers }, lane));
rmSync(tmp, { recursive: true, force: true });
const seconds = Math.round((performance.now() - started) / 1000);

const count = (kind) => problems.filter((p) => p.kind === kind).length;
const codes = {};
for (const r of results) if (r.code !== undefined) codes[r.code] = (codes[r.code] ?? 0) + 1;
const commands = [...new Set(results.map((r) => r.command).filter(Boolean))].sort();
const summary = {
  cases: results.length,
  seed,
  start: int('start'),
  seedFiles: pool.files.length,
  bundles: pool.bundles.length,
  corpus: roots.length > 2,
  crashes: count('crash'),
  hangs: count('hang'),
  controls: count('control'),
  unparsable: count('unparsable'),
  exitCodes: codes,
  commands,
  seconds,
};

if (opt.only !== undefined) {
  const r = results[0];
  process.stdout.write(`${JSON.stringify({ ...r, stdout: undefined, stderr: undefined }, null, 2)}\n--- stdout\n${JSON.stringify(r.stdout ?? '').slice(0, 4000)}\n--- stderr\n${JSON.stringify(r.stderr ?? '').slice(0, 4000)}\n`);
} else if (opt.json) process.stdout.write(JSON.stringify({ ...summary, problems: problems.slice(0, 50) }) + '\n');
else {
  for (const p of problems.slice(0, 50)) {
    const c = p.case;
    process.stdout.write(`case ${c.index} (seed ${seed}): ${p.kind}: kpx ${c.command ?? '?'} ${(c.args ?? []).join(' ')} -o ${c.output ?? '?'} on ${c.bundle ? `${c.bundle} with ${c.name}` : (c.name ?? '?')} from ${c.from ?? '?'}: ${p.detail}\n  replay: node test/fuzz/run.mjs --seed ${seed} --only ${c.index}\n`);
  }
  process.stdout.write(
    `kpx fuzz: ${summary.cases} cases (seed ${seed}, from ${summary.start}; ${summary.seedFiles} seed files${summary.corpus ? ' incl. the corpus' : ''}, ${summary.bundles} bundles; ${commands.length} commands), ` +
      `${summary.crashes} crashes, ${summary.hangs} hangs, ${summary.controls} raw control characters, ${summary.unparsable} unparsable JSON/SARIF/YAML; ` +
      `exit codes ${Object.entries(codes).map(([k, v]) => `${k}: ${v}`).join(', ')}; ${seconds} s\n`,
  );
}
process.exitCode = problems.length ? 1 : 0;
