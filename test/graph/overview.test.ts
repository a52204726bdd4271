/**
 * `kpx graph` of a whole node above OVERVIEW_ABOVE Service ports: the overview (issue 29). Over the
 * iptables and IPVS samples, a generated 300-Service bundle and the sample cut short: the SVG stays
 * within a readable size, every Service port is drawn exactly once with the judgement's verdict
 * (as `kpx services -o json` gives it), `--service` still draws the detail and `--full` the whole
 * node in full; a small node keeps its full graph.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { cli } from '../helpers/cli.js';
import { generatedNode, type GeneratedNode } from '../helpers/generated.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { judgeSnapshot } from '../../src/judge/index.js';
import { serviceGraph, toDot } from '../../src/graph/index.js';
import { OVERVIEW_ABOVE, endpointsText, overviewDot, overviewGraph, overviewMermaid } from '../../src/graph/overview.js';
import { renderSvg } from '../../src/graph/svg.js';
import { graphAction } from '../../src/cli/commands/graph.js';

const SAMPLE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
const IPVS = new URL('../../samples/ipvs-mode-node', import.meta.url).pathname;
const KIND = new URL('../../samples/iptables-mode-kind', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-overview-'));
const cleanups: (() => void)[] = [() => rmSync(tmp, { recursive: true, force: true })];
afterAll(() => cleanups.forEach((f) => f()));

/** The SVG's size in points (Graphviz writes `width="1192pt" height="1094pt"`). */
function svgSize(svg: string): { width: number; height: number } {
  const m = /<svg[^>]*\swidth="([\d.]+)pt"\s+height="([\d.]+)pt"/.exec(svg);
  expect(m, 'the SVG states its size').not.toBeNull();
  return { width: Number(m![1]), height: Number(m![2]) };
}

const unescape = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** The text lines of each Service-port box of an overview SVG (nodes titled p0, p1, …). */
function portBoxes(svg: string): string[][] {
  const boxes: string[][] = [];
  for (const g of svg.split(/<g id="node\d+" class="node">/).slice(1)) {
    const title = /<title>([^<]*)<\/title>/.exec(g)?.[1];
    if (!title || !/^p\d+$/.test(title)) continue;
    boxes.push([...g.split('</g>')[0].matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => unescape(m[1]).replace(/\u00a0/g, ' ')));
  }
  return boxes;
}

interface JsonPort {
  namespace: string | null;
  name: string | null;
  portName: string | null;
  protocol: string | null;
  port: number;
  clusterIP: string | null;
  nodePort: number | null;
  id: string;
  state: string;
  judgement?: { reason: string | null; more: number };
}

const hostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
/** A Service port's name line and first address item, as the overview writes them (the key the boxes are matched by). */
const keyOf = (s: JsonPort) =>
  `${s.namespace !== null && s.name !== null ? `${s.namespace}/${s.name}${s.portName ? `:${s.portName}` : ''}` : s.id} | ${
    s.clusterIP ? `${hostPort(s.clusterIP, s.port)}/${(s.protocol ?? '<unknown>').toUpperCase()}` : s.port !== 0 ? `port ${s.port}/${(s.protocol ?? '<unknown>').toUpperCase()}` : `NodePort ${s.nodePort}/${(s.protocol ?? '<unknown>').toUpperCase()}`
  }`;

/**
 * Every Service port of `kpx services -o json` is in exactly one box, and the box's verdict line is
 * the judgement's: its state, its reason, and PROBLEM / CANNOT TELL when it is not healthy.
 */
