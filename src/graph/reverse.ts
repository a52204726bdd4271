/**
 * Reverse lookup (`kpx reverse POD-IP[:PORT]`): which Service ports, NodePorts, externalIPs and
 * LoadBalancer IPs of one node can send a new connection to this pod address, with what chance,
 * and the dump lines that say so. Also any other DNAT rule (hostPort, hand-written) that
 * rewrites to it. One node per call: the result carries the node name so results of several
 * nodes can simply be concatenated (`mergeReverse`).
 */
import type { Endpoint, Evidence, Resolution, ServicePort } from '../kube/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { ipEquals, parseIp, splitHostPort, type Ip } from '../model/addr.js';
import { servicePortName } from '../kube/hash.js';

export interface ReverseTarget {
  readonly ip: string;
  readonly port?: number;
}

export type FrontendKind = 'clusterIP' | 'nodePort' | 'externalIP' | 'loadBalancerIP';

export interface Frontend {
  readonly kind: FrontendKind;
  /** null for a NodePort (any local address of the node). */
  readonly address: string | null;
  readonly port: number;
  readonly protocol: string;
  /** The share of new connections to this front end that land on the target (0..1). */
  /** null when the dump hides the endpoint's share. */
  readonly probability: number | null;
  /** The traffic policy that applies to this front end. */
  readonly policy: 'Cluster' | 'Local';
  readonly note?: string;
}

export interface ReverseMatch {
  readonly node: string;
  /** `ns/name:port/proto`, or the resolver's id when the dump names no Service. */
  readonly service: string;
  readonly namespace: string | null;
  readonly name: string | null;
  readonly portName: string | null;
  readonly mode: string;
  readonly endpoint: { readonly ip: string; readonly port: number | null; readonly local: boolean | null; readonly via?: string; readonly weight?: number };
  readonly frontends: readonly Frontend[];
  readonly evidence: readonly Evidence[];
}

