/**
 * `iptables-save` / `ip6tables-save` of a node running kube-proxy in iptables mode (≥1.28 layout:
 * KUBE-SVC/SVL/EXT/FW/SEP, filter KUBE-PROXY-FIREWALL), printed exactly as iptables-save (nft
 * backend, v1.8.9) prints it after kube-proxy restored it: tables mangle/filter/nat, built-in chains
 * in hook order then user chains sorted by name, options in iptables-save's canonical order.
 * Source: kubernetes pkg/proxy/iptables/proxier.go (syncProxyRules, writeServiceToEndpointRules).
 */
import { type Cluster, planPort, type PortPlan, type Protocol } from './cluster.js';
import { ChunkWriter, collect, endpointHash, hostCidr, joinHostPort, savedProbability, saveString, type Sink } from './util.js';

export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

export interface IptablesOptions {
  /** Date printed in the header/trailer comments (ctime format). */
  date?: string;
  /** iptables version in the header. */
  version?: string;
  /** Print plausible non-zero packet/byte counters on built-in chains (default false: [0:0]). */
  counters?: boolean;
  /** Add the CNI's own rules (flannel FLANNEL-FWD / FLANNEL-POSTRTG). Default true. */
  cniRules?: boolean;
  /** kube-proxy's --iptables-localhost-nodeports (IPv4 only; default true). */
  localhostNodePorts?: boolean;
}

export const DEFAULT_DATE = 'Thu Jan 15 12:00:00 2026';

/** The KUBE-SEP chain name for an endpoint of a service port. */
export function sepChain(plan: { spn: string; port: { protocol: Protocol } }, ip: string, port: number): string {
  return `KUBE-SEP-${endpointHash(plan.spn, plan.port.protocol, joinHostPort(ip, port))}`;
}

