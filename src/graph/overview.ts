/**
 * The whole node's graph when it is too big to read (issue 29): an overview. Every chain, set and
 * endpoint of a node with dozens of Service ports makes a picture of thousands of points a side
 * (the iptables sample: 33 Service ports, about 2300×6700 pt) that nobody reads. The overview draws
 * the entry points (the dispatch chains and maps that claim front ends: nat/KUBE-SERVICES,
 * nat/KUBE-NODEPORTS, the nft service-ips / service-nodeports maps, the IPVS virtual servers) on
 * the left, and one box per Service port, grouped by namespace (one cluster per namespace), laid
 * out as a grid so that the picture stays about as wide as it is tall. Each box says the Service
 * port's name, its VIP:port/proto (NodePort, external and LoadBalancer IPs), the judgement's
 * verdict (state and reason, as `kpx services` prints them: given by the caller, never computed
 * here) and its endpoints with their shares where they fit. Problems stand out by colour and by
 * text (`PROBLEM:`, `CANNOT TELL:`): colour alone is lost in print and to colour-blind readers.
 *
 * `kpx graph --service ns/name` draws one Service port in full; `kpx graph --full` the whole node
 * in full (serviceGraph in index.ts).
 */
import type { ServicePort, ServiceState } from '../kube/types.js';
import type { FrontEndKind } from '../kube/facts.js';
import { formatHostPort } from '../model/addr.js';
import { maxOf, minOf, printable } from '../source/index.js';
import { dotString, mermaidText, shareLabel, svcName } from './index.js';

/**
 * Above this many Service ports the whole node's graph is drawn as the overview (unless `--full`).
 * Ten Service ports in full are already about 1000 pt tall (each one a front end, its chains and its
 * endpoints); the kind sample (4) stays in full, the node samples (33, 38) get the overview.
 */
export const OVERVIEW_ABOVE = 10;

/** The judgement's verdict on one Service port, as the caller (the CLI, from src/judge) gives it. */
export interface PortVerdict {
  readonly state: ServiceState;
  /** The REASON (`no-endpoint-rules`, `dump-not-whole +1`…), '' when healthy. */
  readonly reason: string;
}

/** How a verdict is shown: healthy plain, a problem in red, a verdict kpx cannot give in amber. */
export type VerdictTone = 'healthy' | 'problem' | 'cannot-tell';

export interface OverviewPort {
  readonly id: string;
  /** `ns/name:port` (as `--service` takes it), or the address when no dump names the Service. */
  readonly name: string;
  /** `10.96.0.10:53/UDP · NodePort 30302 · LB 172.18.200.1` */
  readonly address: string;
  readonly state: ServiceState;
  readonly tone: VerdictTone;
  /** `healthy`, `PROBLEM: no-endpoints (no-endpoint-rules)`, `CANNOT TELL: unknown (dump-not-whole)` */
  readonly verdict: string;
  /** `2 endpoints (1 local): 50% / 50%` */
  readonly endpoints: string;
}

export interface OverviewNamespace {
  readonly id: string;
  /** `namespace kube-system · 3 Service ports, 1 with a problem` */
  readonly label: string;
  /** Problems first (what stops traffic, what may, what kpx cannot tell), then healthy, each in the resolver's order. */
  readonly ports: readonly OverviewPort[];
}

export interface OverviewEntry {
  readonly id: string;
  /** `nat/KUBE-SERVICES`, `ip kube-proxy/service-ips`, `IPVS virtual servers (ClusterIP)` */
  readonly label: string;
  readonly detail: string;
}

export interface Overview {
  readonly title: string;
  /** What the picture is, what is wrong, how to see one Service in full. */
  readonly caption: readonly string[];
  readonly entries: readonly OverviewEntry[];
  readonly namespaces: readonly OverviewNamespace[];
  /** Entry point → namespace box, labelled with how many Service ports of that namespace it claims. */
  readonly edges: readonly { readonly from: string; readonly to: string; readonly label: string }[];
  /** Service ports per row inside a namespace box. */
  readonly columns: number;
  readonly ports: number;
}

/** Dump text on one line of a box: line breaks and tabs as spaces, other control characters escaped (printable). */
const oneLine = (s: string) => printable(s.replace(/[\t\n\r]/g, ' '), 4096);

/** Unhealthy first, as `kpx services` lists them. */
const STATE_ORDER: readonly ServiceState[] = ['no-endpoints', 'no-local-endpoints', 'partial', 'unknown', 'healthy'];

