/**
 * Every text output fits the terminal (issue 29): each command's text, on the samples, generated
 * bundles of every proxy mode and a generated cluster bundle, at COLUMNS=80 and 120, has no line
 * wider than the width — except a name that cannot be cut, which is then alone on its line. And
 * the width comes from one helper (src/render/width.ts): a command that writes text past it, or a
 * module that reads the terminal's width itself, fails here.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { generateCluster, writeBundle } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import { servicesAction } from '../../src/cli/commands/services.js';
import { traceAction } from '../../src/cli/commands/trace.js';
import { lintAction } from '../../src/cli/commands/lint.js';
import { migrateCheckAction } from '../../src/cli/commands/migrate-check.js';
import { inspectAction } from '../../src/cli/commands/inspect.js';
import { reverseAction } from '../../src/cli/commands/reverse.js';
import { diffAction } from '../../src/cli/commands/diff.js';
import { fitText, textWidth, wrapWords } from '../../src/render/width.js';

const SAMPLES = fileURLToPath(new URL('../../samples', import.meta.url));
const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'kpx-width-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const saved = process.env.COLUMNS;
afterEach(() => {
  if (saved === undefined) delete process.env.COLUMNS;
  else process.env.COLUMNS = saved;
});

/** A command's stdout (in-process), whatever its exit code. */
async function stdoutOf(action: () => Promise<number>): Promise<string> {
  const out: string[] = [];
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await action();
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  return out.join('');
}

const cols = (l: string) => [...stripVTControlCharacters(l)].length;

/** Lines wider than `width` that are not one uncuttable word alone on its line. */
function tooWide(text: string, width: number): string[] {
  return text.split('\n').filter((l) => cols(l) > width && /\s/.test(l.trim()));
}

const sample = (n: string) => join(SAMPLES, n);
const cluster = generateCluster({ seed: 5, services: 24 });
const bundles: { name: string; dir: string }[] = ['iptables-mode-node', 'ipvs-mode-node', 'nftables-mode-node'].map((n) => ({ name: n, dir: sample(n) }));
bundles.push({ name: 'iptables-mode-kind', dir: join(sample('iptables-mode-kind'), 'iptables-save.txt') });
for (const mode of ['iptables', 'ipvs', 'nftables'] as const) {
  const dir = join(tmp, mode);
  writeBundle(cluster, mode, dir);
  bundles.push({ name: `generated ${mode}`, dir });
}

/** Every command with a text output, on one input. */
function commands(dir: string, other: string): [string, () => Promise<number>][] {
  const input = [dir];
  return [
    ['services', () => servicesAction([], { input, output: 'text' })],
    ['services --service 10.96.0.10', () => servicesAction([], { input, output: 'text', service: '10.96.0.10' })],
    ['lint', () => lintAction([], { input, output: 'text', failOn: 'never' })],
    ['migrate-check', () => migrateCheckAction([], { input, output: 'text', failOn: 'never' })],
    ['trace 10.96.0.10:53/udp', () => traceAction('10.96.0.10:53/udp', { input, output: 'text' })],
    ['trace 10.96.0.10 --verbose', () => traceAction('10.96.0.10', { input, output: 'text', verbose: true })],
    ['inspect', () => inspectAction([], { input, output: 'text' })],
    ['reverse 10.244.1.2', () => reverseAction('10.244.1.2', { input, output: 'text' })],
    ['diff', () => diffAction(other, dir, { output: 'text' })],
  ];
}

