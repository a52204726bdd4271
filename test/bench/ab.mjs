#!/usr/bin/env node
/**
 * A/B of two builds of kpx on the same generated dump, interleaved (A B B A A B …) so that a
 * loaded machine weighs on both alike: per pair, B's wall time, CPU time (user+sys) and peak RSS
 * over A's; prints the median ratio with its spread. Used to keep or drop each performance change (issue 20).
 *
 *   node test/bench/ab.mjs --a build/dist-before/src/cli/main.js [--b dist/src/cli/main.js]
 *                          [--mode iptables] [--size 10000] [--reps 6] [--command services]
 *                          [--b-node-args '--max-semi-space-size=64']
 */
import { CLI, NODE, ensureDump, log, measure, median, requireDist, round } from './lib.mjs';

const argv = process.argv.slice(2);
const value = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? dflt : argv[i + 1];
};
const a = value('a');
if (!a) {
  process.stderr.write('usage: ab.mjs --a CLI_A [--b CLI_B] [--mode iptables] [--size 10000] [--reps 6] [--command services]\n');
  process.exit(2);
}
const b = value('b', CLI);
const mode = value('mode', 'iptables');
const size = Number(value('size', '10000'));
const reps = Number(value('reps', '6'));
const command = value('command', 'services');
/** Node options for B only (e.g. `--max-semi-space-size=64`): a V8 setting measured as its own change. */
const bNodeArgs = (value('b-node-args', '') || '').split(' ').filter(Boolean);
requireDist();
const dump = ensureDump(size, 1, mode);
const args = [command, ...dump.files.flatMap((f) => ['-i', f]), '-o', 'json', ...(command === 'lint' ? ['--fail-on', 'never'] : [])];
const pairs = [];
for (let i = 0; i < reps; i++) {
  const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
  const r = {};
  for (const which of order) {
    r[which] = await measure(NODE, which === 'a' ? [a, ...args] : [...bNodeArgs, b, ...args]);
    if (r[which].status !== 0) throw new Error(`${which} exited ${r[which].status}: ${r[which].stderr}`);
  }
  pairs.push({ a: r.a, b: r.b, time: r.b.wall / r.a.wall, cpu: r.b.cpu / r.a.cpu, rss: r.b.rssKiB / r.a.rssKiB });
  log(`pair ${i + 1}/${reps}: A ${r.a.wall.toFixed(2)} s (cpu ${r.a.cpu?.toFixed(2)} s) ${Math.round(r.a.rssKiB / 1024)} MiB, B ${r.b.wall.toFixed(2)} s (cpu ${r.b.cpu?.toFixed(2)} s) ${Math.round(r.b.rssKiB / 1024)} MiB → B/A wall ${(r.b.wall / r.a.wall).toFixed(3)}, cpu ${(r.b.cpu / r.a.cpu).toFixed(3)}`);
}
const stat = (xs) => ({ median: round(median(xs), 3), min: round(Math.min(...xs), 3), max: round(Math.max(...xs), 3) });
const out = {
  mode,
  size,
  command,
  reps,
  a: { median: round(median(pairs.map((p) => p.a.wall)), 3), rssMiB: round(median(pairs.map((p) => p.a.rssKiB)) / 1024, 0) },
  b: { median: round(median(pairs.map((p) => p.b.wall)), 3), rssMiB: round(median(pairs.map((p) => p.b.rssKiB)) / 1024, 0) },
  timeBoverA: stat(pairs.map((p) => p.time)),
  cpuBoverA: stat(pairs.map((p) => p.cpu)),
  rssBoverA: stat(pairs.map((p) => p.rss)),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
