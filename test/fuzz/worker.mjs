/**
 * One fuzz worker: runs cases in-process, through the same command actions and the same error
 * path as the CLI (src/cli/main.ts: exitCodeFor, escaped message), with stdout and stderr
 * captured. The runner (run.mjs) owns the clock: a case that does not finish in time is a hang,
 * and the worker is terminated and replaced.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeCase, rooted, seeds } from './cases.mjs';
import { check } from './checks.mjs';

const { dist, roots, seed, tmp } = workerData;
const pool = seeds(roots);
const rootOf = rooted(roots);
const { exitCodeFor } = await import(`${dist}/src/cli/exit.js`);
const { escapeControls } = await import(`${dist}/src/source/index.js`);
const { guardStdStreams } = await import(`${dist}/src/cli/output.js`);
guardStdStreams(); // as the CLI does: library warnings become one kpx line on stderr

let out = { stdout: '', stderr: '' };
const capture = (which) =>
  function write(chunk, enc, cb) {
    out[which] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const done = typeof enc === 'function' ? enc : cb;
    if (done) done();
    return true;
  };
process.stdout.write = capture('stdout');
process.stderr.write = capture('stderr');
process.on('unhandledRejection', (e) => (out.stderr += `\nUnhandled rejection: ${e?.stack ?? e}\n`));

const base = { input: [], nodeIp: [], color: true };
const ACTIONS = {
  inspect: async (m, c, input) => m.inspectAction([input], { ...base, output: c.output }),
  services: async (m, c, input) => m.servicesAction([input], { ...base, output: c.output }),
  trace: async (m, c, input) => m.traceAction(c.args[0], { ...base, input: [input], output: c.output, verbose: c.verbose }),
  lint: async (m, c, input) => m.lintAction([input], { ...base, output: c.output, failOn: 'error', rule: [], disable: [] }),
  'migrate-check': async (m, c, input) => m.migrateCheckAction([input], { ...base, to: 'nftables', output: c.output, failOn: 'error', rule: [], disable: [] }),
  dump: async (m, c, input) => m.dumpAction(input, { input: [], output: c.output }),
  reverse: async (m, c, input) => m.reverseAction(c.args[0], { ...base, input: [input], output: c.output }),
  summarize: async (m, c, input) => m.summarizeAction([input], { ...base, output: 'json', lint: true }),
  graph: async (m, c, input) => m.graphAction([input], { ...base, service: [], format: 'dot' }),
};

/** Write the case's input under `dir`: one file, or a copy of a sample bundle with one file damaged. */
export function writeInput(c, dir) {
  mkdirSync(dir, { recursive: true });
  if (c.bundle) {
    const b = join(dir, 'bundle');
    cpSync(c.bundle, b, { recursive: true });
    writeFileSync(join(b, c.file.name), c.file.text, 'latin1');
    return b;
  }
  const f = join(dir, c.file.name);
  writeFileSync(f, c.file.text, 'latin1');
  return f;
}

async function runCase(index) {
  const c = makeCase(seed, index, pool, rootOf);
  const dir = join(tmp, `case-${index}`);
  const input = writeInput(c, dir);
  out = { stdout: '', stderr: '' };
  let code;
  const t0 = performance.now();
  try {
    const mod = await import(`${dist}/src/cli/commands/${c.command}.js`);
    code = await ACTIONS[c.command](mod, c, input);
  } catch (e) {
    const r = exitCodeFor(e);
    process.stderr.write(`kpx: ${escapeControls(r.message)}\n`);
    code = r.code;
  }
  const ms = performance.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  const problems = check(c.command, c.output, code, out.stdout, out.stderr);
  return { index, command: c.command, output: c.output, args: c.args, from: c.from, name: c.file.name, bundle: c.bundle ? rootOf(c.bundle) : undefined, code, ms, problems, ...(workerData.keepOutput ? { stdout: out.stdout, stderr: out.stderr } : {}) };
}

parentPort.on('message', async (index) => {
  parentPort.postMessage(await runCase(index));
});
parentPort.postMessage('ready');
