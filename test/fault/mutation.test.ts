/**
 * Mutation run (issue 23): real dumps (samples/, test/fixtures) damaged the ways copies get
 * damaged — lines dropped, doubled or swapped, bytes flipped, control characters and long words
 * inserted, CRLF, a cut mid-line, a gzip'd copy cut short — then put through every command, in
 * this process (the commands' own actions, stdout captured). Each must end with an exit code
 * (0–3) or a user error, never an internal error, and JSON output must parse. Fixed seed, a few
 * hundred cases; the corpus variant (more dumps) is test/corpus.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { exitCodeFor } from '../../src/cli/exit.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLES = ['iptables-mode-node', 'ipvs-mode-node', 'nftables-mode-node'].map((s) => join(ROOT, 'samples', s));
/** Real dumps from public threads (each with a .source), beside the samples. */
const FIXTURES = ['kube-proxy/klog-sync-failed.log', 'kube-proxy/configmap-ipvs.yaml', 'ipvsadm/messy-crlf-bom.txt'].map((f) => join(ROOT, 'test/fixtures', f));

const tmp = mkdtempSync(join(tmpdir(), 'kpx-mutate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Mutation =
  | { kind: 'drop'; at: number; count: number }
  | { kind: 'double'; at: number; count: number }
  | { kind: 'swap'; a: number; b: number }
  | { kind: 'bytes'; at: number; text: string }
  | { kind: 'cut'; at: number }
  | { kind: 'crlf' }
  | { kind: 'long'; at: number; length: number };

const position = fc.double({ min: 0, max: 1, noNaN: true });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: position, count: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('double' as const), at: position, count: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('swap' as const), a: position, b: position }),
  fc.record({ kind: fc.constant('bytes' as const), at: position, text: fc.string({ unit: 'binary', maxLength: 12 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: position }),
  fc.record({ kind: fc.constant('crlf' as const) }),
  fc.record({ kind: fc.constant('long' as const), at: position, length: fc.integer({ min: 1000, max: 200_000 }) }),
);

function mutate(text: string, m: Mutation): string {
  const lines = text.split('\n');
  const line = (p: number) => Math.min(lines.length - 1, Math.floor(p * lines.length));
  const offset = (p: number) => Math.floor(p * text.length);
  switch (m.kind) {
    case 'drop':
      lines.splice(line(m.at), m.count);
      return lines.join('\n');
    case 'double':
      lines.splice(line(m.at), 0, ...lines.slice(line(m.at), line(m.at) + m.count));
      return lines.join('\n');
    case 'swap': {
      const [a, b] = [line(m.a), line(m.b)];
      [lines[a], lines[b]] = [lines[b], lines[a]];
      return lines.join('\n');
    }
    case 'bytes':
      return text.slice(0, offset(m.at)) + m.text + text.slice(offset(m.at));
    case 'cut':
      return text.slice(0, offset(m.at));
    case 'crlf':
      return text.replace(/\n/g, '\r\n');
    case 'long':
      return text.slice(0, offset(m.at)) + 'x'.repeat(m.length) + text.slice(offset(m.at));
  }
}

const COMMANDS = ['inspect', 'services', 'trace', 'lint', 'graph', 'reverse', 'diff', 'dump', 'report', 'redact'] as const;

/** Run one command's action in this process: its exit code (or the code its error maps to) and stdout. */
async function run(command: (typeof COMMANDS)[number], dir: string, file: string, n: number): Promise<{ code: number; stdout: string; message?: string }> {
  let stdout = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const base = { input: [dir], nodeIp: [], color: false };
  try {
    let code: number;
    switch (command) {
      case 'inspect':
        code = await (await import('../../src/cli/commands/inspect.js')).inspectAction([], { ...base, output: 'json' });
        break;
      case 'services':
        code = await (await import('../../src/cli/commands/services.js')).servicesAction([], { ...base, output: 'json' });
        break;
      case 'trace':
        code = await (await import('../../src/cli/commands/trace.js')).traceAction('10.96.0.10:53/udp', { ...base, from: 'pod', output: 'json' });
        break;
      case 'lint':
        code = await (await import('../../src/cli/commands/lint.js')).lintAction([], { ...base, output: 'json', failOn: 'error' });
        break;
      case 'graph':
        code = await (await import('../../src/cli/commands/graph.js')).graphAction([], { ...base, format: 'dot' });
        break;
      case 'reverse':
        code = await (await import('../../src/cli/commands/reverse.js')).reverseAction('10.244.1.2', { ...base, output: 'json' });
        break;
      case 'diff':
        code = await (await import('../../src/cli/commands/diff.js')).diffAction(SAMPLES[0], dir, { output: 'json' });
        break;
      case 'dump':
        code = await (await import('../../src/cli/commands/dump.js')).dumpAction(file, { output: 'json' });
        break;
      case 'report':
        code = await (await import('../../src/cli/commands/report.js')).reportAction([], { ...base, output: '-', format: 'md', lint: true });
        break;
      case 'redact':
        code = await (await import('../../src/cli/commands/redact.js')).redactAction([dir], { output: join(tmp, `redacted-${n}`), key: 'k' });
        break;
    }
    return { code, stdout };
  } catch (e) {
    const { code, message } = exitCodeFor(e);
    return { code, stdout, message };
  } finally {
    write.mockRestore();
    stderr.mockRestore();
  }
}

/** Cases per run: 200 by default (KPX_MUTATION_RUNS to change it). */
const RUNS = Number(process.env.KPX_MUTATION_RUNS ?? 200);

const JSON_OUT = new Set(['inspect', 'services', 'trace', 'lint', 'reverse', 'diff', 'dump']);

describe('mutated real dumps through every command', () => {
  it(`never an internal error; exit codes 0–3; JSON that parses (fixed seed, ${RUNS} cases)`, async () => {
    let n = 0;
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SAMPLES),
        fc.constantFrom(...COMMANDS),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.boolean(),
        fc.option(fc.constantFrom(...FIXTURES), { nil: undefined }),
        async (sample, command, mutations, pick, gzip, fixture) => {
          const dir = join(tmp, `case-${n++}`);
          mkdirSync(dir);
          cpSync(sample, dir, { recursive: true });
          if (fixture) writeFileSync(join(dir, `extra-${fixture.split('/').pop()}`), readFileSync(fixture));
          const dumps = readdirSync(dir).filter((f) => f.endsWith('.txt') && readFileSync(join(dir, f)).length > 0);
          const target = dumps[pick % dumps.length];
          let text = readFileSync(join(dir, target), 'utf8');
          for (const m of mutations) text = mutate(text, m);
          let file = join(dir, target);
          if (gzip) {
            // A gzip'd copy, cut short half the time (a transfer that stopped).
            const gz = gzipSync(text);
            rmSync(file);
            file = `${file}.gz`;
            writeFileSync(file, pick % 2 === 0 ? gz.subarray(0, Math.max(10, Math.floor(gz.length * 0.6))) : gz);
          } else writeFileSync(file, text);
          const r = await run(command, dir, file, n);
          seen.set(command, (seen.get(command) ?? 0) + 1);
          rmSync(dir, { recursive: true, force: true });
          expect(r.message ?? '', `${command} on ${target} after ${JSON.stringify(mutations).slice(0, 300)}`).not.toMatch(/internal error/);
          expect([0, 1, 2, 3]).toContain(r.code);
          if (JSON_OUT.has(command) && r.stdout.trim() !== '') expect(() => JSON.parse(r.stdout), command).not.toThrow();
        },
      ),
      { seed: 23, numRuns: RUNS, endOnFailure: true },
    );
    // Every command was exercised (not a vacuous run).
    for (const c of COMMANDS) expect(seen.get(c) ?? 0, c).toBeGreaterThan(3);
    console.log(`mutation run: ${RUNS} cases, ${[...seen].map(([c, k]) => `${c} ${k}`).join(', ')}`);
  }, 900_000);
});
