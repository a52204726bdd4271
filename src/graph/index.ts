/**
 * `kpx graph`: the chain / set / virtual-server graph of Service ports, as data, then as Graphviz
 * DOT or Mermaid. Nodes are front ends (ClusterIP, NodePort, externalIP, LoadBalancer IP), the
 * Service's chains (iptables KUBE-SVC/SVL/EXT/FW/SEP, nftables service-/external-/endpoint-
 * chains), IPVS virtual servers, and endpoints. Labels put the Service name first and the
 * hashed chain name second. Edges carry the probability or the condition of the jump.
 */
import type { Resolution, ServicePort } from '../kube/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { Chain, Rule, Table } from '../model/netfilter.js';
import type { NftChain, NftTable } from '../model/nft.js';
import { resolveMap } from '../model/nft.js';
import { formatCidr, formatHostPort, formatIp, ipEquals, parseIp } from '../model/addr.js';
import { servicePortName } from '../kube/hash.js';

export type GraphNodeKind = 'frontend' | 'dispatch' | 'chain' | 'endpoint-chain' | 'virtual-server' | 'endpoint' | 'drop';

export interface GraphNode {
  readonly id: string;
  readonly kind: GraphNodeKind;
  /** First line: what it is for people (Service name, address). */
  readonly label: string;
  /** Second line: the hashed chain name, set or virtual-server key. */
  readonly detail?: string;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly label?: string;
}

export interface Graph {
  readonly title: string;
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
  /**
   * The nodes of each Service (ns/name), drawn as one box each so that a whole node's picture reads
   * Service by Service; nodes two Services share (the dispatch chains, a pod behind both) stay out.
   */
  readonly groups?: readonly { readonly label: string; readonly nodes: readonly string[] }[];
}

/** `ns/name:port` (as `--service` takes it), or the Service port's id when no dump names it. */
export const svcName = (s: ServicePort) => (s.namespace !== null && s.name !== null ? servicePortName(s.namespace, s.name, s.portName) : s.id);

class Builder {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges: GraphEdge[] = [];
  private readonly edgeKeys = new Set<string>();
  /** The nodes the Service being built uses (for its group). */
  touched = new Set<string>();
  node(n: GraphNode): string {
    if (!this.nodes.has(n.id)) this.nodes.set(n.id, n);
    this.touched.add(n.id);
    return n.id;
  }
  edge(from: string, to: string, label?: string): void {
    this.touched.add(from);
    this.touched.add(to);
    const k = `${from}\0${to}\0${label ?? ''}`;
    if (this.edgeKeys.has(k)) return;
    this.edgeKeys.add(k);
    this.edges.push(label ? { from, to, label } : { from, to });
  }
}

function roleOf(name: string): string {
  const m = /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-/.exec(name) ?? /^(service|local|external|firewall|endpoint)-/.exec(name);
  return m ? m[1].toUpperCase() : 'chain';
}

function frontendNodes(b: Builder, s: ServicePort): { id: string; kind: string; ip?: string }[] {
  const out: { id: string; kind: string; ip?: string }[] = [];
  const fe = (kind: string, label: string, ip?: string) => {
    const id = b.node({ id: `fe:${label}`, kind: 'frontend', label, detail: kind });
    out.push(ip ? { id, kind, ip } : { id, kind });
  };
  if (s.clusterIP) fe('ClusterIP', `${formatHostPort(s.clusterIP, s.port)}/${s.protocol}`, s.clusterIP);
  if (s.nodePort !== null) fe('NodePort', `*:${s.nodePort}/${s.protocol}`);
  for (const ip of s.externalIPs) fe('externalIP', `${formatHostPort(ip, s.port)}/${s.protocol}`, ip);
  for (const ip of s.loadBalancerIPs) fe('LoadBalancer IP', `${formatHostPort(ip, s.port)}/${s.protocol}`, ip);
  return out;
}

function endpointNode(b: Builder, s: ServicePort, ip: string, port: number | null): string {
  const e = s.endpoints.find((x) => x.ip === ip && x.port === port);
  const where = e?.local === true ? 'local' : e?.local === false ? 'remote' : undefined;
  return b.node({ id: `ep:${formatHostPort(ip, port ?? undefined)}`, kind: 'endpoint', label: formatHostPort(ip, port ?? undefined), ...(where ? { detail: `pod (${where})` } : { detail: 'pod' }) });
}

