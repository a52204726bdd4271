/**
 * The fuzz run (issue 34), a seeded slice of it in `npm test`: real dumps from samples/ and
 * test/fixtures/ (never /work/shared: `--no-corpus`), mutated, through every read-only command and
 * output format, in-process. The full run is `npm run fuzz -- --cases 10000` (docs/testing.md).
 * The checker itself is tested first, on outputs made here, so a slice with 0 problems means
 * something.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { check } from './checks.mjs';

const RUN = fileURLToPath(new URL('./run.mjs', import.meta.url));

describe('the fuzz checker', () => {
  it('finds a crash, a raw control character and a document that does not parse', () => {
    expect(check('services', 'json', 2, '', 'kpx: internal error (a bug in kpx): TypeError: x\n').map((p) => p.kind)).toEqual(['crash']);
    expect(check('services', 'text', 9, '', '').map((p) => p.kind)).toEqual(['crash']);
    expect(check('trace', 'text', 0, 'nat/C\u001b[2J:12\n', '').map((p) => p.kind)).toEqual(['control']);
    expect(check('lint', 'text', 0, '', 'kpx: a\u009bb\n').map((p) => p.kind)).toEqual(['control']);
    expect(check('lint', 'json', 0, '{"a":"\u2028"}', '').map((p) => p.kind)).toEqual(['control']);
    expect(check('lint', 'json', 1, '{"findings":[', '').map((p) => p.kind)).toEqual(['unparsable']);
    expect(check('lint', 'sarif', 1, '{"runs":[]}', '').map((p) => p.kind)).toEqual(['unparsable']);
    expect(check('services', 'yaml', 0, 'a: [\n', '').map((p) => p.kind)).toEqual(['unparsable']);
    expect(check('summarize', 'json', 0, '', '').map((p) => p.kind)).toEqual(['unparsable']);
  });

  it('passes what kpx is meant to print: tabs, newlines, escaped text, a refusal or "cannot tell" without a document', () => {
    expect(check('trace', 'text', 0, 'nat/C\\x1b[2J:12\n\tvia x\n', 'kpx: note\n')).toEqual([]);
    expect(check('lint', 'sarif', 1, '{"version":"2.1.0","runs":[]}', '')).toEqual([]);
    expect(check('lint', 'json', 3, '', 'kpx: cannot tell …\n')).toEqual([]);
    expect(check('services', 'json', 2, '', 'kpx: no such file\n')).toEqual([]);
  });
});

describe('a seeded slice of the fuzz run', () => {
  it('150 cases over the samples and real pastes: no crash, hang, raw control character or unparsable document', async () => {
    // The runner is the subject here (its workers, its clock): spawned, and awaited without blocking vitest's worker.
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [RUN, '--cases', '150', '--seed', '34', '--workers', '1', '--timeout', '60000', '--no-corpus', '--json']);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    expect(r.stderr).toBe('');
    const s = JSON.parse(r.stdout);
    expect(s.problems).toEqual([]);
    expect(s).toMatchObject({ cases: 150, crashes: 0, hangs: 0, controls: 0, unparsable: 0, corpus: false });
    expect(r.status).toBe(0);
    // The slice reaches every command, and answers as well as refusals.
    expect(s.commands).toEqual(['dump', 'graph', 'inspect', 'lint', 'migrate-check', 'reverse', 'services', 'summarize', 'trace']);
    expect(s.seedFiles).toBeGreaterThan(50);
    expect((s.exitCodes['0'] ?? 0) + (s.exitCodes['1'] ?? 0)).toBeGreaterThan(50);
  }, 240_000);
});