export interface OtherDnat {
  readonly node: string;
  /** `nat/CNI-DN-…`, `ip kube-proxy/…` */
  readonly where: string;
  readonly to: string;
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

export interface ReverseResult {
  readonly target: ReverseTarget;
  readonly nodes: readonly string[];
  readonly matches: readonly ReverseMatch[];
  readonly otherDnat: readonly OtherDnat[];
}

/** `10.244.1.3`, `10.244.1.3:8080`, `[fd00::5]:8080`, `fd00::5`. */
export function parseReverseTarget(text: string): ReverseTarget | string {
  const t = text.trim();
  const plain = parseIp(t.replace(/^\[(.*)\]$/, '$1'));
  if (plain) return { ip: t.replace(/^\[(.*)\]$/, '$1') };
  const hp = splitHostPort(t);
  if (!hp || hp.port === undefined || hp.portEnd !== undefined) return `expected POD-IP or POD-IP:PORT ([IPv6]:PORT), got ${text}`;
  if (hp.port < 1 || hp.port > 65535) return `port ${hp.port} is out of range`;
  return { ip: hp.host, port: hp.port };
}

function endpointMatches(e: Endpoint, ip: Ip, port: number | undefined): boolean {
  const eip = parseIp(e.ip);
  return eip !== undefined && ipEquals(eip, ip) && (port === undefined || e.port === port);
}

function share(s: ServicePort, e: Endpoint, policy: 'Cluster' | 'Local'): { probability: number | null; note?: string } {
  if (policy === 'Cluster') return { probability: e.probability };
  if (e.local === false) return { probability: 0, note: 'Local policy: this node sends only to its own endpoints, and this one is on another node' };
  const locals = s.endpoints.filter((x) => x.local === true).length;
  if (e.local === null || locals === 0) return { probability: 0, note: 'Local policy, and the dumps do not say whether this endpoint is on this node' };
  return { probability: 1 / locals, note: `Local policy: an equal share of the ${locals} local endpoint${locals === 1 ? '' : 's'}` };
}

function frontendsOf(s: ServicePort, e: Endpoint): Frontend[] {
  const out: Frontend[] = [];
  const add = (kind: FrontendKind, address: string | null, port: number, policy: 'Cluster' | 'Local') => {
    const sh = share(s, e, policy);
    out.push({ kind, address, port, protocol: s.protocol ?? '?', probability: sh.probability === null ? null : Math.round(sh.probability * 1e10) / 1e10, policy, ...(sh.note ? { note: sh.note } : {}) });
  };
  if (s.clusterIP) add('clusterIP', s.clusterIP, s.port, s.internalTrafficPolicy);
  if (s.nodePort !== null) add('nodePort', null, s.nodePort, s.externalTrafficPolicy);
  for (const ip of s.externalIPs) add('externalIP', ip, s.port, s.externalTrafficPolicy);
  for (const ip of s.loadBalancerIPs) add('loadBalancerIP', ip, s.port, s.externalTrafficPolicy);
  return out;
}

/** One node: every Service port whose endpoints include the target, and other DNAT rules to it. */
export function reverseLookup(snapshot: NodeSnapshot, res: Resolution, target: ReverseTarget, node: string = snapshot.name): ReverseResult {
  const ip = parseIp(target.ip);
  if (!ip) return { target, nodes: [node], matches: [], otherDnat: [] };
  const matches: ReverseMatch[] = [];
  const claimed = new Set<string>();
  for (const s of res.services) {
    for (const e of s.endpoints) {
      if (!endpointMatches(e, ip, target.port)) continue;
      for (const ev of e.evidence) claimed.add(`${ev.file}:${ev.line}`);
      matches.push({
        node,
        service: s.namespace !== null && s.name !== null ? `${servicePortName(s.namespace, s.name, s.portName)}/${s.protocol}` : s.id,
        namespace: s.namespace,
        name: s.name,
        portName: s.portName,
        mode: s.mode,
        endpoint: { ip: e.ip, port: e.port, local: e.local, ...(e.via ? { via: e.via } : {}), ...(e.weight !== undefined ? { weight: e.weight } : {}) },
        frontends: frontendsOf(s, e),
        evidence: [...e.evidence, ...s.evidence.filter((ev) => /KUBE-(SERVICES|NODEPORTS)|services|nodeports|service-ips|ipvs/i.test(`${ev.where ?? ''}`))],
      });
    }
  }
  const otherDnat: OtherDnat[] = [];
  for (const rs of snapshot.rulesets)
    for (const t of rs.tables)
      for (const c of t.chains)
        for (const r of c.rules) {
          if (r.target?.kind !== 'dnat' || claimed.has(`${r.file}:${r.line}`)) continue;
          for (const to of r.target.to) {
            const tip = to.ip ? parseIp(to.ip) : undefined;
            if (!tip || !ipEquals(tip, ip)) continue;
            if (target.port !== undefined && to.port !== undefined && (target.port < to.port || target.port > (to.portEnd ?? to.port))) continue;
            otherDnat.push({ node, where: `${t.name}/${c.name}`, to: to.text, file: r.file, line: r.line, text: r.raw });
          }
        }
  for (const n of snapshot.nft)
    for (const t of n.tables)
      for (const c of t.chains)
        for (const r of c.rules) {
          if (claimed.has(`${t.file}:${r.line}`)) continue;
          for (const x of r.exprs) {
            if (x.kind !== 'dnat' || !x.to?.addr) continue;
            const tip = parseIp(x.to.addr.replace(/^\[(.*)\]$/, '$1'));
            if (!tip || !ipEquals(tip, ip)) continue;
            if (target.port !== undefined && x.to.port !== undefined && String(target.port) !== x.to.port) continue;
            // kube-proxy's own endpoint chains are already listed as Service matches.
            if (matches.some((m) => m.endpoint.via === c.name)) continue;
            otherDnat.push({ node, where: `${t.family} ${t.name}/${c.name}`, to: x.to.text, file: t.file, line: r.line, text: r.raw });
          }
        }
  return { target, nodes: [node], matches, otherDnat };
}

/** Results of several nodes (same target) as one. */
export function mergeReverse(results: readonly ReverseResult[]): ReverseResult {
  if (results.length === 0) throw new Error('mergeReverse: no results');
  return {
    target: results[0].target,
    nodes: results.flatMap((r) => r.nodes),
    matches: results.flatMap((r) => r.matches),
    otherDnat: results.flatMap((r) => r.otherDnat),
  };
}
