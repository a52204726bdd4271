/**
 * The fold behind `kpx services --nodes`: nodes are added one at a time (in name order) and each
 * node's Service ports are reduced to what the comparison prints or decides on — a *facet* (mode,
 * state, endpoints, chain roles, problems, policies, addresses) — interned, so nodes that say the
 * same about a Service port share one facet. Per Service port the aggregate keeps one group: the
 * nodes that have it and, for each, a reference to its facet. Memory grows with the Service ports
 * and the distinct views of them, not with nodes × Services × evidence: a node's Resolution (its
 * evidence, owned objects, front ends) can be dropped as soon as it is added. What the output lists
 * per node (JSON `views`, `presentOn`, endpoint `nodes`) stays: a node index per group and endpoint.
 */
import { formatHostPort } from '../model/addr.js';
import type { ProxyModeName, ServicePort, ServiceState } from '../kube/types.js';
import { servicePortKey } from '../kube/types.js';
import { serviceLabel } from '../render/services.js';
import { problemText } from '../render/problems.js';

/** What one node's ServicePort contributes to the comparison. Shared by every node that says the same. */
export interface Facet {
  readonly mode: ProxyModeName;
  readonly state: ServiceState;
  /** `ip:port`, unique, sorted (the JSON view's `endpoints`). */
  readonly endpoints: readonly string[];
  /** The endpoints the node's rules mark local. */
  readonly local: ReadonlySet<string>;
  /** Chain roles whose presence does not depend on where endpoints run. */
  readonly chains: readonly string[];
  /** The ServicePort's chains (role key → chain name), for naming a missing one. */
  readonly chainNames: Readonly<Record<string, string>>;
  readonly problems: readonly string[];
  readonly policy: string;
  readonly address: string;
  /** internalTrafficPolicy=Local and reachable only in-cluster: the node lists only its local endpoints. */
  readonly localOnly: boolean;
  /** What the Service port's row says when this node is the sample (the first node naming it). */
  readonly named: boolean;
  readonly label: string;
  readonly protocol: string;
  readonly port: number;
  readonly clusterIP: string | null;
  readonly externalTrafficPolicy: ServicePort['externalTrafficPolicy'];
  readonly internalTrafficPolicy: ServicePort['internalTrafficPolicy'];
  /** The endpoints the API's intent has for this node at this VIP (undefined: no API objects, or no such VIP there). */
  readonly intent?: ReadonlySet<string>;
}

/** One node's part of a group: the node (its index in name order) and its facet. */
export interface Member {
  readonly node: number;
  readonly facet: Facet;
  /** Order of the ServicePort over the whole fold (node after node, the node's services in order). */
  readonly seq: number;
}

/** One Service port across the nodes. */
export interface Group {
  /** `ns/name:port/proto|v4`, or `VIP:port/proto|v4` while unnamed. */
  readonly key: string;
  /** Members in node order, at most one per node (the first ServicePort of the node that maps here). */
  readonly members: Member[];
  /** The first ServicePort (of any node) that mapped here: the order groups are listed in before sorting. */
  readonly firstSeq: number;
  /** Unnamed (IPVS): its VIP:port/proto, by which it joins a named group at the end. */
  readonly vip?: string;
}

export const endpointText = (e: { ip: string; port: number | null }) => formatHostPort(e.ip, e.port ?? undefined);

/** `VIP:port/proto` of a Service port (its first address). */
export const vipKey = (s: ServicePort) => `${formatHostPort(s.clusterIP ?? s.externalIPs[0] ?? s.loadBalancerIPs[0] ?? '?', s.port)}/${s.protocol}`;

const isNamed = (s: ServicePort) => s.namespace !== null && s.name !== null;

/** The chain roles whose presence does not depend on where endpoints run. */
function chainRoles(s: ServicePort): string[] {
  const keys = Object.keys(s.chains);
  // The typed roles say which objects follow endpoints (their keys are the JSON form of them).
  return s.owned
    .map((o, i) => ({ o, key: keys[i] }))
    .filter(({ o, key }) => key !== undefined && o.role !== 'endpoint' && o.role !== 'svl' && o.role !== 'local' && !/local/i.test(key))
    .map(({ key }) => key!)
    .sort();
}

