/**
 * Connection-tracking entries linked to the resolved Services: an entry's original destination to a
 * Service front end (ClusterIP:port, external IP, load-balancer IP, NodePort on a node address), its
 * reply source to an endpoint; and kube-proxy's own verdict on UDP entries (its conntrack cleanup).
 *
 * Everything here walks a table row by row through its accessors: no per-entry objects, so a
 * million-entry table costs one pass and a few maps keyed by front end.
 */
import { formatIp, parseIp } from '../model/addr.js';
import { CT_FLAG, IPPROTO, type ConntrackTable } from '../model/conntrack.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { FrontEndKind } from './facts.js';
import type { Endpoint, ServicePort } from './types.js';

const PROTO_NUM: Readonly<Record<string, number>> = { tcp: IPPROTO.tcp, udp: IPPROTO.udp, sctp: IPPROTO.sctp };

/** IPv6 addresses in one spelling (conntrack and kube-proxy both print compressed; pastes vary). */
const canonical = new Map<string, string>();
export function canonicalIp(text: string): string {
  if (!text.includes(':')) return text;
  let c = canonical.get(text);
  if (c === undefined) {
    const ip = parseIp(text);
    c = ip ? formatIp(ip) : text.toLowerCase();
    if (canonical.size < 65536) canonical.set(text, c);
  }
  return c;
}

export interface FrontEndHit {
  readonly service: ServicePort;
  readonly kind: FrontEndKind;
}

export interface CtLink {
  readonly front: FrontEndHit;
  /** The endpoint the reply comes from, when it is one of the Service port's current endpoints. */
  readonly endpoint?: Endpoint;
  /** The reply comes from the front end itself: the flow was never translated (no DNAT). */
  readonly untranslated: boolean;
}

/** Service front ends by `proto/ip:port` and NodePorts by `proto/port`, built once per snapshot. */
export interface FrontEndIndex {
  link(table: ConntrackTable, i: number): CtLink | undefined;
}

function nodeAddressSet(snapshot: NodeSnapshot): Set<string> {
  const out = new Set<string>();
  for (const i of snapshot.interfaces) if (i.name !== 'kube-ipvs0') for (const a of i.addresses) out.add(formatIp(a.ip));
  for (const ip of snapshot.extraNodeIps) out.add(formatIp(ip));
  return out;
}

export function frontEndIndex(services: readonly ServicePort[], snapshot: NodeSnapshot): FrontEndIndex {
  const byAddr = new Map<string, FrontEndHit>();
  const byNodePort = new Map<string, FrontEndHit>();
  for (const s of services) {
    if (s.protocol === null) continue;
    const p = PROTO_NUM[s.protocol];
    const add = (ip: string | null, kind: FrontEndKind): void => {
      if (ip) byAddr.set(`${p}/${canonicalIp(ip)}:${s.port}`, { service: s, kind });
    };
    add(s.clusterIP, 'cluster-ip');
    for (const ip of s.externalIPs) add(ip, 'external-ip');
    for (const ip of s.loadBalancerIPs) add(ip, 'load-balancer-ip');
    if (s.nodePort !== null) byNodePort.set(`${p}/${s.nodePort}`, { service: s, kind: 'node-port' });
  }
  const nodeIps = nodeAddressSet(snapshot);
  const knowNodeIps = nodeIps.size > 0;
  return {
    link(table, i) {
      // An entry whose addresses or ports the author hid is linked to nothing: they are unknown.
      if ((table.flags(i) & CT_FLAG.redacted) !== 0) return undefined;
      const port = table.origDport(i);
      if (port === undefined) return undefined;
      const proto = table.protoNum(i);
      const dst = canonicalIp(table.origDst(i));
      let front = byAddr.get(`${proto}/${dst}:${port}`);
      // A NodePort answers on the node's addresses; without `ip addr` any destination is taken
      // (the way kube-proxy's own cleanup matches NodePorts: by port alone).
      if (!front) {
        const np = byNodePort.get(`${proto}/${port}`);
        if (np && (!knowNodeIps || nodeIps.has(dst))) front = np;
      }
      if (!front) return undefined;
      const rsrc = canonicalIp(table.replySrc(i));
      const rport = table.replySport(i);
      const endpoint = front.service.endpoints.find((e) => canonicalIp(e.ip) === rsrc && (e.port === null || rport === undefined || e.port === rport));
      return { front, ...(endpoint ? { endpoint } : {}), untranslated: rsrc === dst };
    },
  };
}

