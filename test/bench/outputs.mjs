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
 *
 * --cli: another build of kpx (e.g. a copy of dist/ made before the change, kept inside the
 * repository so that it finds node_modules): `--cli build/dist-before/src/cli/main.js`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

function run(cmd) {
  return new Promise((res) => {
    const child = spawn(NODE, [cli, ...cmd.args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
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