/** An endpoint's share of new connections, as the edge into it is labelled: `14.3%`, `50%`. */
export function shareLabel(share: number | null): string {
  if (share === null) return 'share unknown';
  return `${(share * 100).toFixed(1).replace(/\.0$/, '')}%`;
}

/** Each endpoint's share by the chain (SEP, nft endpoint chain) or IPVS real server that leads to it. */
const sharesByVia = (s: ServicePort) => new Map(s.endpoints.filter((e) => e.via !== undefined).map((e) => [e.via!, e.probability]));

/**
 * What an edge from a rule says. A jump into an endpoint's chain is labelled with that endpoint's
 * share of connections (what a reader wants), not the rule's conditional `--probability`, which is
 * 1/n of what is left at that point of the ladder (0.1429 … 0.5, and the last rule has none).
 */
function ruleLabel(r: Rule, share?: number | null): string | undefined {
  const parts: string[] = [];
  if (share !== undefined) parts.push(shareLabel(share));
  for (const m of r.matches) {
    if (m.kind === 'statistic' && m.mode === 'random') {
      if (share === undefined) parts.push(`p=${m.probability.toFixed(4).replace(/0+$/, '').replace(/\.$/, '')}`);
    }
    else if (m.kind === 'statistic' && m.mode === 'nth') {
      if (share === undefined) parts.push(`every ${m.every}`);
    }
    else if (m.kind === 'recent' && m.op === 'rcheck') parts.push('affinity hit');
    else if (m.kind === 'address' && m.cidr) parts.push(`${m.dir === 'src' ? 'from' : 'to'} ${m.negated ? 'not ' : ''}${formatCidr(m.cidr)}`);
    else if (m.kind === 'addrtype') parts.push(`${m.negated ? 'not ' : ''}${m.dir}-type ${m.types.join(',')}`);
  }
  return parts.length ? parts.join(', ') : undefined;
}

