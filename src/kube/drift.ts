/**
 * Intent vs dataplane: where the node's programmed Service ports (the resolver's ServicePorts)
 * disagree with what kube-proxy would program from the API's objects (intent.ts). Typed drift
 * items only; the `api-*` lint rules turn each kind into findings, renderers into sentences.
 *
 * Honest under partial evidence: a family the dumps do not show is not compared; a Service port
 * whose endpoint evidence is missing (state `unknown`) is not compared endpoint by endpoint; with a
 * Local policy and this node not identified among the API's Nodes, which endpoints are local is
 * unknown and only endpoints the API no longer lists at all are reported.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { knows, listsAllServicesOf, type ApiObjects, type ApiWhere } from '../model/k8s-api.js';
import { tableShownWhole } from '../model/netfilter.js';
import { parseCidr, parseIp, formatIp, formatCidr, formatHostPort } from '../model/addr.js';
import { intendedDataplane, intendedPortName, type Family, type IntendedEndpoint, type IntendedServicePort, type Intent } from './intent.js';
import type { Endpoint, Evidence, Resolution, ServicePort } from './types.js';

export type DriftKind =
  | 'service-not-programmed'
  | 'service-stale'
  | 'endpoint-not-programmed'
  | 'endpoint-stale'
  | 'endpoint-not-usable'
  | 'terminating-programmed'
  | 'traffic-policy'
  | 'session-affinity'
  | 'node-port'
  | 'external-ip'
  | 'load-balancer-ip'
  | 'source-range';

export interface Drift {
  readonly kind: DriftKind;
  /** `ns/name:port` (kube-proxy's ServicePortName), or the node's id for a Service the API lacks. */
  readonly service: string;
  /** The address concerned: `VIP:port/proto`, an endpoint `IP:port`, `NodePort N`, an IP or a CIDR. */
  readonly address: string;
  /** What the API intends / what the node has, for the field kinds (policy, NodePort, …). */
  readonly expected?: string;
  readonly found?: string;
  /** Why an endpoint is not usable (not-usable kind): `not ready`, `hinted for zone-b`, … */
  readonly why?: string;
  readonly api?: ApiWhere;
  readonly dump?: Evidence;
  readonly intended?: IntendedServicePort;
  readonly programmed?: ServicePort;
}

export interface DriftResult {
  readonly intent: Intent;
  readonly families: readonly Family[];
  readonly drift: readonly Drift[];
  /** Intended ports matched to the node's Service ports (for naming, cluster comparison). */
  readonly matched: ReadonlyMap<ServicePort, IntendedServicePort>;
}

/** IP families the dumps show a dataplane for (only these are compared). */
export function familiesShown(snapshot: NodeSnapshot, resolution: Resolution): Family[] {
  const f = new Set<Family>();
  for (const rs of snapshot.rulesets) f.add(rs.family);
  for (const d of snapshot.ipvs) for (const vs of d.virtualServers) f.add(vs.family);
  for (const n of snapshot.nft) for (const t of n.tables) {
    if (t.family === 'ip' || t.family === 'inet') f.add(4);
    if (t.family === 'ip6' || t.family === 'inet') f.add(6);
  }
  for (const s of resolution.services) f.add(s.family);
  return [...f].sort();
}

const vipKey = (ip: string, port: number, proto: string | null) => `${canonIp(ip)}|${port}|${proto ?? '?'}`;
function canonIp(ip: string): string {
  const p = parseIp(ip);
  return p ? formatIp(p) : ip;
}
function canonCidr(c: string): string {
  const p = parseCidr(c.includes('/') ? c : `${c}/${c.includes(':') ? 128 : 32}`);
  return p ? formatCidr(p) : c;
}
const epKey = (ip: string, port: number | null) => `${canonIp(ip)}|${port ?? '?'}`;

/**
 * Match the node's Service ports to the intended ones: by cluster IP, port and protocol; else by
 * name; else (IPVS virtual servers carry no names, and a NodePort or external address without
 * endpoints cannot be tied to its cluster IP) by a NodePort, external or load-balancer address.
 */