function policyText(s: ServicePort): string {
  return [
    `externalTrafficPolicy=${s.externalTrafficPolicy}`,
    `internalTrafficPolicy=${s.internalTrafficPolicy}`,
    `affinity=${s.sessionAffinity ? `${s.sessionAffinity.timeoutSeconds ?? '?'}s` : 'none'}`,
    s.loadBalancerSourceRanges.length ? `sourceRanges=${[...s.loadBalancerSourceRanges].sort().join(',')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function addressText(s: ServicePort): string {
  return [
    `clusterIP=${s.clusterIP ?? '-'}`,
    `nodePort=${s.nodePort ?? '-'}`,
    s.externalIPs.length ? `externalIPs=${[...s.externalIPs].sort().join(',')}` : '',
    s.loadBalancerIPs.length ? `loadBalancerIPs=${[...s.loadBalancerIPs].sort().join(',')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** The facet of a ServicePort (not yet interned). */
function facetOf(s: ServicePort, intent: ReadonlySet<string> | undefined): Facet {
  return {
    mode: s.mode,
    state: s.state,
    endpoints: [...new Set(s.endpoints.map(endpointText))].sort(),
    local: new Set(s.endpoints.filter((e) => e.local === true).map(endpointText)),
    chains: chainRoles(s),
    chainNames: s.chains,
    problems: s.problems.map(problemText),
    policy: policyText(s),
    address: addressText(s),
    localOnly: s.internalTrafficPolicy === 'Local' && s.nodePort === null && s.externalIPs.length === 0 && s.loadBalancerIPs.length === 0,
    named: s.name !== null,
    label: serviceLabel(s),
    protocol: s.protocol ?? '?',
    port: s.port,
    clusterIP: s.clusterIP,
    externalTrafficPolicy: s.externalTrafficPolicy,
    internalTrafficPolicy: s.internalTrafficPolicy,
    ...(intent ? { intent } : {}),
  };
}

/** A text that is equal for two facets exactly when every field is. */
function facetKey(f: Facet): string {
  return JSON.stringify([
    f.mode,
    f.state,
    f.endpoints,
    [...f.local].sort(),
    f.chains,
    Object.entries(f.chainNames),
    f.problems,
    f.policy,
    f.address,
    f.localOnly,
    f.named,
    f.label,
    f.protocol,
    f.port,
    f.clusterIP,
    f.externalTrafficPolicy,
    f.internalTrafficPolicy,
    f.intent ? [...f.intent].sort() : null,
  ]);
}

/**
 * The aggregate: add nodes in name order (`addNode`), then `groups()`. IPVS mode names no Service
 * (its ServicePorts are identified by address): such a port joins the named Service port another
 * node shows on the same VIP:port/proto — which may be a node added later, so unnamed ports are
 * grouped by VIP while adding and merged into the named groups at the end.
 */
export class ServiceAggregate {
  readonly nodes: string[] = [];
  private readonly facets = new Map<string, Facet>();
  private readonly byKey = new Map<string, Group>();
  /** VIP:port/proto → the key of the first named Service port seen there. */
  private readonly named = new Map<string, string>();
  private seq = 0;

  /** The number of distinct facets kept (what memory grows with, besides the groups). */
  get facetCount(): number {
    return this.facets.size;
  }

  /** The groups so far (one per Service port key; unnamed ones not merged yet). */
  get groupCount(): number {
    return this.byKey.size;
  }

  /** Members kept over all groups (one per node and Service port: what the output lists per node). */
  get memberCount(): number {
    let n = 0;
    for (const g of this.byKey.values()) n += g.members.length;
    return n;
  }

  /**
   * Add one node's Service ports. `intentAt` gives the endpoints the API's intent holds for this
   * node at a VIP key (`VIP:port/proto`), when the node's bundle has the API's objects.
   */
  addNode(name: string, services: readonly ServicePort[], intentAt?: (vip: string) => ReadonlySet<string> | undefined): void {
    const node = this.nodes.length;
    this.nodes.push(name);
    for (const s of services) {
      const seq = this.seq++;
      if (isNamed(s) && !this.named.has(vipKey(s))) this.named.set(vipKey(s), servicePortKey(s));
      const key = `${isNamed(s) ? servicePortKey(s) : vipKey(s)}|v${s.family}`;
      let g = this.byKey.get(key);
      if (!g) this.byKey.set(key, (g = { key, members: [], firstSeq: seq, ...(isNamed(s) ? {} : { vip: vipKey(s) }) }));
      const last = g.members[g.members.length - 1];
      if (last?.node === node) continue;
      const intent = intentAt && s.clusterIP !== null ? intentAt(`${formatHostPort(s.clusterIP, s.port)}/${s.protocol}`) : undefined;
      g.members.push({ node, facet: this.intern(facetOf(s, intent)), seq });
    }
  }

  private intern(f: Facet): Facet {
    const k = facetKey(f);
    const known = this.facets.get(k);
    if (known) return known;
    this.facets.set(k, f);
    return f;
  }

  /** Every Service port's group, unnamed ones merged into the named one on their VIP, in the order first seen. */
  groups(): Group[] {
    const out = new Map<string, Group>();
    for (const g of this.byKey.values()) {
      const target = g.vip !== undefined ? this.named.get(g.vip) : undefined;
      const key = target !== undefined ? `${target}|${g.key.slice(g.key.lastIndexOf('|') + 1)}` : g.key;
      const into = out.get(key);
      out.set(key, into ? mergeGroups(into, g) : { key, members: g.members, firstSeq: g.firstSeq });
    }
    return [...out.values()].sort((a, b) => a.firstSeq - b.firstSeq);
  }
}

/** Two groups of one Service port: per node the first ServicePort (lowest seq) is kept. */
function mergeGroups(a: Group, b: Group): Group {
  const byNode = new Map<number, Member>();
  for (const m of [...a.members, ...b.members]) {
    const had = byNode.get(m.node);
    if (!had || m.seq < had.seq) byNode.set(m.node, m);
  }
  return { key: a.key, members: [...byNode.values()].sort((x, y) => x.node - y.node), firstSeq: Math.min(a.firstSeq, b.firstSeq) };
}