function iptablesService(b: Builder, snapshot: NodeSnapshot, s: ServicePort): void {
  const rs = snapshot.rulesets.find((r) => r.family === s.family && r.tables.some((t) => t.chains.some((c) => Object.values(s.chains).includes(c.name)))) ?? snapshot.rulesets.find((r) => r.family === s.family);
  const label = svcName(s);
  const fes = frontendNodes(b, s);
  if (!rs) return;
  const own = new Set(Object.values(s.chains));
  const shares = sharesByVia(s);
  const chainNode = (t: Table, c: Chain) => {
    const role = roleOf(c.name);
    if (role === 'SEP') {
      const dnat = c.rules.find((r) => r.target?.kind === 'dnat');
      const to = dnat?.target?.kind === 'dnat' ? dnat.target.to[0] : undefined;
      return b.node({ id: `ipt:${rs.family}:${t.name}/${c.name}`, kind: 'endpoint-chain', label: `${label} endpoint${to ? ` ${to.text}` : ''}`, detail: c.name });
    }
    return b.node({ id: `ipt:${rs.family}:${t.name}/${c.name}`, kind: 'chain', label: `${label} · ${role}`, detail: t.name === 'nat' ? c.name : `${t.name}/${c.name}` });
  };
  // Dispatch: KUBE-SERVICES / KUBE-NODEPORTS rules jumping into this Service's chains.
  const nat = rs.tables.find((t) => t.name === 'nat');
  for (const dispatch of ['KUBE-SERVICES', 'KUBE-NODEPORTS']) {
    const chain = nat?.chainsByName.get(dispatch);
    for (const r of chain?.rules ?? []) {
      const target = r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') ? r.target.chain : undefined;
      if (!target || !own.has(target)) continue;
      const tc = nat!.chainsByName.get(target);
      if (!tc) continue;
      const dst = r.matches.find((m) => m.kind === 'address' && m.dir === 'dst' && !m.negated);
      const dstIp = dst && dst.kind === 'address' && dst.cidr ? formatIp({ family: dst.cidr.family, value: dst.cidr.network }) : undefined;
      const fe = dispatch === 'KUBE-NODEPORTS' ? fes.find((f) => f.kind === 'NodePort') : fes.find((f) => f.ip !== undefined && dstIp !== undefined && ipEquals(parseIp(f.ip)!, parseIp(dstIp)!));
      const d = b.node({ id: `ipt:${rs.family}:nat/${dispatch}`, kind: 'dispatch', label: dispatch, detail: 'nat' });
      if (fe) b.edge(fe.id, d);
      b.edge(d, chainNode(nat!, tc), dstIp ?? (dispatch === 'KUBE-NODEPORTS' ? `dport ${s.nodePort}` : undefined));
    }
  }
  // Filter-table REJECT/DROP for Services without (local) endpoints.
  if (s.endpoints.length === 0 || s.state === 'no-local-endpoints') {
    const drop = b.node({ id: `drop:${label}/${s.protocol}/${s.family}`, kind: 'drop', label: `${label} ${s.state}`, detail: 'filter REJECT/DROP' });
    for (const f of fes) if (!b.edges.some((e) => e.from === f.id)) b.edge(f.id, drop);
    // externalTrafficPolicy: Local without an endpoint here: the EXT chain DNATs only pods and the
    // node itself (to the SVC chain); every other source falls through it un-translated, and
    // filter's rule for the front end drops it. Drawn as that edge, not a verdict left floating.
    const ext = s.state === 'no-local-endpoints' ? [...own].map((n) => nat?.chainsByName.get(n)).find((c) => c !== undefined && roleOf(c.name) === 'EXT') : undefined;
    if (ext && nat) b.edge(chainNode(nat, ext), drop, 'other sources (Local policy, no endpoint here)');
  }
  // The Service's own chains and where their rules go.
  for (const t of rs.tables) {
    for (const name of own) {
      const c = t.chainsByName.get(name);
      if (!c || c.line === undefined) continue;
      const from = chainNode(t, c);
      for (const r of c.rules) {
        const tg = r.target;
        if (!tg) continue;
        if ((tg.kind === 'jump' || tg.kind === 'goto') && own.has(tg.chain)) {
          const to = t.chainsByName.get(tg.chain);
          if (to) b.edge(from, chainNode(t, to), ruleLabel(r, shares.get(tg.chain)));
        } else if (tg.kind === 'dnat' && tg.to[0]?.ip) {
          b.edge(from, endpointNode(b, s, tg.to[0].ip, tg.to[0].port ?? null), 'DNAT');
        } else if (tg.kind === 'drop' || tg.kind === 'reject' || ((tg.kind === 'jump' || tg.kind === 'goto') && tg.chain === 'KUBE-MARK-DROP')) {
          b.edge(from, b.node({ id: `drop:${t.name}/${c.name}`, kind: 'drop', label: tg.kind === 'reject' ? 'REJECT' : 'DROP', detail: `${t.name}/${c.name}` }), ruleLabel(r));
        }
      }
    }
  }
}

function ipvsService(b: Builder, snapshot: NodeSnapshot, s: ServicePort): void {
  const label = svcName(s);
  const fes = frontendNodes(b, s);
  for (const [role, key] of Object.entries(s.chains)) {
    const vsId = b.node({ id: `ipvs:${key}`, kind: 'virtual-server', label: `${label} · virtual server`, detail: key });
    const fe =
      role === 'cluster-ip'
        ? fes.find((f) => f.kind === 'ClusterIP')
        : role.startsWith('node-port')
          ? fes.find((f) => f.kind === 'NodePort')
          : fes.find((f) => f.ip !== undefined && role.endsWith(`/${f.ip}`)) ?? fes.find((f) => f.kind !== 'ClusterIP');
    if (fe) b.edge(fe.id, vsId);
    const vs = snapshot.ipvs.flatMap((d) => d.virtualServers).find((v) => {
      const host = v.ip ? formatIp(v.ip) : v.address ?? '';
      return key === `${v.protocol}/${v.family === 6 ? `[${host}]` : host}:${v.port}`;
    });
    for (const rsrv of vs?.realServers ?? []) {
      const ip = rsrv.ip ? formatIp(rsrv.ip) : rsrv.address;
      const ep = s.endpoints.find((e) => e.ip === ip && e.port === (rsrv.port ?? null));
      b.edge(vsId, endpointNode(b, s, ip, rsrv.port ?? null), `${ep ? `${shareLabel(ep.probability)}, ` : ''}weight ${rsrv.weight ?? '?'}`);
    }
  }
  if (Object.keys(s.chains).length === 0) for (const e of s.endpoints) for (const f of fes) b.edge(f.id, endpointNode(b, s, e.ip, e.port));
}

