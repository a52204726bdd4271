/**
 * ipset sets as kpx sees them (from `ipset list` or `ipset save`), and the membership test
 * that iptables `-m set --match-set NAME dst,dst,src` performs (kernel net/netfilter/ipset).
 * Immutable plain data; helpers are pure functions.
 */
import { cidrContains, type Cidr, type Ip } from './addr.js';

export type IpSetPart =
  | { readonly kind: 'ip'; readonly cidr: Cidr /* a host (/32, /128) or a network */ }
  /** `proto` is `tcp`, `udp`, `sctp`, `udplite`, a number, or `any` for bitmap:port (no protocol). */
  | { readonly kind: 'port'; readonly proto: string; readonly port: number; readonly portEnd?: number }
  | { readonly kind: 'iface'; readonly name: string; readonly physdev: boolean }
  | { readonly kind: 'setname'; readonly name: string }
  | { readonly kind: 'mac'; readonly mac: string }
  | { readonly kind: 'mark'; readonly value: number }
  /** Text kpx cannot interpret (redacted address, ICMP type name, unknown dimension…). */
  | { readonly kind: 'raw'; readonly text: string };

export interface IpSetMember {
  /** The element as printed (`10.96.0.10,udp:53`), without the extensions after it. */
  readonly text: string;
  /** One part per dimension of the set type (element split at `,`). */
  readonly parts: readonly IpSetPart[];
  readonly timeout?: number;
  readonly packets?: number;
  readonly bytes?: number;
  readonly comment?: string;
  /** `skbmark 0x10/0xff` as printed. */
  readonly skbmark?: string;
  /** `skbprio 1:2` as printed. */
  readonly skbprio?: string;
  readonly skbqueue?: number;
  readonly nomatch: boolean;
  readonly line: number;
  readonly column: number;
}

export interface IpSet {
  readonly name: string;
  /** `hash:ip,port`, `bitmap:port`, `list:set`… as printed. */
  readonly type: string;
  readonly family?: 'inet' | 'inet6';
  /** Create options: `{family: 'inet', hashsize: '1024', comment: true, range: '0-65535'}`. */
  readonly header: Readonly<Record<string, string | true>>;
  readonly revision?: number;
  readonly sizeInMemory?: number;
  readonly references?: number;
  /** `Number of entries:` (absent before ipset 6.30 and in `ipset save`). */
  readonly declaredEntries?: number;
  readonly members: readonly IpSetMember[];
  /** From `ipset list -t`: the member list was not printed (members is empty, not "no members"). */
  readonly terse: boolean;
  readonly line: number;
  readonly file: string;
}

