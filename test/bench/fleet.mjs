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
 *                             [--compare-only] [--in-process] [--sizes 100,300,1000] [--vs OTHER_CLI] [--prepare-only]
 *                             [--clone-from K]
 *
 * --compare-only: keep the summaries and per-node figures of the last run (build/bench/fleet.json)
 * and measure the comparison again (after a change to the reading side).
 * --in-process: make the summaries in this process (the CLI's summarize steps, imported from dist/):
 * a fleet of 1,000 nodes summarised one process at a time costs 1,000 Node starts. The first two
 * summaries are also made with the CLI and must be the same bytes.
 * --sizes: compare over the first N summaries (by node name) for each N, summaries only (no raw
 * dumps: `--nodes` over 1,000 nodes' raw dumps is not the recipe); with --vs, each size is run
 * with this build (A) and OTHER_CLI (B, e.g. an older build's dist/src/cli/main.js) interleaved,
 * and both must print the same bytes.
 *   node test/bench/fleet.mjs --nodes 1000 --services 300 --in-process --sizes 100,300,1000 --vs ../base/dist/src/cli/main.js
 * --clone-from K: only the first K nodes are summarised; node i ≥ K gets a copy of node (i mod K)'s
 * summary under its own name (same size and shape: what the comparison reads; but each copy claims
 * the template's pods, so ownership ties and endpoints are local on several nodes). For when
 * summarising 1,000 nodes takes longer than the measurement (1.8 s of CPU per 300-Service node).
 *
 * Writes build/bench/fleet.json and prints a markdown table. Runs against the BUILT dist/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
const inProcess = argv.includes('--in-process');
const sizes = value('sizes', undefined)?.split(',').map(Number);
const other = value('vs', undefined);
const cloneFrom = value('clone-from', undefined) === undefined ? undefined : Number(value('clone-from', undefined));
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
    for (const f of readdirSync(join(raw, n))) if (f !== 'truth.json') linkSync(join(raw, n, f), join(rawNodes, n, f));
  }
}

// Each node: kpx summarize (as it would run on the node).
mkdirSync(sums, { recursive: true });
const previous = compareOnly && existsSync(join(BENCH_DIR, 'fleet.json')) ? JSON.parse(readFileSync(join(BENCH_DIR, 'fleet.json'), 'utf8')) : undefined;
if (compareOnly && !(previous?.perNodeRaw?.length === names.length && names.every((n) => existsSync(join(sums, `${n}.json`)))))
  throw new Error('--compare-only: no summaries of every node from an earlier run of this cluster');
const perNode = previous?.perNodeRaw ?? [];
const summarizer = inProcess && !compareOnly ? await inProcessSummarizer() : undefined;
for (const [i, n] of (compareOnly ? [] : names).entries()) {
  const out = join(sums, `${n}.json`);
  // --sizes measures the comparison: summaries made by an earlier run are kept.
  if (sizes && existsSync(out) && statSync(out).size > 0) continue;
  if (cloneFrom !== undefined && i >= cloneFrom) {
    // A copy of a real summary under this node's name: the same size and shape, made in no time.
    const template = names[i % cloneFrom];
    const text = readFileSync(join(sums, `${template}.json`), 'utf8');
    writeFileSync(out, text.replace(`"node":${JSON.stringify(template)}`, `"node":${JSON.stringify(n)}`));
    continue;
  }
  if (summarizer) {
    const t0 = performance.now();
    writeFileSync(out, await summarizer(join(rawNodes, n)));
    const bytes = statSync(out).size;
    perNode.push({ node: n, wall: (performance.now() - t0) / 1000, cpu: NaN, rssKiB: NaN, bytes, gzipBytes: gzipSync(readFileSync(out)).length, dumpBytes: dirBytes(join(rawNodes, n)) });
    if (i < 2) {
      // The in-process summary must be the CLI's, byte for byte.
      const r = spawnSync(NODE, [CLI, 'summarize', '-i', join(rawNodes, n), '-o', 'json'], { maxBuffer: 1 << 30 });
      if (r.status !== 0 || !readFileSync(out).equals(r.stdout)) throw new Error(`--in-process: the summary of ${n} differs from \`kpx summarize\``);
    }
    if (i % 100 === 99) log(`  summarized ${i + 1}/${names.length} nodes in this process`);
    continue;
  }
  const r = await measure(NODE, [CLI, 'summarize', '-i', join(rawNodes, n), '-o', 'json'], { stdout: out });
  if (r.status !== 0) throw new Error(`summarize ${n} exited ${r.status}: ${r.stderr}`);
  const bytes = statSync(out).size;
  perNode.push({ node: n, wall: r.wall, cpu: r.cpu, rssKiB: r.rssKiB, bytes, gzipBytes: gzipSync(readFileSync(out)).length, dumpBytes: dirBytes(join(rawNodes, n)) });
  if (i % 10 === 9) log(`  summarized ${i + 1}/${names.length} nodes (last: ${r.wall.toFixed(2)} s, ${Math.round(r.rssKiB / 1024)} MiB, ${Math.round(bytes / 1024)} KiB)`);
}

if (argv.includes('--prepare-only')) process.exit(0);
if (sizes) {
  await compareSizes();
  process.exit(process.exitCode ?? 0);
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

/**
 * `kpx summarize -o json`'s steps in this process, from the built dist/ (src/cli/commands/summarize.ts):
 * load the node folder, resolve and judge, lint, the summary as one JSON line.
 */
async function inProcessSummarizer() {
  const imp = (rel) => import(pathToFileURL(join(CLI, '..', '..', rel)).href);
  const { loadSnapshot } = await imp('load/snapshot.js');
  const { resolveJudged } = await imp('judge/index.js');
  const { lintSnapshot } = await imp('lint/run.js');
  const { proxyModes } = await imp('kube/modes.js');
  const { nodeSummary } = await imp('cluster/summary.js');
  const { renderJsonLine } = await imp('render/json.js');
  const { VERSION } = await imp('version.js');
  return async (dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const snapshot = await loadSnapshot([dir], { name: manifest.host, nodeIps: [] });
    const resolution = await resolveJudged(snapshot);
    const linted = (await lintSnapshot(snapshot, {})).findings;
    const findings = (ref) =>
      linted.map((f) => ({ ruleId: f.ruleId, severity: f.severity, message: f.message, ...(f.service !== undefined ? { service: f.service } : {}), fingerprint: f.fingerprint, evidence: [...(f.line > 0 ? [ref(f)] : []), ...(f.related ?? []).map(ref)] }));
    return renderJsonLine(nodeSummary({ node: snapshot.name, kpxVersion: VERSION, snapshot, resolution, modes: proxyModes(snapshot), findings }));
  };
}

/** `services --nodes -o json` over the first N summaries, for each N of --sizes; this build (A) and --vs (B) interleaved. */
async function compareSizes() {
  const rows = [];
  for (const size of sizes) {
    const dir = join(root, `summaries-first${size}`);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      for (const n of names.slice(0, size)) linkSync(join(sums, `${n}.json`), join(dir, `${n}.json`));
    }
    const builds = other ? [['A', CLI], ['B', other]] : [['A', CLI]];
    const runsBy = { A: [], B: [] };
    for (let rep = 0; rep < reps; rep++) {
      for (const [id, cli] of rep % 2 === 0 ? builds : [...builds].reverse()) {
        const out = join(root, `compare-first${size}-${id}.json`);
        const r = await measure(NODE, [cli, 'services', '--nodes', '-i', dir, '-o', 'json'], { stdout: out });
        if (r.status !== 0) throw new Error(`services --nodes (${id}) over ${size} summaries exited ${r.status}: ${r.stderr}`);
        runsBy[id].push(r);
        log(`  ${size} summaries, rep ${rep + 1}/${reps}, ${id}: ${r.wall.toFixed(2)} s wall, ${r.cpu.toFixed(2)} s CPU, ${Math.round(r.rssKiB / 1024)} MiB; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
      }
    }
    const same = other ? readFileSync(join(root, `compare-first${size}-A.json`)).equals(readFileSync(join(root, `compare-first${size}-B.json`))) : null;
    if (same === false) process.exitCode = 1;
    const fig = (rs) => ({ seconds: median(rs.map((r) => r.wall)), cpuSeconds: median(rs.map((r) => r.cpu)), rssMiB: round(Math.max(...rs.map((r) => r.rssKiB)) / 1024, 0) });
    rows.push({ summaries: size, A: fig(runsBy.A), ...(other ? { B: fig(runsBy.B), identical: same } : {}), outputMiB: round(statSync(join(root, `compare-first${size}-A.json`)).size / 1048576, 1) });
  }
  const result = { machine: machine(), services, mode, reps, ...(cloneFrom !== undefined ? { realSummaries: cloneFrom, clonedSummaries: Math.max(0, names.length - cloneFrom) } : {}), A: CLI, ...(other ? { B: other } : {}), rows, loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') };
  writeFileSync(join(BENCH_DIR, 'fleet-sizes.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\n| summaries | A seconds (CPU) | A peak RSS MiB |${other ? ' B seconds (CPU) | B peak RSS MiB | same bytes |' : ''}\n|---|---|---|${other ? '---|---|---|' : ''}\n`);
  for (const r of rows) process.stdout.write(`| ${r.summaries} | ${round(r.A.seconds, 2)} (${round(r.A.cpuSeconds, 2)}) | ${r.A.rssMiB} |${other ? ` ${round(r.B.seconds, 2)} (${round(r.B.cpuSeconds, 2)}) | ${r.B.rssMiB} | ${r.identical} |` : ''}\n`);
}
