/**
 * kube-proxy IPVS mode → Service ports (KUBE-PROXY.md "IPVS mode", FORMATS.md §2.3 and §3).
 *
 * In IPVS mode the Services live in three places: `ipvsadm -Ln` (one virtual server per
 * ClusterIP:port, per externalIP:port, per LoadBalancer IP:port and per node address × NodePort,
 * each with the same real servers, or only the local ones under a Local policy), the kube-proxy
 * ipsets (which VIP:port is what: KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP[-LOCAL],
 * KUBE-LOAD-BALANCER[-LOCAL|-FW|-SOURCE-CIDR|-SOURCE-IP], KUBE-NODE-PORT-[LOCAL-]TCP/UDP bitmaps,
 * KUBE-NODE-PORT-[LOCAL-]SCTP-HASH, KUBE-LOOP-BACK for local endpoints), and the dummy
 * interface kube-ipvs0 holding every VIP. The virtual servers are grouped into Service ports:
 * the ClusterIP one is the anchor; the others join it by set comment when the sets carry names,
 * else by protocol (+ port for externalIP/LoadBalancer) and identical real servers (a subset or
 * superset when a Local policy explains the difference). When the grouping is ambiguous the
 * virtual servers are reported as a Service port of their own, with the candidates in `problems`.
 *
 * Pure: reads only the snapshot. Evidence `text` is the parsed entry printed back in its dump's
 * syntax (the ipvsadm/ipset/ip-addr models keep file and line, not the raw line).
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { cutVirtualServer, realServerKey, realServerShares, virtualServerKey, type RealServer, type VirtualServer } from '../model/ipvs.js';
import type { IpSet, IpSetMember } from '../model/ipset.js';
import type { InterfaceAddress, NetInterface } from '../model/iface.js';
import { formatCidr, formatIp, type Ip } from '../model/addr.js';
import { printable, appendAll } from '../source/index.js';
import { servicePortName } from './hash.js';
import { endpointLocalityLookup } from './locality.js';
import { chainOwner } from './owner.js';
import type { FrontEnd, NoEndpointFact, OwnedObject, ServiceFacts, Target } from './facts.js';
import { problem, uniqueProblems, type ServiceProblem } from './problems.js';
import { buildServicePort } from './service-builder.js';
import {
  compareServicePorts,
  type Evidence,
  type ForeignObject,
  type Protocol,
  type Resolution,
  type ServicePort,
  type TrafficPolicy,
} from './types.js';

type Family = 4 | 6;
type Role = 'cluster' | 'external' | 'lb' | 'nodeport';
type Problem = { problem: ServiceProblem; evidence: Evidence[] };

/** kube-proxy's default --service-node-port-range, used only when no ipset or `ip addr` says which VIPs are node addresses. */
const NODE_PORT_RANGE = { from: 30000, to: 32767 };
/** iptables-mode per-Service chains: resolved by the iptables resolver, not listed here. */
const IPTABLES_SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW|SEP|XLB)-/;

/** kube-proxy's IPv6 set names: `KUBE-6-…`, cut at 31 characters (IPSET_MAXNAMELEN). */
export function ipvsSetName(name: string, family: Family): string {
  return family === 6 ? `KUBE-6-${name.slice(5)}`.slice(0, 31) : name;
}

/** `ns/name:portName` or `ns/name` from a set member comment; undefined for anything else. */
export function parseServicePortComment(comment: string | undefined): { namespace: string; name: string; portName: string | null } | undefined {
  if (comment === undefined) return undefined;
  const m = /^([a-z0-9][-a-z0-9.]*)\/([a-z0-9][-a-z0-9.]*)(?::([A-Za-z0-9][-A-Za-z0-9_.]*))?$/.exec(comment.trim());
  if (!m) return undefined;
  return { namespace: m[1], name: m[2], portName: m[3] ?? null };
}

// ---------------------------------------------------------------------------------------------
// Evidence text (the parsed entry in its dump's syntax)

function hostPort(ip: string, port: number | string | undefined): string {
  const h = ip.includes(':') ? `[${ip}]` : ip;
  return port === undefined ? h : `${h}:${port}`;
}

function vsText(vs: VirtualServer): string {
  const words: string[] = [];
  if (vs.protocol === 'FWM') {
    words.push(String(vs.fwmark));
    if (vs.family === 6) words.push('IPv6');
  } else words.push(hostPort(vs.ip ? formatIp(vs.ip) : (vs.address ?? '?'), vs.port ?? vs.portName));
  if (vs.scheduler) words.push(vs.scheduler);
  if (vs.schedFlags.length) words.push(`(${vs.schedFlags.join(',')})`);
  if (vs.persistent !== undefined) words.push(`persistent ${vs.persistent}`);
  if (vs.netmask !== undefined) words.push(`mask ${vs.netmask}`);
  if (vs.pe !== undefined) words.push(`pe ${vs.pe}`);
  if (vs.ops) words.push('ops');
  return `${vs.protocol.padEnd(4)} ${words.join(' ')}`;
}

function rsText(rs: RealServer): string {
  const cols = [rs.forward, rs.weight, rs.activeConn, rs.inactiveConn].filter((x) => x !== undefined).map(String);
  return `  -> ${realServerKey(rs).padEnd(28)} ${cols.join(' ')}`.trimEnd();
}

