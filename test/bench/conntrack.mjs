/**
 * The conntrack part of `npm run bench` (issue 18): a generated `conntrack -L` of N entries (1M by
 * default, 20k with --quick) is streamed into kpx's compact table by a child process; wall time and
 * peak RSS are measured from outside (GNU time / VmHWM), the load and cleanup phases from inside.
 * The listing mixes TCP/UDP, [UNREPLIED]/[ASSURED], 2 000 clients and 8 endpoints — the shapes of a
 * busy DNS node — and its size is what a 1M-entry table prints (~170 bytes a line).
 */
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DUMPS_DIR, NODE, ROOT, log, measure } from './lib.mjs';

async function generate(path, n) {
  const out = createWriteStream(path);
  const write = (s) => (out.write(s) ? undefined : new Promise((r) => out.once('drain', r)));
  let buf = '';
  for (let i = 0; i < n; i++) {
    const client = `10.244.${1 + ((i >> 8) % 8)}.${i % 250 + 2}`;
    const sport = 1024 + (i % 60000);
    const ep = `10.244.0.${2 + (i % 8)}`;
    if (i % 3 === 0) buf += `tcp      6 ${86400 + (i % 1000)} ESTABLISHED src=${client} dst=10.96.0.1 sport=${sport} dport=443 src=172.18.0.${2 + (i % 3)} dst=${client} sport=6443 dport=${sport} [ASSURED] mark=0 use=1\n`;
    else if (i % 7 === 0) buf += `udp      17 ${i % 30} src=${client} dst=10.96.0.10 sport=${sport} dport=53 [UNREPLIED] src=${ep} dst=${client} sport=53 dport=${sport} mark=0 use=1\n`;
    else buf += `udp      17 ${100 + (i % 80)} src=${client} dst=10.96.0.10 sport=${sport} dport=53 src=${ep} dst=${client} sport=53 dport=${sport} [ASSURED] mark=0 use=1\n`;
    if (buf.length > 1 << 20) {
      await write(buf);
      buf = '';
    }
  }
  buf += `conntrack v1.4.7 (conntrack-tools): ${n} flow entries have been shown.\n`;
  await write(buf);
  await new Promise((r) => out.end(r));
}

/** Generate (once) and measure; returns the figures for result.json. */
export async function conntrackBench(entries) {
  mkdirSync(DUMPS_DIR, { recursive: true });
  const path = join(DUMPS_DIR, `conntrack-L-${entries}.txt`);
  if (!existsSync(path)) {
    log(`conntrack: generating a ${entries}-entry conntrack -L`);
    await generate(path, entries);
  }
  log(`conntrack: streaming ${entries} entries into kpx's table`);
  const r = await measure(NODE, [join(ROOT, 'test', 'bench', 'conntrack-load.mjs'), path], { stdout: 'pipe', timeoutMs: 15 * 60 * 1000 });
  if (r.status !== 0) return { entries, error: r.stderr.slice(0, 500) };
  const inside = JSON.parse(r.stdout.trim());
  const figures = { entries, bytes: statSync(path).size, wallS: r.wall, peakRssMiB: Math.round(r.rssKiB / 102.4) / 10, ...inside };
  log(`  ${entries} entries (${Math.round(figures.bytes / 1048576)} MiB): ${figures.wallS.toFixed(2)} s wall, load ${inside.loadS.toFixed(2)} s, peak RSS ${figures.peakRssMiB} MiB, ${inside.shapes} line shapes parsed by the grammar`);
  return figures;
}

// Run alone: node test/bench/conntrack.mjs [ENTRIES]
if (process.argv[1] && process.argv[1].endsWith('conntrack.mjs')) {
  const n = Number(process.argv[2] ?? 1_000_000);
  process.stdout.write(`${JSON.stringify(await conntrackBench(n), null, 2)}\n`);
}