/** Why kube-proxy's cleanup deletes an entry: its front end and the serving endpoints it checked against. */
export interface CleanupVerdict {
  readonly index: number;
  readonly service: ServicePort;
  readonly via: 'service-ip' | 'node-port';
  readonly servingIps: ReadonlySet<string>;
}

/**
 * The entries kube-proxy's conntrack reconciliation deletes, following
 * kubernetes/kubernetes pkg/proxy/conntrack/cleanup.go `CleanStaleEntries` exactly:
 *  - only UDP Service ports, and only those with at least one serving endpoint ("a Service without
 *    endpoints does not require to clean the conntrack entries associated");
 *  - map ClusterIP:port, each load-balancer IP:port and external IP:port to the serving endpoint IPs,
 *    and the NodePort (any destination address) to the same set;
 *  - a UDP entry is deleted when its original destination IP:port is such a front end, or its original
 *    destination port is such a NodePort, and its reply source IP is not one of the serving endpoint IPs.
 * Like kube-proxy, later Service ports with the same key overwrite earlier ones, and ports of the
 * endpoint are not compared (the reply source IP alone).
 *
 * kpx knows the endpoints the rules dispatch to; kube-proxy counts serving-but-terminating endpoints
 * too, which the rules may not show (an assumption the lint rule states).
 */
export function kubeProxyCleanup(table: ConntrackTable, services: readonly ServicePort[]): CleanupVerdict[] {
  const byIp = new Map<string, { service: ServicePort; ips: Set<string> }>();
  const byNodePort = new Map<number, { service: ServicePort; ips: Set<string> }>();
  for (const s of services) {
    if (s.protocol !== 'udp') continue;
    const ips = new Set(s.endpoints.map((e) => canonicalIp(e.ip)));
    if (ips.size === 0) continue;
    const v = { service: s, ips };
    if (s.clusterIP) byIp.set(`${canonicalIp(s.clusterIP)}:${s.port}`, v);
    for (const ip of s.loadBalancerIPs) byIp.set(`${canonicalIp(ip)}:${s.port}`, v);
    for (const ip of s.externalIPs) byIp.set(`${canonicalIp(ip)}:${s.port}`, v);
    if (s.nodePort !== null && s.nodePort !== 0) byNodePort.set(s.nodePort, v);
  }
  const out: CleanupVerdict[] = [];
  if (byIp.size === 0 && byNodePort.size === 0) return out;
  for (let i = 0; i < table.size; i++) {
    if (table.protoNum(i) !== IPPROTO.udp || (table.flags(i) & CT_FLAG.redacted) !== 0) continue;
    const port = table.origDport(i);
    if (port === undefined) continue;
    const replySrc = canonicalIp(table.replySrc(i));
    const a = byIp.get(`${canonicalIp(table.origDst(i))}:${port}`);
    if (a && !a.ips.has(replySrc)) {
      out.push({ index: i, service: a.service, via: 'service-ip', servingIps: a.ips });
      continue;
    }
    const n = byNodePort.get(port);
    if (n && !n.ips.has(replySrc)) out.push({ index: i, service: n.service, via: 'node-port', servingIps: n.ips });
  }
  return out;
}

/**
 * Conntrack entries of one Service port: per current endpoint (`ip:port` → count), and how many
 * point elsewhere (a gone endpoint, or never translated). For `kpx services --service`.
 */
export function connectionsOf(tables: readonly ConntrackTable[], service: ServicePort, snapshot: NodeSnapshot): { perEndpoint: Map<string, number>; elsewhere: number; total: number } {
  const idx = frontEndIndex([service], snapshot);
  const perEndpoint = new Map<string, number>();
  let elsewhere = 0;
  let total = 0;
  for (const t of tables) {
    for (let i = 0; i < t.size; i++) {
      const l = idx.link(t, i);
      if (!l) continue;
      total++;
      if (!l.endpoint) {
        elsewhere++;
        continue;
      }
      const key = `${l.endpoint.ip}:${l.endpoint.port ?? ''}`;
      perEndpoint.set(key, (perEndpoint.get(key) ?? 0) + 1);
    }
  }
  return { perEndpoint, elsewhere, total };
}
