#!/usr/bin/env node
/**
 * Where does `kpx services` (or `kpx lint`) spend its time? Runs the built CLI under
 * `node --cpu-prof` on a generated dump (the same cached dumps as run.mjs) and summarises the
 * profile: the top self-time functions, and self time per source file / package.
 *
 *   node test/bench/profile.mjs [--size 10000] [--mode iptables|nftables|ipvs] [--seed 1] [--top 15] [--command services|lint]
 *
 * Writes build/bench/prof/<command>-<size>.cpuprofile (open it in Chrome DevTools or speedscope)
 * and build/bench/profile-<command>-<size>.md / .json; prints the markdown on stdout.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, CLI, NODE, ROOT, ensureDump, log, measure, requireDist, round } from './lib.mjs';

const argv = process.argv.slice(2);
const value = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const size = Number(String(value('size', '10000')).replace(/k$/i, '000'));
const seed = Number(value('seed', '1'));
const top = Number(value('top', '15'));
const command = value('command', 'services');
const mode = value('mode', 'iptables');
if (!Number.isInteger(size) || size <= 0 || !['services', 'lint'].includes(command)) {
  process.stderr.write('usage: profile.mjs [--size 10000] [--seed 1] [--top 15] [--command services|lint]\n');
  process.exit(2);
}
requireDist(command === 'lint' ? 'src/cli/commands/lint.js' : 'src/cli/commands/services.js');

const dump = ensureDump(size, seed, mode);
const profDir = join(BENCH_DIR, 'prof');
mkdirSync(profDir, { recursive: true });
const name = `${command}-${mode === 'iptables' ? '' : `${mode}-`}${size}.cpuprofile`;
rmSync(join(profDir, name), { force: true });
log(`profiling kpx ${command} on ${dump.lines} lines (${size} Services)`);
const args = ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', name, CLI, command, ...dump.files.flatMap((f) => ['-i', f]), '-o', 'json'];
if (command === 'lint') args.push('--fail-on', 'never');
const r = await measure(NODE, args);
if (r.status !== 0) {
  process.stderr.write(`kpx ${command} exited ${r.status}: ${r.stderr}\n`);
  process.exit(1);
}
log(`  ${r.wall.toFixed(2)} s wall (profiler on), peak RSS ${Math.round(r.rssKiB / 1024)} MiB`);

const profile = JSON.parse(readFileSync(join(profDir, name), 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const totalUs = profile.endTime - profile.startTime;

const where = (url) => {
  if (!url) return '';
  let p = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (p.startsWith(ROOT)) p = relative(ROOT, p);
  return p;
};
/** Package or area a file belongs to: node_modules/<pkg>, dist/src/<area>, dist/grammars/<fmt>, node internals. */
const area = (file) => {
  if (!file) return '(native / VM)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (nm) return `npm:${nm[1]}`;
  const d = /^dist\/(src|grammars)\/([^/]+)/.exec(file);
  if (d) return `${d[1]}/${d[2]}`;
  if (file.startsWith('node:')) return 'node internals';
  return file;
};

const byFn = new Map();
const byArea = new Map();
for (const [id, us] of selfUs) {
  const n = nodes.get(id);
  const cf = n.callFrame;
  const file = where(cf.url);
  const fn = cf.functionName || (file ? '(anonymous)' : `(${cf.functionName || 'program'})`);
  const label = file ? `${fn} — ${file}:${cf.lineNumber + 1}` : cf.functionName ? `${cf.functionName}` : '(anonymous)';
  byFn.set(label, (byFn.get(label) ?? 0) + us);
  const a = cf.url ? area(file) : cf.functionName.startsWith('(') ? cf.functionName : '(native / VM)';
  byArea.set(a, (byArea.get(a) ?? 0) + us);
}
const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
const pct = (us) => `${((100 * us) / totalUs).toFixed(1)} %`;
const ms = (us) => `${Math.round(us / 1000)} ms`;

const md = [];
md.push(`# CPU profile: \`kpx ${command} -i <${size} Services, ${dump.lines} lines> -o json\``);
md.push('');
md.push(`Profiled wall ${r.wall.toFixed(2)} s (the profiler adds overhead), sampled ${ms(totalUs)}, ${profile.samples.length} samples. Profile: \`${relative(ROOT, join(profDir, name))}\`.`);
md.push('');
md.push(`## Top ${top} functions by self time`);
md.push('');
md.push('| # | function — file:line | self | share |');
md.push('|---|---|---|---|');
sorted(byFn)
  .slice(0, top)
  .forEach(([label, us], i) => md.push(`| ${i + 1} | ${label.replace(/\|/g, '\\|')} | ${ms(us)} | ${pct(us)} |`));
md.push('');
md.push('## Self time by area');
md.push('');
md.push('| area | self | share |');
md.push('|---|---|---|');
for (const [a, us] of sorted(byArea).slice(0, 20)) md.push(`| ${a} | ${ms(us)} | ${pct(us)} |`);
const text = `${md.join('\n')}\n`;

const base = join(BENCH_DIR, `profile-${command}-${mode === 'iptables' ? '' : `${mode}-`}${size}`);
writeFileSync(`${base}.md`, text);
writeFileSync(
  `${base}.json`,
  `${JSON.stringify(
    {
      command,
      size,
      lines: dump.lines,
      wallSeconds: round(r.wall, 3),
      peakRssKiB: r.rssKiB,
      sampledMs: round(totalUs / 1000, 1),
      topFunctions: sorted(byFn).slice(0, top).map(([label, us]) => ({ function: label, selfMs: round(us / 1000, 1), share: round(us / totalUs, 4) })),
      byArea: sorted(byArea).map(([a, us]) => ({ area: a, selfMs: round(us / 1000, 1), share: round(us / totalUs, 4) })),
    },
    null,
    2,
  )}\n`,
);
process.stdout.write(text);
log(`wrote ${relative(ROOT, base)}.md and .json`);
