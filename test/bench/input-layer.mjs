#!/usr/bin/env node
/**
 * The input layer alone (issue 23): what reading a dump through src/load/input.ts costs against
 * reading the file whole (`readFileSync` + one decode, as kpx did before the layer), in one
 * process, interleaved, on generated dumps of each proxy mode. Both sides split their text into
 * lines, as every reader does; the iptables-save reader takes the blocks as they come, the other
 * readers take the whole text (the head block is sniffed, then wholeFile() reads the file in one
 * piece), so both are timed.
 *
 *   node test/bench/input-layer.mjs [--sizes 10000,30000] [--modes iptables,nftables,ipvs] [--reps 15]
 *
 * Prints, per file, the median and the fastest run of each way, in ms, and the ratio of the medians.
 * A whole-process figure (`kpx services`) is in run.mjs; this one is the layer's own cost.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, ensureDump, median, requireDist, round } from './lib.mjs';

const argv = process.argv.slice(2);
const value = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? dflt : argv[i + 1];
};
const sizes = value('sizes', '10000,30000').split(',').map(Number);
const modes = value('modes', 'iptables,nftables,ipvs').split(',');
const reps = Number(value('reps', '15'));
requireDist();
const { openTextStream, DEFAULT_INPUT_SETTINGS, readWhole, wholeFile } = await import(join(DIST, 'src', 'load', 'input.js'));

/** What a reader does with the text at least: find its lines. */
const lineCount = (text) => text.split('\n').length;

async function streamed(file, whole) {
  const report = { bytes: 0, gzip: false };
  const stream = openTextStream({ path: file }, statSync(file).size, DEFAULT_INPUT_SETTINGS.limits, report);
  if (whole) {
    // As parseInput() does: the head block is sniffed, then the file is read again in one piece.
    const blocks = stream[Symbol.asyncIterator]();
    await blocks.next();
    await blocks.return();
    return lineCount(wholeFile(file, DEFAULT_INPUT_SETTINGS.limits, report) ?? (await readWhole(stream, 'bench')));
  }
  let n = 0;
  for await (const block of stream) n += lineCount(block) - 1;
  return n + 1;
}

async function readFileWhole(file) {
  return lineCount(readFileSync(file).toString('utf8'));
}

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

for (const mode of modes) {
  for (const size of sizes) {
    const dump = ensureDump(size, 1, mode);
    for (const file of dump.files) {
      const mib = statSync(file).size / 1048576;
      if (mib < 1) continue;
      const blocks = file.endsWith('iptables-save.txt');
      const a = [];
      const b = [];
      for (let i = 0; i <= reps; i++) {
        // Alternate which goes first, so a slow moment weighs on both.
        const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
        for (const which of order) {
          const t0 = process.hrtime.bigint();
          const lines = which === 'a' ? await streamed(file, !blocks) : await readFileWhole(file);
          const t = ms(t0);
          if (lines < 2) throw new Error(`${file}: no lines read`);
          if (i > 0) (which === 'a' ? a : b).push(t);
        }
      }
      const name = `${mode} ${size} ${file.split('/').pop()} (${round(mib, 1)} MiB, ${blocks ? 'blocks' : 'whole text'})`;
      console.log(
        `${name}: input layer ${round(median(a), 1)} ms (fastest ${round(Math.min(...a), 1)}), readFileSync ${round(median(b), 1)} ms (fastest ${round(Math.min(...b), 1)}), ratio ${round(median(a) / median(b), 3)}, n ${reps}`,
      );
    }
  }
}
