/**
 * The kube-proxy ipsets of IPVS mode, indexed by what the reader asks of them. Several dumps of
 * the same sets (e.g. `ipset list` + `ipset save`) are merged by name; a terse listing (`-t`,
 * headers only) says a set exists but not what is in it.
 */
import type { Ip } from '../../model/addr.js';
import type { IpSet } from '../../model/ipset.js';
import type { Family, MemberRef, SetView } from './types.js';

/** kube-proxy's IPv6 set names: `KUBE-6-…`, cut at 31 characters (IPSET_MAXNAMELEN). */
export function ipvsSetName(name: string, family: Family): string {
  return family === 6 ? `KUBE-6-${name.slice(5)}`.slice(0, 31) : name;
}

export function mergeSets(sets: readonly IpSet[]): Map<string, SetView> {
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

export const ipKey = (fam: number, value: bigint) => `${fam}|${value}`;
export const ipPortKey = (fam: number, value: bigint, proto: string, port: number) => `${fam}|${value}|${proto}|${port}`;

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

/** The kube-proxy sets of one family, indexed on first use. */
export class FamilySets {
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

export type SetsByFamily = Readonly<Record<Family, FamilySets>>;

export function setsByFamily(all: Map<string, SetView>): SetsByFamily {
  return { 4: new FamilySets(all, 4), 6: new FamilySets(all, 6) };
}

/** The NodePort set of a protocol (SCTP's is a hash:ip,port set, the others bitmap:port). */
export function nodePortSet(protocol: string, local: boolean): string {
  const infix = local ? 'LOCAL-' : '';
  return protocol === 'sctp' ? `KUBE-NODE-PORT-${infix}SCTP-HASH` : `KUBE-NODE-PORT-${infix}${protocol.toUpperCase()}`;
}
