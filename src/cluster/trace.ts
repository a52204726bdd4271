/**
 * Cross-node trace: the packet through the first node's rules (tracePacket), then by that
 * node's routes to the node that owns the chosen pod, through that node's rules and routes, to
 * the pod's interface. Each path is one outcome of the first node (one endpoint), split again
 * where a later node's trace branches. Data only; renderers are in render.ts.
 */
import { formatIp, parseIp, splitHostPort, type Ip } from '../model/addr.js';
import { lookupRoute } from '../model/route.js';
import { resolveJudged } from '../judge/index.js';
import type { Resolution } from '../kube/types.js';
import type { Destination, TraceProtocol } from '../trace/packet.js';
import { tracePacket, TraceInputError, type SourceSpec } from '../trace/trace.js';
import type { TraceAssumptions } from '../trace/context.js';
import type { Condition, RouteInfo, Trace, TraceAssumption, TraceOutcome } from '../trace/types.js';
import { nextHop, nodeClaims, ownerOf, type NextHop, type PodOwner } from './owner.js';
import { nodeByName, type ClusterNode, type ClusterSnapshot } from './types.js';

export interface CrossTraceOptions {
  /** The node the packet starts on (`--node`). */
  readonly node: string;
  readonly from: SourceSpec;
  readonly sport?: number;
  readonly inInterface?: string;
  readonly assumptions?: Partial<TraceAssumptions>;
  /** Resolutions already computed, by node name (else computed here). */
  readonly resolutions?: ReadonlyMap<string, Resolution>;
  /** Stop following after this many nodes on one path (default: number of nodes + 1). */
  readonly maxHops?: number;
}

/** What the next node receives from the previous one. */
export interface ArrivingPacket {
  readonly src: string;
  readonly sport: number;
  readonly dst: string;
  readonly dport: number;
  readonly protocol: TraceProtocol;
  /** Why this source: the original, or the previous node's masquerade. */
  readonly srcReason: string;
}

export interface CrossHop {
  readonly node: string;
  /** origin: the first node; transit: a node that forwards to another; destination: the pod's node. */
  readonly role: 'origin' | 'transit' | 'destination';
  /** The packet as it arrives on this node (absent on the origin: see CrossTrace.origin.trace.packet). */
  readonly arriving?: ArrivingPacket;
  /** This node's trace of the packet (absent on the origin: CrossTrace.origin.trace). */
  readonly trace?: Trace;
  /** The outcome of this node's trace that the path follows (index into trace.outcomes). */
  readonly outcomeIndex: number;
  readonly outcome: TraceOutcome;
  /** Where this node's route sends the packet next (null on the last hop). */
  readonly next: NextHopJson | null;
}

export interface NextHopJson {
  readonly node: string | null;
  readonly how: NextHop['how'];
  readonly gateway?: string;
  readonly dev?: string;
  readonly summary: string;
  readonly file: string;
  readonly line: number;
}

export type PathEndKind = 'pod' | 'node-local' | 'dropped' | 'unknown' | 'no-route' | 'outside' | 'unowned' | 'loop' | 'too-many-hops';

export interface PathEnd {
  readonly kind: PathEndKind;
  /** The node where the path ends. */
  readonly node: string;
  /** The pod's interface (veth), its bridge, or the interface holding the address. */
  readonly interface?: string;
  readonly summary: string;
  /** Why kpx says this node owns the destination. */
  readonly owner?: PodOwner;
}

export interface CrossPath {
  /** Share of NEW connections on this path (the first node's outcome × later splits). */
  readonly probability: number;
  /** The first node's verdict and destination after NAT. */
  readonly verdict: TraceOutcome['verdict'];
  readonly destination: string;
  /** Node names in order, e.g. ['node-a', 'node-b']. */
  readonly nodes: readonly string[];
  readonly hops: readonly CrossHop[];
  readonly end: PathEnd;
  readonly problems: readonly string[];
  /** Assumptions the path adds to the traces' own (gateways outside the bundle, …). */
  readonly assumptions: readonly string[];
  /** The undecided matches the path depends on (its hops' scenarios): `probability` holds under them. */
  readonly conditions: readonly Condition[];
}