async function checkEveryPortOnce(inputs: string[], boxes: string[][]): Promise<{ problems: number; cannotTell: number }> {
  const r = await cli(['services', ...inputs.flatMap((i) => ['-i', i]), '-o', 'json']);
  const ports = (JSON.parse(r.stdout) as { services: JsonPort[] }).services;
  expect(ports.length).toBeGreaterThan(OVERVIEW_ABOVE);
  expect(boxes.length).toBe(ports.length);
  const byKey = new Map<string, string[][]>();
  for (const b of boxes) {
    const k = `${b[0]} | ${b[1].split(' · ')[0]}`;
    byKey.set(k, [...(byKey.get(k) ?? []), b]);
  }
  let problems = 0;
  let cannotTell = 0;
  for (const s of ports) {
    const found = byKey.get(keyOf(s)) ?? [];
    expect(found.length, keyOf(s)).toBe(1);
    const verdict = found[0][2];
    const reason = s.judgement?.reason ? ` (${s.judgement.reason}${s.judgement.more ? ` +${s.judgement.more}` : ''})` : '';
    if (s.state === 'healthy') expect(verdict).toBe(`healthy${reason}`);
    else if (s.state === 'unknown') {
      expect(verdict).toBe(`CANNOT TELL: unknown${reason}`);
      cannotTell++;
    } else {
      expect(verdict).toBe(`PROBLEM: ${s.state}${reason}`);
      problems++;
    }
    expect(found[0][3], keyOf(s)).toMatch(/^\d+ endpoints?/);
  }
  return { problems, cannotTell };
}

