#!/usr/bin/env node
/**
 * Byte-identical outputs across a performance change (issue 20): runs the built CLI over the
 * samples and generated dumps of every proxy mode — `services` (JSON and text), `trace` (JSON and
 * text) to some Service VIPs, `lint` (JSON and text), `dump` (iptables-save round trip and JSON
 * model), `inspect -o json` — and writes each command's stdout, stderr and exit code to a folder.
 * Run it before a change (`--out A`), build the change, run it again (`--out B --against A`):
 * every file must be identical, else the list of differing commands is printed and it exits 1.
 *
 *   node test/bench/outputs.mjs --out DIR [--against DIR] [--sizes 300,10000] [--jobs 2] [--cli PATH]
 *                               [--all [--corpus DIR]] [--only REGEX]
 *
 * --all (issue 32: a restructuring changes no output): also every other command on the samples
 * (services wide/yaml/--service, graph DOT and Mermaid, reverse, summarize, migrate-check, diff of
 * sample pairs, inspect text), a generated cluster bundle (services --nodes, trace --node), the
 * pastes under test/fixtures, and with --corpus (default ../shared/corpus when present) every
 * corpus dump. Off by default, so that earlier reference folders stay comparable.
 *
 * --cli: another build of kpx (e.g. a copy of dist/ made before the change, kept inside the
 * repository so that it finds node_modules): `--cli build/dist-before/src/cli/main.js`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, MODES, NODE, ROOT, ensureDump, log, requireDist } from './lib.mjs';

const argv = process.argv.slice(2);
const value = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
};
const out = value('out');
if (!out) {
  process.stderr.write('usage: node test/bench/outputs.mjs --out DIR [--against DIR] [--sizes 300,10000] [--jobs 2]\n');
  process.exit(2);
}
const against = value('against');
const sizes = (value('sizes') ?? '300').split(',').map(Number);
const jobs = Number(value('jobs') ?? '2');
const cli = value('cli') ?? CLI;
const all = argv.includes('--all');
const corpusDir = value('corpus') ?? join(ROOT, '..', 'shared', 'corpus');
requireDist();

/** Up to four Service VIPs (with port/protocol) named in a generator truth file or a services JSON. */
function destinations(servicesJsonPath) {
  if (!existsSync(servicesJsonPath)) return [];
  const list = JSON.parse(readFileSync(servicesJsonPath, 'utf8')).services ?? [];
  const picked = [];
  const step = Math.max(1, Math.floor(list.length / 4));
  for (let i = 0; i < list.length && picked.length < 4; i += step) {
    const s = list[i];
    if (s.clusterIP) picked.push(`${s.clusterIP.includes(':') ? `[${s.clusterIP}]` : s.clusterIP}:${s.port}/${s.protocol}`);
  }
  return picked;
}

/** [name, inputs (-i …), servicesJson for destinations, dump file for `kpx dump`] */
const cases = [];
for (const s of ['iptables-mode-kind', 'iptables-mode-node', 'nftables-mode-node', 'ipvs-mode-node']) {
  const dir = join(ROOT, 'samples', s);
  if (existsSync(dir)) cases.push({ name: s, inputs: ['-i', dir], truth: join(ROOT, 'samples', `${s}.truth.json`), dump: existsSync(join(dir, 'iptables-save.txt')) ? join(dir, 'iptables-save.txt') : undefined });
}
for (const mode of MODES)
  for (const size of sizes) {
    const d = ensureDump(size, 1, mode);
    cases.push({ name: `${mode}-${size}`, inputs: [...d.files.flatMap((f) => ['-i', f]), '-i', join(d.dir, 'ip-addr.txt'), '-i', join(d.dir, 'ip-route.txt')], truth: join(d.dir, 'truth.json'), dump: mode === 'iptables' ? d.file : undefined });
  }

const commands = [];
for (const c of cases) {
  const add = (id, args) => commands.push({ id: `${c.name}__${id}`, args });
  add('services.json', ['services', ...c.inputs, '-o', 'json']);
  add('services.txt', ['services', ...c.inputs]);
  add('lint.json', ['lint', ...c.inputs, '-o', 'json', '--fail-on', 'never']);
  add('lint.txt', ['lint', ...c.inputs, '--fail-on', 'never']);
  add('inspect.json', ['inspect', ...c.inputs, '-o', 'json']);
  destinations(c.truth).forEach((d, i) => {
    add(`trace${i}.json`, ['trace', d, ...c.inputs, '-o', 'json']);
    add(`trace${i}.txt`, ['trace', d, ...c.inputs]);
  });
  if (c.dump) {
    add('dump.txt', ['dump', c.dump]);
    add('dump.json', ['dump', c.dump, '-o', 'json']);
  }
}

