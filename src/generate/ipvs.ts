/**
 * The same cluster in kube-proxy IPVS mode: `ipvsadm -Ln`, `ipset list` (and the `ipset save`
 * form), the ipvs-mode `iptables-save`, and `ip addr` with kube-ipvs0 holding every VIP.
 * Source: kubernetes pkg/proxy/ipvs/proxier.go (syncProxyRules, writeIptablesRules,
 * ipsetWithIptablesChain, iptablesJumpChain) and ipset.go; ipvsadm.c print_service_entry().
 */
import { type Cluster, type Endpoint, planPort, type Protocol } from './cluster.js';
import { DEFAULT_DATE, type IptablesOptions, printSave, SaveTable } from './iptables.js';
import { ipAddr, nodeAddresses } from './node.js';
import { collect, isV6, joinHostPort, saveString, type Sink, v4FromString, v6FromString } from './util.js';

export type IpsetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

export interface IpsetSet {
  name: string;
  type: IpsetType;
  comment: string;
  members: string[];
}

const SET_INFO: [string, IpsetType, string][] = [
  ['KUBE-LOOP-BACK', 'hash:ip,port,ip', 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose'],
  ['KUBE-CLUSTER-IP', 'hash:ip,port', 'Kubernetes service cluster ip + port for masquerade purpose'],
  ['KUBE-EXTERNAL-IP', 'hash:ip,port', 'Kubernetes service external ip + port for masquerade and filter purpose'],
  ['KUBE-EXTERNAL-IP-LOCAL', 'hash:ip,port', 'Kubernetes service external ip + port with externalTrafficPolicy=local'],
  ['KUBE-LOAD-BALANCER', 'hash:ip,port', 'Kubernetes service lb portal'],
  ['KUBE-LOAD-BALANCER-FW', 'hash:ip,port', 'Kubernetes service load balancer ip + port for load balancer with sourceRange'],
  ['KUBE-LOAD-BALANCER-LOCAL', 'hash:ip,port', 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local'],
  ['KUBE-LOAD-BALANCER-SOURCE-IP', 'hash:ip,port,ip', 'Kubernetes service load balancer ip + port + source IP for packet filter purpose'],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', 'hash:ip,port,net', 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose'],
  ['KUBE-NODE-PORT-TCP', 'bitmap:port', 'Kubernetes nodeport TCP port for masquerade purpose'],
  ['KUBE-NODE-PORT-LOCAL-TCP', 'bitmap:port', 'Kubernetes nodeport TCP port with externalTrafficPolicy=local'],
  ['KUBE-NODE-PORT-UDP', 'bitmap:port', 'Kubernetes nodeport UDP port for masquerade purpose'],
  ['KUBE-NODE-PORT-LOCAL-UDP', 'bitmap:port', 'Kubernetes nodeport UDP port with externalTrafficPolicy=local'],
  ['KUBE-NODE-PORT-SCTP-HASH', 'hash:ip,port', "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'"],
  ['KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'hash:ip,port', "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'"],
  ['KUBE-HEALTH-CHECK-NODE-PORT', 'bitmap:port', 'Kubernetes health check node port'],
  ['KUBE-IPVS-IPS', 'hash:ip', 'IPVS service ip'],
];

/** Kernel set-type revisions on a 6.x kernel with ipset 7.17 (observed). */
const REVISION: Record<IpsetType, number> = { 'hash:ip': 6, 'hash:ip,port': 7, 'hash:ip,port,ip': 6, 'hash:ip,port,net': 8, 'bitmap:port': 3 };

/** IPv6 set names: `KUBE-6-…`, cut at 31 characters (IPSET_MAXNAMELEN). */
export function ipsetName(name: string, v6: boolean): string {
  return v6 ? `KUBE-6-${name.slice(5)}`.slice(0, 31) : name;
}

export interface VirtualServer {
  protocol: Protocol;
  address: string;
  port: number;
  persistent: number | null;
  dests: { ip: string; port: number }[];
}

export interface IpvsState {
  services: VirtualServer[];
  sets: IpsetSet[];
  /** VIPs bound to kube-ipvs0. */
  boundAddresses: string[];
  /** LB entries that must not be reachable from the node (KUBE-IPVS-OUT-FILTER, `-m ipvs`). */
  lbNoNodeAccess: { ip: string; protocol: Protocol; port: number }[];
}

function entry(ip: string, proto: Protocol, port: number): string {
  return `${ip},${proto}:${port}`;
}

export function ipvsState(cluster: Cluster): IpvsState {
  const v6 = cluster.family === 6;
  const sets = new Map<string, IpsetSet>();
  for (const [name, type, comment] of SET_INFO) sets.set(name, { name: ipsetName(name, v6), type, comment, members: [] });
  const add = (set: string, member: string) => {
    const s = sets.get(set)!;
    s.members.push(member);
  };
  const addUnique = (set: string, member: string) => {
    const s = sets.get(set)!;
    if (!s.members.includes(member)) s.members.push(member);
  };
  const services: VirtualServer[] = [];
  const bound = new Set<string>();
  const nodeIPs = nodeAddresses(cluster);
  const nodeIPSet = new Set(nodeIPs);
  const lbNoNodeAccess: IpvsState['lbNoNodeAccess'] = [];
  const dests = (eps: readonly Endpoint[]) => eps.map((e) => ({ ip: e.ip, port: e.port }));

  for (const ref of cluster.syncOrder) {
    const p = planPort(cluster, ref.service, ref.port);
    const svc = p.svc;
    const proto = p.port.protocol;
    const persistent = svc.sessionAffinity ? svc.sessionAffinity.timeoutSeconds : null;
    const all = p.port.endpoints;
    const local = all.filter((e) => e.local);
    for (const e of local) add('KUBE-LOOP-BACK', `${e.ip},${proto}:${e.port},${e.ip}`);
    add('KUBE-CLUSTER-IP', entry(svc.clusterIP, proto, p.port.port));
    services.push({ protocol: proto, address: svc.clusterIP, port: p.port.port, persistent, dests: dests(p.internalPolicyLocal ? local : all) });
    bound.add(svc.clusterIP);
    const extEps = dests(p.externalPolicyLocal ? local : all);
    for (const ip of svc.externalIPs) {
      add(p.externalPolicyLocal ? 'KUBE-EXTERNAL-IP-LOCAL' : 'KUBE-EXTERNAL-IP', entry(ip, proto, p.port.port));
      services.push({ protocol: proto, address: ip, port: p.port.port, persistent, dests: extEps });
      if (!nodeIPSet.has(ip)) bound.add(ip);
    }
    for (const ip of svc.loadBalancerIPs) {
      add('KUBE-LOAD-BALANCER', entry(ip, proto, p.port.port));
      if (p.externalPolicyLocal) add('KUBE-LOAD-BALANCER-LOCAL', entry(ip, proto, p.port.port));
      if (svc.loadBalancerSourceRanges.length > 0) {
        add('KUBE-LOAD-BALANCER-FW', entry(ip, proto, p.port.port));
        // ipset prints (and saves) a host net without its /32 or /128.
        for (const cidr of svc.loadBalancerSourceRanges) add('KUBE-LOAD-BALANCER-SOURCE-CIDR', `${ip},${proto}:${p.port.port},${cidr.replace(/\/(32|128)$/, (m, l) => ((l === '32') !== isV6(cidr) ? '' : m))}`);
        if (p.allowFromNode) add('KUBE-LOAD-BALANCER-SOURCE-IP', `${ip},${proto}:${p.port.port},${ip}`);
        else lbNoNodeAccess.push({ ip, protocol: proto, port: p.port.port });
      }
      services.push({ protocol: proto, address: ip, port: p.port.port, persistent, dests: extEps });
      if (!nodeIPSet.has(ip)) bound.add(ip);
    }
    if (p.port.nodePort !== null) {
      const np = p.port.nodePort;
      if (proto === 'sctp') {
        for (const ip of nodeIPs) {
          add('KUBE-NODE-PORT-SCTP-HASH', entry(ip, 'sctp', np));
          if (p.externalPolicyLocal) add('KUBE-NODE-PORT-LOCAL-SCTP-HASH', entry(ip, 'sctp', np));
        }
      } else {
        const P = proto.toUpperCase();
        add(`KUBE-NODE-PORT-${P}`, String(np));
        if (p.externalPolicyLocal) add(`KUBE-NODE-PORT-LOCAL-${P}`, String(np));
      }
      for (const ip of nodeIPs) services.push({ protocol: proto, address: ip, port: np, persistent, dests: extEps });
    }
    if (svc.healthCheckNodePort !== null) addUnique('KUBE-HEALTH-CHECK-NODE-PORT', String(svc.healthCheckNodePort));
  }
  for (const ip of bound) add('KUBE-IPVS-IPS', ip);
  // Sets are sets: drop duplicates (e.g. the same ClusterIP:port cannot repeat, but LOOP-BACK can).
  for (const s of sets.values()) s.members = [...new Set(s.members)];
  return { services, sets: [...sets.values()], boundAddresses: [...bound], lbNoNodeAccess };
}

// ---------------------------------------------------------------------------------------------
// ipvsadm -Ln

const PROTO_NUM: Record<Protocol, number> = { tcp: 6, udp: 17, sctp: 132 };

/** ipvsadm's comparator: `ntohl(a) - ntohl(b)` stored in an int (wraps for far-apart addresses). */
function cmpAddr(a: string, b: string): number {
  if (isV6(a)) {
    const x = v6FromString(a);
    const y = v6FromString(b);
    for (let i = 3; i >= 0; i--) {
      const p = Number((x >> BigInt(i * 32)) & 0xffffffffn);
      const q = Number((y >> BigInt(i * 32)) & 0xffffffffn);
      const r = (p - q) | 0;
      if (r !== 0) return r;
    }
    return 0;
  }
  return (v4FromString(a) - v4FromString(b)) | 0;
}

function pad(s: string | number, n: number): string {
  return String(s).padEnd(n, ' ');
}

function addrPort(ip: string, port: number): string {
  return joinHostPort(ip, port);
}

/** `ipvsadm -Ln` (ipvsadm 1.31, IPVS 1.2.1). Real-server lines keep ipvsadm's trailing padding. */
export function ipvsadmLn(cluster: Cluster, state: IpvsState = ipvsState(cluster)): string {
  return collect((sink) => writeIpvsadmLn(cluster, state, sink));
}

export function writeIpvsadmLn(cluster: Cluster, state: IpvsState, sink: Sink): void {
  void cluster;
  const out: string[] = ['IP Virtual Server version 1.2.1 (size=4096)', 'Prot LocalAddress:Port Scheduler Flags', '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn'];
  const seen = new Set<string>();
  const vss = state.services.filter((v) => {
    const k = `${v.protocol} ${v.address} ${v.port}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const addrCache = new Map<string, string>();
  const cmpCached = (a: string, b: string) => (a === b ? 0 : cmpAddr(a, b));
  void addrCache;
  const keyed = vss.map((v) => ({ v, n: isV6(v.address) ? 0 : v4FromString(v.address) }));
  keyed.sort((a, b) => PROTO_NUM[a.v.protocol] - PROTO_NUM[b.v.protocol] || (isV6(a.v.address) ? cmpCached(a.v.address, b.v.address) : (a.n - b.n) | 0) || a.v.port - b.v.port);
  for (const { v } of keyed) {
    out.push(`${pad(v.protocol.toUpperCase(), 4)} ${addrPort(v.address, v.port)} rr${v.persistent !== null ? ` persistent ${v.persistent}` : ''}`);
    const ds = v.dests.length < 2 ? v.dests : v.dests.map((d) => ({ d, n: isV6(d.ip) ? 0 : v4FromString(d.ip) })).sort((a, b) => (isV6(a.d.ip) ? cmpCached(a.d.ip, b.d.ip) : (a.n - b.n) | 0) || a.d.port - b.d.port).map((x) => x.d);
    for (const d of ds) out.push(`  -> ${pad(addrPort(d.ip, d.port), 28)} ${pad('Masq', 7)} ${pad(1, 6)} ${pad(0, 10)} ${pad(0, 10)}`);
    if (out.length > 4096) {
      sink(`${out.join('\n')}\n`);
      out.length = 0;
    }
  }
  if (out.length) sink(`${out.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------------
// ipset

function createOptions(set: IpsetSet, v6: boolean, initval: string): string {
  if (set.type === 'bitmap:port') return 'range 0-65535';
  return `family ${v6 ? 'inet6' : 'inet'} hashsize 1024 maxelem 65536 bucketsize 12 initval ${initval}`;
}

function initvalFor(seed: number, name: string): string {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return `0x${h.toString(16).padStart(8, '0')}`;
}

/** Number of iptables rules referencing each set in the ipvs-mode dump. */
function references(state: IpvsState, iptablesText: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of state.sets) m.set(s.name, 0);
  const re = /--match-set (\S+) /g;
  let r: RegExpExecArray | null;
  while ((r = re.exec(iptablesText))) m.set(r[1], (m.get(r[1]) ?? 0) + 1);
  return m;
}

function sizeInMemory(set: IpsetSet): number {
  if (set.type === 'bitmap:port') return 8264;
  const per: Record<IpsetType, number> = { 'hash:ip': 16, 'hash:ip,port': 24, 'hash:ip,port,ip': 24, 'hash:ip,port,net': 32, 'bitmap:port': 0 };
  return 216 + set.members.length * per[set.type] + (set.type === 'hash:ip,port,net' ? 248 : 0);
}

/**
 * `ipset list`. Name/Type/Header(options)/Number of entries/members are what kube-proxy creates;
 * `Size in memory`, `initval` and the member order (kernel hash order) cannot be reproduced and are
 * synthetic (members in insertion order, initval from the seed).
 */
export function ipsetList(cluster: Cluster, state: IpvsState = ipvsState(cluster), iptablesText?: string): string {
  const v6 = cluster.family === 6;
  const refs = references(state, iptablesText ?? ipvsIptablesSave(cluster, {}, state));
  const blocks: string[] = [];
  for (const s of state.sets) {
    const lines = [
      `Name: ${s.name}`,
      `Type: ${s.type}`,
      `Revision: ${REVISION[s.type]}`,
      `Header: ${createOptions(s, v6, initvalFor(cluster.seed, s.name))}`,
      `Size in memory: ${sizeInMemory(s)}`,
      `References: ${refs.get(s.name) ?? 0}`,
      `Number of entries: ${s.members.length}`,
      'Members:',
      ...s.members,
    ];
    blocks.push(lines.join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

/** `ipset save` form of the same sets (what `ipset restore` loads). */
export function ipsetSave(cluster: Cluster, state: IpvsState = ipvsState(cluster)): string {
  const v6 = cluster.family === 6;
  const out: string[] = [];
  for (const s of state.sets) {
    out.push(`create ${s.name} ${s.type} ${createOptions(s, v6, initvalFor(cluster.seed, s.name))}`);
    for (const m of s.members) out.push(`add ${s.name} ${m}`);
  }
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// ipvs-mode iptables-save

const BUILTINS: Record<string, string[]> = {
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
};

export interface IpvsIptablesOptions extends IptablesOptions {
  /**
   * Emit the KUBE-IPVS-OUT-FILTER `-m ipvs --vaddr …` rules for LoadBalancer source ranges that do
   * not cover the node (kube-proxy does; needs the xt_ipvs module to load). Default true.
   */
  ipvsMatch?: boolean;
}

export function ipvsIptablesSave(cluster: Cluster, options: IpvsIptablesOptions = {}, state: IpvsState = ipvsState(cluster)): string {
  return collect((sink) => writeIpvsIptablesSave(cluster, options, state, sink));
}

/** kube-proxy's ipsets as its iptables rules name them: the family's name, whether it has members, its comment. */
interface SetsView {
  name(n: string): string;
  has(n: string): boolean;
  comment(n: string): string;
}

function setsView(state: IpvsState, v6: boolean): SetsView {
  const name = (n: string) => ipsetName(n, v6);
  return {
    name,
    has: (n) => state.sets.find((s) => s.name === name(n))!.members.length > 0,
    comment: (n) => saveString(SET_INFO.find((s) => s[0] === n)![2]),
  };
}

/** The three tables with kube-proxy's chains declared (canaries, the IPVS-mode chains). */
function ipvsModeTables(): { mangle: SaveTable; filter: SaveTable; nat: SaveTable } {
  const mangle = new SaveTable('mangle', BUILTINS.mangle);
  const filter = new SaveTable('filter', BUILTINS.filter);
  const nat = new SaveTable('nat', BUILTINS.nat);
  for (const c of ['KUBE-IPTABLES-HINT', 'KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY']) mangle.chain(c);
  for (const c of ['KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY']) {
    filter.chain(c);
    nat.chain(c);
  }
  for (const c of ['KUBE-SERVICES', 'KUBE-POSTROUTING', 'KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-MARK-MASQ']) nat.chain(c);
  for (const c of ['KUBE-FORWARD', 'KUBE-NODE-PORT', 'KUBE-PROXY-FIREWALL', 'KUBE-SOURCE-RANGES-FIREWALL', 'KUBE-IPVS-FILTER', 'KUBE-IPVS-OUT-FILTER']) filter.chain(c);
  return { mangle, filter, nat };
}

/** Jump rules from the built-in chains (iptablesJumpChain, each prepended, so later entries come first). */
function writeHookJumps(filter: SaveTable, nat: SaveTable): void {
  filter.add('INPUT', '-m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER');
  filter.add('INPUT', '-m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL');
  filter.add('INPUT', '-m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT');
  filter.add('FORWARD', '-m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL');
  filter.add('FORWARD', '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD');
  filter.add('OUTPUT', '-m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-OUT-FILTER');
  nat.add('PREROUTING', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
  nat.add('OUTPUT', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
  nat.add('POSTROUTING', '-m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING');
}

/** Sets whose rule is written only when they have members: the set, its table, the chain, the target, the match flags, the protocol. */
const RULE_PER_SET: readonly (readonly [string, 'nat' | 'filter', string, string, string, string])[] = [
  ['KUBE-LOOP-BACK', 'nat', 'KUBE-POSTROUTING', 'MASQUERADE', 'dst,dst,src', ''],
  ['KUBE-LOAD-BALANCER', 'nat', 'KUBE-SERVICES', 'KUBE-LOAD-BALANCER', 'dst,dst', ''],
  ['KUBE-LOAD-BALANCER-LOCAL', 'nat', 'KUBE-LOAD-BALANCER', 'RETURN', 'dst,dst', ''],
  ['KUBE-NODE-PORT-LOCAL-TCP', 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst', 'tcp'],
  ['KUBE-NODE-PORT-TCP', 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst', 'tcp'],
  ['KUBE-NODE-PORT-LOCAL-UDP', 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst', 'udp'],
  ['KUBE-NODE-PORT-UDP', 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst', 'udp'],
  ['KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'nat', 'KUBE-NODE-PORT', 'RETURN', 'dst,dst', 'sctp'],
  ['KUBE-NODE-PORT-SCTP-HASH', 'nat', 'KUBE-NODE-PORT', 'KUBE-MARK-MASQ', 'dst,dst', 'sctp'],
  ['KUBE-LOAD-BALANCER-FW', 'filter', 'KUBE-PROXY-FIREWALL', 'KUBE-SOURCE-RANGES-FIREWALL', 'dst,dst', ''],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', 'filter', 'KUBE-SOURCE-RANGES-FIREWALL', 'RETURN', 'dst,dst,src', ''],
  ['KUBE-LOAD-BALANCER-SOURCE-IP', 'filter', 'KUBE-SOURCE-RANGES-FIREWALL', 'RETURN', 'dst,dst,src', ''],
];

/** The rules that depend on the sets' contents (writeIptablesRules in proxier.go), in its order. */
function writeSetRules(cluster: Cluster, options: IpvsIptablesOptions, state: IpvsState, sets: SetsView, filter: SaveTable, nat: SaveTable): void {
  const v6 = cluster.family === 6;
  const { name, has } = sets;
  nat.add('KUBE-SERVICES', `-s ${v6 ? '::1/128' : '127.0.0.0/8'} -j RETURN`);
  for (const [set, table, from, to, match, proto] of RULE_PER_SET) {
    if (!has(set)) continue;
    const t = table === 'nat' ? nat : filter;
    t.add(from, `${proto ? `-p ${proto} ` : ''}-m comment --comment ${sets.comment(set)} -m set --match-set ${name(set)} ${match} -j ${to}`);
  }
  if (has('KUBE-CLUSTER-IP')) {
    nat.add('KUBE-SERVICES', `! -s ${cluster.clusterCIDR} -m comment --comment ${sets.comment('KUBE-CLUSTER-IP')} -m set --match-set ${name('KUBE-CLUSTER-IP')} dst,dst -j KUBE-MARK-MASQ`);
  }
  const externalRules = (set: string) => {
    const base = `-m comment --comment ${sets.comment(set)} -m set --match-set ${name(set)} dst,dst`;
    nat.add('KUBE-SERVICES', `${base} -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT`);
    nat.add('KUBE-SERVICES', `${base} -m addrtype --dst-type LOCAL -j ACCEPT`);
  };
  if (has('KUBE-EXTERNAL-IP')) {
    nat.add('KUBE-SERVICES', `-m comment --comment ${sets.comment('KUBE-EXTERNAL-IP')} -m set --match-set ${name('KUBE-EXTERNAL-IP')} dst,dst -j KUBE-MARK-MASQ`);
    externalRules('KUBE-EXTERNAL-IP');
  }
  if (has('KUBE-EXTERNAL-IP-LOCAL')) externalRules('KUBE-EXTERNAL-IP-LOCAL');
  nat.add('KUBE-SERVICES', '-m addrtype --dst-type LOCAL -j KUBE-NODE-PORT');
  nat.add('KUBE-LOAD-BALANCER', '-j KUBE-MARK-MASQ');
  filter.add('KUBE-SOURCE-RANGES-FIREWALL', '-j DROP');
  if (options.ipvsMatch ?? true) {
    for (const e of state.lbNoNodeAccess) {
      filter.add('KUBE-IPVS-OUT-FILTER', `-s ${v6 ? `${e.ip}/128` : `${e.ip}/32`} -m ipvs --vproto ${PROTO_NUM[e.protocol]} --vaddr ${v6 ? `${e.ip}/128` : `${e.ip}/32`} --vport ${e.port} -j DROP`);
    }
  }
  for (const set of ['KUBE-CLUSTER-IP', 'KUBE-LOAD-BALANCER']) {
    if (has(set)) nat.add('KUBE-SERVICES', `-m set --match-set ${name(set)} dst,dst -j ACCEPT`);
  }
}

/** The rules written whatever the sets hold: forwarding, health checks, the IPVS access filter, masquerade. */
function writeFixedRules(v6: boolean, sets: SetsView, filter: SaveTable, nat: SaveTable): void {
  const { name } = sets;
  filter.add('KUBE-FORWARD', '-m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT');
  filter.add('KUBE-FORWARD', '-m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT');
  filter.add('KUBE-NODE-PORT', `-m comment --comment ${sets.comment('KUBE-HEALTH-CHECK-NODE-PORT')} -m set --match-set ${name('KUBE-HEALTH-CHECK-NODE-PORT')} dst -j ACCEPT`);
  filter.add('KUBE-IPVS-FILTER', `-m set --match-set ${name('KUBE-LOAD-BALANCER')} dst,dst -j RETURN`);
  filter.add('KUBE-IPVS-FILTER', `-m set --match-set ${name('KUBE-CLUSTER-IP')} dst,dst -j RETURN`);
  filter.add('KUBE-IPVS-FILTER', `-m set --match-set ${name('KUBE-EXTERNAL-IP')} dst,dst -j RETURN`);
  filter.add('KUBE-IPVS-FILTER', `-m set --match-set ${name('KUBE-EXTERNAL-IP-LOCAL')} dst,dst -j RETURN`);
  filter.add('KUBE-IPVS-FILTER', `-m set --match-set ${name('KUBE-HEALTH-CHECK-NODE-PORT')} dst -j RETURN`);
  filter.add('KUBE-IPVS-FILTER', `-m conntrack --ctstate NEW -m set --match-set ${name('KUBE-IPVS-IPS')} dst -j REJECT --reject-with ${v6 ? 'icmp6-port-unreachable' : 'icmp-port-unreachable'}`);
  nat.add('KUBE-POSTROUTING', '-m mark ! --mark 0x4000/0x4000 -j RETURN');
  nat.add('KUBE-POSTROUTING', '-j MARK --set-xmark 0x4000/0x0');
  nat.add('KUBE-POSTROUTING', '-m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully');
  nat.add('KUBE-MARK-MASQ', '-j MARK --set-xmark 0x4000/0x4000');
}

export function writeIpvsIptablesSave(cluster: Cluster, options: IpvsIptablesOptions, state: IpvsState, sink: Sink): void {
  const v6 = cluster.family === 6;
  const { mangle, filter, nat } = ipvsModeTables();
  const sets = setsView(state, v6);
  writeHookJumps(filter, nat);
  writeSetRules(cluster, options, state, sets, filter, nat);
  writeFixedRules(v6, sets, filter, nat);
  printSave({ mangle, filter, nat }, cluster.family, cluster.seed, { ...options, date: options.date ?? DEFAULT_DATE }, sink);
}

/** `ip addr` of the node in IPVS mode (kube-ipvs0 holds every bound VIP). */
export function ipvsIpAddr(cluster: Cluster, state: IpvsState = ipvsState(cluster)): string {
  return ipAddr(cluster, { ipvs: true, ipvsAddresses: state.boundAddresses });
}