/** A table as iptables-save prints it: built-in chains (policy) + user chains (sorted) + rules. */
class Table {
  /** Chain → its rule lines, each followed by '\n' (one rope string per chain keeps GC cheap). */
  readonly rules = new Map<string, string>();
  constructor(
    readonly name: string,
    readonly builtins: readonly string[],
  ) {
    for (const b of builtins) this.rules.set(b, '');
  }
  chain(name: string): void {
    if (!this.rules.has(name)) this.rules.set(name, '');
  }
  add(chain: string, rest: string): void {
    const prev = this.rules.get(chain) ?? '';
    this.rules.set(chain, `${prev}${rest ? `-A ${chain} ${rest}` : `-A ${chain}`}\n`);
  }
  userChains(): string[] {
    const set = new Set(this.builtins);
    return [...this.rules.keys()].filter((c) => !set.has(c)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

const BUILTINS: Record<string, string[]> = {
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
};

interface Ctx {
  v6: boolean;
  nat: Table;
  filter: Table;
  largeCluster: boolean;
  localDetectorNotLocal: string;
  localDetectorLocal: string;
  rejectWith: string;
  recentMask: string;
  /** KUBE-SEP names of the current service port, by `IP:port`. */
  sep: Map<string, string>;
}

function sepOf(ctx: Ctx, p: PortPlan, ip: string, port: number): string {
  const k = joinHostPort(ip, port);
  let n = ctx.sep.get(k);
  if (n === undefined) {
    n = `KUBE-SEP-${endpointHash(p.spn, p.port.protocol, k)}`;
    ctx.sep.set(k, n);
  }
  return n;
}

function portMatch(proto: Protocol, dport?: number): string {
  return dport === undefined ? `-m ${proto}` : `-m ${proto} --dport ${dport}`;
}

function comment(text: string): string {
  return `-m comment --comment ${saveString(text)}`;
}

/** The chains of one service port (servicePortPolicyClusterChain… in proxier.go) and which of them each kind of traffic enters. */
interface PortChains {
  readonly svc: string;
  readonly svl: string;
  readonly ext: string;
  readonly fw: string;
  /** Where cluster-IP traffic goes: the Local policy chain under internalTrafficPolicy Local. */
  readonly internalTraffic: string;
  /** Where the external chain sends traffic: the Local policy chain under externalTrafficPolicy Local. */
  readonly externalPolicy: string;
  /** Where load-balancer traffic goes: the firewall chain when source ranges apply. */
  readonly lb: string;
}

function portChains(p: PortPlan): PortChains {
  const svc = `KUBE-SVC-${p.hash}`;
  const svl = `KUBE-SVL-${p.hash}`;
  const ext = `KUBE-EXT-${p.hash}`;
  const fw = `KUBE-FW-${p.hash}`;
  return { svc, svl, ext, fw, internalTraffic: p.internalPolicyLocal ? svl : svc, externalPolicy: p.externalPolicyLocal ? svl : svc, lb: p.usesFWChain ? fw : ext };
}

/** The filter table's answer to traffic without (local) endpoints: REJECT with none at all, DROP with none local. */
interface NoEndpointFilter {
  readonly internalTarget: string;
  readonly internalComment: string;
  readonly externalTarget: string;
  readonly externalComment: string;
}

function noEndpointFilter(ctx: Ctx, p: PortPlan): NoEndpointFilter {
  if (!p.hasEndpoints) {
    const target = `REJECT --reject-with ${ctx.rejectWith}`;
    const why = `${p.spn} has no endpoints`;
    return { internalTarget: target, internalComment: why, externalTarget: target, externalComment: why };
  }
  const why = `${p.spn} has no local endpoints`;
  return {
    internalTarget: p.hasInternalEndpoints ? '' : 'DROP',
    internalComment: p.hasInternalEndpoints ? '' : why,
    externalTarget: p.hasExternalEndpoints ? '' : 'DROP',
    externalComment: p.hasExternalEndpoints ? '' : why,
  };
}

/** The captures: the cluster IP, external IPs, load-balancer IPs, node ports and the health-check node port, in nat (or filter, without endpoints). */
function writeCaptures(ctx: Ctx, p: PortPlan, ch: PortChains, nf: NoEndpointFilter): void {
  const { nat, filter } = ctx;
  const { svc, spn } = p;
  const proto = p.port.protocol;
  const dport = p.port.port;
  if (p.hasInternalEndpoints) {
    nat.add('KUBE-SERVICES', `-d ${hostCidr(svc.clusterIP)} -p ${proto} ${comment(`${spn} cluster IP`)} ${portMatch(proto, dport)} -j ${ch.internalTraffic}`);
  } else {
    filter.add('KUBE-SERVICES', `-d ${hostCidr(svc.clusterIP)} -p ${proto} ${comment(nf.internalComment)} ${portMatch(proto, dport)} -j ${nf.internalTarget}`);
  }
  for (const ip of svc.externalIPs) {
    if (p.hasEndpoints) nat.add('KUBE-SERVICES', `-d ${hostCidr(ip)} -p ${proto} ${comment(`${spn} external IP`)} ${portMatch(proto, dport)} -j ${ch.ext}`);
    if (!p.hasExternalEndpoints) filter.add('KUBE-EXTERNAL-SERVICES', `-d ${hostCidr(ip)} -p ${proto} ${comment(nf.externalComment)} ${portMatch(proto, dport)} -j ${nf.externalTarget}`);
  }
  for (const ip of svc.loadBalancerIPs) {
    if (p.hasEndpoints) nat.add('KUBE-SERVICES', `-d ${hostCidr(ip)} -p ${proto} ${comment(`${spn} loadbalancer IP`)} ${portMatch(proto, dport)} -j ${ch.lb}`);
    if (p.usesFWChain) filter.add('KUBE-PROXY-FIREWALL', `-d ${hostCidr(ip)} -p ${proto} ${comment(`${spn} traffic not accepted by ${ch.fw}`)} ${portMatch(proto, dport)} -j DROP`);
  }
  if (!p.hasExternalEndpoints) {
    for (const ip of svc.loadBalancerIPs) filter.add('KUBE-EXTERNAL-SERVICES', `-d ${hostCidr(ip)} -p ${proto} ${comment(nf.externalComment)} ${portMatch(proto, dport)} -j ${nf.externalTarget}`);
  }
  if (p.port.nodePort !== null) {
    if (p.hasEndpoints) nat.add('KUBE-NODEPORTS', `-p ${proto} ${comment(spn)} ${portMatch(proto, p.port.nodePort)} -j ${ch.ext}`);
    if (!p.hasExternalEndpoints) filter.add('KUBE-EXTERNAL-SERVICES', `-p ${proto} ${comment(nf.externalComment)} -m addrtype --dst-type LOCAL ${portMatch(proto, p.port.nodePort)} -j ${nf.externalTarget}`);
  }
  if (svc.healthCheckNodePort !== null) {
    filter.add('KUBE-NODEPORTS', `-p tcp ${comment(`${spn} health check node port`)} -m tcp --dport ${svc.healthCheckNodePort} -j ACCEPT`);
  }
}

/** KUBE-EXT-: masquerade (Cluster policy), or pod and LOCAL traffic short-circuited to the cluster chain (Local policy). */
function writeExternalChain(ctx: Ctx, p: PortPlan, ch: PortChains): void {
  const { nat } = ctx;
  const spn = p.spn;
  nat.chain(ch.ext);
  if (!p.externalPolicyLocal) {
    nat.add(ch.ext, `${comment(`masquerade traffic for ${spn} external destinations`)} -j KUBE-MARK-MASQ`);
  } else {
    nat.add(ch.ext, `${ctx.localDetectorLocal}${comment(`pod traffic for ${spn} external destinations`)} -j ${ch.svc}`);
    nat.add(ch.ext, `${comment(`masquerade LOCAL traffic for ${spn} external destinations`)} -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`);
    nat.add(ch.ext, `${comment(`route LOCAL traffic for ${spn} external destinations`)} -m addrtype --src-type LOCAL -j ${ch.svc}`);
  }
  if (p.hasExternalEndpoints) nat.add(ch.ext, `-j ${ch.externalPolicy}`);
}

/** KUBE-FW-: the source ranges (and the node's own load-balancer IPs when a range holds the node) go on; the rest is dropped in filter. */
function writeFirewallChain(ctx: Ctx, p: PortPlan, ch: PortChains): void {
  const c = comment(`${p.spn} loadbalancer IP`);
  for (const cidr of p.svc.loadBalancerSourceRanges) ctx.nat.add(ch.fw, `-s ${cidr} ${c} -j ${ch.ext}`);
  if (p.allowFromNode) for (const ip of p.svc.loadBalancerIPs) ctx.nat.add(ch.fw, `-s ${hostCidr(ip)} ${c} -j ${ch.ext}`);
  ctx.nat.add(ch.fw, comment(`other traffic to ${p.spn} will be dropped by KUBE-PROXY-FIREWALL`));
}

/** KUBE-SEP-: hairpin masquerade, then DNAT to the endpoint (recording it for session affinity). */
function writeEndpointChains(ctx: Ctx, p: PortPlan): void {
  const proto = p.port.protocol;
  for (const ep of p.reachableEndpoints) {
    const sep = sepOf(ctx, p, ep.ip, ep.port);
    const c = ctx.largeCluster ? '' : `${comment(p.spn)} `;
    ctx.nat.add(sep, `-s ${hostCidr(ep.ip)} ${c}-j KUBE-MARK-MASQ`);
    const recent = p.svc.sessionAffinity ? `-m recent --set --name ${sep} --mask ${ctx.recentMask} --rsource ` : '';
    ctx.nat.add(sep, `-p ${proto} ${c}${recent}${portMatch(proto)} -j DNAT --to-destination ${joinHostPort(ep.ip, ep.port)}`);
  }
}

/** Rules of one service port (syncProxyRules' loop body), in kube-proxy's write order. */
function writeServicePort(ctx: Ctx, p: PortPlan): void {
  ctx.sep = new Map();
  const ch = portChains(p);
  writeCaptures(ctx, p, ch, noEndpointFilter(ctx, p));
  // Internal traffic: masquerade off-cluster sources.
  if (p.hasInternalEndpoints) ctx.nat.add(ch.internalTraffic, masqRule(ctx, p.svc.clusterIP, p.port.protocol, p.port.port, `${p.spn} cluster IP`));
  if (p.usesExternalTrafficChain) writeExternalChain(ctx, p, ch);
  if (p.usesFWChain) writeFirewallChain(ctx, p, ch);
  if (p.usesClusterPolicyChain) writeServiceToEndpointRules(ctx, p, ch.svc, p.clusterEndpoints);
  if (p.usesLocalPolicyChain) writeServiceToEndpointRules(ctx, p, ch.svl, p.localEndpoints);
  writeEndpointChains(ctx, p);
}

function masqRule(ctx: Ctx, clusterIP: string, proto: Protocol, dport: number, commentText: string): string {
  // iptables-save prints -s/-d first, then -i, then -p, then the matches in order.
  const d = ctx.localDetectorNotLocal;
  if (d.startsWith('!-i ')) {
    return `-d ${hostCidr(clusterIP)} ! -i ${d.slice(4)} -p ${proto} ${comment(commentText)} ${portMatch(proto, dport)} -j KUBE-MARK-MASQ`;
  }
  return `${d}-d ${hostCidr(clusterIP)} -p ${proto} ${comment(commentText)} ${portMatch(proto, dport)} -j KUBE-MARK-MASQ`;
}

function writeServiceToEndpointRules(ctx: Ctx, p: PortPlan, chain: string, endpoints: readonly { ip: string; port: number }[]): void {
  const { nat } = ctx;
  nat.chain(chain);
  if (p.svc.sessionAffinity) {
    for (const ep of endpoints) {
      const sep = sepOf(ctx, p, ep.ip, ep.port);
      const c = ctx.largeCluster ? '' : `${comment(`${p.spn} -> ${joinHostPort(ep.ip, ep.port)}`)} `;
      nat.add(chain, `${c}-m recent --rcheck --seconds ${p.svc.sessionAffinity.timeoutSeconds} --reap --name ${sep} --mask ${ctx.recentMask} --rsource -j ${sep}`);
    }
  }
  const n = endpoints.length;
  endpoints.forEach((ep, i) => {
    const sep = sepOf(ctx, p, ep.ip, ep.port);
    const c = ctx.largeCluster ? '' : `${comment(`${p.spn} -> ${joinHostPort(ep.ip, ep.port)}`)} `;
    const stat = i < n - 1 ? `-m statistic --mode random --probability ${savedProbability(n - i)} ` : '';
    nat.add(chain, `${c}${stat}-j ${sep}`);
  });
}

function localDetector(cluster: Cluster): { notLocal: string; local: string } {
  // --detect-local-mode=ClusterCIDR (the default when --cluster-cidr is set).
  return { notLocal: `! -s ${cluster.clusterCIDR} `, local: `-s ${cluster.clusterCIDR} ` };
}

/** Build the three tables' rules (shared with the ipvs renderer for the common chains). */
function buildTables(cluster: Cluster, options: IptablesOptions): { mangle: Table; filter: Table; nat: Table } {
  const v6 = cluster.family === 6;
  const mangle = new Table('mangle', BUILTINS.mangle);
  const filter = new Table('filter', BUILTINS.filter);
  const nat = new Table('nat', BUILTINS.nat);
  for (const c of ['KUBE-IPTABLES-HINT', 'KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY']) mangle.chain(c);
  for (const c of ['KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY']) {
    filter.chain(c);
    nat.chain(c);
  }
  for (const c of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL', 'KUBE-FIREWALL']) filter.chain(c);
  for (const c of ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']) nat.chain(c);

  // Jump rules (iptablesJumpChains, prepended one by one; KUBE-FIREWALL was created by kubelet first).
  filter.add('INPUT', '-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL');
  filter.add('INPUT', '-m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS');
  filter.add('INPUT', '-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES');
  filter.add('INPUT', '-j KUBE-FIREWALL');
  filter.add('FORWARD', '-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL');
  filter.add('FORWARD', '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD');
  filter.add('FORWARD', '-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
  filter.add('FORWARD', '-m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES');
  filter.add('OUTPUT', '-m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL');
  filter.add('OUTPUT', '-m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
  filter.add('OUTPUT', '-j KUBE-FIREWALL');
  nat.add('PREROUTING', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
  nat.add('OUTPUT', '-m comment --comment "kubernetes service portals" -j KUBE-SERVICES');
  nat.add('POSTROUTING', '-m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING');

  nat.add('KUBE-POSTROUTING', '-m mark ! --mark 0x4000/0x4000 -j RETURN');
  nat.add('KUBE-POSTROUTING', '-j MARK --set-xmark 0x4000/0x0');
  nat.add('KUBE-POSTROUTING', '-m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully');
  nat.add('KUBE-MARK-MASQ', '-j MARK --set-xmark 0x4000/0x4000');
  const localhostNodePorts = !v6 && (options.localhostNodePorts ?? true);
  if (!v6) {
    filter.add('KUBE-FIREWALL', '! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP');
  }

  const det = localDetector(cluster);
  const ctx: Ctx = {
    v6,
    nat,
    filter,
    largeCluster: cluster.totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD,
    localDetectorNotLocal: det.notLocal,
    localDetectorLocal: det.local,
    rejectWith: v6 ? 'icmp6-port-unreachable' : 'icmp-port-unreachable',
    recentMask: v6 ? 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' : '255.255.255.255',
    sep: new Map(),
  };
  for (const ref of cluster.syncOrder) writeServicePort(ctx, planPort(cluster, ref.service, ref.port));

  const tail = v6 ? '! -d ::1/128 ' : localhostNodePorts ? '' : '! -d 127.0.0.0/8 ';
  nat.add('KUBE-SERVICES', `${tail}-m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`);
  filter.add('KUBE-FORWARD', '-m conntrack --ctstate INVALID -j DROP');
  filter.add('KUBE-FORWARD', '-m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT');
  filter.add('KUBE-FORWARD', '-m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT');

  if ((options.cniRules ?? true) && cluster.cni === 'flannel') addFlannel(cluster, filter, nat);
  return { mangle, filter, nat };
}

function addFlannel(cluster: Cluster, filter: Table, nat: Table): void {
  const cidr = cluster.clusterCIDR;
  const nodeNet = cluster.node.podCIDR;
  const mcast = cluster.family === 6 ? 'ff00::/8' : '224.0.0.0/4';
  filter.add('FORWARD', '-m comment --comment "flanneld forward" -j FLANNEL-FWD');
  filter.add('FLANNEL-FWD', `-s ${cidr} -m comment --comment "flanneld forward" -j ACCEPT`);
  filter.add('FLANNEL-FWD', `-d ${cidr} -m comment --comment "flanneld forward" -j ACCEPT`);
  nat.add('POSTROUTING', '-m comment --comment "flanneld masq" -j FLANNEL-POSTRTG');
  nat.add('FLANNEL-POSTRTG', '-m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN');
  nat.add('FLANNEL-POSTRTG', `-s ${nodeNet} -d ${cidr} -m comment --comment "flanneld masq" -j RETURN`);
  nat.add('FLANNEL-POSTRTG', `-s ${cidr} -d ${nodeNet} -m comment --comment "flanneld masq" -j RETURN`);
  nat.add('FLANNEL-POSTRTG', `! -s ${cidr} -d ${nodeNet} -m comment --comment "flanneld masq" -j RETURN`);
  nat.add('FLANNEL-POSTRTG', `-s ${cidr} ! -d ${mcast} -m comment --comment "flanneld masq" -j MASQUERADE --random-fully`);
  nat.add('FLANNEL-POSTRTG', `! -s ${cidr} -d ${cidr} -m comment --comment "flanneld masq" -j MASQUERADE --random-fully`);
}

function counterFor(seed: number, table: string, chain: string): string {
  let h = seed >>> 0;
  for (const ch of table + chain) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const pkts = h % 5_000_000;
  const bytes = pkts * (60 + (h % 900));
  return `[${pkts}:${bytes}]`;
}

export interface SaveTables {
  mangle: Table;
  filter: Table;
  nat: Table;
}

/** Print tables in the nft backend's order (mangle, filter, nat) to `sink`. */
export function printSave(tables: SaveTables, family: 4 | 6, seed: number, options: IptablesOptions, sink: Sink): void {
  const w = new ChunkWriter(sink);
  const date = options.date ?? DEFAULT_DATE;
  const prog = family === 6 ? 'ip6tables-save' : 'iptables-save';
  const version = options.version ?? 'v1.8.9 (nf_tables)';
  for (const t of [tables.mangle, tables.filter, tables.nat]) {
    w.line(`# Generated by ${prog} ${version} on ${date}`);
    w.line(`*${t.name}`);
    for (const b of t.builtins) w.line(`:${b} ACCEPT ${options.counters ? counterFor(seed, t.name, b) : '[0:0]'}`);
    const user = t.userChains();
    for (const c of user) w.line(`:${c} - [0:0]`);
    for (const b of t.builtins) w.raw(t.rules.get(b)!);
    for (const c of user) w.raw(t.rules.get(c)!);
    w.line('COMMIT');
    w.line(`# Completed on ${date}`);
  }
  w.flush();
}

/** Stream the iptables-save text of the node (IPv4 or IPv6 per cluster.family). */
export function writeIptablesSave(cluster: Cluster, options: IptablesOptions, sink: Sink): void {
  printSave(buildTables(cluster, options), cluster.family, cluster.seed, options, sink);
}

export function iptablesSave(cluster: Cluster, options: IptablesOptions = {}): string {
  return collect((sink) => writeIptablesSave(cluster, options, sink));
}

export { Table as SaveTable };
