/**
 * Services compared across proxy modes (iptables ↔ IPVS ↔ nftables): the proxy mode is not part
 * of a Service's identity. The same cluster dumped in two modes must give the same Services;
 * only what both modes' dumps can show is compared, and what one cannot show is said once.
 *
 * Pairing: by `ns/name:port/proto` where both sides name the Service port; else by
 * `clusterIP:port/proto` (IPVS dumps carry no names: a virtual server is VIP:port/proto). An IPVS
 * virtual server the resolver could not tie to its cluster IP (a NodePort, LoadBalancer or external
 * address whose virtual server has no real servers to match: `*:31460/tcp`, `172.18.200.6:80/tcp`)
 * joins the Service that has that NodePort or address on the other side.
 */
import type { Endpoint, ServicePort } from '../kube/types.js';
import { servicePortName } from '../kube/hash.js';

export interface NotCompared {
  /** The Service field (or aspect) left out. */
  readonly what: string;
  /** Why one of the two modes' dumps cannot show it. */
  readonly why: string;
}

/** Stated once in a diff whose two sides were written by different proxy modes. */
export interface ModeChange {
  readonly old: readonly string[];
  readonly new: readonly string[];
  readonly notCompared: readonly NotCompared[];
}

/** Proxy modes that wrote a resolution's Service ports, sorted. */
export function modesOf(services: readonly ServicePort[]): string[] {
  return [...new Set(services.map((s) => s.mode))].sort();
}

const IPVS_NOT_COMPARED: readonly NotCompared[] = [
  {
    what: 'internalTrafficPolicy',
    why: 'IPVS mode gives the ClusterIP virtual server only its local real servers: Local looks like Cluster with every endpoint on this node',
  },
  {
    what: 'externalTrafficPolicy of a Service port whose endpoints are all on this node (or that has none)',
    why: 'the IPVS external virtual servers then have the same real servers under either policy',
  },
  {
    what: 'no-endpoints vs no-local-endpoints',
    why: 'an IPVS virtual server without real servers may have no endpoints at all, or none on this node under a Local policy',
  },
];

const KIND_NOT_COMPARED: NotCompared = {
  what: 'externalIPs vs loadBalancerIPs (compared as one list of external addresses)',
  why: 'nftables mode names neither kind (only firewall-ips marks LoadBalancer IPs), nor do iptables-mode REJECT rules of Services without endpoints',
};

/** What is left out when comparing these modes (empty when they are the same). */
export function notComparedBetween(oldModes: readonly string[], newModes: readonly string[]): NotCompared[] {
  const all = new Set([...oldModes, ...newModes]);
  const out: NotCompared[] = [KIND_NOT_COMPARED];
  if (all.has('ipvs')) out.push(...IPVS_NOT_COMPARED);
  return out;
}

export function isCrossMode(oldModes: readonly string[], newModes: readonly string[]): boolean {
  return oldModes.length > 0 && newModes.length > 0 && oldModes.join(',') !== newModes.join(',');
}

const named = (s: ServicePort) => s.namespace !== null && s.name !== null;
const v6 = (s: ServicePort) => (s.family === 6 ? ' (IPv6)' : '');
const nameKey = (s: ServicePort) => (named(s) ? `${servicePortName(s.namespace!, s.name!, s.portName)}/${s.protocol}${v6(s)}` : undefined);
const addrKey = (s: ServicePort) => (s.clusterIP !== null ? `${s.clusterIP}:${s.port}/${s.protocol}${v6(s)}` : undefined);

export interface CrossModePairs {
  /** [old, new, key]: the key is the named one when either side names the Service port. */
  readonly pairs: readonly [ServicePort, ServicePort, string][];
  readonly removed: readonly [string, ServicePort][];
  readonly added: readonly [string, ServicePort][];
}

/** Front ends a fragment (no cluster IP) can be matched by: `np/tcp/31460`, `ip/tcp/172.18.200.6:80`. */
function frontKeys(s: ServicePort): string[] {
  const out: string[] = [];
  if (s.nodePort !== null) out.push(`np/${s.protocol}/${s.nodePort}${v6(s)}`);
  for (const ip of [...s.externalIPs, ...s.loadBalancerIPs]) out.push(`ip/${s.protocol}/${ip}:${s.port}${v6(s)}`);
  return out;
}

/** Index a side's Service ports by every front end they have. */
function byFront(services: readonly ServicePort[]): Map<string, ServicePort> {
  const m = new Map<string, ServicePort>();
  for (const s of services) for (const k of frontKeys(s)) if (!m.has(k)) m.set(k, s);
  return m;
}

