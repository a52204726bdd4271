/** `kpx graph` and `kpx reverse` over the node sample, generated bundles of every mode, and a hostile fixture. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { resolveNft } from '../../src/kube/resolve-nft.js';
import type { Resolution } from '../../src/kube/types.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { mermaidText, serviceGraph, toDot, toMermaid, type Graph } from '../../src/graph/index.js';
import { renderSvg } from '../../src/graph/svg.js';
import { mergeReverse, parseReverseTarget, reverseLookup } from '../../src/graph/reverse.js';
import { renderReverseText } from '../../src/render/reverse/text.js';
import { graphAction } from '../../src/cli/commands/graph.js';
import { reverseAction } from '../../src/cli/commands/reverse.js';
import { chalkInit } from '../../src/render/colors.js';
import { generatedNode } from '../helpers/generated.js';

const SAMPLE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
const HOSTILE = new URL('../fixtures/issue10/hostile-comment.iptables-save', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-graph-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function load(paths: string[]): Promise<{ s: NodeSnapshot; r: Resolution }> {
  const s = await loadSnapshot(paths, { name: 'node-a' });
  let r = await resolveServices(s);
  if (s.nft.some((n) => n.tables.some((t) => t.name === 'kube-proxy')) && !r.services.some((x) => x.mode === 'nftables')) {
    const n = resolveNft(s);
    r = { ...r, services: [...r.services, ...n.services] };
  }
  return { s, r };
}

/** Mermaid flowchart syntax as kpx writes it: ids n<digits>, labels quoted and entity-escaped. */
function checkMermaid(text: string): void {
  const lines = text.trimEnd().split('\n');
  expect(lines[0]).toBe('flowchart LR');
  const ids = new Set<string>();
  for (const l of lines.slice(1)) {
    const node = /^ {2}(n\d+)(\(\["|\["|\{\{"|\[\("|\[\/")(.*?)("\]\)|"\]|"\}\}|"\)\]|"\\\])$/.exec(l);
    const edge = /^ {2}(n\d+) -->(?:\|"([^"|]*)"\|)? (n\d+)$/.exec(l);
    expect(node !== null || edge !== null, l).toBe(true);
    if (node) {
      expect(node[3].replace(/<br\/>|<small>|<\/small>/g, '')).not.toMatch(/["<>|`]/);
      ids.add(node[1]);
    }
    if (edge) {
      expect(ids.has(edge[1]) && ids.has(edge[3])).toBe(true);
    }
  }
}

/** The DOT is valid Graphviz: the WebAssembly Graphviz lays it out into an SVG that names every node. */
async function checkDot(dot: string, g: Graph): Promise<void> {
  expect(dot.startsWith('digraph kpx {')).toBe(true);
  const svg = await renderSvg(dot);
  expect(svg).toMatch(/<svg[\s\S]*<\/svg>\s*$/);
  expect((svg.match(/<g id="node\d+" class="node">/g) ?? []).length).toBe(g.nodes.length);
}

const edgesFrom = (g: Graph, label: string) => g.edges.filter((e) => g.nodes.find((n) => n.id === e.from)?.label === label);

describe('graph', () => {
  it('one iptables Service: front ends → dispatch → SVC → SEP → pods, names first, hashes second', async () => {
    const { s, r } = await load([SAMPLE]);
    const svc = r.services.filter((x) => x.namespace === 'kube-system' && x.portName === 'dns');
    const g = serviceGraph(s, svc, 'dns');
    const svcNode = g.nodes.find((n) => n.kind === 'chain' && n.label === 'kube-system/kube-dns:dns · SVC')!;
    expect(svcNode.detail).toBe(svc[0].chains.svc);
    const eps = g.nodes.filter((n) => n.kind === 'endpoint').map((n) => n.label).sort();
    expect(eps).toEqual(['10.244.0.2:53', '10.244.1.2:53']);
    expect(edgesFrom(g, '10.96.0.10:53/udp').length).toBe(1);
    const fromSvc = g.edges.filter((e) => e.from === svcNode.id);
    // Each endpoint's share, not the ladder's conditional --probability (and the last rule labelled too).
    expect(fromSvc.map((e) => e.label).sort()).toEqual(['50%', '50%']);
    expect(g.edges.filter((e) => e.label === 'DNAT').length).toBe(2);
    checkMermaid(toMermaid(g));
    await checkDot(toDot(g), g);
  });

  for (const mode of ['iptables', 'ipvs', 'nftables'] as const) {
    it(`whole node, ${mode} mode: every endpoint reachable in the graph, DOT renders, Mermaid plausible`, async () => {
      const gen = await generatedNode(mode, { seed: 3, services: 25 });
      try {
        const { s, r } = await load([gen.dir]);
        const g = serviceGraph(s, r.services);
        const epLabels = new Set(g.nodes.filter((n) => n.kind === 'endpoint').map((n) => n.label));
        // Every endpoint the node's rules send to (truth lists remote ones of internal-Local Services too).
        let n = 0;
        for (const t of r.services)
          for (const e of t.endpoints) {
            expect(epLabels.has(e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`), `${t.id} ${e.ip}`).toBe(true);
            n++;
          }
        expect(n).toBeGreaterThan(40);
        // …and reachable from the front ends along the edges.
        const next = new Map<string, string[]>();
        for (const e of g.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
        const seen = new Set(g.nodes.filter((x) => x.kind === 'frontend').map((x) => x.id));
        const queue = [...seen];
        while (queue.length) for (const t of next.get(queue.pop()!) ?? []) if (!seen.has(t)) {
          seen.add(t);
          queue.push(t);
        }
        for (const x of g.nodes.filter((y) => y.kind === 'endpoint')) expect(seen.has(x.id), x.label).toBe(true);
        // Every front end of every Service port is drawn.
        for (const t of r.services) if (t.clusterIP) expect(g.nodes.some((x) => x.kind === 'frontend' && x.label.startsWith(t.clusterIP!.includes(':') ? `[${t.clusterIP}]` : t.clusterIP!))).toBe(true);
        for (const e of g.edges) expect(g.nodes.some((n) => n.id === e.from) && g.nodes.some((n) => n.id === e.to)).toBe(true);
        // Edges into a Service's endpoints carry each endpoint's share (not the ladder's conditional
        // probability, not numgen's 1/n of one rule): for a Service with several endpoints they add up to 100%.
        const ladder = r.services.find((t) => t.endpoints.length >= 3 && t.endpoints.every((e) => e.probability! > 0 && e.via !== undefined))!;
        expect(ladder, 'a Service with three or more endpoints').toBeDefined();
        let total = 0;
        for (const e of ladder.endpoints) {
          const host = e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`;
          const target = mode === 'ipvs' ? (id: string) => id === `ep:${host}` : (id: string) => id.endsWith(`:${e.via}`) || id.endsWith(`/${e.via}`);
          const labels = g.edges.filter((x) => target(x.to)).map((x) => x.label ?? '');
          const share = `${(e.probability! * 100).toFixed(1).replace(/\.0$/, '')}%`;
          expect(labels.length, `${ladder.id} ${host}`).toBeGreaterThan(0);
          // (An affinity rule's jump into the same chain is another, unlabelled edge.)
          expect(labels.some((l) => l.startsWith(share)), `${ladder.id} ${host}: ${JSON.stringify(labels)}`).toBe(true);
          total += Number.parseFloat(share);
        }
        expect(Math.abs(total - 100)).toBeLessThan(0.1 * ladder.endpoints.length);
        expect(g.edges.filter((x) => /p=0\.|\(1\/\d+\)/.test(x.label ?? '')).map((x) => x.label)).toEqual([]);
        checkMermaid(toMermaid(g));
        await checkDot(toDot(g), g);
      } finally {
        gen.cleanup();
      }
    });
  }

  it('a verdict is never left floating: every drop node has an edge into it (externalTrafficPolicy Local included)', async () => {
    for (const mode of ['iptables', 'nftables', 'ipvs']) {
      const snap = await loadSnapshot([new URL(`../../samples/${mode}-mode-node`, import.meta.url).pathname]);
      const res = await resolveServices(snap);
      const g = serviceGraph(snap, res.services, mode);
      const drops = g.nodes.filter((n) => n.kind === 'drop');
      if (mode === 'iptables') expect(drops.length).toBeGreaterThanOrEqual(6);
      for (const d of drops) expect(g.edges.some((e) => e.to === d.id), `${mode}: ${d.label}`).toBe(true);
    }
    // The Local-policy NodePort without a local endpoint: its EXT chain sends other sources to the drop.
    const snap = await loadSnapshot([new URL('../../samples/iptables-mode-node', import.meta.url).pathname]);
    const res = await resolveServices(snap);
    const g = serviceGraph(snap, res.services.filter((s) => s.name === 'nodeport-local-no-local-endpoints'), 't');
    const drop = g.nodes.find((n) => n.kind === 'drop')!;
    const into = g.edges.filter((e) => e.to === drop.id).map((e) => [g.nodes.find((n) => n.id === e.from)!.detail, e.label]);
    expect(into).toEqual([['KUBE-EXT-ECWMWIKMYMKN7T4W', 'other sources (Local policy, no endpoint here)']]);
  });

  it('the whole node: one box per Service (Graphviz clusters), shared dispatch chains outside every box', async () => {
    const snap = await loadSnapshot([SAMPLE]);
    const res = await resolveServices(snap);
    const g = serviceGraph(snap, res.services, 'node');
    const services = new Set(res.services.map((s) => `${s.namespace}/${s.name}`));
    expect(g.groups?.map((x) => x.label).sort()).toEqual([...services].sort());
    const grouped = g.groups!.flatMap((x) => x.nodes);
    expect(new Set(grouped).size).toBe(grouped.length);
    const dispatch = g.nodes.filter((n) => n.kind === 'dispatch');
    expect(dispatch.length).toBeGreaterThan(0);
    for (const d of dispatch) expect(grouped).not.toContain(d.id);
    // kube-dns's endpoint chains are in kube-dns's box.
    const dns = g.groups!.find((x) => x.label === 'kube-system/kube-dns')!;
    const seps = g.nodes.filter((n) => n.kind === 'endpoint-chain' && n.label.startsWith('kube-system/kube-dns:'));
    expect(seps.length).toBeGreaterThanOrEqual(4);
    for (const n of seps) expect(dns.nodes).toContain(n.id);
    const dot = toDot(g);
    expect(dot.match(/^ {2}subgraph cluster_\d+ \{$/gm)?.length).toBe(services.size);
    await checkDot(dot, g);
  });

  it('escapes hostile dump text in DOT and Mermaid', async () => {
    const { s, r } = await load([HOSTILE]);
    const g = serviceGraph(s, r.services, 'title with "quotes" and <tags>');
    const m = toMermaid(g);
    checkMermaid(m);
    expect(m).not.toContain('<script>');
    expect(mermaidText('a"b<c>d|e#f`g')).toBe('a#quot;b#lt;c#gt;d#124;e#35;f#96;g');
    const dot = toDot(g);
    expect(dot).toContain('label="title with \\"quotes\\" and <tags>"');
    await checkDot(dot, g);
  });

  it('the command writes DOT, Mermaid and SVG', async () => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((x: string | Uint8Array) => (out.push(String(x)), true));
    const svg = join(tmp, 'g.svg');
    try {
      expect(await graphAction([SAMPLE], { format: 'mermaid', service: ['kube-system/kube-dns'] })).toBe(0);
      expect(await graphAction([SAMPLE], { format: 'dot', service: ['10.96.0.1'], svg })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(out[0]).toMatch(/^flowchart LR\n/);
    expect(out[0]).toContain('kube-system/kube-dns:dns-tcp · SVC');
    expect(readFileSync(svg, 'utf8')).toContain('default/kubernetes:https');
    // A --service that names nothing: the near misses on stderr, exit 2 (as every command's miss).
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await graphAction([SAMPLE], { format: 'dot', service: ['kube-system/kube-dsn'] })).toBe(2);
      expect(err.mock.calls.map((c) => String(c[0])).join('')).toBe('no Service kube-system/kube-dsn in the dumps\ndid you mean:\n  kube-system/kube-dns\n');
    } finally {
      err.mockRestore();
    }
  });
});

describe('reverse lookup', () => {
  it('parses targets', () => {
    expect(parseReverseTarget('10.244.1.3')).toEqual({ ip: '10.244.1.3' });
    expect(parseReverseTarget('10.244.1.3:8080')).toEqual({ ip: '10.244.1.3', port: 8080 });
    expect(parseReverseTarget('[fd00::5]:80')).toEqual({ ip: 'fd00::5', port: 80 });
    expect(parseReverseTarget('fd00::5')).toEqual({ ip: 'fd00::5' });
    expect(typeof parseReverseTarget('nope')).toBe('string');
  });

  it('finds every Service port and front end that lands on a pod, with shares and evidence', async () => {
    const { s, r } = await load([SAMPLE]);
    const res = reverseLookup(s, r, { ip: '10.244.1.2' });
    expect(res.matches.map((m) => m.service).sort()).toEqual(['kube-system/kube-dns:dns-tcp/tcp', 'kube-system/kube-dns:dns/udp', 'kube-system/kube-dns:metrics/tcp']);
    const dns = res.matches.find((m) => m.service === 'kube-system/kube-dns:dns/udp')!;
    expect(dns.frontends).toEqual([{ kind: 'clusterIP', address: '10.96.0.10', port: 53, protocol: 'udp', probability: 0.5, policy: 'Cluster' }]);
    expect(dns.endpoint).toMatchObject({ ip: '10.244.1.2', port: 53, local: true });
    expect(dns.evidence.some((e) => /DNAT --to-destination 10.244.1.2:53/.test(e.text))).toBe(true);
    expect(reverseLookup(s, r, { ip: '10.244.1.2', port: 9153 }).matches.map((m) => m.service)).toEqual(['kube-system/kube-dns:metrics/tcp']);
    // A Local-policy LoadBalancer: the node's own endpoint gets all of the external traffic, a remote one none.
    const lb = r.services.find((x) => x.name === 'loadbalancer-local')!;
    const local = lb.endpoints.find((e) => e.local === true)!;
    const remote = lb.endpoints.find((e) => e.local === false)!;
    const lr = reverseLookup(s, r, { ip: local.ip, port: local.port! }).matches.find((m) => m.name === 'loadbalancer-local')!;
    expect(lr.frontends.map((f) => [f.kind, Number(f.probability!.toFixed(6)), f.policy])).toEqual([
      ['clusterIP', Number((1 / 3).toFixed(6)), 'Cluster'],
      ['nodePort', 1, 'Local'],
      ['loadBalancerIP', 1, 'Local'],
    ]);
    const rr = reverseLookup(s, r, { ip: remote.ip, port: remote.port! }).matches.find((m) => m.name === 'loadbalancer-local')!;
    expect(rr.frontends.filter((f) => f.policy === 'Local').every((f) => f.probability === 0 && /another node/.test(f.note ?? ''))).toBe(true);
    expect(reverseLookup(s, r, { ip: '10.9.9.9' }).matches).toEqual([]);
  });

  it('reports other DNAT rules to the address, and merges nodes', async () => {
    const { s, r } = await load([HOSTILE]);
    const a = reverseLookup(s, r, { ip: '10.244.1.7' }, 'node-a');
    expect(a.matches.length).toBe(1);
    const text = join(tmp, 'hostport.txt');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(text, '*nat\n:PREROUTING ACCEPT [0:0]\n:CNI-DN-1234 - [0:0]\n-A CNI-DN-1234 -p tcp -m tcp --dport 8081 -j DNAT --to-destination 10.244.1.7:8080\nCOMMIT\n');
    const { s: s2, r: r2 } = await load([text]);
    const b = reverseLookup(s2, r2, { ip: '10.244.1.7', port: 8080 }, 'node-b');
    expect(b.otherDnat).toEqual([{ node: 'node-b', where: 'nat/CNI-DN-1234', to: '10.244.1.7:8080', file: text, line: 4, text: '-A CNI-DN-1234 -p tcp -m tcp --dport 8081 -j DNAT --to-destination 10.244.1.7:8080' }]);
    const m = mergeReverse([a, b]);
    expect(m.nodes).toEqual(['node-a', 'node-b']);
    expect(m.matches.length + m.otherDnat.length).toBe(2);
    const t = renderReverseText(m, chalkInit(false));
    expect(t).toContain('is an endpoint of 1 Service port on 2 nodes');
    expect(t).toContain('Other DNAT rules to 10.244.1.7:');
  });

  it('the command prints text and JSON', async () => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((x: string | Uint8Array) => (out.push(String(x)), true));
    try {
      expect(await reverseAction('10.244.1.2:53', { input: [SAMPLE], output: 'text', color: false })).toBe(0);
      expect(await reverseAction('10.244.1.2:53', { input: [SAMPLE], output: 'json' })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(out[0]).toContain('10.244.1.2:53 is an endpoint of 2 Service ports on node');
    expect(out[0]).toMatch(/clusterIP\s+10\.96\.0\.10:53\/udp\s+50\.00%/);
    expect(JSON.parse(out[1]).matches.length).toBe(2);
    await expect(reverseAction('bogus', { input: [SAMPLE], output: 'text' })).rejects.toThrow(/expected POD-IP/);
  });
});
