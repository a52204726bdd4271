/**
 * Node comparison (`kpx services --nodes`): per Service port, which nodes implement it, each
 * node's endpoint set, and where nodes disagree — an endpoint on 3 of 5 nodes, a Service or
 * chains missing on one node, another proxy mode, other policies or state. Differences that
 * the design explains (which endpoints are local, states that follow from a Local policy)
 * are not disagreements.
 */
import { formatHostPort } from '../model/addr.js';
import { proxyModes } from '../kube/modes.js';
import { resolveJudged } from '../judge/index.js';
import type { ProxyModeName, Resolution, ServiceState } from '../kube/types.js';
import { claimingPart, ownerOf } from './owner.js';
import type { ClusterNode, ClusterSnapshot } from './types.js';
import { intendedDataplane } from '../kube/intent.js';
import { endpointText, ServiceAggregate, type Facet, type Group } from './aggregate.js';

export type DifferenceKind = 'missing-service' | 'endpoints' | 'mode' | 'chains' | 'policy' | 'address' | 'state' | 'locality';

export interface NodeDifference {
  readonly kind: DifferenceKind;
  /** One line for people. */
  readonly message: string;
  /** The nodes that differ from the majority (or that the message is about). */
  readonly nodes: readonly string[];
}

export interface EndpointPresence {
  /** `ip:port`. */
  readonly endpoint: string;
  /** Nodes whose rules send to it. */
  readonly nodes: readonly string[];
  /** Nodes whose rules mark it local (route to a local pod interface). */
  readonly localOn: readonly string[];
  /** The node whose dumps own the pod address (ownerOf), when one does. */
  readonly owner: string | null;
}

export interface NodeView {
  readonly node: string;
  readonly mode: ProxyModeName;
  readonly state: ServiceState;
  readonly endpoints: readonly string[];
  readonly chains: readonly string[];
  readonly problems: readonly string[];
}

export interface ServiceComparison {
  /** servicePortKey(): `ns/name:port/proto`, or `VIP:port/proto` for unnamed ones. */
  readonly key: string;
  readonly label: string;
  readonly protocol: string;
  readonly port: number;
  readonly clusterIP: string | null;
  readonly presentOn: readonly string[];
  readonly missingOn: readonly string[];
  /** The nodes that agree with the most common view (all nodes when there is no difference). */
  readonly agreeing: readonly string[];
  readonly views: readonly NodeView[];
  readonly endpoints: readonly EndpointPresence[];
  readonly differences: readonly NodeDifference[];
}

export interface NodeComparison {
  readonly nodes: readonly string[];
  /** Proxy modes each node shows evidence of. */
  readonly modes: Readonly<Record<string, readonly string[]>>;
  readonly services: readonly ServiceComparison[];
  /** Node-level differences (proxy modes). */
  readonly differences: readonly NodeDifference[];
  readonly summary: { readonly servicePorts: number; readonly agreeing: number; readonly differing: number };
}

/** The most common value and the entries holding something else. */
function majority<T>(entries: readonly { node: string; value: T }[], key: (v: T) => string): { value: T; others: { node: string; value: T }[] } {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(key(e.value), (counts.get(key(e.value)) ?? 0) + 1);
  let bestKey = '';
  let best = -1;
  for (const e of entries) {
    const c = counts.get(key(e.value))!;
    if (c > best) {
      best = c;
      bestKey = key(e.value);
    }
  }
  return { value: entries.find((e) => key(e.value) === bestKey)!.value, others: entries.filter((e) => key(e.value) !== bestKey) };
}

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

/** One Service port being compared: its members by node name, and the differences found so far. */
interface Ctx {
  readonly names: readonly string[];
  readonly present: readonly string[];
  readonly facetOf: ReadonlyMap<string, Facet>;
  readonly views: readonly NodeView[];
  readonly endpoints: readonly EndpointPresence[];
  readonly differences: NodeDifference[];
  readonly differing: Set<string>;
}

/** Each endpoint present on fewer nodes than could have it. */
function endpointDifferences(x: Ctx, endpointNodes: ReadonlyMap<string, ReadonlySet<string>>): void {
  // A node where the Service port is unknown (its endpoint chains not in the evidence) cannot be said to lack an endpoint;
  // a Local-policy node legitimately lists only its local endpoints.
  const comparable = x.present.filter((n) => !x.facetOf.get(n)!.localOnly && x.facetOf.get(n)!.state !== 'unknown');
  for (const e of x.endpoints) {
    const on = endpointNodes.get(e.endpoint)!;
    // The API's intent for the node does not hold the endpoint (topology, policy): explained, not a disagreement.
    const explained = (n: string) => {
      const intent = x.facetOf.get(n)!.intent;
      return intent !== undefined && !intent.has(e.endpoint);
    };
    const lacking = comparable.filter((n) => !on.has(n) && !explained(n));
    if (lacking.length === 0) continue;
    const onCount = comparable.filter((n) => on.has(n)).length;
    x.differences.push({ kind: 'endpoints', message: `endpoint ${e.endpoint} on ${onCount} of ${comparable.length} nodes (missing on ${lacking.join(', ')})`, nodes: lacking });
    for (const n of lacking) x.differing.add(n);
  }
}