if (all) addEverything();
// --only REGEX: just the commands whose id matches (to add a few to a reference folder, or re-check them).
const only = value('only');
if (only !== undefined) commands.splice(0, commands.length, ...commands.filter((c) => new RegExp(only).test(c.id)));

/** Files under dir (recursively), sorted, without provenance notes and READMEs. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  const found = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) found.push(...filesUnder(p));
    else if (!/\.(source|md)$/.test(e.name)) found.push(p);
  }
  return found;
}

function addEverything() {
  const add = (id, args, env) => commands.push({ id, args, env });
  const sample = (s) => join(ROOT, 'samples', s);
  for (const s of ['iptables-mode-kind', 'iptables-mode-node', 'nftables-mode-node', 'ipvs-mode-node']) {
    const inputs = ['-i', sample(s)];
    add(`${s}__services.wide`, ['services', ...inputs, '-o', 'wide']);
    add(`${s}__services.yaml`, ['services', ...inputs, '-o', 'yaml']);
    add(`${s}__services.80`, ['services', ...inputs], { COLUMNS: '80' });
    add(`${s}__lint.80`, ['lint', ...inputs, '--fail-on', 'never'], { COLUMNS: '80' });
    add(`${s}__inspect.txt`, ['inspect', ...inputs]);
    add(`${s}__summarize.json`, ['summarize', ...inputs]);
    add(`${s}__migrate.txt`, ['migrate-check', ...inputs, '--fail-on', 'never']);
    add(`${s}__migrate.json`, ['migrate-check', ...inputs, '-o', 'json', '--fail-on', 'never']);
    add(`${s}__lint.sarif`, ['lint', ...inputs, '-o', 'sarif', '--fail-on', 'never']);
    add(`${s}__graph.dot`, ['graph', ...inputs]);
    add(`${s}__graph.mermaid`, ['graph', ...inputs, '--format', 'mermaid']);
    add(`${s}__services.missing`, ['services', ...inputs, '--service', 'kube-system/kube-dnz']);
    add(`${s}__trace.missing`, ['trace', '10.96.0.11:53/udp', ...inputs]);
    const truth = join(ROOT, 'samples', `${s}.truth.json`);
    destinations(truth).forEach((d, i) => {
      add(`${s}__service${i}.txt`, ['services', ...inputs, '--service', d]);
      add(`${s}__graph${i}.dot`, ['graph', ...inputs, '--service', d]);
    });
    for (const ep of endpointsOf(truth).slice(0, 2)) {
      add(`${s}__reverse-${ep}.txt`, ['reverse', ep, ...inputs]);
      add(`${s}__reverse-${ep}.json`, ['reverse', ep, ...inputs, '-o', 'json']);
    }
  }
  for (const [a, b] of [['iptables-mode-node', 'iptables-mode-kind'], ['iptables-mode-node', 'nftables-mode-node'], ['ipvs-mode-node', 'iptables-mode-node']]) {
    add(`diff-${a}-${b}.txt`, ['diff', sample(a), sample(b)]);
    add(`diff-${a}-${b}.json`, ['diff', sample(a), sample(b), '-o', 'json']);
  }
  const cluster = ensureCluster();
  if (cluster) {
    add('cluster__services-nodes.txt', ['services', '--nodes', '-i', cluster]);
    add('cluster__services-nodes-all.json', ['services', '--nodes', '--all', '-i', cluster, '-o', 'json']);
    const nodes = readdirSync(cluster, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    const d = destinations(join(cluster, nodes[0] ?? '', 'truth.json'))[0];
    if (d && nodes[0]) {
      add('cluster__trace-node.txt', ['trace', d, '-i', cluster, '--node', nodes[0]]);
      add('cluster__trace-node.json', ['trace', d, '-i', cluster, '--node', nodes[0], '-o', 'json']);
    }
  }
  const perFile = (prefix, file) => {
    const inputs = ['-i', file];
    add(`${prefix}__inspect.json`, ['inspect', ...inputs, '-o', 'json']);
    add(`${prefix}__services.json`, ['services', ...inputs, '-o', 'json']);
    add(`${prefix}__services.txt`, ['services', ...inputs]);
    add(`${prefix}__lint.txt`, ['lint', ...inputs, '--fail-on', 'never']);
  };
  const fixtures = join(ROOT, 'test', 'fixtures');
  for (const f of filesUnder(fixtures).filter((p) => /pastes\//.test(p))) perFile(`fixture-${f.slice(fixtures.length + 1).replace(/\//g, '~')}`, f);
  for (const f of filesUnder(corpusDir).filter((p) => !p.includes('iptables-extension-tests/') || p.includes('save-dumps/'))) {
    perFile(`corpus-${f.slice(corpusDir.length + 1).replace(/\//g, '~')}`, f);
    add(`corpus-${f.slice(corpusDir.length + 1).replace(/\//g, '~')}__dump.txt`, ['dump', f]);
  }
}

/** Up to a few endpoint addresses in a truth file (for reverse lookups). */
function endpointsOf(truthPath) {
  if (!existsSync(truthPath)) return [];
  const seen = new Set();
  for (const s of JSON.parse(readFileSync(truthPath, 'utf8')).services ?? [])
    for (const e of s.endpoints ?? []) if (typeof (e.ip ?? e.address) === 'string') seen.add(e.ip ?? e.address);
  return [...seen].sort();
}