export interface IpSetSkipped {
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

export interface IpSetDump {
  readonly sets: readonly IpSet[];
  /** Lines kpx understood as ipset output but could not use (or could not parse). */
  readonly unsupported: readonly IpSetSkipped[];
  /** Paste noise that was recognised and ignored (prompts, `...`, ipset's stderr, comments). */
  readonly noise: readonly IpSetSkipped[];
}

/** A dimension of a set type: `hash:ip,port,net` → `['ip', 'port', 'net']`. */
export type IpSetDimension = 'ip' | 'net' | 'port' | 'iface' | 'mac' | 'mark' | 'set' | 'unknown';

const DIM_WORDS: Readonly<Record<string, IpSetDimension>> = { ip: 'ip', net: 'net', port: 'port', iface: 'iface', mac: 'mac', mark: 'mark', set: 'set' };

/** The element dimensions of a type (`bitmap:port` → ['port'], `list:set` → ['set']). */
export function ipsetDimensions(type: string): readonly IpSetDimension[] {
  const colon = type.indexOf(':');
  if (colon < 0) return [];
  return type
    .slice(colon + 1)
    .split(',')
    .map((w) => DIM_WORDS[w] ?? 'unknown');
}

/** Sets by name (the first set of a name wins, as `ipset` refuses duplicates anyway). */
export function ipsetIndex(sets: readonly IpSet[]): ReadonlyMap<string, IpSet> {
  const m = new Map<string, IpSet>();
  for (const s of sets) if (!m.has(s.name)) m.set(s.name, s);
  return m;
}

/** A packet as far as a set match is concerned. */
export interface IpSetPacket {
  readonly src: Ip;
  readonly dst: Ip;
  readonly proto: 'tcp' | 'udp' | 'sctp' | string;
  readonly sport?: number;
  readonly dport?: number;
}

/** `--match-set NAME dst,dst,src`: one direction per dimension. */
export type IpSetFlag = 'src' | 'dst';

export type Tri = boolean | 'unknown';

const PORT_PROTOS: ReadonlySet<string> = new Set(['tcp', 'udp', 'sctp', 'udplite']);

/**
 * IANA protocol numbers ipset prints by name; some ipset versions print an element's protocol as
 * its number (`10.96.0.10,17:53`). Others stay numeric (`253` stays `253`).
 */
const PROTO_BY_NUMBER: Readonly<Record<number, string>> = { 1: 'icmp', 6: 'tcp', 17: 'udp', 47: 'gre', 50: 'esp', 51: 'ah', 58: 'icmpv6', 132: 'sctp', 136: 'udplite' };

/** One spelling per protocol: lower case, a number as its name when it has one (`17` → `udp`, `047` → `47`). */
export function canonicalProto(proto: string): string {
  const p = proto.toLowerCase();
  if (/^\d+$/.test(p)) {
    const n = Number(p);
    return PROTO_BY_NUMBER[n] ?? String(n);
  }
  return p === 'ipv6-icmp' ? 'icmpv6' : p;
}

function and(a: Tri, b: Tri): Tri {
  if (a === false || b === false) return false;
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  return true;
}

function or(a: Tri, b: Tri): Tri {
  if (a === true || b === true) return true;
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  return false;
}

function familyOf(set: IpSet): 4 | 6 | undefined {
  return set.family === 'inet' ? 4 : set.family === 'inet6' ? 6 : undefined;
}

function numberOption(set: IpSet, key: string): number | undefined {
  const v = set.header[key];
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** One dimension of one member against the packet. */
function partMatches(set: IpSet, dim: IpSetDimension, part: IpSetPart, flag: IpSetFlag, pkt: IpSetPacket): Tri {
  const ip = flag === 'src' ? pkt.src : pkt.dst;
  const port = flag === 'src' ? pkt.sport : pkt.dport;
  switch (part.kind) {
    case 'ip': {
      if (part.cidr.family !== ip.family) return false;
      // hash:ip / bitmap:ip with `netmask N` store network addresses: the kernel masks the packet.
      const netmask = dim === 'ip' ? numberOption(set, 'netmask') : undefined;
      if (netmask !== undefined) return sameNetwork(part.cidr, Math.min(netmask, part.cidr.prefix), ip);
      return cidrContains(part.cidr, ip);
    }
    case 'port': {
      if (part.proto === 'any') {
        // bitmap:port: the port of any protocol that has ports.
        if (port === undefined) return PORT_PROTOS.has(canonicalProto(pkt.proto)) ? 'unknown' : false;
        return port >= part.port && port <= (part.portEnd ?? part.port);
      }
      if (canonicalProto(part.proto) !== canonicalProto(pkt.proto)) return false;
      if (port === undefined) return 'unknown';
      return port >= part.port && port <= (part.portEnd ?? part.port);
    }
    case 'setname':
      return 'unknown'; // handled by list:set below; a setname elsewhere cannot be decided
    case 'iface':
    case 'mac':
    case 'mark':
      return 'unknown'; // the packet description carries no interface, MAC or mark
    case 'raw': {
      // `icmp:echo-request` cannot match a TCP packet; anything else is undecidable.
      if (dim === 'port') {
        const proto = /^([a-z0-9-]+):/i.exec(part.text)?.[1];
        if (proto !== undefined && canonicalProto(proto) !== canonicalProto(pkt.proto)) return false;
      }
      return 'unknown';
    }
  }
}

/** `member` and `ip` agree on the first `netmask` bits. */
function sameNetwork(member: Cidr, netmask: number, ip: Ip): boolean {
  const bits = member.family === 4 ? 32 : 128;
  const mask = netmask <= 0 ? 0n : ((1n << BigInt(netmask)) - 1n) << BigInt(bits - netmask);
  return (ip.value & mask) === (member.network & mask);
}

/** Prefix lengths of the net-like parts, for "most specific entry wins" (hash:net* lookups). */
function specificity(parts: readonly IpSetPart[]): number[] {
  return parts.map((p) => (p.kind === 'ip' ? p.cidr.prefix : 0));
}

function compareSpecificity(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (b[i] ?? 0) - (a[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Does `pkt` match `set` under `flags`, as `-m set --match-set NAME flags` would decide?
 *
 * - The i-th flag says whether the i-th dimension comes from the packet's source or
 *   destination (address for ip/net dimensions, port + protocol for port dimensions).
 * - Fewer flags than dimensions never match (kernel `ip_set_test`: `opt->dim < dimension`);
 *   extra flags are ignored. A set of the other family never matches.
 * - hash:net* semantics: the most specific matching entry decides, and a `nomatch` entry
 *   makes the packet not match.
 * - list:set: true when any member set matches (with the same flags); needs `sets`.
 * - `'unknown'` when the outcome depends on something the packet does not carry (interface,
 *   MAC, mark, a raw/redacted element, a missing port, an unknown member set).
 */
export function ipsetMatches(
  set: IpSet,
  pkt: IpSetPacket,
  flags: readonly IpSetFlag[],
  sets?: ReadonlyMap<string, IpSet> | readonly IpSet[],
): Tri {
  return matchSet(set, pkt, flags, sets, new Set());
}

function matchSet(set: IpSet, pkt: IpSetPacket, flags: readonly IpSetFlag[], sets: ReadonlyMap<string, IpSet> | readonly IpSet[] | undefined, seen: Set<string>): Tri {
  const dims = ipsetDimensions(set.type);
  if (set.terse) return set.declaredEntries === 0 ? false : 'unknown';
  if (set.type.startsWith('list:')) {
    if (seen.has(set.name)) return false;
    const index = sets === undefined ? undefined : Array.isArray(sets) ? ipsetIndex(sets as readonly IpSet[]) : (sets as ReadonlyMap<string, IpSet>);
    const inner = new Set(seen).add(set.name);
    let result: Tri = false;
    for (const m of set.members) {
      const name = m.parts[0]?.kind === 'setname' ? m.parts[0].name : m.text;
      const target = index?.get(name);
      result = or(result, target ? matchSet(target, pkt, flags, index, inner) : 'unknown');
      if (result === true) return true;
    }
    return result;
  }
  if (dims.length === 0 || flags.length < dims.length) return false;
  const family = familyOf(set);
  if (family !== undefined) {
    const used = flags.slice(0, dims.length).some((f, i) => (dims[i] === 'ip' || dims[i] === 'net') && (f === 'src' ? pkt.src : pkt.dst).family !== family);
    if (used) return false;
  }
  const hasNomatch = set.members.some((m) => m.nomatch);
  if (!hasNomatch) {
    let result: Tri = false;
    for (const m of set.members) {
      result = or(result, memberMatches(set, dims, m, flags, pkt));
      if (result === true) return true;
    }
    return result;
  }
  // Most specific candidate decides; an undecidable candidate at least as specific makes the
  // result undecidable.
  const candidates: { m: IpSetMember; r: Tri; spec: number[] }[] = [];
  for (const m of set.members) {
    const r = memberMatches(set, dims, m, flags, pkt);
    if (r !== false) candidates.push({ m, r, spec: specificity(m.parts) });
  }
  if (candidates.length === 0) return false;
  candidates.sort((a, b) => compareSpecificity(a.spec, b.spec) || (a.r === 'unknown' ? -1 : 0) - (b.r === 'unknown' ? -1 : 0));
  const best = candidates[0];
  if (best.r === 'unknown') return 'unknown';
  return !best.m.nomatch;
}

function memberMatches(set: IpSet, dims: readonly IpSetDimension[], m: IpSetMember, flags: readonly IpSetFlag[], pkt: IpSetPacket): Tri {
  if (m.parts.length !== dims.length) return 'unknown';
  let r: Tri = true;
  for (let i = 0; i < dims.length; i++) {
    r = and(r, partMatches(set, dims[i], m.parts[i], flags[i], pkt));
    if (r === false) return false;
  }
  return r;
}