/** Proxy mode, then chains among the nodes of the common mode (other modes have other objects). */
function modeAndChainDifferences(x: Ctx): void {
  const modeMaj = majority(x.views.map((v) => ({ node: v.node, value: v.mode })), (v) => v);
  if (modeMaj.others.length) {
    x.differences.push({ kind: 'mode', message: `proxy mode ${modeMaj.others.map((o) => `${o.value} on ${o.node}`).join(', ')}; ${modeMaj.value} elsewhere`, nodes: modeMaj.others.map((o) => o.node) });
    for (const o of modeMaj.others) x.differing.add(o.node);
  }
  const sameMode = x.views.filter((v) => v.mode === modeMaj.value);
  const chainMaj = majority(sameMode.map((v) => ({ node: v.node, value: v.chains })), (v) => v.join(','));
  const odd = new Set(chainMaj.others.map((o) => o.node));
  // The chain names of a missing role, from the first node that is not odd.
  const reference = x.present.find((n) => !odd.has(n));
  const names = reference !== undefined ? x.facetOf.get(reference)!.chainNames : undefined;
  for (const o of chainMaj.others) {
    const lacking = chainMaj.value.filter((r) => !o.value.includes(r));
    const extra = o.value.filter((r) => !chainMaj.value.includes(r));
    const parts = [lacking.length ? `missing ${lacking.map((r) => `${r} (${names?.[r] ?? r})`).join(', ')}` : '', extra.length ? `extra ${extra.join(', ')}` : ''].filter(Boolean);
    x.differences.push({ kind: 'chains', message: `${o.node}: ${parts.join('; ')}`, nodes: [o.node] });
    x.differing.add(o.node);
  }
}

/** Policies, addresses and states; state differences that Local policies explain are expected. */
function settingDifferences(x: Ctx, sample: Facet): void {
  for (const [kind, field] of [['policy', 'policy'], ['address', 'address']] as const) {
    const maj = majority(x.present.map((n) => ({ node: n, value: x.facetOf.get(n)![field] })), (v) => v);
    for (const o of maj.others) {
      x.differences.push({ kind, message: `${o.node}: ${o.value} (others: ${maj.value})`, nodes: [o.node] });
      x.differing.add(o.node);
    }
  }
  const stateMaj = majority(x.views.map((v) => ({ node: v.node, value: v.state })), (v) => v);
  for (const o of stateMaj.others) {
    const expected = (o.value === 'no-local-endpoints' || stateMaj.value === 'no-local-endpoints') && (sample.externalTrafficPolicy === 'Local' || sample.internalTrafficPolicy === 'Local');
    if (expected) continue;
    const why = x.facetOf.get(o.node)!.problems[0];
    x.differences.push({ kind: 'state', message: `${o.node}: ${o.value} (others: ${stateMaj.value})${why ? ` — ${why}` : ''}`, nodes: [o.node] });
    x.differing.add(o.node);
  }
}

/** An endpoint should be local on the node that owns its address, and on no other. */
function localityDifferences(x: Ctx): void {
  for (const e of x.endpoints) {
    const wrong = e.localOn.filter((n) => e.owner !== null && n !== e.owner);
    if (wrong.length) x.differences.push({ kind: 'locality', message: `endpoint ${e.endpoint} marked local on ${wrong.join(', ')}, but ${e.owner} owns it`, nodes: wrong });
    else if (e.localOn.length > 1) x.differences.push({ kind: 'locality', message: `endpoint ${e.endpoint} marked local on ${plural(e.localOn.length, 'node')} (${e.localOn.join(', ')})`, nodes: e.localOn });
    for (const n of wrong) x.differing.add(n);
  }
}

/** Each endpoint of the Service port: the nodes sending to it, those marking it local, its owner. */
function endpointPresence(present: readonly string[], facetOf: ReadonlyMap<string, Facet>, owner: (ip: string) => string | null): { endpoints: EndpointPresence[]; nodesOf: Map<string, Set<string>> } {
  const byEndpoint = new Map<string, { nodes: string[]; localOn: string[] }>();
  for (const n of present) {
    const f = facetOf.get(n)!;
    for (const e of f.endpoints) {
      let x = byEndpoint.get(e);
      if (!x) byEndpoint.set(e, (x = { nodes: [], localOn: [] }));
      x.nodes.push(n);
      if (f.local.has(e)) x.localOn.push(n);
    }
  }
  const endpoints = [...byEndpoint.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([endpoint, x]) => ({ endpoint, nodes: x.nodes, localOn: x.localOn, owner: owner(endpoint.replace(/^\[(.*)\]:\d+$/, '$1').replace(/:\d+$/, '')) }));
  return { endpoints, nodesOf: new Map(endpoints.map((e) => [e.endpoint, new Set(e.nodes)])) };
}