export function matchPorts(resolution: Resolution, intent: Intent): Map<ServicePort, IntendedServicePort> {
  const byVip = new Map<string, IntendedServicePort>();
  const byName = new Map<string, IntendedServicePort>();
  const byNodePort = new Map<string, IntendedServicePort>();
  const byExternal = new Map<string, IntendedServicePort>();
  for (const p of intent.ports) {
    byVip.set(vipKey(p.clusterIP, p.port, p.protocol), p);
    byName.set(`${intendedPortName(p)}|${p.protocol}|${p.family}`, p);
    if (p.nodePort !== null) byNodePort.set(`${p.nodePort}|${p.protocol}|${p.family}`, p);
    for (const ip of [...p.externalIPs, ...p.loadBalancerIPs]) byExternal.set(vipKey(ip, p.port, p.protocol), p);
  }
  const out = new Map<ServicePort, IntendedServicePort>();
  for (const s of resolution.services) {
    let m = s.clusterIP !== null ? byVip.get(vipKey(s.clusterIP, s.port, s.protocol)) : undefined;
    if (!m && s.namespace !== null && s.name !== null) {
      const name = s.portName ? `${s.namespace}/${s.name}:${s.portName}` : `${s.namespace}/${s.name}`;
      const cand = byName.get(`${name}|${s.protocol}|${s.family}`);
      // A name match with another cluster IP is a different Service object (re-created): not the same port.
      if (cand && (s.clusterIP === null || canonIp(s.clusterIP) === canonIp(cand.clusterIP))) m = cand;
    }
    if (!m && s.clusterIP === null) {
      m = (s.nodePort !== null ? byNodePort.get(`${s.nodePort}|${s.protocol}|${s.family}`) : undefined) ?? [...s.externalIPs, ...s.loadBalancerIPs].map((ip) => byExternal.get(vipKey(ip, s.port, s.protocol))).find((x) => x !== undefined);
    }
    // Last: an IPVS NodePort or external virtual server is tied to its Service port by the real servers
    // they share; only when exactly one intended port has that endpoint set (an address moved is then a field drift).
    if (!m && s.clusterIP === null && s.endpoints.length > 0) {
      const key = endpointSetKey(s.endpoints);
      const cands = intent.ports.filter((p) => p.protocol === s.protocol && p.family === s.family && (endpointSetKey(p.reachable) === key || endpointSetKey(p.cluster) === key));
      if (cands.length === 1) m = cands[0];
    }
    if (m) out.set(s, m);
  }
  // A NodePort virtual server with no real servers (Local policy, no local endpoint) shares nothing with its
  // cluster IP: when exactly one such server and one intended port with a NodePort no node port answers to are
  // left, they are the same Service port whose NodePort moved (reported as a NodePort drift, not two Services).
  const nodePorts = new Set(resolution.services.map((s) => s.nodePort).filter((n) => n !== null));
  const claimed = new Set([...out.values()].filter((p) => p.nodePort !== null && nodePorts.has(p.nodePort)));
  const orphans = resolution.services.filter((s) => !out.has(s) && s.clusterIP === null && s.nodePort !== null);
  for (const s of orphans) {
    const cands = intent.ports.filter((p) => p.nodePort !== null && !nodePorts.has(p.nodePort) && !claimed.has(p) && p.protocol === s.protocol && p.family === s.family);
    const rivals = orphans.filter((o) => o.protocol === s.protocol && o.family === s.family);
    if (cands.length === 1 && rivals.length === 1) out.set(s, cands[0]);
  }
  return out;
}

const endpointSetKey = (eps: readonly { ip: string; port: number | null }[]) => eps.map((e) => epKey(e.ip, e.port)).sort().join(',');

const addressOf = (p: { clusterIP: string | null; port: number; protocol: string | null }) => (p.clusterIP !== null ? `${formatHostPort(p.clusterIP, p.port)}/${p.protocol ?? '?'}` : `port ${p.port}/${p.protocol ?? '?'}`);
const epAddress = (ip: string, port: number | null) => (port === null ? ip : formatHostPort(ip, port));
const nodeLabel = (s: ServicePort) => (s.namespace !== null && s.name !== null ? (s.portName ? `${s.namespace}/${s.name}:${s.portName}` : `${s.namespace}/${s.name}`) : s.id);

/**
 * Do the dumps show this family's Service rules whole? Not when its iptables evidence is a grep,
 * a listing of some chains, or `iptables -S` of one chain (issue 30): a Service missing from such
 * a paste may simply not have been pasted.
 */
