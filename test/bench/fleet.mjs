#!/usr/bin/env node
/**
 * Fleets (issue 20): a generated cluster of N nodes (default 100), each node's dumps as
 * `kpx collect` would write them, then
 *   - `kpx summarize -i NODE -o json` on every node, one after the other (what each node pays when
 *     kpx runs on it: wall time, peak RSS, the summary's size raw and gzipped),
 *   - `kpx services --nodes -o json` over the summaries and over the raw dumps, interleaved
 *     (A B A B…), wall time and peak RSS, and a check that both say the same, byte for byte.
 *
 *   node test/bench/fleet.mjs [--nodes 100] [--services 1000] [--mode iptables] [--reps 2] [--seed 1]
 *                             [--compare-only]
 *
 * --compare-only: keep the summaries and per-node figures of the last run (build/bench/fleet.json)
 * and measure the comparison again (after a change to the reading side).
 *
 * Writes build/bench/fleet.json and prints a markdown table. Runs against the BUILT dist/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, CLI, GENERATOR_DIR, NODE, generatorHash, log, machine, measure, median, requireDist, round } from './lib.mjs';

const argv = process.argv.slice(2);
const value = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? dflt : argv[i + 1];
};
const nodes = Number(value('nodes', '100'));
const services = Number(value('services', '1000'));
const mode = value('mode', 'iptables');
const reps = Number(value('reps', '2'));
const seed = Number(value('seed', '1'));
const compareOnly = argv.includes('--compare-only');
requireDist();

const root = join(BENCH_DIR, 'fleet', `${mode}-svc${services}-nodes${nodes}-seed${seed}-gen${generatorHash()}`);
const raw = join(root, 'raw');
const sums = join(root, 'summaries');
if (!existsSync(join(root, 'done'))) {
  rmSync(root, { recursive: true, force: true });
  log(`generating a ${nodes}-node cluster (${services} Services, ${mode} mode) → ${root}`);
  const t0 = performance.now();
  const { generateCluster } = await import(pathToFileURL(join(GENERATOR_DIR, 'cluster.js')).href);
  const { writeClusterBundle } = await import(pathToFileURL(join(GENERATOR_DIR, 'cluster-bundle.js')).href);
  writeClusterBundle(generateCluster({ seed, services, nodes }), mode, raw);
  writeFileSync(join(root, 'done'), '');
  log(`  in ${round((performance.now() - t0) / 1000, 1)} s`);
}
const names = readdirSync(raw).sort();
const dirBytes = (d) => readdirSync(d).reduce((n, f) => n + statSync(join(d, f)).size, 0);
// Each node's folder as `kpx collect` writes it: the generator's answer key (truth.json) left out.
const rawNodes = join(root, 'raw-nodes');
if (!existsSync(rawNodes)) {
  for (const n of names) {
    mkdirSync(join(rawNodes, n), { recursive: true });
    for (const f of readdirSync(join(raw, n))) if (f !== 'truth.json') spawnSync('ln', [join(raw, n, f), join(rawNodes, n, f)]);
  }
}

// Each node: kpx summarize (as it would run on the node).
mkdirSync(sums, { recursive: true });
const previous = compareOnly && existsSync(join(BENCH_DIR, 'fleet.json')) ? JSON.parse(readFileSync(join(BENCH_DIR, 'fleet.json'), 'utf8')) : undefined;
if (compareOnly && !(previous?.perNodeRaw?.length === names.length && names.every((n) => existsSync(join(sums, `${n}.json`)))))
  throw new Error('--compare-only: no summaries of every node from an earlier run of this cluster');
const perNode = previous?.perNodeRaw ?? [];
for (const [i, n] of (compareOnly ? [] : names).entries()) {
  const out = join(sums, `${n}.json`);
  const r = await measure(NODE, [CLI, 'summarize', '-i', join(rawNodes, n), '-o', 'json'], { stdout: out });
  if (r.status !== 0) throw new Error(`summarize ${n} exited ${r.status}: ${r.stderr}`);
  const bytes = statSync(out).size;
  perNode.push({ node: n, wall: r.wall, cpu: r.cpu, rssKiB: r.rssKiB, bytes, gzipBytes: gzipSync(readFileSync(out)).length, dumpBytes: dirBytes(join(rawNodes, n)) });
  if (i % 10 === 9) log(`  summarized ${i + 1}/${names.length} nodes (last: ${r.wall.toFixed(2)} s, ${Math.round(r.rssKiB / 1024)} MiB, ${Math.round(bytes / 1024)} KiB)`);
}

// The comparison, interleaved: from the summaries (A) and from the raw dumps (B).
const runs = { summaries: [], raw: [] };
const outA = join(root, 'compare-summaries.json');
const outB = join(root, 'compare-raw.json');
for (let rep = 0; rep < reps; rep++) {
  for (const [id, dir, out] of rep % 2 === 0 ? [['summaries', sums, outA], ['raw', rawNodes, outB]] : [['raw', rawNodes, outB], ['summaries', sums, outA]]) {
    const r = await measure(NODE, [CLI, 'services', '--nodes', '-i', dir, '-o', 'json'], { stdout: out });
    if (r.status !== 0) throw new Error(`services --nodes over ${id} exited ${r.status}: ${r.stderr}`);
    runs[id].push(r);
    log(`  rep ${rep + 1}/${reps} services --nodes over ${id}: ${r.wall.toFixed(2)} s, ${Math.round(r.rssKiB / 1024)} MiB`);
  }
}
const same = readFileSync(outA).equals(readFileSync(outB));
const cmp = JSON.parse(readFileSync(outA, 'utf8'));

const med = (xs) => round(median(xs), 3);
const spread = (xs) => `${med(xs)} (${round(Math.min(...xs), 3)}–${round(Math.max(...xs), 3)})`;
const result = {
  machine: machine(),
  nodes: names.length,
  services,
  servicePorts: cmp.summary.servicePorts,
  mode,
  perNode: {
    summarizeSeconds: spread(perNode.map((x) => x.wall)),
    summarizeCpuSeconds: spread(perNode.map((x) => x.cpu)),
    summarizeRssMiB: spread(perNode.map((x) => x.rssKiB / 1024)),
    summaryKiB: spread(perNode.map((x) => x.bytes / 1024)),
    summaryGzipKiB: spread(perNode.map((x) => x.gzipBytes / 1024)),
    dumpKiB: spread(perNode.map((x) => x.dumpBytes / 1024)),
    summarizeSecondsTotal: round(perNode.reduce((n, x) => n + x.wall, 0), 1),
  },
  compare: {
    summaries: { seconds: spread(runs.summaries.map((r) => r.wall)), cpuSeconds: spread(runs.summaries.map((r) => r.cpu)), rssMiB: spread(runs.summaries.map((r) => r.rssKiB / 1024)) },
    raw: { seconds: spread(runs.raw.map((r) => r.wall)), cpuSeconds: spread(runs.raw.map((r) => r.cpu)), rssMiB: spread(runs.raw.map((r) => r.rssKiB / 1024)) },
    rawOverSummaries: spread(runs.raw.map((r, i) => r.wall / runs.summaries[i].wall)),
    rawOverSummariesCpu: spread(runs.raw.map((r, i) => r.cpu / runs.summaries[i].cpu)),
    identical: same,
  },
  totals: { summaryMiB: round(perNode.reduce((n, x) => n + x.bytes, 0) / 1048576, 1), dumpMiB: round(perNode.reduce((n, x) => n + x.dumpBytes, 0) / 1048576, 1) },
  loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
};
writeFileSync(join(BENCH_DIR, 'fleet.json'), `${JSON.stringify({ ...result, perNodeRaw: perNode }, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
if (!same) {
  log('services --nodes over the summaries and over the raw dumps differ');
  process.exitCode = 1;
}