function memberText(m: IpSetMember): string {
  let t = m.text;
  if (m.timeout !== undefined) t += ` timeout ${m.timeout}`;
  if (m.packets !== undefined) t += ` packets ${m.packets} bytes ${m.bytes ?? 0}`;
  if (m.comment !== undefined) t += ` comment "${m.comment}"`;
  if (m.nomatch) t += ' nomatch';
  return t;
}

function addrText(a: InterfaceAddress, iface: string): string {
  return `inet${a.family === 6 ? '6' : ''} ${a.address}/${a.prefix}${a.scope ? ` scope ${a.scope}` : ''} ${iface}`;
}

const vsEvidence = (vs: VirtualServer): Evidence => ({ file: vs.file, line: vs.line, text: vsText(vs), where: virtualServerKey(vs) });
const rsEvidence = (vs: VirtualServer, rs: RealServer): Evidence => ({ file: vs.file, line: rs.line, text: rsText(rs), where: virtualServerKey(vs) });

// ---------------------------------------------------------------------------------------------
// ipsets (several dumps of the same sets, e.g. `ipset list` + `ipset save`, are merged by name)

interface MemberRef {
  readonly set: string;
  readonly member: IpSetMember;
  readonly file: string;
}

interface SetView {
  readonly name: string;
  readonly type: string;
  readonly file: string;
  readonly line: number;
  readonly terse: boolean;
  readonly members: MemberRef[];
}

const memberEvidence = (r: MemberRef): Evidence => ({ file: r.file, line: r.member.line, text: memberText(r.member), where: r.set });

function mergeSets(sets: readonly IpSet[]): Map<string, SetView> {
  const out = new Map<string, SetView & { seen: Set<string> }>();
  for (const s of sets) {
    let v = out.get(s.name);
    if (!v) {
      v = { name: s.name, type: s.type, file: s.file, line: s.line, terse: s.terse, members: [], seen: new Set() };
      out.set(s.name, v);
    } else if (v.terse && !s.terse) {
      const full = { ...v, terse: false };
      out.set(s.name, full);
      v = full;
    }
    for (const m of s.members) {
      if (v.seen.has(m.text)) continue;
      v.seen.add(m.text);
      v.members.push({ set: s.name, member: m, file: s.file });
    }
  }
  return out;
}

const ipKey = (fam: number, value: bigint) => `${fam}|${value}`;
const ipPortKey = (fam: number, value: bigint, proto: string, port: number) => `${fam}|${value}|${proto}|${port}`;

