/**
 * No raw control character reaches the terminal (issue 34): dump text with ESC sequences, BEL,
 * NUL, DEL, C1 controls (U+009B is CSI) and U+2028/2029 in chain names, policies, comments, API
 * object names, node (folder) names, a summary's modes and a --config file, through every
 * command and output form. Constructed inputs (the sample bundle with hostile names planted).
 * Text outputs: no control character but tab and newline. JSON and SARIF: they parse, and hold
 * no raw DEL, C1 or U+2028/2029 either (JSON.stringify leaves those raw). In-process (cli.ts): the
 * subject is the text kpx writes, which the runner captures as the binary's streams would carry it.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { bugs } from './run.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLE = join(ROOT, 'samples/iptables-mode-node');
const ESC = '\u001b[2J\u001b]0;pwned\u0007';
const C1 = '\u009b31m\u0085\u007f';
const SEP = '\u2028\u2029';

/** Raw control characters a terminal acts on (tab and newline allowed). */
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** …and in JSON text, where JSON.stringify leaves them raw. */
export const RAW_IN_JSON = /[\u007f-\u009f\u2028\u2029]/;

let tmp = '';
let node = '';
let cluster = '';
let config = '';

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'kpx-control-'));
  node = join(tmp, 'node');
  cpSync(SAMPLE, node, { recursive: true });
  const ipt = readFileSync(join(node, 'iptables-save.txt'), 'utf8').split('\n');
  const out: string[] = [];
  let nat = false;
  for (const l of ipt) {
    if (l === '*nat') nat = true;
    if (nat && l.startsWith(':PREROUTING ')) {
      out.push(`:PREROUTING ACC${ESC}EPT [0:0]`, `:C${ESC}${C1} - [0:0]`);
      continue;
    }
    if (nat && l === 'COMMIT') {
      out.push(`-I PREROUTING 1 -j C${ESC}${C1}`, `-A C${ESC}${C1} -d 10.96.0.10/32 -p tcp -m comment --comment "x${ESC}${C1}${SEP}" -j DNAT --to-destination 10.244.0.2:53`);
      nat = false;
    }
    out.push(l);
  }
  writeFileSync(join(node, 'iptables-save.txt'), out.join('\n'));
  // An API object whose names hold ESC and NUL (JSON escapes: the text is valid JSON).
  const svc = (name: string, ns: string, ip: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { clusterIP: ip, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
  writeFileSync(join(node, 'api.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [svc(`web${ESC}`, `ns\u0000${C1}`, '10.96.99.99'), svc(`api${SEP}`, 'shop', '10.96.99.98')] }, null, 2));
  // A cluster: two node folders, one named with control characters, and a summary whose modes hold some.
  cluster = join(tmp, 'cluster');
  cpSync(SAMPLE, join(cluster, `node${ESC}a`), { recursive: true });
  cpSync(SAMPLE, join(cluster, 'node-b'), { recursive: true });
  rmSync(join(cluster, `node${ESC}a`, 'manifest.json'));
  rmSync(join(cluster, 'node-b', 'manifest.json'));
  config = join(tmp, 'kpx.yaml');
  writeFileSync(config, `rules:\n  "bad${ESC}${C1}rule": off\n`);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Case {
  readonly args: readonly string[];
  readonly json?: boolean;
}

function cases(): Record<string, Case> {
  return {
    inspect: { args: ['inspect', node] },
    'inspect json': { args: ['inspect', node, '-o', 'json'], json: true },
    services: { args: ['services', '-i', node] },
    'services wide': { args: ['services', '-i', node, '-o', 'wide'] },
    'services json': { args: ['services', '-i', node, '-o', 'json'], json: true },
    trace: { args: ['trace', '10.96.0.10:53/tcp', '-i', node, '-v'] },
    'trace json': { args: ['trace', '10.96.0.10:53/tcp', '-i', node, '-o', 'json'], json: true },
    reverse: { args: ['reverse', '10.244.0.2', '-i', node] },
    'reverse json': { args: ['reverse', '10.244.0.2', '-i', node, '-o', 'json'], json: true },
    lint: { args: ['lint', '-i', node, '--fail-on', 'never'] },
    'lint json': { args: ['lint', '-i', node, '--fail-on', 'never', '-o', 'json'], json: true },
    'lint sarif': { args: ['lint', '-i', node, '--fail-on', 'never', '-o', 'sarif'], json: true },
    'lint github': { args: ['lint', '-i', node, '--fail-on', 'never', '-o', 'github'] },
    'lint config': { args: ['lint', '-i', node, '--config', config] },
    graph: { args: ['graph', '-i', node] },
    diff: { args: ['diff', SAMPLE, node] },
    'dump iptables-save': { args: ['dump', join(node, 'iptables-save.txt'), '-o', 'iptables-save'] },
    'dump json': { args: ['dump', join(node, 'iptables-save.txt'), '-o', 'json'], json: true },
    summarize: { args: ['summarize', '-i', node, '-o', 'json'], json: true },
    report: { args: ['report', '-i', node, '-o', '-', '--no-lint'] },
    'services --nodes': { args: ['services', '--nodes', '-i', cluster] },
    'trace cluster': { args: ['trace', '10.96.0.10:53/udp', '-i', cluster] },
    'reverse cluster': { args: ['reverse', '10.244.0.2', '-i', cluster] },
  };
}

describe('control characters in every field that reaches output', () => {
  it('no command writes one raw, in text or JSON; JSON and SARIF parse', async () => {
    const bad: string[] = [];
    for (const [name, c] of Object.entries(cases())) {
      const r = await cli(c.args);
      expect(bugs(r.stderr), `${name}: ${r.stderr.slice(0, 400)}`).toEqual([]);
      expect(r.code, `${name}: ${r.stderr.slice(0, 400)}`).toBeLessThanOrEqual(3);
      for (const [stream, text] of [['stdout', r.stdout], ['stderr', r.stderr]] as const) {
        const m = RAW_CONTROL.exec(text);
        if (m) bad.push(`${name} ${stream}: U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} near ${JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 10))}`);
      }
      if (c.json) {
        expect(r.stdout.length, name).toBeGreaterThan(0);
        expect(() => JSON.parse(r.stdout), name).not.toThrow();
        if (RAW_IN_JSON.test(r.stdout)) bad.push(`${name}: raw DEL/C1/U+2028 in JSON`);
      }
    }
    expect(bad).toEqual([]);
  }, 600_000);

  it('a summary whose modes and node name hold control characters is shown escaped', async () => {
    const dir = join(tmp, 'summaries');
    mkdirSync(dir);
    const r = await cli(['summarize', '-i', SAMPLE, '-o', 'json']);
    const s = JSON.parse(r.stdout) as Record<string, unknown>;
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ ...s, node: `a${ESC}` }));
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ ...s, node: 'b' }));
    // Modes that are not modes: the summary does not fit its schema, and the refusal quotes them escaped.
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ ...s, node: `c${ESC}`, modes: [`ipt${ESC}${C1}ables`] }));
    for (const [args, shown] of [[['services', '--nodes', '-i', dir], /a\\x1b\[2J/], [['services', '--nodes', '-i', dir, '-o', 'json'], /a\\u001b\[2J/]] as const) {
      const x = await cli(args);
      expect(bugs(x.stderr), x.stderr).toEqual([]);
      expect(RAW_CONTROL.test(x.stdout + x.stderr), x.stdout.slice(0, 600)).toBe(false);
      expect(x.stdout).toMatch(shown);
      expect(x.stderr).toMatch(/c\\x1b\[2J.* not compared: not a valid node summary: \$\.modes\[0\]: .*ipt\\u001b\[2J/);
    }
  });
});
