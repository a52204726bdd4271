/**
 * IPVS virtual servers and real servers as listed by `ipvsadm` (FORMATS.md §3). Names follow
 * kube-proxy (`pkg/proxy/ipvs/util/ipvs.go`: VirtualServer, RealServer) and ipvsadm's columns.
 * Plain readonly data and pure helpers; no I/O.
 */
import { formatIp, ipEquals, parseIp, type Ip } from './addr.js';
import { maxOf } from '../source/index.js';

export type IpvsProtocol = 'TCP' | 'UDP' | 'SCTP' | 'FWM';
export type ForwardMethod = 'Masq' | 'Route' | 'Tunnel' | 'Local';

/**
 * Counters: `--stats` gives conns/inPkts/outPkts/inBytes/outBytes, `--rate` gives
 * cps/inPPS/outPPS/inBPS/outBPS. Values printed with a K/M/G/T suffix are multiplied out
 * (so they are rounded down to the unit ipvsadm printed).
 */
export interface IpvsStats {
  readonly [k: string]: number;
}

export interface VirtualServer {
  readonly protocol: IpvsProtocol;
  /** Address as printed, without brackets (an IP, or a host name with `-L` without `-n`). */
  readonly address?: string;
  readonly ip?: Ip;
  readonly port?: number;
  /** Port as printed when it is a service name (`http`), from `-L` without `-n`. */
  readonly portName?: string;
  /** Firewall mark of an `FWM` service. */
  readonly fwmark?: number;
  readonly family: 4 | 6;
  readonly scheduler?: string;
  /** Scheduler flags (`sh-fallback`, `sh-port`, `mh-port`, `flag-1`…). */
  readonly schedFlags: readonly string[];
  /** Persistence timeout in seconds (`persistent 10800`, `-p 10800`). */
  readonly persistent?: number;
  /** Persistence granularity: dotted IPv4 mask or IPv6 prefix length, as printed. */
  readonly netmask?: string;
  /** Persistence engine (`pe sip`). */
  readonly pe?: string;
  /** One-packet scheduling. */
  readonly ops: boolean;
  readonly stats?: IpvsStats;
  readonly rate?: IpvsStats;
  readonly realServers: readonly RealServer[];
  readonly line: number;
  /** Column of the protocol word (listing) or of `-A` (rule format). */
  readonly column: number;
  readonly file: string;
}

export interface RealServer {
  /** Address as printed, without brackets. */
  readonly address: string;
  readonly ip?: Ip;
  readonly port?: number;
  readonly portName?: string;
  /** `Masq` (NAT), `Route` (direct routing, also `-g` in rules), `Tunnel`, `Local`; anything else as printed. */
  readonly forward?: ForwardMethod | string;
  /** 0 = quiesced/draining: no new connections. */
  readonly weight?: number;
  readonly activeConn?: number;
  readonly inactiveConn?: number;
  /** `--thresholds` view. */
  readonly uThreshold?: number;
  readonly lThreshold?: number;
  /** `--persistent-conn` view. */
  readonly persistConn?: number;
  /** `--tun-info` view (`ipip`, `gue:6080:-c`, `n/a`). */
  readonly tunnelInfo?: string;
  readonly stats?: IpvsStats;
  readonly rate?: IpvsStats;
  readonly line: number;
  /** Column of the address. */
  readonly column: number;
}

/** An address:port field of a connection entry. */
export interface IpvsEndpoint {
  readonly address: string;
  readonly ip?: Ip;
  readonly port?: number;
  readonly portName?: string;
}

/** One line of `ipvsadm -Lnc` (the IPVS connection table). */
export interface IpvsConnection {
  /** `TCP`, `UDP`, `SCTP`, `IP` (persistence templates), … as printed. */
  readonly protocol: string;
  /** Seconds until expiry (`MM:SS` printed). */
  readonly expire: number;
  readonly state: string;
  readonly source: IpvsEndpoint;
  readonly virtual: IpvsEndpoint;
  readonly destination: IpvsEndpoint;
  readonly peName?: string;
  readonly peData?: string;
  readonly line: number;
  readonly column: number;
}

export type IpvsView = 'list' | 'stats' | 'rate' | 'save' | 'thresholds' | 'persistent-conn' | 'connections';