function nftService(b: Builder, snapshot: NodeSnapshot, s: ServicePort): void {
  const label = svcName(s);
  const fes = frontendNodes(b, s);
  const own = new Set(Object.values(s.chains));
  const shares = sharesByVia(s);
  const table: NftTable | undefined = snapshot.nft.flatMap((n) => n.tables).find((t) => t.name === 'kube-proxy' && t.chains.some((c) => own.has(c.name)));
  if (!table) return;
  const byName = new Map(table.chains.map((c) => [c.name, c]));
  const chainNode = (c: NftChain) => {
    const role = roleOf(c.name);
    const short = c.name.replace(/^((?:service|local|external|firewall|endpoint)-[A-Z2-7]+)-.*$/, '$1');
    return b.node({
      id: `nft:${table.family}:${c.name}`,
      kind: role === 'ENDPOINT' ? 'endpoint-chain' : 'chain',
      label: role === 'ENDPOINT' ? `${label} endpoint` : `${label} · ${role.toLowerCase()}`,
      detail: short,
    });
  };
  const first = (kind: string) => {
    const want = kind === 'ClusterIP' ? (s.internalTrafficPolicy === 'Local' ? ['local', 'service'] : ['service', 'local']) : ['firewall', 'external', 'service'];
    for (const w of want) {
      const n = [...own].find((x) => x.startsWith(`${w}-`) && byName.has(x));
      if (n) return byName.get(n)!;
    }
    return undefined;
  };
  for (const f of fes) {
    const c = first(f.kind);
    if (c) b.edge(f.id, chainNode(c), 'service-ips / service-nodeports');
  }
  for (const name of own) {
    const c = byName.get(name);
    if (!c) continue;
    const from = chainNode(c);
    for (const r of c.rules) {
      for (const x of r.exprs) {
        if (x.kind === 'verdict' && x.chain && own.has(x.chain) && byName.has(x.chain)) b.edge(from, chainNode(byName.get(x.chain)!));
        else if (x.kind === 'vmap') {
          const els = resolveMap(table, x.map) ?? [];
          const n = els.length;
          for (const e of els) {
            if (e.value?.kind === 'verdict' && e.value.chain && byName.has(e.value.chain)) {
              const share = x.key.kind === 'numgen' ? shares.get(e.value.chain) : undefined;
              b.edge(from, chainNode(byName.get(e.value.chain)!), share !== undefined ? shareLabel(share) : x.key.kind === 'numgen' && n ? `numgen ${e.key.join(' . ')} (1/${n})` : e.key.join(' . '));
            }
          }
        } else if (x.kind === 'dnat' && x.to?.addr) {
          const ip = x.to.addr.replace(/^\[(.*)\]$/, '$1');
          b.edge(from, endpointNode(b, s, ip, x.to.port !== undefined ? Number(x.to.port) : null), 'DNAT');
        }
      }
    }
  }
}

/** The graph of these Service ports (all of the node's when `services` is the whole resolution). */
export function serviceGraph(snapshot: NodeSnapshot, services: readonly ServicePort[], title = snapshot.name): Graph {
  const b = new Builder();
  const groups = new Map<string, Set<string>>();
  const users = new Map<string, Set<string>>();
  for (const s of services) {
    b.touched = new Set();
    if (s.mode === 'iptables') iptablesService(b, snapshot, s);
    else if (s.mode === 'ipvs') ipvsService(b, snapshot, s);
    else nftService(b, snapshot, s);
    // A Service whose chains are not in the dumps still shows its front ends and endpoints.
    const fes = frontendNodes(b, s);
    if (!fes.some((f) => b.edges.some((e) => e.from === f.id))) for (const e of s.endpoints) for (const f of fes) b.edge(f.id, endpointNode(b, s, e.ip, e.port), shareLabel(e.probability));
    const service = s.namespace !== null && s.name !== null ? `${s.namespace}/${s.name}` : s.id;
    const group = groups.get(service) ?? new Set<string>();
    for (const id of b.touched) {
      group.add(id);
      users.set(id, (users.get(id) ?? new Set()).add(service));
    }
    groups.set(service, group);
  }
  const own = [...groups].map(([label, ids]) => ({ label, nodes: [...ids].filter((id) => users.get(id)!.size === 1) })).filter((g) => g.nodes.length > 0);
  return { title, nodes: [...b.nodes.values()], edges: b.edges, ...(own.length > 1 ? { groups: own } : {}) };
}