export interface CrossTrace {
  readonly request: { readonly destination: string; readonly protocol: TraceProtocol; readonly node: string; readonly from: string; readonly src: string };
  /** Every node of the bundle. */
  readonly nodes: readonly string[];
  readonly origin: { readonly node: string; readonly trace: Trace };
  readonly paths: readonly CrossPath[];
}

export class ClusterTraceError extends TraceInputError {}

const round = (p: number) => Math.round(p * 1e10) / 1e10;

function nextJson(n: NextHop): NextHopJson {
  return { node: n.node, how: n.how, ...(n.gateway ? { gateway: n.gateway } : {}), ...(n.dev ? { dev: n.dev } : {}), summary: n.summary, file: n.route.file, line: n.route.line };
}

/** The source address a masquerade on `node` picks for `dst` (route src, else the out device's address). */
function masqueradeSource(node: ClusterNode, dst: Ip): string | undefined {
  const r = lookupRoute(node.snapshot.routes, dst);
  if (r?.src) return r.src;
  const dev = r?.dev ?? r?.nexthops?.[0]?.dev;
  const iface = dev ? node.snapshot.interfaces.find((i) => i.name === dev) : undefined;
  return iface?.addresses.find((a) => a.family === dst.family)?.address;
}

/**
 * `--from pod` on a node without a pod bridge (Calico, Cilium: a /32 route per pod): one of the
 * node's own pods, so that the packet starts on the right node. Undefined: leave it to tracePacket
 * (which takes an address in the node's cni0/cbr0 subnet, or in the cluster CIDR).
 */
function podSourceOn(node: ClusterNode, family: 4 | 6, res: Resolution): { ip: string; why: TraceAssumption } | undefined {
  const claims: PodOwner[] = [];
  const s = node.snapshot;
  if (s.routes.some((r) => r.family === family && r.type === 'unicast' && !r.via && r.dev && /^(cni\d*|cbr\d+|docker\d+)$/.test(r.dev))) return undefined;
  const targets = new Set(res.services.flatMap((x) => x.endpoints.map((e) => e.ip)));
  for (const r of s.routes) {
    if (r.family !== family || r.type !== 'unicast' || r.via || r.dst.prefix !== (family === 4 ? 32 : 128)) continue;
    for (const c of nodeClaims(node, { family, value: r.dst.network })) if (c.kind === 'pod-route') claims.push(c);
  }
  const pods = [...new Map(claims.map((c) => [`${c.file}:${c.line}`, c])).values()];
  const routeOf = (c: PodOwner) => s.routes.find((r) => r.file === c.file && r.line === c.line)!;
  const free = pods.filter((c) => !targets.has(formatIp({ family, value: routeOf(c).dst.network })));
  const pick = (free.length ? free : pods).sort((a, b) => (routeOf(b).dst.network > routeOf(a).dst.network ? 1 : -1))[0];
  if (pick) {
    const ip = formatIp({ family, value: routeOf(pick).dst.network });
    return { ip, why: { code: 'source', kind: 'node-pod', address: ip, node: node.name, route: { ...(pick.interface ? { interface: pick.interface } : {}), file: pick.file, line: pick.line } } };
  }
  const block = s.routes.find((r) => r.family === family && r.type === 'blackhole' && r.dst.prefix < (family === 4 ? 32 : 128));
  if (block) {
    const ip = formatIp({ family, value: block.dst.network + 10n });
    return { ip, why: { code: 'source', kind: 'node-pod', address: ip, node: node.name, block: block.dstText } };
  }
  return undefined;
}


interface Walk {
  hops: CrossHop[];
  probability: number;
  problems: string[];
  assumptions: string[];
}