/** hash:ip,port[,…] members by their first two parts. */
function indexIpPort(set: SetView | undefined): Map<string, MemberRef[]> {
  const m = new Map<string, MemberRef[]>();
  if (!set) return m;
  for (const r of set.members) {
    const [a, b] = r.member.parts;
    if (a?.kind !== 'ip' || b?.kind !== 'port') continue;
    const k = ipPortKey(a.cidr.family, a.cidr.network, b.proto, b.port);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}

/** bitmap:port members by port (ranges expanded). */
function indexPorts(set: SetView | undefined): Map<number, MemberRef> {
  const m = new Map<number, MemberRef>();
  if (!set) return m;
  for (const r of set.members) {
    const p = r.member.parts[0];
    if (p?.kind !== 'port') continue;
    for (let port = p.port; port <= (p.portEnd ?? p.port); port++) if (!m.has(port)) m.set(port, r);
  }
  return m;
}

function indexIps(set: SetView | undefined): Map<string, MemberRef> {
  const m = new Map<string, MemberRef>();
  if (!set) return m;
  for (const r of set.members) {
    const p = r.member.parts[0];
    if (p?.kind === 'ip') m.set(ipKey(p.cidr.family, p.cidr.network), r);
  }
  return m;
}

/** The kube-proxy sets of one family, indexed. */
class FamilySets {
  readonly available: (base: string) => boolean;
  readonly ipPort: (base: string, ip: Ip, proto: string, port: number) => MemberRef[];
  readonly port: (base: string, port: number) => MemberRef | undefined;
  readonly ipvsIps: (ip: Ip) => MemberRef | undefined;
  readonly views: (base: string) => SetView | undefined;

  constructor(all: Map<string, SetView>, family: Family) {
    const view = (base: string) => all.get(ipvsSetName(base, family));
    const ipPortCache = new Map<string, Map<string, MemberRef[]>>();
    const portCache = new Map<string, Map<number, MemberRef>>();
    const ipvsIps = indexIps(view('KUBE-IPVS-IPS'));
    this.views = view;
    this.available = (base) => {
      const v = view(base);
      return v !== undefined && !v.terse;
    };
    this.ipPort = (base, ip, proto, port) => {
      let idx = ipPortCache.get(base);
      if (!idx) ipPortCache.set(base, (idx = indexIpPort(view(base))));
      return idx.get(ipPortKey(ip.family, ip.value, proto, port)) ?? [];
    };
    this.port = (base, port) => {
      let idx = portCache.get(base);
      if (!idx) portCache.set(base, (idx = indexPorts(view(base))));
      return idx.get(port);
    };
    this.ipvsIps = (ip) => ipvsIps.get(ipKey(ip.family, ip.value));
  }
}

// ---------------------------------------------------------------------------------------------
// Virtual servers, classified

interface Vs {
  readonly vs: VirtualServer;
  /** The same virtual server in other dumps. */
  readonly copies: VirtualServer[];
  readonly key: string;
  readonly family: Family;
  readonly protocol: Protocol;
  readonly ip: Ip;
  readonly ipText: string;
  readonly port: number;
  /** Sorted real-server keys joined: identical sets have identical signatures. */
  readonly sig: string;
  readonly rsKeys: readonly string[];
  role: Role;
  /** Local/Cluster from a -LOCAL set when that set is in the dumps; null when the dumps do not say. */
  policy: TrafficPolicy | null;
  members: MemberRef[];
  localMembers: MemberRef[];
  fwMembers: MemberRef[];
  sourceCidrMembers: MemberRef[];
  sourceIpMembers: MemberRef[];
  ipvs0?: { iface: NetInterface; address: InterfaceAddress };
  problems: Problem[];
  /** Set comments naming the Service port. */
  spn?: { namespace: string; name: string; portName: string | null };
}

const PROTOS: Readonly<Record<string, Protocol>> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** A group of non-ClusterIP virtual servers that belongs to one Service port. */
interface Item {
  readonly role: Exclude<Role, 'cluster'>;
  readonly vss: Vs[];
  readonly family: Family;
  readonly protocol: Protocol;
  readonly port: number;
  readonly sig: string;
  readonly rsKeys: readonly string[];
  policy: TrafficPolicy | null;
  spn?: Vs['spn'];
}

interface Group {
  anchor?: Vs;
  items: Item[];
  problems: ServiceProblem[];
  internalLocal: boolean;
  inferredExternalLocal: boolean;
}

function spnKey(spn: NonNullable<Vs['spn']>, family: number, protocol: string): string {
  return `${family}|${protocol}|${servicePortName(spn.namespace, spn.name, spn.portName)}`;
}

function fmtId(ip: string, port: number | string, proto: string): string {
  return `${hostPort(ip, port)}/${proto}`;
}

export function resolveIpvs(snapshot: NodeSnapshot): Resolution {
  const problems: Problem[] = [];
  const others: ForeignObject[] = [];
  const allSets = mergeSets(snapshot.ipsets);
  const setsByFamily: Record<Family, FamilySets> = { 4: new FamilySets(allSets, 4), 6: new FamilySets(allSets, 6) };

  // --- node addresses, kube-ipvs0
  const ipvs0 = snapshot.interfaces.filter((i) => i.name === 'kube-ipvs0');
  const ipvs0Addr = new Map<string, { iface: NetInterface; address: InterfaceAddress }>();
  for (const i of ipvs0) for (const a of i.addresses) ipvs0Addr.set(ipKey(a.ip.family, a.ip.value), { iface: i, address: a });
  const nodeAddrs = new Set<string>();
  for (const i of snapshot.interfaces) if (i.name !== 'kube-ipvs0') for (const a of i.addresses) nodeAddrs.add(ipKey(a.ip.family, a.ip.value));
  for (const ip of snapshot.extraNodeIps) nodeAddrs.add(ipKey(ip.family, ip.value));
  const haveInterfaces = snapshot.interfaces.length > 0;
  const haveIpvs0 = ipvs0.length > 0;

  // --- virtual servers from every dump, merged by key
  const byKey = new Map<string, Vs>();
  const listings = snapshot.ipvs.filter((d) => d.view !== 'connections');
  for (const dump of listings) {
    for (const vs of dump.virtualServers) {
      if (vs.protocol === 'FWM') {
        others.push({ kind: 'virtual-server', name: virtualServerKey(vs), owner: 'unknown', file: vs.file, line: vs.line });
        problems.push({
          problem: problem('ipvs-fwmark-service', { vs: virtualServerKey(vs) }),
          evidence: [vsEvidence(vs)],
        });
        continue;
      }
      if (!vs.ip || vs.port === undefined) {
        others.push({ kind: 'virtual-server', name: virtualServerKey(vs), owner: 'unknown', file: vs.file, line: vs.line });
        problems.push({
          problem: problem('ipvs-named-virtual-server', { vs: printable(virtualServerKey(vs)) }),
          evidence: [vsEvidence(vs)],
        });
        continue;
      }
      const key = virtualServerKey(vs);
      const prev = byKey.get(key);
      if (prev) {
        // Prefer a listing with weights and a scheduler (`-Ln`) over `--stats`/`--rate`.
        if (prev.vs.scheduler === undefined && vs.scheduler !== undefined) {
          byKey.set(key, { ...prev, ...makeVs(vs), copies: [prev.vs, ...prev.copies] });
        } else prev.copies.push(vs);
        continue;
      }
      byKey.set(key, makeVs(vs));
    }
  }
  const vss = [...byKey.values()];
  const vsIps = new Set(vss.map((v) => ipKey(v.ip.family, v.ip.value)));
  const vsByIpPort = new Set(vss.map((v) => ipPortKey(v.ip.family, v.ip.value, v.protocol, v.port)));
  const vsByProtoPort = new Set(vss.map((v) => `${v.family}|${v.protocol}|${v.port}`));

  // --- classify
  for (const v of vss) classify(v);

  function classify(v: Vs): void {
    const sets = setsByFamily[v.family];
    const p = v.protocol;
    const cluster = sets.ipPort('KUBE-CLUSTER-IP', v.ip, p, v.port);
    const lb = sets.ipPort('KUBE-LOAD-BALANCER', v.ip, p, v.port);
    const ext = sets.ipPort('KUBE-EXTERNAL-IP', v.ip, p, v.port);
    const extLocal = sets.ipPort('KUBE-EXTERNAL-IP-LOCAL', v.ip, p, v.port);
    const npBase = p === 'sctp' ? 'KUBE-NODE-PORT-SCTP-HASH' : `KUBE-NODE-PORT-${p.toUpperCase()}`;
    const npLocalBase = p === 'sctp' ? 'KUBE-NODE-PORT-LOCAL-SCTP-HASH' : `KUBE-NODE-PORT-LOCAL-${p.toUpperCase()}`;
    const npOf = (base: string) => {
      if (p === 'sctp') return sets.ipPort(base, v.ip, p, v.port);
      const r = sets.port(base, v.port);
      return r ? [r] : [];
    };
    const np = npOf(npBase);
    const npLocal = npOf(npLocalBase);
    const isNodeAddr = nodeAddrs.has(ipKey(v.ip.family, v.ip.value));
    v.ipvs0 = ipvs0Addr.get(ipKey(v.ip.family, v.ip.value));
    const setsAvailable = sets.available('KUBE-CLUSTER-IP');

    if (cluster.length) {
      v.role = 'cluster';
      v.members = cluster;
      v.policy = null;
    } else if (lb.length) {
      v.role = 'lb';
      v.members = lb;
      v.localMembers = sets.ipPort('KUBE-LOAD-BALANCER-LOCAL', v.ip, p, v.port);
      v.fwMembers = sets.ipPort('KUBE-LOAD-BALANCER-FW', v.ip, p, v.port);
      v.sourceCidrMembers = sets.ipPort('KUBE-LOAD-BALANCER-SOURCE-CIDR', v.ip, p, v.port);
      v.sourceIpMembers = sets.ipPort('KUBE-LOAD-BALANCER-SOURCE-IP', v.ip, p, v.port);
      v.policy = v.localMembers.length ? 'Local' : sets.available('KUBE-LOAD-BALANCER-LOCAL') ? 'Cluster' : null;
    } else if (ext.length || extLocal.length) {
      v.role = 'external';
      v.members = [...ext, ...extLocal];
      v.localMembers = extLocal;
      v.policy = extLocal.length ? 'Local' : sets.available('KUBE-EXTERNAL-IP-LOCAL') ? 'Cluster' : null;
    } else if ((np.length || npLocal.length) && !v.ipvs0) {
      v.role = 'nodeport';
      v.members = [...np, ...npLocal];
      v.localMembers = npLocal;
      v.policy = npLocal.length ? 'Local' : sets.available(npLocalBase) ? 'Cluster' : null;
    } else {
      // In no kube-proxy set (or the sets were not dumped): decide from the addresses.
      if (haveInterfaces || snapshot.extraNodeIps.length) v.role = isNodeAddr && !v.ipvs0 ? 'nodeport' : 'cluster';
      else v.role = !sets.available(npBase) && v.port >= NODE_PORT_RANGE.from && v.port <= NODE_PORT_RANGE.to ? 'nodeport' : 'cluster';
      if (v.role === 'nodeport') v.policy = null;
      if (setsAvailable) {
        const ev = [vsEvidence(v.vs)];
        const sets = v.role === 'nodeport' ? [`${npBase}`] : ['KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-LOAD-BALANCER'];
        v.problems.push({ problem: problem('ipvs-no-set-entry', { vs: v.key, sets }), evidence: ev });
      }
    }
    if (v.role !== 'nodeport' && haveIpvs0 && !v.ipvs0 && !isNodeAddr) {
      v.problems.push({
        problem: problem('ipvs-vip-unbound', { vip: v.ipText, vs: v.key }),
        evidence: [vsEvidence(v.vs)],
      });
    }
    const spnFrom = (refs: readonly MemberRef[]) => {
      for (const r of refs) {
        const s = parseServicePortComment(r.member.comment);
        if (s) return s;
      }
      return undefined;
    };
    v.spn = spnFrom(v.members);
  }

  function makeVs(vs: VirtualServer): Vs {
    const ip = vs.ip!;
    const rsKeys = vs.realServers.map(realServerKey).sort();
    return {
      vs,
      copies: [],
      key: virtualServerKey(vs),
      family: vs.family,
      protocol: PROTOS[vs.protocol],
      ip,
      ipText: formatIp(ip),
      port: vs.port!,
      sig: rsKeys.join(' '),
      rsKeys,
      role: 'cluster',
      policy: null,
      members: [],
      localMembers: [],
      fwMembers: [],
      sourceCidrMembers: [],
      sourceIpMembers: [],
      problems: [],
    };
  }

  // --- anchors (ClusterIP virtual servers) and their indexes
  const groups: Group[] = [];
  const groupOf = new Map<Vs, Group>();
  const bySpn = new Map<string, Group>();
  const bySig = new Map<string, Vs[]>();
  const byRs = new Map<string, Vs[]>();
  const byProto = new Map<string, Vs[]>();
  const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
    const l = m.get(k);
    if (l) l.push(v);
    else m.set(k, [v]);
  };
  for (const v of vss) {
    if (v.role !== 'cluster') continue;
    const g: Group = { anchor: v, items: [], problems: [], internalLocal: false, inferredExternalLocal: false };
    groups.push(g);
    groupOf.set(v, g);
    if (v.spn) bySpn.set(spnKey(v.spn, v.family, v.protocol), g);
    const fp = `${v.family}|${v.protocol}`;
    push(bySig, `${fp}|${v.sig}`, v);
    push(byProto, fp, v);
    for (const k of v.rsKeys) push(byRs, `${fp}|${k}`, v);
  }

  // --- items: each externalIP / LB virtual server; NodePort virtual servers grouped by port
  const items: Item[] = [];
  const npItems = new Map<string, Item>();
  for (const v of vss) {
    if (v.role === 'cluster') continue;
    if (v.role === 'nodeport') {
      const k = `${v.family}|${v.protocol}|${v.port}`;
      const it = npItems.get(k);
      if (it) {
        it.vss.push(v);
        if (it.policy === null) it.policy = v.policy;
        if (!it.spn) it.spn = v.spn;
        continue;
      }
      const item: Item = { role: 'nodeport', vss: [v], family: v.family, protocol: v.protocol, port: v.port, sig: v.sig, rsKeys: v.rsKeys, policy: v.policy, spn: v.spn };
      npItems.set(k, item);
      items.push(item);
    } else {
      items.push({ role: v.role, vss: [v], family: v.family, protocol: v.protocol, port: v.port, sig: v.sig, rsKeys: v.rsKeys, policy: v.policy, spn: v.spn });
    }
  }

  /** Anchors containing every real server of `keys` (and, with `strict`, more). */
  function supersets(fp: string, keys: readonly string[], strict: boolean): Vs[] {
    const count = new Map<Vs, number>();
    for (const k of keys) for (const a of byRs.get(`${fp}|${k}`) ?? []) count.set(a, (count.get(a) ?? 0) + 1);
    return [...count].filter(([a, n]) => n === keys.length && (!strict || a.rsKeys.length > keys.length)).map(([a]) => a);
  }
  /** Anchors whose real servers are all in `keys`, and fewer (non-empty ones only). */
  function strictSubsets(fp: string, keys: readonly string[]): Vs[] {
    const count = new Map<Vs, number>();
    for (const k of keys) for (const a of byRs.get(`${fp}|${k}`) ?? []) count.set(a, (count.get(a) ?? 0) + 1);
    return [...count].filter(([a, n]) => n === a.rsKeys.length && n < keys.length).map(([a]) => a);
  }

  /**
   * The keys of candidate anchors for a problem. A NodePort without real servers under a Local
   * policy could belong to every ClusterIP virtual server of its protocol (11k at 10k Services):
   * those lists are equal for every such item, so one array serves them all.
   */
  const sharedKeys = new Map<string, readonly string[]>();
  const candidateKeys = (it: Item, fp: string, candidates: readonly Vs[]): string[] => {
    if (it.rsKeys.length > 0 || it.policy !== 'Local' || it.role !== 'nodeport') return candidates.map((c) => c.key);
    let keys = sharedKeys.get(fp);
    if (!keys) sharedKeys.set(fp, (keys = candidates.map((c) => c.key)));
    return keys as string[];
  };

  for (const it of items) {
    const fp = `${it.family}|${it.protocol}`;
    const samePort = (a: Vs) => it.role === 'nodeport' || a.port === it.port;
    // 1. Set comments name both.
    if (it.spn) {
      const g = bySpn.get(spnKey(it.spn, it.family, it.protocol));
      if (g) {
        g.items.push(it);
        continue;
      }
    }
    // 2. Real servers.
    let chosen: Vs | undefined;
    let how: 'same' | 'internal-local' | 'external-local' = 'same';
    let candidates: Vs[] = [];
    if (it.policy === 'Local') {
      candidates = (it.rsKeys.length ? supersets(fp, it.rsKeys, false) : (byProto.get(fp) ?? [])).filter(samePort);
      if (candidates.length === 1) chosen = candidates[0];
    } else {
      candidates = (bySig.get(`${fp}|${it.sig}`) ?? []).filter(samePort);
      if (candidates.length === 1) chosen = candidates[0];
      else if (candidates.length === 0 && it.rsKeys.length) {
        let c = strictSubsets(fp, it.rsKeys).filter(samePort);
        if (c.length === 0) c = (byProto.get(fp) ?? []).filter((a) => a.rsKeys.length === 0 && samePort(a));
        if (c.length === 1) {
          chosen = c[0];
          how = 'internal-local';
        } else if (c.length === 0 && it.policy === null) {
          c = supersets(fp, it.rsKeys, true).filter(samePort);
          if (c.length === 1) {
            chosen = c[0];
            how = 'external-local';
          }
        }
        candidates = c;
      }
    }
    if (chosen) {
      const g = groupOf.get(chosen)!;
      g.items.push(it);
      if (how === 'internal-local') g.internalLocal = true;
      if (how === 'external-local') {
        g.inferredExternalLocal = true;
        it.policy = 'Local';
      }
      continue;
    }
    const front = { role: it.role === 'nodeport' ? ('nodeport' as const) : it.role === 'lb' ? ('lb' as const) : ('external' as const), id: it.role === 'nodeport' ? `${it.port}/${it.protocol}` : fmtId(it.vss[0].ipText, it.port, it.protocol) };
    const why =
      candidates.length > 1
        ? problem('ipvs-ambiguous-group', { role: front.role, id: front.id, candidates: candidateKeys(it, fp, candidates), superset: it.policy === 'Local' })
        : problem('ipvs-ungrouped', front);
    groups.push({ items: [it], problems: [why], internalLocal: false, inferredExternalLocal: false });
  }

  // --- endpoint locality: the one locality module
  const locality = endpointLocalityLookup(snapshot);
  const localByDumps = (ip: Ip | undefined): boolean | null => (ip ? locality(formatIp(ip)) : null);

  // --- a listing cut mid-line: its last virtual server's real servers may go on past the cut
  const cutAt = new Map<VirtualServer, { file: string; line: number }>();
  for (const d of snapshot.ipvs) {
    const vs = cutVirtualServer(d);
    if (vs) cutAt.set(vs, { file: vs.file, line: d.truncated!.line });
  }

  // --- assemble Service ports
  const services: ServicePort[] = [];
  for (const g of groups) services.push(servicePortOf(g));

  /** One group of virtual servers → neutral facts → the one ServicePort builder. */
  function servicePortOf(g: Group): ServicePort {
    const a = g.anchor;
    const first = a ?? g.items[0].vss[0];
    const family = first.family;
    const protocol = first.protocol;
    const sets = setsByFamily[family];
    const spProblems: ServiceProblem[] = [...g.problems];
    const evidence: Evidence[] = [];
    const owned: OwnedObject[] = [];
    const frontEnds: FrontEnd[] = [];
    const all: Vs[] = [...(a ? [a] : []), ...g.items.flatMap((i) => i.vss)];
    for (const v of all) {
      evidence.push(vsEvidence(v.vs));
      appendAll(evidence, v.copies.map(vsEvidence));
      for (const r of [...v.members, ...v.localMembers.filter((x) => !v.members.includes(x)), ...v.fwMembers, ...v.sourceCidrMembers, ...v.sourceIpMembers]) evidence.push(memberEvidence(r));
      if (v.ipvs0) evidence.push({ file: v.ipvs0.iface.file, line: v.ipvs0.address.line, text: addrText(v.ipvs0.address, 'kube-ipvs0'), where: 'kube-ipvs0' });
      const ipvsIps = sets.ipvsIps(v.ip);
      if (ipvsIps) evidence.push(memberEvidence(ipvsIps));
      for (const p of v.problems) {
        spProblems.push(p.problem);
        problems.push(p);
      }
      const kind = v === a ? 'cluster-ip' : v.role === 'nodeport' ? 'node-port' : v.role === 'lb' ? 'load-balancer-ip' : 'external-ip';
      owned.push({ role: kind, name: v.key, ...(v === a ? {} : { address: v.ipText }) });
      frontEnds.push({ kind, ip: kind === 'node-port' ? null : v.ipText, port: v.port, evidence: vsEvidence(v.vs) });
    }
    const sortedUnique = (xs: string[]) => [...new Set(xs)];
    const npItemsHere = g.items.filter((i) => i.role === 'nodeport');
    if (npItemsHere.length > 1) spProblems.push(problem('ipvs-several-nodeports', { ports: npItemsHere.map((i) => i.port) }));
    const port = a?.port ?? g.items.find((i) => i.role !== 'nodeport')?.port ?? 0;
    if (!a && port === 0) spProblems.push(problem('ipvs-port-unknown', {}));
    const loadBalancerSourceRanges = sortedUnique(
      g.items
        .filter((i) => i.role === 'lb')
        .flatMap((i) => i.vss[0].sourceCidrMembers)
        .map((r) => {
          const net = r.member.parts[2];
          return net?.kind === 'ip' ? formatCidr(net.cidr) : r.member.text.split(',')[2] ?? '';
        })
        .filter((x) => x !== ''),
    );
    for (const i of g.items.filter((x) => x.role === 'lb')) {
      const v = i.vss[0];
      if (v.fwMembers.length && v.sourceCidrMembers.length === 0 && v.sourceIpMembers.length === 0) {
        spProblems.push(problem('ipvs-lb-no-source-ranges', { vs: fmtId(v.ipText, v.port, v.protocol) }));
      }
    }

    // Which virtual server holds the Cluster-policy endpoints: the one with the most real servers.
    const localVss = g.items.filter((i) => i.policy === 'Local').flatMap((i) => i.vss);
    const policyOf = (v: Vs) => (v === a ? (g.internalLocal ? 'Local' : 'Cluster') : g.items.find((i) => i.vss.includes(v))!.policy);
    let full: Vs = first;
    for (const v of all) if (v.rsKeys.length > full.rsKeys.length && policyOf(v) !== 'Local') full = v;
    if (full.rsKeys.length === 0) for (const v of all) if (v.rsKeys.length > full.rsKeys.length) full = v;
    const fullKeys = new Set(full.rsKeys);
    // Consistency between the virtual servers of this Service port.
    for (const it of g.items) {
      const sigs = new Set(it.vss.map((v) => v.sig));
      if (sigs.size > 1) spProblems.push(problem('ipvs-node-addresses-disagree', it.role === 'nodeport' ? { nodePort: it.port } : { vs: it.vss[0].key }));
      for (const v of it.vss) {
        const extra = v.rsKeys.filter((k) => !fullKeys.has(k));
        if (extra.length) spProblems.push(problem('ipvs-extra-real-servers', { vs: v.key, than: full.key, extra: extra.slice(0, 5) }));
      }
    }
    if (a && a !== full && a.rsKeys.some((k) => !fullKeys.has(k))) spProblems.push(problem('ipvs-extra-real-servers', { vs: a.key, than: full.key, extra: [] }));
    const persistents = new Set(all.map((v) => v.vs.persistent ?? null));
    if (persistents.size > 1) spProblems.push(problem('ipvs-persistence-disagrees', { timeouts: [...persistents] }));
    const persistent = (a ?? full).vs.persistent;

    // Endpoints.
    // kube-proxy puts only local endpoints behind Local-policy virtual servers (trusted only when a
    // -LOCAL ipset says so, not when the policy itself was inferred from real-server subsets).
    const localKeys = new Set(g.inferredExternalLocal ? [] : localVss.flatMap((v) => v.rsKeys));
    const loopback = (rs: RealServer) =>
      rs.ip && rs.port !== undefined ? sets.ipPort('KUBE-LOOP-BACK', rs.ip, protocol, rs.port).find((r) => r.member.parts[2]?.kind === 'ip' && r.member.parts[2].cidr.network === rs.ip!.value) : undefined;
    const weightsKnown = full.vs.realServers.some((rs) => rs.weight !== undefined);
    // A virtual server of this Service port is the one a cut listing ends in: what it lists is a
    // beginning; the real servers (and shares) past the cut are unknown.
    const cut = all.map((v) => cutAt.get(v.vs)).find((x) => x !== undefined);
    const shares: readonly { realServer: RealServer; share: number | null }[] = cut
      ? full.vs.realServers.map((realServer) => ({ realServer, share: null }))
      : weightsKnown
        ? realServerShares(full.vs)
        : full.vs.realServers.map((realServer) => ({ realServer, share: 1 / full.vs.realServers.length }));
    const rsLines = new Map<string, Evidence[]>();
    for (const v of all) {
      for (const vsx of [v.vs, ...v.copies]) {
        for (const r of vsx.realServers) {
          const k = realServerKey(r);
          const list = rsLines.get(k);
          if (list) list.push(rsEvidence(vsx, r));
          else rsLines.set(k, [rsEvidence(vsx, r)]);
        }
      }
    }
    // A real server printed as a name is no address kpx can call an endpoint: left out, and said
    // (an absence: the Service port's state is unknown rather than healthy or empty).
    const named = full.vs.realServers.filter((rs) => !rs.ip);
    const endpoints: Target[] = shares.filter(({ realServer: rs }) => rs.ip).map(({ realServer: rs, share }) => {
      const key = realServerKey(rs);
      const ev: Evidence[] = [...(rsLines.get(key) ?? [])];
      const lb = loopback(rs);
      if (lb) ev.push(memberEvidence(lb));
      let local = lb ? true : localByDumps(rs.ip);
      if (local === null && localKeys.has(key)) local = true;
      const e: Target = {
        ip: rs.ip ? formatIp(rs.ip) : rs.address,
        port: rs.port ?? null,
        share,
        local,
        via: `${full.key} -> ${key}`,
        ...(rs.weight !== undefined ? { weight: rs.weight } : {}),
        evidence: ev,
      };
      return e;
    });

    // Policies and state.
    let allDraining = false;
    const externalTrafficPolicy: TrafficPolicy = g.items.some((i) => i.policy === 'Local') ? 'Local' : 'Cluster';
    const internalTrafficPolicy: TrafficPolicy = g.internalLocal ? 'Local' : 'Cluster';
    if (g.inferredExternalLocal) spProblems.push(problem('ipvs-external-local-inferred', {}));
    if (g.internalLocal) spProblems.push(problem('ipvs-internal-local-inferred', { vs: String(a?.key), than: full.key }));
    // What the virtual servers say about traffic without (local) endpoints; the builder derives the state.
    const noEndpoints: NoEndpointFact[] = [];
    const zero = weightsKnown ? endpoints.filter((e) => (e.weight ?? 0) === 0) : [];
    if (cut || named.length > 0) {
      // Nothing certain about its real servers (past a cut, or printed as names): no "no real
      // servers", no draining, no locality verdict.
    } else if (endpoints.length === 0 && !a && g.items.every((i) => i.policy === 'Local')) {
      noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
      spProblems.push(problem('ipvs-no-local-real-server', { policy: 'external' }));
    } else if (endpoints.length === 0) {
      noEndpoints.push({ scope: 'all', verdict: 'no-destination' });
      spProblems.push(problem('ipvs-no-real-servers', {}));
    } else if (zero.length === endpoints.length) {
      allDraining = true;
    } else {
      if (zero.length) spProblems.push(problem('ipvs-some-draining', { zero: zero.length, of: endpoints.length }));
      const emptyLocal = localVss.filter((v) => v.rsKeys.length === 0 || v.vs.realServers.every((rs) => localByDumps(rs.ip) === false && !loopback(rs)));
      if (emptyLocal.length) {
        noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
        spProblems.push(problem('ipvs-no-local-real-server', { policy: 'external', behind: emptyLocal.map((v) => v.key) }));
      } else if (g.internalLocal && a && a.rsKeys.length === 0) {
        noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
        spProblems.push(problem('ipvs-no-local-real-server', { policy: 'internal', behind: [a.key] }));
      }
    }
    for (const v of localVss) {
      const remote = v.vs.realServers.filter((rs) => localByDumps(rs.ip) === false && !loopback(rs));
      if (remote.length && remote.length < v.vs.realServers.length) spProblems.push(problem('ipvs-local-has-remote', { vs: v.key, remote: remote.map(realServerKey).slice(0, 5) }));
    }

    const spn = a?.spn ?? g.items.find((i) => i.spn)?.spn;
    // Without a name or a cluster IP the id is the NodePort (`*:PORT`) or the external address.
    const anchor = a ? hostPort(a.ipText, a.port) : g.items[0].role === 'nodeport' ? hostPort('*', g.items[0].port) : hostPort(g.items[0].vss[0].ipText, g.items[0].port);
    const typed: ServiceProblem[] = uniqueProblems(spProblems);
    if (allDraining) typed.unshift(problem('all-weights-zero', {}));
    const facts: ServiceFacts = {
      mode: 'ipvs',
      family,
      anchor,
      ...(spn ? { identity: { ...spn, by: 'set-comment' as const } } : {}),
      protocol,
      port,
      frontEnds,
      sourceRanges: loadBalancerSourceRanges,
      externalTrafficPolicy,
      internalTrafficPolicy,
      ...(persistent !== undefined ? { affinitySeconds: persistent } : {}),
      targets: endpoints,
      noEndpoints,
      absences: [
        ...(cut ? [{ code: 'listing-truncated' as const, file: cut.file, line: cut.line }] : []),
        ...named.map((rs) => ({ code: 'real-server-not-an-address' as const, vs: full.key, name: rs.address, file: full.vs.file, line: rs.line })),
      ],
      problems: typed,
      owned,
      hashClaims: [],
      evidence,
    };
    return buildServicePort(facts, locality);
  }

  // --- set entries / kube-ipvs0 addresses without a virtual server (unknowable when a listing was cut:
  // their virtual servers may be past the cut)
  if (listings.length > 0 && cutAt.size === 0) {
    for (const family of [4, 6] as const) {
      const sets = setsByFamily[family];
      for (const base of ['KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-EXTERNAL-IP-LOCAL', 'KUBE-LOAD-BALANCER', 'KUBE-NODE-PORT-SCTP-HASH']) {
        const view = sets.views(base);
        if (!view || view.terse) continue;
        for (const r of view.members) {
          const [ipP, portP] = r.member.parts;
          if (ipP?.kind !== 'ip' || portP?.kind !== 'port') continue;
          if (vsByIpPort.has(ipPortKey(ipP.cidr.family, ipP.cidr.network, portP.proto, portP.port))) continue;
          problems.push({ problem: problem('ipvs-set-entry-without-vs', { set: view.name, entry: r.member.text, accepted: true }), evidence: [memberEvidence(r)] });
        }
      }
      for (const [base, proto] of [
        ['KUBE-NODE-PORT-TCP', 'tcp'],
        ['KUBE-NODE-PORT-UDP', 'udp'],
      ] as const) {
        const view = sets.views(base);
        if (!view || view.terse) continue;
        for (const r of view.members) {
          const p = r.member.parts[0];
          if (p?.kind !== 'port') continue;
          if (vsByProtoPort.has(`${family}|${proto}|${p.port}`)) continue;
          problems.push({ problem: problem('ipvs-nodeport-without-vs', { set: view.name, port: p.port, protocol: proto }), evidence: [memberEvidence(r)] });
        }
      }
      const ipvsIpsView = sets.views('KUBE-IPVS-IPS');
      if (ipvsIpsView && !ipvsIpsView.terse) {
        for (const r of ipvsIpsView.members) {
          const p = r.member.parts[0];
          if (p?.kind === 'ip' && !vsIps.has(ipKey(p.cidr.family, p.cidr.network))) {
            problems.push({ problem: problem('ipvs-set-entry-without-vs', { set: ipvsIpsView.name, entry: r.member.text, accepted: false }), evidence: [memberEvidence(r)] });
          }
        }
      }
    }
    for (const [k, { iface, address }] of ipvs0Addr) {
      if (vsIps.has(k)) continue;
      problems.push({
        problem: problem('ipvs-dummy-address-unused', { address: address.address }),
        evidence: [{ file: iface.file, line: address.line, text: addrText(address, 'kube-ipvs0'), where: 'kube-ipvs0' }],
      });
    }
  }

  // --- other objects: ipsets and iptables chains
  for (const s of allSets.values()) others.push({ kind: 'ipset', name: s.name, owner: chainOwner(s.name), file: s.file, line: s.line });
  for (const rs of snapshot.rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        if (c.builtin || IPTABLES_SERVICE_CHAIN.test(c.name)) continue;
        others.push({ kind: 'chain', table: t.name, name: c.name, owner: chainOwner(c.name), file: t.file, ...(c.line !== undefined ? { line: c.line } : {}) });
      }
    }
  }

  services.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  services.sort(compareServicePorts);
  return { services, others, problems };
}