export function toneOf(state: ServiceState): VerdictTone {
  return state === 'healthy' ? 'healthy' : state === 'unknown' ? 'cannot-tell' : 'problem';
}

function verdictText(v: PortVerdict): string {
  const tone = toneOf(v.state);
  const what = `${v.state}${v.reason ? ` (${v.reason})` : ''}`;
  return tone === 'healthy' ? what : tone === 'problem' ? `PROBLEM: ${what}` : `CANNOT TELL: ${what}`;
}

const KIND_WORD: Record<FrontEndKind, string> = { 'cluster-ip': 'ClusterIP', 'node-port': 'NodePort', 'external-ip': 'external IP', 'load-balancer-ip': 'LoadBalancer IP' };

/** The address line: the ClusterIP with port and protocol, then the other front ends (one of each kind, and how many more). */
function addressText(s: ServicePort): string {
  const proto = s.protocol === null ? '<unknown>' : s.protocol.toUpperCase();
  const parts: string[] = [];
  // Port 0 without a ClusterIP: a NodePort whose Service port the dumps do not give (IPVS without API objects).
  if (s.clusterIP) parts.push(`${formatHostPort(s.clusterIP, s.port)}/${proto}`);
  else if (s.port !== 0) parts.push(`port ${s.port}/${proto}`);
  if (s.nodePort !== null) parts.push(`NodePort ${s.nodePort}${parts.length ? '' : `/${proto}`}`);
  const more = (word: string, ips: readonly string[]) => {
    if (ips.length) parts.push(`${word} ${ips[0]}${ips.length > 1 ? ` +${ips.length - 1}` : ''}`);
  };
  more('external', s.externalIPs);
  more('LB', s.loadBalancerIPs);
  return parts.length ? parts.join(' · ') : `${proto}, address not in the dumps`;
}

/** How many endpoints, how many local, and the shares where they fit on one line. */
export function endpointsText(s: ServicePort): string {
  const n = s.endpoints.length;
  const unresolved = s.unresolvedEndpoints?.length ?? 0;
  const total = n + unresolved;
  let text = `${total} endpoint${total === 1 ? '' : 's'}`;
  const known = s.endpoints.filter((e) => e.local !== null);
  const extra: string[] = [];
  if (known.length === n && n > 0) extra.push(`${known.filter((e) => e.local).length} local`);
  if (unresolved) extra.push(`${unresolved} address${unresolved === 1 ? '' : 'es'} unknown`);
  if (extra.length) text += ` (${extra.join(', ')})`;
  if (n === 0 || unresolved) return text;
  const shares = s.endpoints.map((e) => e.probability);
  if (shares.some((p) => p === null)) return `${text}, shares unknown`;
  const p = shares as number[];
  if (n <= 4) return `${text}: ${p.map(shareLabel).join(' / ')}`;
  const min = minOf(p);
  const max = maxOf(p);
  return shareLabel(min) === shareLabel(max) ? `${text}, ${shareLabel(min)} each` : `${text}, ${shareLabel(min)}–${shareLabel(max)} each`;
}

/** The entry point a front end is claimed by: the dispatch chain or map its evidence line is in; IPVS: the virtual servers of its kind. */
function entryOf(s: ServicePort, kind: FrontEndKind, where: string | undefined): { key: string; label: string; detail: string } {
  if (s.mode === 'ipvs') return { key: `ipvs:${s.family}:${kind}`, label: `IPVS virtual servers`, detail: `${KIND_WORD[kind]}s${s.family === 6 ? ', IPv6' : ''}` };
  const label = where !== undefined ? oneLine(where) : `${s.mode} dispatch (not named in the dumps)`;
  return { key: `${s.mode}:${s.family}:${label}`, label, detail: `${s.mode}${s.mode === 'iptables' ? `, IPv${s.family}` : ''}` };
}

/** Columns of the grid: about as many Service ports a row as rows in the picture (a box is about 3.5 times as wide as tall). */
export function overviewColumns(ports: number): number {
  return Math.max(1, Math.min(12, Math.round(Math.sqrt(ports / 3.5))));
}

const nsLabel = (ns: string | null) => (ns === null ? 'Services the dumps do not name (no API objects, no comments)' : `namespace ${oneLine(ns)}`);

