/**
 * Interrupted and odd (issue 34), through the built CLI as a user meets them: a --config or
 * --baseline that never ends (/dev/zero) or does not have the shape, a library warning, a bundle
 * whose collection was interrupted, `graph --svg` where WebAssembly gets no memory, `redact -o -`.
 * In-process (test/helpers/cli.ts) where the answer is the subject; spawned where the process is:
 * its peak memory, its warnings, its address-space limit.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bugs, runKpx } from './run.js';
import { BIN } from '../helpers/exec.js';
import { cli } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = join(ROOT, 'samples/iptables-mode-node');
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'kpx-odd-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const oneLine = (stderr: string) => stderr.trimEnd().split('\n');

describe('files named by flags', () => {
  it('--config /dev/zero and --baseline /dev/zero: one line, exit 2, in bounded memory', async () => {
    for (const flag of ['--config', '--baseline']) {
      const r = await runKpx(tmp, ['lint', '-i', SAMPLE, flag, '/dev/zero'], { timeoutMs: 60_000 });
      expect(bugs(r.stderr), r.stderr).toEqual([]);
      expect(r.code, r.stderr).toBe(2);
      expect(oneLine(r.stderr), flag).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^kpx: ${flag} /dev/zero holds more than`));
      expect(r.peakMiB).toBeLessThan(400);
    }
  });

  it('a baseline that does not have the shape of kpx lint -o json is refused, naming what does not fit', async () => {
    const cases: [string, RegExp][] = [
      ['{"findings":[{"ruleId":5}],"summary":3}', /finding 1: "ruleId" is not a string/],
      ['{"findings":[{"ruleId":"a","message":"m"}],"summary":3}', /"summary" is not an object/],
      ['{"findings":[null]}', /finding 1 is not an object/],
      ['[]', /not a JSON object/],
      ['{"findings":[{"ruleId":"a","message":"m","fingerprint":7}]}', /finding 1: "fingerprint" is not a string/],
    ];
    for (const [body, why] of cases) {
      const f = join(tmp, 'baseline.json');
      writeFileSync(f, body);
      const r = await cli(['lint', '-i', SAMPLE, '--baseline', f]);
      expect(r.code, body).toBe(2);
      expect(oneLine(r.stderr), body).toHaveLength(1);
      expect(r.stderr, body).toMatch(why);
    }
  });
});

describe('library warnings', () => {
  it('the yaml package never writes to stderr in its own form (a mapping key that is a list)', async () => {
    const f = join(tmp, 'api.yaml');
    // Constructed: a Service whose labels have a collection as a key (the yaml package warns about it when it builds the object).
    writeFileSync(f, 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    ? [a, b]\n    : c\nspec:\n  clusterIP: 10.96.0.99\n  ports:\n  - port: 80\n');
    // Whole lines (the content is the subject here, not the layout): COLUMNS=1000.
    const r = await runKpx(tmp, ['inspect', f], { env: { COLUMNS: '1000' } });
    expect(bugs(r.stderr)).toEqual([]);
    expect(r.stderr).not.toMatch(/Warning|YAMLWarning|\(node:\d+\)/);
    // The pair is left out before the yaml package builds the object (it would print the key's whole subtree), and kpx says so.
    expect(r.stdout).toMatch(/api\.yaml:7:\d+: warning parse\/k8s-api: 1 mapping key\(s\) that are a list or a map \(no Kubernetes field is\): left out/);
    const s = await runKpx(tmp, ['services', '-i', SAMPLE, '-i', f, '-o', 'json']);
    expect(s.code).toBe(0);
    expect(s.stderr).not.toMatch(/Warning|YAMLWarning|\(node:\d+\)/);
  });
});

describe('a bundle whose collection did not finish', () => {
  it('is read as partial by every command, never as whole (the manifest is marked incomplete while kpx collect runs)', async () => {
    const dir = join(tmp, 'partial');
    cpSync(SAMPLE, dir, { recursive: true });
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, steps: m.steps.slice(0, 2), incomplete: 'interrupted by SIGINT after 2 steps (iptables-save.txt, ip6tables-save.txt)' }));
    const i = await cli(['inspect', dir, '-o', 'json']);
    expect(i.code).toBe(1);
    const files = JSON.parse(i.stdout).files as { path: string; diagnostics: { code: string; message: string }[] }[];
    const row = files.find((f) => f.path === join(dir, 'manifest.json'))!;
    expect(row.diagnostics.map((d) => d.code)).toEqual(['collect/incomplete']);
    expect(row.diagnostics[0].message).toMatch(/did not finish \(interrupted by SIGINT after 2 steps/);
    const s = await cli(['services', '-i', dir]);
    expect(s.code).toBe(0);
    expect(s.stderr).toMatch(/manifest\.json: the collection of this bundle did not finish .* not the whole node\n/);
  });
});

describe('graph --svg where WebAssembly gets no memory', () => {
  it('one line, and the graph as DOT instead (under ulimit -v)', () => {
    const svg = join(tmp, 'g.svg');
    const r = spawnSync('bash', ['-c', `ulimit -v 3000000; exec "${process.execPath}" "${BIN}" graph -i "${SAMPLE}" --svg "${svg}"`], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(bugs(r.stderr)).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
    expect(oneLine(r.stderr)).toEqual([`kpx: ${svg} not written: Graphviz (WebAssembly) could not get the memory it needs (a \`ulimit -v\` limit?); the graph is printed as DOT instead (dot -Tsvg renders it)`]);
    expect(r.stdout).toMatch(/^digraph kpx \{/);
  });
});

describe('redact -o -', () => {
  it('writes one redacted dump to standard output; a bundle needs a directory', async () => {
    const r = await cli(['redact', join(SAMPLE, 'iptables-save.txt'), '-o', '-', '--key', 'k']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# Generated by iptables-save/);
    expect(r.stdout).not.toContain('kpx-sample-node');
    expect(r.stdout.split('\n').length).toBe(readFileSync(join(SAMPLE, 'iptables-save.txt'), 'utf8').split('\n').length);
    const b = await cli(['redact', SAMPLE, '-o', '-', '--key', 'k']);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/-o - writes one redacted file to standard output/);
  });
});