/** What every hop of one cross-node trace shares. */
interface WalkCtx {
  readonly cluster: ClusterSnapshot;
  readonly protocol: TraceProtocol;
  readonly assumptions: TraceAssumptions;
  readonly maxHops: number;
  readonly resolutionOf: (n: ClusterNode) => Promise<Resolution>;
  readonly finish: (w: Walk, end: PathEnd) => void;
}

/** A finished walk as a path. */
function crossPath(w: Walk, end: PathEnd): CrossPath {
  const o0 = w.hops[0].outcome;
  return {
    probability: round(w.probability),
    verdict: o0.verdict,
    destination: o0.destination,
    nodes: w.hops.map((h) => h.node),
    hops: w.hops,
    end,
    problems: w.problems,
    assumptions: w.assumptions,
    conditions: w.hops.flatMap((h) => h.outcome.conditions),
  };
}

type EndHere = (kind: PathEndKind, summary: string, extra?: Partial<PathEnd>, next?: NextHopJson | null) => void;

/** Does the path end on this node before any route hands it on (unknown, dropped, local, unroutable)? Ends it if so. */
function endsBeforeRouting(node: ClusterNode, outcome: TraceOutcome, owner: PodOwner | undefined, dstIp: Ip | undefined, here: Walk, end: EndHere): boolean {
  if (outcome.delivery === 'unknown') {
    // The node's evidence cannot say what happens (a chain cut out of the dump…): the path ends unknown.
    const last = outcome.steps[outcome.steps.length - 1];
    end('unknown', `the evidence of ${node.name} cannot say what happens${last ? ` after ${last.table}/${last.chain}${last.rule !== null ? ` (line ${last.rule})` : ''}` : ''}`);
    return true;
  }
  if (outcome.delivery === 'stopped') {
    const last = outcome.steps[outcome.steps.length - 1];
    end('dropped', `${outcome.verdict} on ${node.name}${last ? ` in ${last.table}/${last.chain}${last.rule !== null ? ` (line ${last.rule})` : ''}` : ''}`);
    return true;
  }
  if (outcome.delivery === 'local') {
    end('node-local', `delivered to a process on ${node.name} (${outcome.destination} is local there)`, owner && owner.node === node.name ? { owner, ...(owner.interface ? { interface: owner.interface } : {}) } : {});
    return true;
  }
  if (!dstIp) {
    end('outside', `kpx cannot read the destination ${outcome.destination}`);
    return true;
  }
  const route: RouteInfo | null = outcome.route;
  if (route === null) {
    here.problems.push(`${node.name} has no \`ip route\` dump: where the packet goes after this node is unknown`);
    end('no-route', `${node.name}'s routes are not in the bundle`);
    return true;
  }
  if (route.type !== 'unicast') {
    end(route.type === 'local' ? 'node-local' : route.type === 'none' ? 'no-route' : 'dropped', `${node.name}: ${route.summary}`, owner?.node === node.name ? { owner } : {});
    return true;
  }
  return false;
}

/** The route ends on this node: a pod interface or bridge (or the node's own router address). */
function deliverHere(node: ClusterNode, route: RouteInfo, owner: PodOwner | undefined, dstIp: Ip, here: Walk, end: EndHere): void {
  if (owner && owner.node === node.name) {
    end('pod', `${formatIp(dstIp)} is a pod on ${node.name}, behind ${owner.interface ?? route.dev ?? '?'} (${owner.summary})`, { owner, ...((owner.interface ?? route.dev) ? { interface: owner.interface ?? route.dev } : {}) });
    return;
  }
  if (owner) here.problems.push(`${node.name} delivers ${formatIp(dstIp)} locally on ${route.dev ?? '?'}, but ${owner.node} owns it (${owner.summary})`);
  else here.problems.push(`${node.name} delivers ${formatIp(dstIp)} locally on ${route.dev ?? '?'}, but no node's dumps show that pod (no /32 route, no subnet): it may be gone`);
  end('pod', `${node.name} delivers it on ${route.dev ?? '?'} (${route.summary})`, route.dev ? { interface: route.dev } : {});
}

