/**
 * Which node of a bundle owns an address, and to which node a node's route hands a packet.
 * Only the dumps decide: `ip addr` (an interface holds the address), `ip route` (a /32 route to
 * a pod veth, the pod subnet on a bridge, Calico's blackhole for its own IPAM block).
 */
import { cidrContains, formatCidr, formatIp, ipEquals, parseIp, type Ip } from '../model/addr.js';
import { interfaceRole } from '../model/iface.js';
import { lookupRoute, normalizeTable, type Route } from '../model/route.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { ClusterNode, ClusterSnapshot } from './types.js';

/**
 * How a node owns the address, strongest first: an interface of the node holds it; a host route
 * to a pod veth (Calico `cali*`, Cilium `lxc*`); the pod subnet on a bridge or veth (`cni0`,
 * `cbr0`, a host-gw / kubenet node); the node's own Calico block (`blackhole … proto bird`).
 */
export type OwnerKind = 'node-address' | 'pod-route' | 'pod-subnet' | 'own-block';

const RANK: Record<OwnerKind, number> = { 'node-address': 0, 'pod-route': 1, 'pod-subnet': 2, 'own-block': 3 };

export interface PodOwner {
  readonly node: string;
  readonly kind: OwnerKind;
  /** The pod's interface (veth), the bridge it hangs off, or the interface holding the address. */
  readonly interface?: string;
  /** The matching prefix (/32 for addresses and host routes). */
  readonly prefix: number;
  readonly summary: string;
  /** The dump line that says so. */
  readonly file: string;
  readonly line: number;
}

const isHostPrefix = (r: Route) => r.dst.prefix === (r.dst.family === 4 ? 32 : 128);
const routeDev = (r: Route) => r.dev ?? r.nexthops?.[0]?.dev;
const routeVia = (r: Route) => r.via ?? r.nexthops?.[0]?.via;

type OwnAddress = { readonly ip: Ip; readonly iface: string; readonly file: string; readonly line: number };
/**
 * Per snapshot: ownership asks for them once per route per address looked up, on every node —
 * rebuilt each time, `services --nodes` over 100 nodes spent most of its time here.
 */
const ownAddressCache = new WeakMap<NodeSnapshot, readonly OwnAddress[]>();

/** The node's own addresses that can be a packet's destination (not loopback, not kube-ipvs0 VIPs). */
export function ownAddresses(s: NodeSnapshot): readonly OwnAddress[] {
  const cached = ownAddressCache.get(s);
  if (cached) return cached;
  const out: OwnAddress[] = [];
  for (const i of s.interfaces) {
    const role = interfaceRole(i.name);
    if (role === 'loopback' || role === 'ipvs-dummy') continue;
    for (const a of i.addresses) out.push({ ip: a.ip, iface: i.name, file: i.file, line: a.line });
  }
  for (const ip of s.extraNodeIps) out.push({ ip, iface: '(--node-ip)', file: '', line: 0 });
  ownAddressCache.set(s, out);
  return out;
}

function isOwnAddress(s: NodeSnapshot, ip: Ip): boolean {
  return ownAddresses(s).some((a) => ipEquals(a.ip, ip));
}

/** The claim a route of the node makes on the addresses it covers (whichever address is asked about), if any. */
function routeClaim(node: ClusterNode, r: Route): PodOwner | undefined {
  if (r.origin !== undefined) return undefined;
  const table = normalizeTable(r.table);
  if (table !== 'main' && table !== 'local' && table !== 'default') return undefined;
  if (r.type === 'blackhole' && !isHostPrefix(r))
    return { node: node.name, kind: 'own-block', prefix: r.dst.prefix, summary: `${node.name}'s own pod block ${r.dstText} (blackhole: no pod route for this address)`, file: r.file, line: r.line };
  if (r.type !== 'unicast') return undefined;
  const dev = routeDev(r);
  if (!dev) return undefined;
  const role = interfaceRole(dev);
  const via = routeVia(r);
  // Cilium: `10.0.1.0/24 via 10.0.1.1 dev cilium_host` names the node's own router address.
  const viaSelf = via?.ip !== undefined && isOwnAddress(node.snapshot, via.ip);
  if (via && !viaSelf) return undefined;
  // A host route to a pod veth; or, whatever its name, to a device that is no uplink, tunnel or
  // loopback (CNIs name veths freely: cali*, lxc*, veth*, eni*, gke*, …).
  if (isHostPrefix(r) && !viaSelf && (role === 'pod-veth' || role === 'other' || role === 'bridge'))
    return { node: node.name, kind: 'pod-route', interface: dev, prefix: r.dst.prefix, summary: `${node.name} routes ${r.dstText} to pod interface ${dev}`, file: r.file, line: r.line };
  if (role === 'bridge' || role === 'pod-veth' || (viaSelf && role === 'tunnel'))
    return { node: node.name, kind: 'pod-subnet', interface: dev, prefix: r.dst.prefix, summary: `${node.name}'s pod subnet ${formatCidr(r.dst)} is on ${dev}`, file: r.file, line: r.line };
  return undefined;
}