describe('every text output fits COLUMNS (80 and 120)', () => {
  for (const width of [80, 120]) {
    it(`at ${width} columns: samples and generated bundles of every mode`, async () => {
      process.env.COLUMNS = String(width);
      let lines = 0;
      const wide: string[] = [];
      for (const [i, b] of bundles.entries()) {
        for (const [cmd, action] of commands(b.dir, bundles[(i + 1) % bundles.length].dir)) {
          const text = await stdoutOf(action);
          lines += text.split('\n').length;
          for (const l of tooWide(text, width)) wide.push(`${b.name}: ${cmd}: ${cols(l)} cols: ${l}`);
        }
      }
      expect(lines).toBeGreaterThan(2000);
      expect(wide).toEqual([]);
    }, 300_000);

    it(`at ${width} columns: a cluster bundle (services --nodes, trace --node)`, async () => {
      process.env.COLUMNS = String(width);
      const dir = join(tmp, `cluster-${width}`);
      const nodes = writeClusterBundle(generateCluster({ seed: 3, services: 12, nodes: 3 }), 'iptables', dir);
      const texts = [
        await stdoutOf(() => servicesAction([], { input: [dir], output: 'text', nodes: true, all: true })),
        await stdoutOf(() => traceAction('kube-system/kube-dns', { input: [dir], output: 'text', node: nodes[1], verbose: true })),
      ];
      expect(texts.map((t) => t.split('\n').length).every((n) => n > 10)).toBe(true);
      expect(texts.flatMap((t) => tooWide(t, width))).toEqual([]);
    }, 120_000);
  }

  it('services at 80 columns: no name cut, the columns left out said, -o wide shows them', async () => {
    process.env.COLUMNS = '80';
    const text = await stdoutOf(() => servicesAction([], { input: [sample('iptables-mode-node')], output: 'text' }));
    expect(text).not.toContain('…');
    const truth = readFileSync(`${sample('iptables-mode-node')}.truth.json`, 'utf8');
    const names = [...truth.matchAll(/"namespace":"([^"]+)","name":"([^"]+)","portName":"([^"]+)"/g)].map((m) => `${m[1]}/${m[2]}:${m[3]}`);
    expect(names.length).toBeGreaterThan(20);
    for (const n of names) expect(text, n).toMatch(new RegExp(`^${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`, 'm'));
    expect(text).toMatch(/^REASON and ENDPOINTS left out to fit 80 columns: -o wide shows every column\.$/m);
    const wide = await stdoutOf(() => servicesAction([], { input: [sample('iptables-mode-node')], output: 'wide' }));
    expect(wide.split('\n')[0]).toMatch(/^SERVICE +CLUSTER-IP +PORT\(S\) +ENDPOINTS +STATE +REASON +TYPE/);
  });
});

describe('the width helper', () => {
  it('COLUMNS, else the TTY width, else 120', () => {
    delete process.env.COLUMNS;
    expect(textWidth({ isTTY: false })).toBe(120);
    expect(textWidth({ isTTY: true, columns: 93 })).toBe(93);
    process.env.COLUMNS = '70';
    expect(textWidth({ isTTY: true, columns: 93 })).toBe(70);
  });

  it('wraps a long line under its label, never cutting a word; an uncuttable word stands alone', () => {
    const name = 'ns-0000/a-service-name-much-longer-than-any-terminal-is-wide-and-still-going:metrics';
    const out = fitText(`  verdict  DNAT 100% to 3 endpoints on other nodes, masqueraded, the name ${name} ends here`, 40).split('\n');
    expect(out[0]).toBe('  verdict  DNAT 100% to 3 endpoints on');
    expect(out.slice(1).every((l) => l.startsWith('           '))).toBe(true);
    expect(out).toContain(`           ${name}`);
    expect(out.filter((l) => cols(l) > 40)).toEqual([`           ${name}`]);
    expect(wrapWords('a b c', '  ', 3).length).toBe(3);
  });

  it('is the only reader of the terminal width; every command writes text through writeText', () => {
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (e.name.endsWith('.ts')) files.push(join(d, e.name));
      }
    };
    walk(SRC);
    expect(files.length).toBeGreaterThan(50);
    // (progress.ts asks whether stderr is a real terminal, `columns > 0`, to show a spinner: not a width.)
    const readers = files.filter((f) => !f.endsWith('render/width.ts') && /env\.COLUMNS|(stdout|stderr|stream|tty)\.columns\b(?! *> *0)|TRACE_WIDTH|DETAIL_WIDTH/.test(readFileSync(f, 'utf8')));
    expect(readers.map((f) => f.slice(SRC.length))).toEqual([]);
    // Commands write JSON, dumps and graphs straight to stdout; text answers only through writeText.
    const ALLOWED = /^(renderJson|writeJson|renderYaml|renderIptablesSave|renderLintJson|renderSarif|renderLintGithub|text\)|`\$\{JSON\.stringify|opts\.fit)/;
    const bypass = files
      // output.ts is writeText itself. (Paths under src/, not absolute: a checkout may itself sit in a folder named cli.)
      .filter((f) => f.slice(SRC.length).startsWith('/cli/') && !f.endsWith('/cli/output.ts'))
      .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/process\.stdout\.write\(\s*([^\n]{0,40})/g)].filter((m) => !ALLOWED.test(m[1])).map((m) => `${f.slice(SRC.length)}: ${m[0]}`));
    // Commands write through the output registry's emit() (src/cli/emit.ts), which writes text with
    // writeText, or call writeText themselves.
    expect(readFileSync(join(SRC, 'cli', 'emit.ts'), 'utf8')).toMatch(/return writeText\(/);
    expect(files.filter((f) => f.slice(SRC.length).startsWith('/cli/commands/') && /writeText\(|\bemit\(|\bfinish\(/.test(readFileSync(f, 'utf8'))).length).toBeGreaterThanOrEqual(9);
    expect(bypass).toEqual([]);
  });
});