/** Convenience: the graph of the whole node. */
export function nodeGraph(snapshot: NodeSnapshot, res: Resolution): Graph {
  return serviceGraph(snapshot, res.services, snapshot.name);
}

// ---------------------------------------------------------------------------------------------
// Renderers

// eslint-disable-next-line no-control-regex
export const dotString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n').replace(/[\u0000-\u001f\u007f]/g, '')}"`;

const DOT_SHAPE: Record<GraphNodeKind, string> = {
  frontend: 'shape=oval, style=filled, fillcolor="#dbeafe"',
  dispatch: 'shape=box, style="rounded,dashed"',
  chain: 'shape=box, style=rounded',
  'endpoint-chain': 'shape=box, style="rounded,filled", fillcolor="#f3f4f6"',
  'virtual-server': 'shape=hexagon',
  endpoint: 'shape=box3d, style=filled, fillcolor="#dcfce7"',
  drop: 'shape=octagon, style=filled, fillcolor="#fee2e2"',
};

export function toDot(g: Graph): string {
  const ids = new Map(g.nodes.map((n, i) => [n.id, `n${i}`]));
  const lines = [`digraph kpx {`, `  label=${dotString(g.title)};`, '  labelloc=t;', '  rankdir=LR;', '  node [fontname="Helvetica", fontsize=10];', '  edge [fontname="Helvetica", fontsize=9];'];
  for (const n of g.nodes) lines.push(`  ${ids.get(n.id)} [label=${dotString(n.detail ? `${n.label}\n${n.detail}` : n.label)}, ${DOT_SHAPE[n.kind]}];`);
  for (const e of g.edges) lines.push(`  ${ids.get(e.from)} -> ${ids.get(e.to)}${e.label ? ` [label=${dotString(e.label)}]` : ''};`);
  // One box per Service (Graphviz clusters), so a whole node's picture reads Service by Service.
  for (const [i, grp] of (g.groups ?? []).entries()) {
    lines.push(`  subgraph cluster_${i} {`, `    label=${dotString(grp.label)};`, '    style=rounded;', '    color="#9ca3af";', `    ${grp.nodes.map((id) => ids.get(id)).join('; ')};`, '  }');
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** Mermaid label text: quotes, angle brackets, `#` and control characters as entities. */
export function mermaidText(s: string): string {
  return s
    // eslint-disable-next-line no-control-regex -- dump text is untrusted: control characters never reach the output
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/#/g, '#35;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;')
    .replace(/\|/g, '#124;')
    .replace(/`/g, '#96;');
}

const MERMAID_SHAPE: Record<GraphNodeKind, [string, string]> = {
  frontend: ['(["', '"])'],
  dispatch: ['["', '"]'],
  chain: ['["', '"]'],
  'endpoint-chain': ['["', '"]'],
  'virtual-server': ['{{"', '"}}'],
  endpoint: ['[("', '")]'],
  drop: ['[/"', '"\\]'],
};

export function toMermaid(g: Graph): string {
  const ids = new Map(g.nodes.map((n, i) => [n.id, `n${i}`]));
  const lines = ['flowchart LR'];
  for (const n of g.nodes) {
    const [open, close] = MERMAID_SHAPE[n.kind];
    const text = n.detail ? `${mermaidText(n.label)}<br/><small>${mermaidText(n.detail)}</small>` : mermaidText(n.label);
    lines.push(`  ${ids.get(n.id)}${open}${text}${close}`);
  }
  for (const e of g.edges) lines.push(`  ${ids.get(e.from)} -->${e.label ? `|"${mermaidText(e.label)}"|` : ''} ${ids.get(e.to)}`);
  return lines.join('\n') + '\n';
}