/** A generated 3-node cluster bundle (one folder per node, API objects with drift), made once under build/bench. */
function ensureCluster() {
  const dir = join(ROOT, 'build', 'bench', 'outputs-cluster');
  if (!existsSync(join(dir, 'done'))) {
    const gen = (f) => JSON.stringify(pathToFileURL(join(ROOT, 'build', 'tools', 'src', 'generate', f)).href);
    const script = `const { generateCluster } = await import(${gen('cluster.js')});
      const { writeClusterBundle } = await import(${gen('cluster-bundle.js')});
      writeClusterBundle(generateCluster({ seed: 3, services: 60, nodes: 3 }), 'iptables', ${JSON.stringify(dir)}, { api: { drift: ['endpoint-stale', 'traffic-policy'] } });`;
    const r = spawnSync(NODE, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    if (r.status !== 0) {
      log(`no cluster bundle: ${r.stderr.trim()}`);
      return undefined;
    }
    writeFileSync(join(dir, 'done'), '');
  }
  return dir;
}

function run(cmd) {
  return new Promise((res) => {
    const child = spawn(NODE, [cli, ...cmd.args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...cmd.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const so = [];
    const se = [];
    child.stdout.on('data', (d) => so.push(d));
    child.stderr.on('data', (d) => se.push(d));
    child.on('close', (code) => res({ stdout: Buffer.concat(so), stderr: Buffer.concat(se), code }));
  });
}

mkdirSync(out, { recursive: true });
log(`${commands.length} commands over ${cases.length} inputs → ${out}`);
let next = 0;
await Promise.all(
  Array.from({ length: jobs }, async () => {
    while (next < commands.length) {
      const cmd = commands[next++];
      const r = await run(cmd);
      writeFileSync(join(out, `${cmd.id}.out`), r.stdout);
      writeFileSync(join(out, `${cmd.id}.err`), r.stderr);
      writeFileSync(join(out, `${cmd.id}.code`), `${r.code}\n${cmd.args.join(' ')}\n`);
    }
  }),
);

if (against) {
  // This run's files, each compared with the earlier run's (which may cover more inputs or sizes).
  const names = new Set(readdirSync(out));
  const differ = [];
  for (const n of [...names].sort()) {
    const a = join(against, n);
    const b = join(out, n);
    if (!existsSync(a) || !existsSync(b) || !readFileSync(a).equals(readFileSync(b))) differ.push(n);
  }
  if (differ.length) {
    process.stdout.write(`${differ.length} of ${names.size} files differ:\n${differ.map((d) => `  ${d}`).join('\n')}\n`);
    process.exitCode = 1;
  } else process.stdout.write(`all ${names.size} files identical (${commands.length} commands: stdout, stderr, exit code)\n`);
}