export function dataplaneShownWhole(snapshot: NodeSnapshot, family: Family): boolean {
  return snapshot.rulesets.filter((r) => r.family === family).every((r) => r.tables.every(tableShownWhole));
}

export function computeDrift(snapshot: NodeSnapshot, resolution: Resolution): DriftResult | undefined {
  if (!snapshot.api) return undefined;
  const api = snapshot.api;
  const intent = intendedDataplane(api, snapshot);
  const families = familiesShown(snapshot, resolution);
  const matched = matchPorts(resolution, intent);
  const drift: Drift[] = [];
  const seen = new Set<IntendedServicePort>(matched.values());
  for (const p of intent.ports) {
    if (seen.has(p) || !families.includes(p.family)) continue;
    // Not programmed: only when the dumps are whole and the text shows everything that decides it
    // (type, and the labels that may hand the Service to another proxy).
    if (!dataplaneShownWhole(snapshot, p.family) || p.unknown.has('proxyName') || p.unknown.has('type')) continue;
    drift.push({ kind: 'service-not-programmed', service: intendedPortName(p), address: addressOf(p), api: p.service.where, intended: p });
  }
  const groups = new Map<IntendedServicePort, ServicePort[]>();
  for (const s of resolution.services) {
    const p = matched.get(s);
    if (!p) {
      // Stale: only when the API evidence lists every Service of the port's namespace, and says enough to tie it.
      if (!listsAllServicesOf(api, s.namespace) || !staleDecidable(s, api)) continue;
      drift.push({ kind: 'service-stale', service: nodeLabel(s), address: s.clusterIP !== null ? addressOf(s) : frontEndOf(s), dump: s.evidence[0], programmed: s });
      continue;
    }
    const g = groups.get(p);
    if (g) g.push(s);
    else groups.set(p, [s]);
  }
  for (const [p, parts] of groups) {
    const s = merged(parts);
    // A grep or a listing of some chains: what the node lacks may be what was not pasted.
    if (!dataplaneShownWhole(snapshot, s.family)) continue;
    compareFields(s, p, drift);
    compareEndpoints(s, p, drift);
  }
  return { intent, families, drift, matched };
}

/**
 * Can "the API has no such Service port" be told for this node's port? Always from objects read
 * whole (as kpx always did). From text forms only by cluster IP — their port names are often not
 * shown — and only when no Service of that namespace has a cluster IP the text does not show.
 */
function staleDecidable(s: ServicePort, api: ApiObjects): boolean {
  if (api.services.every((x) => x.text === undefined)) return true;
  if (s.clusterIP === null) return false;
  return !api.services.some((x) => !knows(x, 'clusterIPs') && (x.namespace === s.namespace || !knows(x, 'namespace')));
}

/** Where a Service port without a cluster IP is reached: its NodePort or first external address. */
function frontEndOf(s: ServicePort): string {
  if (s.nodePort !== null) return `NodePort ${s.nodePort}/${s.protocol ?? '?'}`;
  const ip = s.externalIPs[0] ?? s.loadBalancerIPs[0];
  return ip !== undefined ? `${formatHostPort(ip, s.port)}/${s.protocol ?? '?'}` : s.id;
}

/**
 * One intended port may be several node Service ports (IPVS: a NodePort virtual server kpx could not
 * tie to its cluster IP): one view of them, the cluster-IP one first.
 */
function merged(parts: readonly ServicePort[]): ServicePort {
  if (parts.length === 1) return parts[0];
  const sorted = [...parts].sort((a, b) => Number(a.clusterIP === null) - Number(b.clusterIP === null));
  const [head] = sorted;
  const uniq = (xs: string[]) => [...new Set(xs)].sort();
  const eps = new Map<string, Endpoint>();
  for (const p of sorted) for (const e of p.endpoints) if (!eps.has(epKey(e.ip, e.port))) eps.set(epKey(e.ip, e.port), e);
  return {
    ...head,
    nodePort: sorted.map((p) => p.nodePort).find((x) => x !== null) ?? null,
    externalIPs: uniq(sorted.flatMap((p) => p.externalIPs)),
    loadBalancerIPs: uniq(sorted.flatMap((p) => p.loadBalancerIPs)),
    loadBalancerSourceRanges: uniq(sorted.flatMap((p) => p.loadBalancerSourceRanges)),
    externalTrafficPolicy: sorted.some((p) => p.externalTrafficPolicy === 'Local') ? 'Local' : 'Cluster',
    sessionAffinity: sorted.map((p) => p.sessionAffinity).find((x) => x !== null) ?? null,
    state: sorted.some((p) => p.state === 'unknown') ? 'unknown' : head.state,
    endpoints: [...eps.values()],
    frontEnds: sorted.flatMap((p) => p.frontEnds),
    evidence: sorted.flatMap((p) => p.evidence),
  };
}