/** One Service port's comparison across the nodes, from its group. */
function compareGroup(g: Group, names: readonly string[], owner: (ip: string) => string | null): ServiceComparison {
  const facetOf = new Map(g.members.map((m) => [names[m.node], m.facet]));
  const present = g.members.map((m) => names[m.node]);
  const missing = names.filter((n) => !facetOf.has(n));
  const sample = (g.members.find((m) => m.facet.named) ?? g.members[0]).facet;
  const views: NodeView[] = g.members.map((m) => ({ node: names[m.node], mode: m.facet.mode, state: m.facet.state, endpoints: m.facet.endpoints, chains: m.facet.chains, problems: m.facet.problems }));
  const differences: NodeDifference[] = [];
  const differing = new Set<string>(missing);
  if (missing.length) differences.push({ kind: 'missing-service', message: `not on ${missing.join(', ')} (present on ${present.length} of ${names.length} nodes)`, nodes: missing });
  const { endpoints, nodesOf } = endpointPresence(present, facetOf, owner);
  const x: Ctx = { names, present, facetOf, views, endpoints, differences, differing };
  endpointDifferences(x, nodesOf);
  modeAndChainDifferences(x);
  settingDifferences(x, sample);
  localityDifferences(x);
  return {
    key: g.key.replace(/\|v\d$/, ''),
    label: sample.label,
    protocol: sample.protocol,
    port: sample.port,
    clusterIP: sample.clusterIP,
    presentOn: present,
    missingOn: missing,
    agreeing: names.filter((n) => !differing.has(n)),
    views,
    endpoints,
    differences,
  };
}

/**
 * A comparison built node by node: `add` each node (in name order) as it is read — its resolution
 * and snapshot can be dropped afterwards — then `finish`. Keeps one group per Service port, the
 * distinct facets, and per node only its name, proxy modes and what says which node owns an
 * address (claimingPart: addresses, pod routes).
 */
export class NodeComparer {
  private readonly agg = new ServiceAggregate();
  private readonly modes: Record<string, string[]> = {};
  private readonly owners: ClusterNode[] = [];

  get aggregate(): ServiceAggregate {
    return this.agg;
  }

  async add(n: ClusterNode, given?: Resolution): Promise<void> {
    const res = given ?? n.resolution ?? (await resolveJudged(n.snapshot));
    this.modes[n.name] = [...(n.modes ?? proxyModes(n.snapshot))];
    // The API's intent for a node whose bundle holds the API objects: VIP key → the endpoints kube-proxy
    // would program there (zone-filtered by hints, Local sets). A node lacking an endpoint its intent does
    // not hold is explained (topology, policy), not a disagreement.
    let intentAt: ((vip: string) => ReadonlySet<string> | undefined) | undefined;
    if (n.snapshot.api) {
      const m = new Map<string, Set<string>>();
      for (const p of intendedDataplane(n.snapshot.api, n.snapshot).ports) m.set(`${formatHostPort(p.clusterIP, p.port)}/${p.protocol}`, new Set(p.reachable.map(endpointText)));
      intentAt = (vip) => m.get(vip);
    }
    this.agg.addNode(n.name, res.services, intentAt);
    this.owners.push(claimingPart(n));
  }

  finish(): NodeComparison {
    const names = this.agg.nodes;
    const owners: ClusterSnapshot = { root: '', nodes: this.owners, loadedWith: 'in-process' };
    const ownerCache = new Map<string, string | null>();
    const owner = (ip: string) => {
      if (!ownerCache.has(ip)) ownerCache.set(ip, ownerOf(owners, ip).owner?.node ?? null);
      return ownerCache.get(ip)!;
    };
    const services = this.agg.groups().map((g) => compareGroup(g, names, owner));
    services.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : a.port - b.port || (a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0)));
    const differences: NodeDifference[] = [];
    const modeMaj = majority(names.map((n) => ({ node: n, value: this.modes[n] })), (v) => [...v].sort().join('+'));
    for (const o of modeMaj.others) differences.push({ kind: 'mode', message: `${o.node} shows ${o.value.join('+') || 'no kube-proxy'} (others: ${modeMaj.value.join('+') || 'none'})`, nodes: [o.node] });
    const differingCount = services.filter((s) => s.differences.length > 0).length;
    return { nodes: names, modes: this.modes, services, differences, summary: { servicePorts: services.length, agreeing: services.length - differingCount, differing: differingCount } };
  }
}

/** Compare every node's Services. Resolutions may be given (by node name) to avoid resolving twice. */
export async function compareNodes(cluster: ClusterSnapshot, given?: ReadonlyMap<string, Resolution>): Promise<NodeComparison> {
  const cmp = new NodeComparer();
  for (const n of cluster.nodes) await cmp.add(n, given?.get(n.name));
  return cmp.finish();
}