/** The packet as the next node receives it: its source after any masquerade on this node. */
function arrivingFrom(node: ClusterNode, trace: Trace, outcome: TraceOutcome, dstIp: Ip, dport: number, arriving: ArrivingPacket | undefined, here: Walk): ArrivingPacket {
  let src = arriving === undefined ? trace.packet.src : arriving.src;
  let srcReason = 'unchanged';
  if (outcome.masquerade) {
    const m = outcome.snatTo ?? masqueradeSource(node, dstIp);
    if (m) {
      src = m;
      srcReason = `masqueraded by ${node.name}`;
    } else here.assumptions.push(`${node.name} masquerades, but its source address for ${formatIp(dstIp)} is unknown: the original source is kept`);
  }
  return { src, sport: trace.packet.sport, dst: formatIp(dstIp), dport, protocol: trace.packet.protocol as TraceProtocol, srcReason };
}

/** Follow `outcome` of `trace` on `node`; `w` holds the hops before this one. */
async function follow(x: WalkCtx, node: ClusterNode, trace: Trace, index: number, w: Walk, arriving: ArrivingPacket | undefined): Promise<void> {
  const outcome = trace.outcomes[index];
  const isOrigin = w.hops.length === 0;
  const hopBase = { node: node.name, outcomeIndex: index, outcome, ...(isOrigin ? {} : { trace, arriving }) };
  const here: Walk = { ...w, probability: w.probability * outcome.probability, problems: [...w.problems], assumptions: [...w.assumptions] };
  const hp = splitHostPort(outcome.destination);
  const dstIp = hp?.ip;
  const ownership = dstIp ? ownerOf(x.cluster, dstIp) : { claims: [], ambiguous: false };
  const owner = ownership.owner;
  const role: CrossHop['role'] = isOrigin ? 'origin' : owner?.node === node.name ? 'destination' : 'transit';
  const end: EndHere = (kind, summary, extra = {}, next = null) => {
    here.hops = [...w.hops, { ...hopBase, role: kind === 'pod' || kind === 'node-local' ? (isOrigin ? 'origin' : 'destination') : role, next }];
    x.finish(here, { kind, node: node.name, summary, ...extra });
  };
  if (outcome.route?.problem) here.problems.push(`${node.name}: ${outcome.route.problem}`);
  if (ownership.ambiguous) here.problems.push(`several nodes claim ${hp ? formatIp(hp.ip) : outcome.destination}: ${ownership.claims.map((c) => `${c.node} (${c.summary})`).join('; ')}`);
  if (endsBeforeRouting(node, outcome, owner, dstIp, here, end) || !dstIp || !hp) return;
  const next = nextHop(x.cluster, node, dstIp);
  if (!next) return deliverHere(node, outcome.route!, owner, dstIp, here, end);
  let target = next.node;
  const nj = nextJson(next);
  if (target === null) {
    if (owner && owner.node !== node.name) {
      target = owner.node;
      here.assumptions.push(`${next.summary}; assumed to reach ${owner.node}, which owns ${formatIp(dstIp)}`);
    } else {
      end(owner ? 'outside' : 'unowned', owner ? next.summary : `${next.summary}; no node of this bundle owns ${formatIp(dstIp)}`, {}, nj);
      if (!owner) here.problems.push(`no node of this bundle owns ${formatIp(dstIp)} (no interface address, pod route or pod subnet)`);
      return;
    }
  }
  if (owner && owner.node !== target && next.how === 'gateway') here.problems.push(`${node.name} sends ${formatIp(dstIp)} to ${target}, but ${owner.node} owns it (${owner.summary})`);
  const visited = [...w.hops.map((h) => h.node), node.name];
  if (visited.includes(target)) {
    here.problems.push(`routing loop: ${[...visited, target].join(' → ')}`);
    return end('loop', `${node.name} sends it back to ${target}`, {}, nj);
  }
  if (visited.length >= x.maxHops) return end('too-many-hops', `stopped after ${visited.length} nodes`, {}, nj);
  const arrive = arrivingFrom(node, trace, outcome, dstIp, hp.port ?? trace.packet.dport, arriving, here);
  here.hops = [...w.hops, { ...hopBase, role, next: nj }];
  await handOn(x, node, target, dstIp, arrive, here);
}