/** This node's claims on the address, best first. */
export function nodeClaims(node: ClusterNode, ip: Ip): PodOwner[] {
  const s = node.snapshot;
  const out: PodOwner[] = [];
  const host = ip.family === 4 ? 32 : 128;
  for (const a of ownAddresses(s)) {
    if (ipEquals(a.ip, ip)) out.push({ node: node.name, kind: 'node-address', interface: a.iface, prefix: host, summary: `${a.iface} of ${node.name} holds the address`, file: a.file, line: a.line });
  }
  for (const r of s.routes) {
    if (r.family !== ip.family || !cidrContains(r.dst, ip)) continue;
    const claim = routeClaim(node, r);
    if (claim) out.push(claim);
  }
  return out.sort((a, b) => RANK[a.kind] - RANK[b.kind] || b.prefix - a.prefix);
}

/**
 * The part of a node that ownerOf() reads — its own addresses and the routes that claim addresses —
 * in a snapshot without anything else: what a fleet comparison keeps of each node once its Services
 * are folded in (a node's other routes, e.g. one per other node's pod subnet, grow with the fleet).
 */
export function claimingPart(node: ClusterNode): ClusterNode {
  const s = node.snapshot;
  const light: NodeSnapshot = {
    name: s.name,
    files: [],
    rulesets: [],
    ipsets: [],
    ipsetsByName: new Map(),
    ipvs: [],
    nft: [],
    routes: s.routes.filter((r) => routeClaim(node, r) !== undefined),
    policyRules: [],
    interfaces: s.interfaces.filter((i) => {
      const role = interfaceRole(i.name);
      return role !== 'loopback' && role !== 'ipvs-dummy';
    }),
    sysctls: new Map(),
    extraNodeIps: s.extraNodeIps,
  };
  return { name: node.name, dir: node.dir, snapshot: light };
}

export interface Ownership {
  /** The owner, when one node's claim is strongest. */
  readonly owner?: PodOwner;
  /** Every claim from every node, best first. */
  readonly claims: readonly PodOwner[];
  /** Several nodes claim the address equally strongly. */
  readonly ambiguous: boolean;
}

export function ownerOf(cluster: ClusterSnapshot, ip: Ip | string): Ownership {
  const addr = typeof ip === 'string' ? parseIp(ip) : ip;
  if (!addr) return { claims: [], ambiguous: false };
  const claims = cluster.nodes.flatMap((n) => nodeClaims(n, addr).slice(0, 1));
  claims.sort((a, b) => RANK[a.kind] - RANK[b.kind] || b.prefix - a.prefix);
  if (claims.length === 0) return { claims, ambiguous: false };
  const best = claims[0];
  const ties = claims.filter((c) => RANK[c.kind] === RANK[best.kind] && c.prefix === best.prefix);
  return { owner: best, claims, ambiguous: ties.length > 1 };
}

export interface NextHop {
  /** The node the route hands the packet to, or null when it leaves the bundle. */
  readonly node: string | null;
  /**
   * `gateway`: the route's gateway is an address of that node (host-gw, BGP, IPIP, VXLAN onlink);
   * `link`: a route without gateway on a shared link, so the destination's owner receives it;
   * `outside`: the gateway is no node of the bundle (a router, the default gateway).
   */
  readonly how: 'gateway' | 'link' | 'outside';
  readonly gateway?: string;
  readonly dev?: string;
  readonly route: Route;
  readonly summary: string;
}

/** Where `node`'s route for `dst` sends the packet (undefined: no route, or a local/reject route). */
export function nextHop(cluster: ClusterSnapshot, node: ClusterNode, dst: Ip): NextHop | undefined {
  const r = lookupRoute(node.snapshot.routes, dst);
  if (!r || r.type !== 'unicast') return undefined;
  const via = routeVia(r);
  const dev = routeDev(r);
  const base = { route: r, ...(dev ? { dev } : {}) };
  if (via) {
    const gw = via.ip;
    const holder = gw ? cluster.nodes.find((n) => n !== node && isOwnAddress(n.snapshot, gw)) : undefined;
    if (holder) return { ...base, node: holder.name, how: 'gateway', gateway: via.address, summary: `${node.name} sends it via ${via.address}${dev ? ` on ${dev}` : ''}, an address of ${holder.name}` };
    if (gw && isOwnAddress(node.snapshot, gw)) return undefined; // via itself (Cilium cilium_host): local
    return { ...base, node: null, how: 'outside', gateway: via.address, summary: `${node.name} sends it via ${via.address}${dev ? ` on ${dev}` : ''}, which is no node of this bundle` };
  }
  const role = dev ? interfaceRole(dev) : undefined;
  const own = ownerOf(cluster, dst).owner;
  if (own?.node === node.name) return undefined; // delivered on this node
  if (role === 'pod-veth' || role === 'bridge') return undefined; // a local pod interface, whoever claims the address
  if (own && own.node !== node.name) return { ...base, node: own.node, how: 'link', summary: `${node.name} puts it directly on ${dev ?? 'its link'}, where ${own.node} owns ${formatIp(dst)}` };
  return { ...base, node: null, how: 'outside', summary: `${node.name} puts it directly on ${dev ?? 'its link'}; no node of this bundle owns the address` };
}
