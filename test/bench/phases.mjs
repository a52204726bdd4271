/**
 * kpx in one process, phase by phase, through the built dist/ modules:
 *   import (kpx's own modules) → parser-load (the iptables-save parser module: Chevrotain and the
 *   grammar) → read → parse (sniffing its head first) → assemble → resolve → render (services JSON)
 * then, after that one load, N traces to random Service VIPs taken from the generator's ground
 * truth (truth.json), each timed on its own.
 *
 *   node phases.mjs --dir BUNDLE_DIR [--traces 100] [--seed 1]
 *
 * Prints one JSON object on stdout (times in seconds, trace times in milliseconds).
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DIST, percentile, median, rng, round } from './lib.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const dir = opt('dir');
if (!dir) {
  process.stderr.write('usage: phases.mjs --dir BUNDLE_DIR [--traces N] [--seed S]\n');
  process.exit(2);
}
const nTraces = Number(opt('traces', '100'));
const seed = Number(opt('seed', '1'));
const mod = (p) => import(pathToFileURL(join(DIST, p)).href);

const phases = {};
let t = performance.now();
const lap = (name) => {
  const now = performance.now();
  phases[name] = round((now - t) / 1000, 4);
  t = now;
};

const [loadIndex, registry, snapshotMod, resolveMod, renderServices, jsonStream, traceMod, packetMod] = await Promise.all([
  mod('src/load/index.js'),
  mod('src/load/registry.js'),
  mod('src/load/snapshot.js'),
  mod('src/kube/resolve.js'),
  mod('src/render/services.js'),
  mod('src/render/json-stream.js'),
  mod('src/trace/trace.js'),
  mod('src/trace/packet.js'),
]);
lap('import');
await registry.parserFor('iptables-save');
lap('parserLoad');

const iptPath = join(dir, 'iptables-save.txt');
const [input] = loadIndex.readInputs([iptPath]);
lap('read');
// The input layer streams the file: its head is sniffed, then the rest is parsed as it is read.
const parsed = await loadIndex.parseInput(input);
if (parsed.format !== 'iptables-save') throw new Error(`sniffed ${parsed.format} for ${iptPath}`);
lap('parse');
const snapshot = snapshotMod.assembleSnapshot([parsed]);
lap('assemble');
const res = await resolveMod.resolveServices(snapshot);
lap('resolve');
// As `kpx services -o json` renders: Service ports turned into their printed form a slice at a time.
let jsonLength = 0;
jsonStream.writeJson({ services: res.services, others: res.others, problems: res.problems }, (text) => (jsonLength += text.length), {
  services: (s) => renderServices.serviceJson(s, false),
});
lap('render');
const heapAfterLoadMiB = round(process.memoryUsage().heapUsed / 1048576, 1);

// Traces want the node's addresses and routes too: parse the small ip-addr / ip-route files
// of the bundle (timed apart) and assemble a second snapshot sharing the parsed iptables-save.
const auxFiles = ['ip-addr.txt', 'ip-route.txt'].map((n) => join(dir, n)).filter((p) => existsSync(p));
const aux = [];
for (const raw of loadIndex.readInputs(auxFiles)) aux.push(await loadIndex.parseInput(raw));
const traceSnapshot = snapshotMod.assembleSnapshot([parsed, ...aux]);
lap('auxLoad');

const truth = JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')).services;
const random = rng(seed);
const picks = [];
for (let i = 0; i < nTraces && truth.length > 0; i++) picks.push(truth[Math.floor(random() * truth.length)]);
t = performance.now();

const traceMs = [];
let reachedEndpoint = 0;
let withEndpoints = 0;
let failures = 0;
const failureSamples = [];
for (const s of picks) {
  const host = s.clusterIP.includes(':') ? `[${s.clusterIP}]` : s.clusterIP;
  const dest = packetMod.parseDestination(`${host}:${s.port}/${s.protocol}`);
  const t0 = performance.now();
  let trace;
  try {
    trace = traceMod.tracePacket(traceSnapshot, res, dest, s.protocol, { from: 'pod', assumptions: { established: false, affinityHit: false } });
  } catch (e) {
    failures++;
    if (failureSamples.length < 3) failureSamples.push(`${host}:${s.port}/${s.protocol}: ${e.message}`);
    continue;
  }
  traceMs.push(performance.now() - t0);
  // Sanity: a pod's packet to a Service with endpoints (internal policy Cluster) must be DNATed to one of them.
  if (s.endpoints.length > 0 && s.internalTrafficPolicy === 'Cluster') {
    withEndpoints++;
    const eps = new Set(s.endpoints.map((e) => `${e.ip.includes(':') ? `[${e.ip}]` : e.ip}:${e.port}`));
    if (trace.outcomes.some((o) => eps.has(o.destination))) reachedEndpoint++;
  }
}

process.stdout.write(
  `${JSON.stringify({
    phases,
    loadResolve: round(phases.read + phases.parse + phases.assemble + phases.resolve, 4),
    servicePorts: res.services.length,
    jsonBytes: jsonLength,
    diagnostics: parsed.diagnostics.length,
    diagnosticsBySeverity: parsed.diagnostics.reduce((m, d) => ((m[d.severity] = (m[d.severity] ?? 0) + 1), m), {}),
    heapAfterLoadMiB,
    maxRssKiB: process.resourceUsage().maxRSS,
    trace: {
      count: traceMs.length,
      failures,
      failureSamples,
      firstMs: round(traceMs[0] ?? NaN, 3),
      medianMs: round(median(traceMs), 3),
      p95Ms: round(percentile(traceMs, 95), 3),
      maxMs: round(Math.max(...traceMs), 3),
      withEndpoints,
      reachedEndpoint,
    },
  })}\n`,
);