/** `kpx graph` of a whole node to an SVG file: the SVG, stdout and stderr. */
async function drawNode(inputs: string[], name: string, extra: string[] = []): Promise<{ svg: string; stdout: string; stderr: string }> {
  const file = join(tmp, `${name}.svg`);
  const r = await cli(['graph', ...inputs.flatMap((i) => ['-i', i]), '--svg', file, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return { svg: readFileSync(file, 'utf8'), stdout: r.stdout, stderr: r.stderr };
}

describe('graph overview of a whole node', () => {
  it('the iptables sample (33 Service ports): a readable SVG, each Service port once with the judgement’s verdict, the way to one Service said', async () => {
    const { svg, stderr } = await drawNode([SAMPLE], 'iptables');
    const size = svgSize(svg);
    // In full it is about 2300×6700 pt; the overview fits a screen or two.
    expect(size.width).toBeLessThanOrEqual(1400);
    expect(size.height).toBeLessThanOrEqual(1400);
    const { problems } = await checkEveryPortOnce([SAMPLE], portBoxes(svg));
    expect(problems).toBe(6);
    // The entry points, and how to draw one Service in full: in the picture and in one line on stderr.
    expect(unescape(svg)).toContain('nat/KUBE-SERVICES');
    expect(unescape(svg)).toContain('nat/KUBE-NODEPORTS');
    expect(unescape(svg)).toContain('kpx graph --service ns/name');
    // Not a terminal (the runner's stderr): nothing on stderr, so that a script's stderr holds only errors.
    expect(stderr).toBe('');
    // Problems stand out by colour too (the verdict text says it for who cannot see colour).
    expect((svg.match(/fill="#fee2e2"/g) ?? []).length).toBe(problems);
  });

  it('a generated 300-Service node (420 Service ports): within a readable bound, each Service port once with its verdict', async () => {
    const gen: GeneratedNode = await generatedNode('iptables', { seed: 1, services: 300 });
    cleanups.push(gen.cleanup);
    const { svg } = await drawNode([gen.dir], 'gen300');
    const size = svgSize(svg);
    // About 61 pt² a Service port... in full this node's picture is tens of thousands of points tall.
    expect(size.width).toBeLessThanOrEqual(4200);
    expect(size.height).toBeLessThanOrEqual(4200);
    expect(Math.max(size.width, size.height) / Math.min(size.width, size.height)).toBeLessThan(2);
    const { problems } = await checkEveryPortOnce([gen.dir], portBoxes(svg));
    expect(problems).toBeGreaterThan(0);
    // One box per namespace, each labelled.
    const namespaces = new Set((gen.truth as { services: { namespace: string }[] }).services.map((s) => s.namespace));
    expect(namespaces.size).toBeGreaterThan(3);
    const text = unescape(svg).replace(/\u00a0/g, ' ');
    for (const ns of namespaces) expect(text).toContain(`namespace ${ns} · `);
    expect((svg.match(/<g id="clust\d+" class="cluster">/g) ?? []).length).toBe(namespaces.size);
  });

  it('the sample cut short (a constructed paste: the first 460 lines): verdicts kpx cannot give are drawn as CANNOT TELL, as the judgement says', async () => {
    const dir = join(tmp, 'cut');
    rmSync(dir, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    for (const f of readdirSync(SAMPLE)) copyFileSync(join(SAMPLE, f), join(dir, f));
    writeFileSync(join(dir, 'iptables-save.txt'), readFileSync(join(SAMPLE, 'iptables-save.txt'), 'utf8').split('\n').slice(0, 460).join('\n') + '\n');
    const { svg } = await drawNode([dir], 'cut');
    const { problems, cannotTell } = await checkEveryPortOnce([dir], portBoxes(svg));
    expect(cannotTell).toBeGreaterThan(5);
    expect(problems).toBeGreaterThan(0);
    expect((svg.match(/fill="#fef3c7"/g) ?? []).length).toBe(cannotTell);
  });

  it('the IPVS sample (38 Service ports the dumps do not name): the virtual servers as entry points, each Service port once', async () => {
    const { svg } = await drawNode([IPVS], 'ipvs');
    expect(svgSize(svg).height).toBeLessThanOrEqual(1400);
    await checkEveryPortOnce([IPVS], portBoxes(svg));
    expect(unescape(svg)).toContain('IPVS virtual servers');
  });

  it('Mermaid gets the same overview: the same boxes, problems by class and by text', async () => {
    const r = await cli(['graph', '-i', SAMPLE, '--format', 'mermaid']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('flowchart LR');
    const boxes: string[][] = [];
    for (const l of lines.slice(1)) {
      const node = /^ {2,4}(p\d+|e\d+|caption)\["(.*)"\]$/.exec(l);
      const sub = /^ {2}subgraph (ns\d+)\["([^"]*)"\]$|^ {2}end$/.exec(l);
      const link = /^ {2}e\d+ -->\|"\d+ ports?"\| ns\d+$|^ {4}p\d+( ~~~ p\d+)+$/.exec(l);
      const cls = /^ {2}(classDef \w+ [\w:#,-]+|class [\w,]+ \w+)$/.exec(l);
      expect(node ?? sub ?? link ?? cls, l).not.toBeNull();
      if (node?.[1].startsWith('p')) {
        expect(node[2].replace(/<br\/>/g, '')).not.toMatch(/["<>|`]/);
        boxes.push(node[2].split('<br/>').map((x) => x.replace(/#quot;/g, '"').replace(/#lt;/g, '<').replace(/#gt;/g, '>').replace(/#124;/g, '|').replace(/#35;/g, '#').replace(/#96;/g, '`')));
      }
    }
    await checkEveryPortOnce([SAMPLE], boxes);
    const problem = lines.find((l) => l.startsWith('  class ') && l.endsWith(' problem'))!;
    expect(problem.split(' ')[3].split(',').length).toBe(6);
  });

  it('on a terminal, one line on stderr says how to draw one Service in full', async () => {
    const said: string[] = [];
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((x: string | Uint8Array) => (said.push(String(x)), true));
    const tty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    try {
      expect(await graphAction([SAMPLE], { format: 'dot' })).toBe(0);
      expect(said.join('').trimEnd().split('\n')).toEqual([
        'kpx: 33 Service ports (more than 10): the whole node drawn as an overview, one box per Service port; kpx graph --service ns/name draws one in full, --full every chain',
      ]);
      said.length = 0;
      expect(await graphAction([SAMPLE], { format: 'dot', full: true })).toBe(0);
      expect(await graphAction([KIND], { format: 'dot' })).toBe(0);
      expect(said).toEqual([]);
    } finally {
      if (tty) Object.defineProperty(process.stderr, 'isTTY', tty);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
      out.mockRestore();
      err.mockRestore();
    }
  });

  it('--service still draws the Service in full; --full the whole node in full; a small node stays in full', async () => {
    const one = await cli(['graph', '-i', SAMPLE, '--service', 'kube-system/kube-dns']);
    expect(one.stderr).toBe('');
    expect(one.stdout).toContain('KUBE-SVC-TCOU7JCQXEZGVUNU');
    expect(one.stdout).toContain('kube-system/kube-dns:dns · SVC');
    // --full: today's whole-node graph, every chain (the same DOT as serviceGraph of every Service port).
    const full = await cli(['graph', '-i', SAMPLE, '--full']);
    expect(full.stderr).toBe('');
    const node = await judgeSnapshot(await loadSnapshot([SAMPLE]));
    expect(full.stdout).toBe(toDot(serviceGraph(node.snapshot, node.resolution.services, node.snapshot.name)));
    expect((full.stdout.match(/KUBE-SEP-/g) ?? []).length).toBeGreaterThan(40);
    const { svg } = await drawNode([SAMPLE], 'full', ['--full']);
    // …which is the picture nobody reads: the reason for the overview.
    expect(svgSize(svg).height).toBeGreaterThan(4000);
    // The kind sample has 4 Service ports: drawn in full, no overview and no line on stderr.
    const kind = await cli(['graph', '-i', KIND]);
    expect(kind.stderr).toBe('');
    expect(kind.stdout).toContain('KUBE-SERVICES');
    expect(kind.stdout).not.toContain('overview');
  });
});

describe('overview pieces', () => {
  it('endpoints and shares: listed up to four, "each" when equal, a range otherwise, unknown said', async () => {
    const node = await judgeSnapshot(await loadSnapshot([SAMPLE]));
    const by = (name: string, port: string) => node.resolution.services.find((s) => s.name === name && s.portName === port)!;
    expect(endpointsText(by('kube-dns', 'dns'))).toBe('2 endpoints (1 local): 50% / 50%');
    expect(endpointsText(by('seven-endpoints', 'http'))).toBe('7 endpoints (2 local), 14.3% each');
    expect(endpointsText(by('no-endpoints', 'http'))).toBe('0 endpoints');
    const seven = by('seven-endpoints', 'http');
    // Constructed: unequal shares and a hidden one.
    const skewed = { ...seven, endpoints: seven.endpoints.map((e, i) => ({ ...e, probability: i === 0 ? 0.4 : 0.1 })) };
    expect(endpointsText(skewed)).toBe('7 endpoints (2 local), 10%–40% each');
    const hidden = { ...seven, endpoints: seven.endpoints.map((e) => ({ ...e, probability: null })) };
    expect(endpointsText(hidden)).toBe('7 endpoints (2 local), shares unknown');
  });

  it('dump text in names is escaped in DOT and Mermaid (constructed names with quotes, newlines and brackets)', async () => {
    const node = await judgeSnapshot(await loadSnapshot([SAMPLE]));
    const hostile = node.resolution.services.map((s, i) => (i === 0 ? { ...s, namespace: 'ns"\n<b>|#`', name: 'x\\"y' } : s));
    const o = overviewGraph(hostile, (s) => ({ state: s.state, reason: '' }), 'node "a"\u0007');
    const dot = overviewDot(o);
    expect(dot).not.toContain('\u0007');
    const svg = await renderSvg(dot);
    expect(portBoxes(svg).length).toBe(hostile.length);
    const m = overviewMermaid(o);
    expect(m).toContain('ns#quot; #lt;b#gt;#124;#35;#96;/x\\#quot;y');
    expect(m).not.toContain('<b>');
  });
});