export interface IpvsUnsupported {
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

export interface IpvsDump {
  /** IPVS version from `IP Virtual Server version 1.2.1 (size=4096)`. */
  readonly version?: string;
  /** Connection hash table size from the same line. */
  readonly tableSize?: number;
  readonly virtualServers: readonly VirtualServer[];
  readonly connections?: readonly IpvsConnection[];
  /** The listing of the first section (a file may hold several pasted listings). */
  readonly view: IpvsView;
  /** Lines that were understood but not modelled, or not understood. */
  readonly unsupported: readonly IpvsUnsupported[];
  /** Paste noise (prompts, fences, comments), kept with its line number. */
  readonly noise: readonly IpvsUnsupported[];
  /** The text ends inside a listing line (no final newline): cut there. See cutVirtualServer. */
  readonly truncated?: { readonly line: number };
}

/**
 * In a listing cut mid-line, the virtual server listed last: its real servers may go on past the
 * cut (and virtual servers after it are not in the dump at all). Undefined for a whole listing.
 */
export function cutVirtualServer(d: IpvsDump): VirtualServer | undefined {
  return d.truncated ? d.virtualServers[d.virtualServers.length - 1] : undefined;
}

/** `"TCP/10.96.0.10:53"`, `"TCP/[fd20::a]:53"`, `"FWM/3"`, `"FWM/3/IPv6"`; named ports stay names (`"TCP/192.168.100.1:http"`). */
export function virtualServerKey(vs: VirtualServer): string {
  if (vs.protocol === 'FWM') return vs.family === 6 ? `FWM/${vs.fwmark}/IPv6` : `FWM/${vs.fwmark}`;
  const host = vs.ip ? formatIp(vs.ip) : (vs.address ?? '?');
  const h = vs.family === 6 ? `[${host}]` : host;
  const port = vs.port !== undefined ? String(vs.port) : vs.portName;
  return port === undefined ? `${vs.protocol}/${h}` : `${vs.protocol}/${h}:${port}`;
}

/** `"10.244.0.2:53"` / `"[fd20::7041]:53"`, the key of a real server within its virtual server. */
export function realServerKey(rs: RealServer): string {
  const host = rs.ip ? formatIp(rs.ip) : rs.address;
  const h = host.includes(':') ? `[${host}]` : host;
  const port = rs.port !== undefined ? String(rs.port) : rs.portName;
  return port === undefined ? h : `${h}:${port}`;
}

/**
 * The virtual server for `protocol ip:port` (IP as text or parsed; IPv6 text with or without
 * brackets). Address comparison is by value, so `fd20:0::1` finds `[fd20::1]`.
 */
export function findVirtualServer(
  dump: IpvsDump,
  protocol: Exclude<IpvsProtocol, 'FWM'> | Lowercase<Exclude<IpvsProtocol, 'FWM'>>,
  ip: Ip | string,
  port: number,
): VirtualServer | undefined {
  const proto = protocol.toUpperCase();
  const want = typeof ip === 'string' ? parseIp(ip) : ip;
  if (!want) return undefined;
  return dump.virtualServers.find((vs) => vs.protocol === proto && vs.ip !== undefined && ipEquals(vs.ip, want) && vs.port === port);
}

/** The firewall-mark service for `mark` (and family, default IPv4). */
export function findFwmarkService(dump: IpvsDump, mark: number, family: 4 | 6 = 4): VirtualServer | undefined {
  return dump.virtualServers.find((vs) => vs.protocol === 'FWM' && vs.fwmark === mark && vs.family === family);
}

export interface RealServerShare {
  readonly realServer: RealServer;
  /** Fraction of NEW connections (0..1); the shares of a virtual server sum to 1, or all are 0. */
  readonly share: number;
}

/** Schedulers that ignore weights except that weight 0 excludes a server (kernel ip_vs_rr.c, ip_vs_lc.c, ip_vs_dh.c). */
const UNWEIGHTED = new Set(['rr', 'lc', 'dh']);
/** Schedulers that send everything to the available server with the highest weight (ip_vs_fo.c, ip_vs_ovf.c). */
const HIGHEST_WEIGHT = new Set(['fo', 'ovf']);

/**
 * Each real server's share of NEW connections to `vs`, from its scheduler and the weights.
 *
 * Servers with weight 0 (or no weight printed) never get new connections; when every weight
 * is 0 there is no destination and every share is 0 (the kernel answers with "no destination
 * available" and drops/rejects). Among servers with weight > 0:
 *  - `rr`, `lc`, `dh`: equal split (these schedulers look at weights only to skip weight 0);
 *  - `fo`, `ovf`: everything to the highest weight (ties split equally);
 *  - `wrr`, `wlc`, `sed`, `nq`, `lblc`, `lblcr`, `sh`, `mh`, `twos` and unknown schedulers:
 *    weight-proportional.
 * ASSUMPTION: for the load-dependent schedulers (lc, wlc, sed, nq, lblc, lblcr, twos) the split
 * is given for equal load, i.e. as if all servers had the same active/inactive connections;
 * live counters would skew it. Hash-based ones (sh, dh, mh) are given as the share over many
 * clients, not per client. kube-proxy always uses weight 1, so its services split equally.
 */
export function realServerShares(vs: VirtualServer): readonly RealServerShare[] {
  const sched = (vs.scheduler ?? 'wlc').toLowerCase();
  const weights = vs.realServers.map((rs) => (rs.weight !== undefined && rs.weight > 0 ? rs.weight : 0));
  let basis: number[];
  if (UNWEIGHTED.has(sched)) basis = weights.map((w) => (w > 0 ? 1 : 0));
  else if (HIGHEST_WEIGHT.has(sched)) {
    const max = maxOf(weights, 0);
    basis = weights.map((w) => (w > 0 && w === max ? 1 : 0));
  } else basis = weights;
  const total = basis.reduce((a, b) => a + b, 0);
  return vs.realServers.map((realServer, i) => ({ realServer, share: total > 0 ? basis[i] / total : 0 }));
}