/** Pair two resolutions' Service ports across proxy modes; fragments join their Service. */
export function pairAcrossModes(a: readonly ServicePort[], b: readonly ServicePort[]): CrossModePairs {
  const anchoredA = a.filter((s) => s.clusterIP !== null);
  const anchoredB = b.filter((s) => s.clusterIP !== null);
  const byNameB = new Map<string, ServicePort>();
  const byAddrB = new Map<string, ServicePort>();
  for (const t of anchoredB) {
    const n = nameKey(t);
    if (n && !byNameB.has(n)) byNameB.set(n, t);
    const k = addrKey(t)!;
    if (!byAddrB.has(k)) byAddrB.set(k, t);
  }
  const partner = new Map<ServicePort, ServicePort>();
  const taken = new Set<ServicePort>();
  for (const s of anchoredA) {
    const n = nameKey(s);
    let t = n ? byNameB.get(n) : undefined;
    if (t && named(t) && nameKey(t) !== n) t = undefined;
    if (!t || taken.has(t)) t = byAddrB.get(addrKey(s)!);
    if (!t || taken.has(t)) continue;
    partner.set(s, t);
    partner.set(t, s);
    taken.add(t);
  }
  const parts = new Map<ServicePort, ServicePort[]>();
  const attach = (fragments: readonly ServicePort[], other: readonly ServicePort[]) => {
    const fronts = byFront(other);
    for (const f of fragments) {
      const o = frontKeys(f).map((k) => fronts.get(k)).find((x) => x !== undefined);
      if (!o) continue;
      const home = partner.get(o);
      if (home) {
        const list = parts.get(home) ?? [];
        list.push(f);
        parts.set(home, list);
      } else if (!partner.has(f)) {
        partner.set(f, o);
        partner.set(o, f);
      }
    }
  };
  attach(a.filter((s) => s.clusterIP === null), b);
  attach(b.filter((s) => s.clusterIP === null), a);

  const joined = new Set<ServicePort>([...parts.values()].flat());
  const pairs: [ServicePort, ServicePort, string][] = [];
  const removed: [string, ServicePort][] = [];
  for (const s of a) {
    if (joined.has(s)) continue;
    const t = partner.get(s);
    if (!t) {
      removed.push([nameKey(s) ?? s.id, s]);
      continue;
    }
    pairs.push([merge(s, parts.get(s) ?? []), merge(t, parts.get(t) ?? []), nameKey(s) ?? nameKey(t) ?? addrKey(s) ?? addrKey(t) ?? s.id]);
  }
  const added: [string, ServicePort][] = b.filter((t) => !joined.has(t) && !partner.has(t)).map((t) => [nameKey(t) ?? t.id, t]);
  return { pairs, removed, added };
}

const union = (xs: readonly (readonly string[])[]) => [...new Set(xs.flat())].sort();

/** A Service port with the fragments that belong to it: their front ends, policy and state join it. */
function merge(anchor: ServicePort, fragments: readonly ServicePort[]): ServicePort {
  if (fragments.length === 0) return anchor;
  const all = [anchor, ...fragments];
  const troubled = fragments.find((f) => f.state !== 'healthy');
  return {
    ...anchor,
    nodePort: anchor.nodePort ?? fragments.find((f) => f.nodePort !== null)?.nodePort ?? null,
    externalIPs: union(all.map((p) => p.externalIPs)),
    loadBalancerIPs: union(all.map((p) => p.loadBalancerIPs)),
    loadBalancerSourceRanges: union(all.map((p) => p.loadBalancerSourceRanges)),
    externalTrafficPolicy: all.some((p) => p.externalTrafficPolicy === 'Local') ? 'Local' : anchor.externalTrafficPolicy,
    state: anchor.state === 'healthy' && troubled ? troubled.state : anchor.state,
    endpoints: anchor.endpoints.length > 0 ? anchor.endpoints : (fragments.find((f) => f.endpoints.length > 0)?.endpoints ?? []),
  };
}

/** The value of a field as compared across these modes (undefined: not compared). */
export function crossModeValue(s: ServicePort, other: ServicePort, field: string): unknown {
  const ipvs = s.mode === 'ipvs' || other.mode === 'ipvs';
  switch (field) {
    case 'mode':
      return undefined;
    case 'externalAddresses':
      return union([s.externalIPs, s.loadBalancerIPs]);
    case 'externalIPs':
    case 'loadBalancerIPs':
      return undefined;
    case 'internalTrafficPolicy':
      return ipvs ? undefined : s.internalTrafficPolicy;
    case 'externalTrafficPolicy':
      return ipvs && !someRemote(s, other) ? undefined : s.externalTrafficPolicy;
    case 'state':
      return ipvs && s.state === 'no-local-endpoints' ? 'no-endpoints' : s.state;
    default:
      return (s as unknown as Record<string, unknown>)[field];
  }
}

const isRemote = (e: Endpoint) => e.local === false;
const someRemote = (a: ServicePort, b: ServicePort) => a.endpoints.some(isRemote) || b.endpoints.some(isRemote);