/** Trace the packet on the node it is handed to, and follow each of that trace's outcomes. */
async function handOn(x: WalkCtx, node: ClusterNode, target: string, dstIp: Ip, arrive: ArrivingPacket, here: Walk): Promise<void> {
  const nextNode = nodeByName(x.cluster, target)!;
  const nextDest: Destination = { ip: dstIp, ipText: formatIp(dstIp), port: arrive.dport, protocol: x.protocol };
  const srcIp = parseIp(arrive.src);
  if (!srcIp || srcIp.family !== dstIp.family) {
    here.problems.push(`cannot trace into ${target}: source ${arrive.src} is not usable`);
    x.finish(here, { kind: 'outside', node: node.name, summary: `handed to ${target}` });
    return;
  }
  const t = tracePacket(nextNode.snapshot, await x.resolutionOf(nextNode), nextDest, x.protocol, { from: { ip: arrive.src }, sport: arrive.sport, assumptions: x.assumptions });
  if (t.outcomes.length === 0) {
    here.problems.push(`${target}'s trace has no outcome`);
    x.finish(here, { kind: 'dropped', node: target, summary: `nothing on ${target}` });
    return;
  }
  for (let i = 0; i < t.outcomes.length; i++) await follow(x, nextNode, t, i, here, arrive);
}

export async function traceAcross(cluster: ClusterSnapshot, dest: Destination, protocol: TraceProtocol, opts: CrossTraceOptions): Promise<CrossTrace> {
  const first = nodeByName(cluster, opts.node);
  if (!first) throw new ClusterTraceError(`--node ${opts.node}: no such node in the bundle (nodes: ${cluster.nodes.map((n) => n.name).join(', ')})`);
  const assumptions: TraceAssumptions = { established: Boolean(opts.assumptions?.established), affinityHit: Boolean(opts.assumptions?.affinityHit) };
  const resolutions = new Map(opts.resolutions ?? []);
  const resolutionOf = async (n: ClusterNode) => {
    let r = resolutions.get(n.name);
    if (!r) {
      r = await resolveJudged(n.snapshot);
      resolutions.set(n.name, r);
    }
    return r;
  };
  const maxHops = opts.maxHops ?? cluster.nodes.length + 1;
  const firstRes = await resolutionOf(first);
  const podSource = opts.from === 'pod' ? podSourceOn(first, dest.ip.family, firstRes) : undefined;
  const originTrace = tracePacket(first.snapshot, firstRes, dest, protocol, {
    from: podSource ? { ip: podSource.ip } : opts.from,
    ...(opts.sport !== undefined ? { sport: opts.sport } : {}),
    ...(opts.inInterface ? { inInterface: opts.inInterface } : {}),
    assumptions,
  });

  const paths: CrossPath[] = [];
  const x: WalkCtx = { cluster, protocol, assumptions, maxHops, resolutionOf, finish: (w, end) => paths.push(crossPath(w, end)) };
  for (let i = 0; i < originTrace.outcomes.length; i++) await follow(x, first, originTrace, i, { hops: [], probability: 1, problems: [], assumptions: [] }, undefined);
  paths.sort((a, b) => b.probability - a.probability || (a.destination < b.destination ? -1 : a.destination > b.destination ? 1 : 0));
  const trace0: Trace = podSource ? { ...originTrace, packet: { ...originTrace.packet, from: 'pod' }, assumptions: [podSource.why, ...originTrace.assumptions] } : originTrace;
  return {
    request: { destination: dest.ipText.includes(':') ? `[${dest.ipText}]:${dest.port}` : `${dest.ipText}:${dest.port}`, protocol, node: first.name, from: typeof opts.from === 'string' ? opts.from : opts.from.ip, src: trace0.packet.src },
    nodes: cluster.nodes.map((n) => n.name),
    origin: { node: first.name, trace: trace0 },
    paths,
  };
}