/** The overview of these Service ports (the whole node's), each with the judgement's verdict. */
export function overviewGraph(services: readonly ServicePort[], verdictOf: (s: ServicePort) => PortVerdict, title: string): Overview {
  const byNs = new Map<string | null, { s: ServicePort; v: PortVerdict }[]>();
  for (const s of services) {
    const list = byNs.get(s.namespace) ?? [];
    list.push({ s, v: verdictOf(s) });
    byNs.set(s.namespace, list);
  }
  // Namespaces with a problem first, then by name (the unnamed last).
  const nsOrder = [...byNs.keys()].sort((a, b) => {
    const pa = byNs.get(a)!.some((x) => x.v.state !== 'healthy') ? 0 : 1;
    const pb = byNs.get(b)!.some((x) => x.v.state !== 'healthy') ? 0 : 1;
    if (pa !== pb) return pa - pb;
    if (a === null || b === null) return a === null ? 1 : -1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  const entries = new Map<string, OverviewEntry & { count: number }>();
  const edgeCounts = new Map<string, Map<string, number>>();
  const namespaces: OverviewNamespace[] = [];
  const tally = new Map<ServiceState, number>();
  let p = 0;
  for (const [i, ns] of nsOrder.entries()) {
    const id = `ns${i}`;
    const list = byNs.get(ns)!;
    const ordered = STATE_ORDER.flatMap((st) => list.filter((x) => x.v.state === st));
    const ports: OverviewPort[] = [];
    for (const { s, v } of ordered) {
      tally.set(v.state, (tally.get(v.state) ?? 0) + 1);
      ports.push({ id: `p${p++}`, name: oneLine(svcName(s)), address: addressText(s), state: v.state, tone: toneOf(v.state), verdict: verdictText(v), endpoints: endpointsText(s) });
      // Each entry point that claims one of its front ends, counted once per Service port.
      const seen = new Set<string>();
      for (const fe of s.frontEnds) {
        const e = entryOf(s, fe.kind, fe.evidence.where);
        if (seen.has(e.key)) continue;
        seen.add(e.key);
        const known = entries.get(e.key) ?? { id: '', label: e.label, detail: e.detail, count: 0 };
        known.count++;
        entries.set(e.key, known);
        const per = edgeCounts.get(e.key) ?? new Map<string, number>();
        per.set(id, (per.get(id) ?? 0) + 1);
        edgeCounts.set(e.key, per);
      }
    }
    const bad = ports.filter((x) => x.tone !== 'healthy').length;
    namespaces.push({ id, label: `${nsLabel(ns)} · ${ports.length} Service port${ports.length === 1 ? '' : 's'}${bad ? `, ${bad} not healthy` : ''}`, ports });
  }
  // Entry points: the busiest first (nat/KUBE-SERVICES before a filter chain that holds a few REJECTs).
  const keys = [...entries.keys()].sort((a, b) => entries.get(b)!.count - entries.get(a)!.count || (a < b ? -1 : a > b ? 1 : 0));
  const entryList: OverviewEntry[] = keys.map((k, i) => {
    const e = entries.get(k)!;
    return { id: `e${i}`, label: e.label, detail: `${e.detail} · ${e.count} Service port${e.count === 1 ? '' : 's'}` };
  });
  const edges = keys.flatMap((k, i) => [...edgeCounts.get(k)!].map(([to, n]) => ({ from: `e${i}`, to, label: `${n} port${n === 1 ? '' : 's'}` })));
  const bad = STATE_ORDER.filter((st) => st !== 'healthy' && tally.get(st));
  const problems = bad.reduce((n, st) => n + tally.get(st)!, 0);
  const caption = [
    `${oneLine(title)}: overview of ${services.length} Service ports in ${namespaces.length} namespace box${namespaces.length === 1 ? '' : 'es'}${problems ? `, ${problems} not healthy (${bad.map((st) => `${tally.get(st)} ${st}`).join(', ')})` : ', all healthy'}`,
    'one Service in full: kpx graph --service ns/name   every chain of the node: kpx graph --full',
  ];
  return { title, caption, entries: entryList, namespaces, edges, columns: overviewColumns(services.length), ports: services.length };
}

// ---------------------------------------------------------------------------------------------
// Renderers

const DOT_TONE: Record<VerdictTone, string> = {
  healthy: 'style="rounded,filled", fillcolor="#ffffff", color="#6b7280"',
  problem: 'style="rounded,filled,bold", fillcolor="#fee2e2", color="#b91c1c", penwidth=2',
  'cannot-tell': 'style="rounded,filled,bold", fillcolor="#fef3c7", color="#b45309", penwidth=2',
};

const portText = (x: OverviewPort) => `${x.name}\n${x.address}\n${x.verdict}\n${x.endpoints}`;

/** The rows of a namespace box: `columns` Service ports each. */
function rows<T>(list: readonly T[], columns: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += columns) out.push(list.slice(i, i + columns));
  return out;
}

/**
 * The overview as DOT, left to right: entry points, then the namespace boxes stacked. Inside a box
 * the Service ports form a grid: each row is held together by invisible edges (one rank per
 * column), each column by invisible edges within its rank, which keep the rows in order.
 */
export function overviewDot(o: Overview): string {
  const lines = [
    'digraph kpx {',
    // Left-justified lines: each line escaped on its own, then ended with `\l`.
    `  label="${o.caption.map((l) => `${dotString(l).slice(1, -1)}\\l`).join('')}";`,
    '  labelloc=t;',
    '  labeljust=l;',
    '  rankdir=LR;',
    '  compound=true;',
    '  nodesep=0.15;',
    '  ranksep=0.3;',
    '  node [fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=9];',
    // Every namespace box hangs from an invisible anchor: its first column one rank right of the entry points.
    '  anchor [style=invis, shape=point];',
  ];
  for (const e of o.entries) lines.push(`  ${e.id} [label=${dotString(`${e.label}\n${e.detail}`)}, shape=box, style="rounded,dashed"];`);
  for (const ns of o.namespaces) {
    lines.push(`  subgraph cluster_${ns.id} {`, `    label=${dotString(ns.label)};`, '    labeljust=l;', '    style=rounded;', '    color="#9ca3af";');
    for (const x of ns.ports) lines.push(`    ${x.id} [label=${dotString(portText(x))}, shape=box, ${DOT_TONE[x.tone]}];`);
    const grid = rows(ns.ports, o.columns);
    for (const row of grid) if (row.length > 1) lines.push(`    ${row.map((x) => x.id).join(' -> ')} [style=invis];`);
    // Each column on one rank, its rows in order: flat invisible edges keep the order (drawn from the
    // last row up: left to right turned into bottom to top by rankdir=LR), problems on top.
    for (let c = 0; c < o.columns && grid.length > 1; c++) {
      const column = grid.map((row) => row[c]).filter((x) => x !== undefined);
      if (column.length > 1) lines.push(`    { rank=same; ${column.map((x) => x.id).reverse().join(' -> ')} [style=invis]; }`);
    }
    lines.push('  }', `  anchor -> ${ns.ports[0].id} [style=invis];`);
  }
  const first = new Map(o.namespaces.map((ns) => [ns.id, ns.ports[0].id]));
  for (const e of o.edges) lines.push(`  ${e.from} -> ${first.get(e.to)} [lhead=cluster_${e.to}, label=${dotString(e.label)}];`);
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** The overview as Mermaid: the same boxes (subgraphs per namespace, rows held by invisible links), problems by class and by text. */
export function overviewMermaid(o: Overview): string {
  const lines = ['flowchart LR', `  caption["${o.caption.map(mermaidText).join('<br/>')}"]`];
  for (const e of o.entries) lines.push(`  ${e.id}["${mermaidText(e.label)}<br/><small>${mermaidText(e.detail)}</small>"]`);
  for (const ns of o.namespaces) {
    lines.push(`  subgraph ${ns.id}["${mermaidText(ns.label)}"]`);
    for (const x of ns.ports) lines.push(`    ${x.id}["${portText(x).split('\n').map(mermaidText).join('<br/>')}"]`);
    for (const row of rows(ns.ports, o.columns)) if (row.length > 1) lines.push(`    ${row.map((x) => x.id).join(' ~~~ ')}`);
    lines.push('  end');
  }
  for (const e of o.edges) lines.push(`  ${e.from} -->|"${mermaidText(e.label)}"| ${e.to}`);
  lines.push('  classDef problem fill:#fee2e2,stroke:#b91c1c,stroke-width:2px');
  lines.push('  classDef cannotTell fill:#fef3c7,stroke:#b45309,stroke-width:2px');
  lines.push('  classDef note fill:#ffffff,stroke:#ffffff');
  lines.push('  class caption note');
  const ports = o.namespaces.flatMap((ns) => ns.ports);
  const problem = ports.filter((x) => x.tone === 'problem').map((x) => x.id);
  const cannot = ports.filter((x) => x.tone === 'cannot-tell').map((x) => x.id);
  if (problem.length) lines.push(`  class ${problem.join(',')} problem`);
  if (cannot.length) lines.push(`  class ${cannot.join(',')} cannotTell`);
  return lines.join('\n') + '\n';
}