function field(kind: DriftKind, s: ServicePort, p: IntendedServicePort, address: string, expected: string, found: string, dump?: Evidence): Drift {
  return { kind, service: intendedPortName(p), address, expected, found, api: p.service.where, dump: dump ?? s.evidence[0], intended: p, programmed: s };
}

function compareFields(s: ServicePort, p: IntendedServicePort, out: Drift[]): void {
  const vip = addressOf(p);
  const fe = (pred: (f: ServicePort['frontEnds'][number]) => boolean) => s.frontEnds.find(pred)?.evidence;
  if ((p.nodePort ?? null) !== (s.nodePort ?? null) && !p.unknown.has('type')) {
    out.push(field('node-port', s, p, p.nodePort !== null ? `NodePort ${p.nodePort}` : `NodePort ${s.nodePort}`, p.nodePort === null ? 'none' : String(p.nodePort), s.nodePort === null ? 'none' : String(s.nodePort), fe((f) => f.kind === 'node-port')));
  }
  const setDiff = (kind: DriftKind, want: readonly string[], have: readonly string[], canon: (x: string) => string, feKind?: string) => {
    const w = new Set(want.map(canon));
    const h = new Set(have.map(canon));
    for (const x of w) if (!h.has(x)) out.push(field(kind, s, p, x, 'present', 'missing'));
    for (const x of h) if (!w.has(x)) out.push(field(kind, s, p, x, 'absent', 'present', feKind ? fe((f) => f.kind === feKind && f.ip !== null && canon(f.ip) === x) : undefined));
  };
  if (!p.unknown.has('externalAddresses')) compareExternal(s, p, out, fe);
  // Source ranges are programmed only for load-balancer IPs (the FW chain / ipset / nft set element).
  if (p.loadBalancerIPs.length > 0 && s.loadBalancerIPs.length > 0 && !p.unknown.has('loadBalancerSourceRanges')) setDiff('source-range', p.loadBalancerSourceRanges, s.loadBalancerSourceRanges, canonCidr);
  // externalTrafficPolicy is visible only where the node accepts external traffic.
  const external = s.nodePort !== null || s.externalIPs.length > 0 || s.loadBalancerIPs.length > 0;
  if (external && p.externalTrafficPolicy !== s.externalTrafficPolicy && !p.unknown.has('externalTrafficPolicy')) out.push(field('traffic-policy', s, p, vip, `externalTrafficPolicy ${p.externalTrafficPolicy}`, `externalTrafficPolicy ${s.externalTrafficPolicy}`));
  // IPVS dumps do not show internalTrafficPolicy (only which real servers the cluster IP has): the endpoint comparison judges it there.
  if (s.mode !== 'ipvs' && p.internalTrafficPolicy !== s.internalTrafficPolicy && s.state !== 'unknown' && !p.unknown.has('internalTrafficPolicy')) out.push(field('traffic-policy', s, p, vip, `internalTrafficPolicy ${p.internalTrafficPolicy}`, `internalTrafficPolicy ${s.internalTrafficPolicy}`));
  const want = p.affinitySeconds;
  const have = s.sessionAffinity?.timeoutSeconds ?? null;
  // Affinity is programmed per endpoint (iptables recent, nft set) or per virtual server: without endpoints there is nothing to see.
  // A text form may show affinity on/off but not its timeout: then only on/off is compared.
  const onOff = p.unknown.has('sessionAffinityTimeout') || s.sessionAffinity?.timeoutSeconds === null;
  const differs = onOff ? (want === null) !== (s.sessionAffinity === null) : want !== have;
  if (differs && s.endpoints.length > 0 && !p.unknown.has('sessionAffinity')) out.push(field('session-affinity', s, p, vip, want === null ? 'None' : onOff ? 'ClientIP' : `ClientIP ${want}s`, have === null ? (s.sessionAffinity ? 'ClientIP' : 'None') : `ClientIP ${have}s`));
}

/** External and load-balancer addresses: the API's against the node's. */
function compareExternal(s: ServicePort, p: IntendedServicePort, out: Drift[], fe: (pred: (f: ServicePort['frontEnds'][number]) => boolean) => Evidence | undefined): void {
  // An external IP and a load-balancer IP are told apart only by rules a no-endpoint Service lacks
  // (iptables rejects both with one `has no endpoints` rule): compare the addresses, then name the field.
  const wantExt = [...p.externalIPs, ...p.loadBalancerIPs].map(canonIp);
  const haveExt = new Set([...s.externalIPs, ...s.loadBalancerIPs].map(canonIp));
  const apiLb = new Set(p.loadBalancerIPs.map(canonIp));
  const nodeLb = new Set(s.loadBalancerIPs.map(canonIp));
  for (const ip of new Set(wantExt)) if (!haveExt.has(ip)) out.push(field(apiLb.has(ip) ? 'load-balancer-ip' : 'external-ip', s, p, ip, 'present', 'missing'));
  for (const ip of haveExt) {
    if (wantExt.includes(ip)) continue;
    const kind = nodeLb.has(ip) ? 'load-balancer-ip' : 'external-ip';
    out.push(field(kind, s, p, ip, 'absent', 'present', fe((f) => (f.kind === 'external-ip' || f.kind === 'load-balancer-ip') && f.ip !== null && canonIp(f.ip) === ip)));
  }
}

function compareEndpoints(s: ServicePort, p: IntendedServicePort, out: Drift[]): void {
  // Either side's endpoint set not whole: which endpoints should be there cannot be said.
  if (s.state === 'unknown' || p.unknown.has('endpoints')) return;
  const listed = new Map<string, IntendedEndpoint>(p.listed.map((e) => [epKey(e.ip, e.port), e]));
  const reachable = new Set(p.reachable.map((e) => epKey(e.ip, e.port)));
  const hasReady = p.reachable.some((e) => e.ready);
  const programmed = new Map<string, Endpoint>(s.endpoints.map((e) => [epKey(e.ip, e.port), e]));
  const name = intendedPortName(p);
  // Expected but not programmed. With Local policy and this node unknown, the local set is unknown: use the Cluster set.
  const expected = p.localityUnknown ? (p.usesCluster ? p.cluster : []) : p.reachable;
  for (const e of expected) {
    if (programmed.has(epKey(e.ip, e.port))) continue;
    out.push({ kind: 'endpoint-not-programmed', service: name, address: epAddress(e.ip, e.port), api: e.where, dump: s.evidence[0], intended: p, programmed: s });
  }
  for (const [k, e] of programmed) {
    if (reachable.has(k)) continue;
    // IPVS keeps a deleted real server at weight 0 while its connections drain (graceful termination).
    if (e.weight === 0) continue;
    const dump = e.evidence[0] ?? s.evidence[0];
    const api = listed.get(k);
    if (!api) {
      out.push({ kind: 'endpoint-stale', service: name, address: epAddress(e.ip, e.port), dump, api: p.service.where, intended: p, programmed: s });
      continue;
    }
    if (p.localityUnknown) continue;
    if (api.terminating && hasReady) {
      out.push({ kind: 'terminating-programmed', service: name, address: epAddress(e.ip, e.port), dump, api: api.where, intended: p, programmed: s });
      continue;
    }
    const why = !api.ready && !(api.serving && api.terminating)
      ? 'not ready'
      : p.topologyMode === 'PreferSameZone'
        ? `hinted for ${api.zoneHints.join(', ') || 'no zone'}, not this node's zone`
        : p.topologyMode === 'PreferSameNode'
          ? `hinted for ${api.nodeHints.join(', ') || 'no node'}, not this node`
          : api.local === false && !p.usesCluster
            ? 'on another node (internalTrafficPolicy Local)'
            : 'not used by kube-proxy here';
    out.push({ kind: 'endpoint-not-usable', service: name, address: epAddress(e.ip, e.port), why, dump, api: api.where, intended: p, programmed: s });
  }
}
