/**
 * kube-proxy nftables mode (≥1.31 layout: service-endpoints-check, nodeport-endpoints-check,
 * cluster-ips-check, filter-output-post-dnat) for the generated cluster, in two forms:
 *  - `nftScript()`: the `nft -f` transaction kube-proxy's first full sync runs (knftables
 *    style: `add` then `flush` of every chain it ensures, `add`+`flush` (or `add`+`delete`) of
 *    nodeport-ips, `flush` of the dispatch maps before their elements are written);
 *  - `nftListing()`: what `nft list table ip kube-proxy` (nftables 1.0.6) prints once it is loaded.
 * Source: kubernetes pkg/proxy/nftables/proxier.go (setupNFTables, syncProxyRules,
 * writeServiceToEndpointRules); listing layout from nftables src/rule.c and observed output.
 */
import { type Cluster, planPort, type PortPlan } from './cluster.js';
import { ChunkWriter, collect, isV6, joinHostPort, sha256Base32, type Sink, v4FromString, v4ToString, v6FromString, v6ToString } from './util.js';
import { appendAll } from '../source/index.js';

export interface NftOptions {
  /** kube-proxy --nodeport-addresses: 'primary' (nftables-mode default: the node IP) or 'all'. */
  nodePortAddresses?: 'primary' | 'all';
}

const NAME_LENGTH_MAX = 256;
const BASE_MAX = NAME_LENGTH_MAX - 16;

function hashAndTruncate(name: string): string {
  let n = `${sha256Base32(name, 8)}-${name}`;
  if (n.length > BASE_MAX) n = `${n.slice(0, BASE_MAX - 3)}...`;
  return n;
}

export function nftServiceChainBase(p: { svc: { namespace: string; name: string }; port: { name: string | null; protocol: string } }): string {
  return hashAndTruncate(`${p.svc.namespace}/${p.svc.name}/${p.port.protocol}/${p.port.name ?? ''}`);
}

export function nftEndpointChainBase(p: { svc: { namespace: string; name: string }; port: { name: string | null; protocol: string } }, ip: string, port: number): string {
  const epIP = ip.includes(':') ? ip.replaceAll(':', '.') : ip;
  return hashAndTruncate(`${p.svc.namespace}/${p.svc.name}/${p.port.protocol}/${p.port.name ?? ''}__${epIP}/${port}`);
}

/** Duration as nft prints set timeouts (`3h`, `1h30m`, `10m`, `45s`, `1d`). */
export function nftDuration(seconds: number): string {
  let s = seconds;
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  let out = '';
  if (d) out += `${d}d`;
  if (h) out += `${h}h`;
  if (m) out += `${m}m`;
  if (s || !out) out += `${s}s`;
  return out;
}

interface Elem {
  key: string[];
  comment?: string;
  value?: string;
}

interface NftModel {
  family: 'ip' | 'ip6';
  addr: 'ipv4_addr' | 'ipv6_addr';
  ipX: 'ip' | 'ip6';
  /** Objects in creation order. */
  sets: { name: string; lines: string[]; elements: Elem[]; map: boolean; script: string }[];
  chains: { name: string; head: string[]; rules: string[]; script: string }[];
  /** The script, in transaction order. */
  script: string[];
}

const BASE_CHAINS: [string, string, string, number][] = [
  ['filter-prerouting', 'filter', 'prerouting', -110],
  ['filter-input', 'filter', 'input', -110],
  ['filter-forward', 'filter', 'forward', -110],
  ['filter-output', 'filter', 'output', -110],
  ['filter-output-post-dnat', 'filter', 'output', -90],
  ['nat-prerouting', 'nat', 'prerouting', -100],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
];

/**
 * How nft 1.0.6 lists kube-proxy's base-chain priorities: symbolic only where the value is a
 * standard one for that family/hook (`dstnat` for nat prerouting, `srcnat` for nat postrouting,
 * `dstnat - 10` for filter prerouting); the output/input/forward hooks get plain numbers.
 */
function priorityText(type: string, hook: string, prio: number): string {
  if (hook === 'prerouting' && prio === -100) return 'dstnat';
  if (hook === 'prerouting' && prio === -110) return 'dstnat - 10';
  if (hook === 'postrouting' && prio === 100) return 'srcnat';
  void type;
  return String(prio);
}

const modelCache = new WeakMap<Cluster, Map<string, NftModel>>();

/** Build (once per cluster and options) the objects kube-proxy's transaction creates. */
function build(cluster: Cluster, options: NftOptions): NftModel {
  const key = options.nodePortAddresses ?? 'primary';
  let byOpt = modelCache.get(cluster);
  if (!byOpt) {
    byOpt = new Map();
    modelCache.set(cluster, byOpt);
  }
  let m = byOpt.get(key);
  if (!m) {
    m = buildModel(cluster, options);
    byOpt.set(key, m);
  }
  return m;
}

function buildModel(cluster: Cluster, options: NftOptions): NftModel {
  const v6 = cluster.family === 6;
  const family = v6 ? 'ip6' : 'ip';
  const ipX = v6 ? 'ip6' : 'ip';
  const addr = v6 ? 'ipv6_addr' : 'ipv4_addr';
  const T = `${family} kube-proxy`;
  const m: NftModel = { family, addr, ipX, sets: [], chains: [], script: [] };
  const chains = new Map<string, NftModel['chains'][number]>();
  const sets = new Map<string, NftModel['sets'][number]>();
  const s = (line: string) => m.script.push(line);
  const addChain = (name: string, head: string[] = [], scriptExtra = '') => {
    if (chains.has(name)) return;
    const c = { name, head, rules: [] as string[], script: scriptExtra };
    chains.set(name, c);
    m.chains.push(c);
    // ensureChain(): add, then flush whatever an earlier sync left in it.
    s(`add chain ${T} ${name}${scriptExtra}`);
    s(`flush chain ${T} ${name}`);
  };
  const rule = (chain: string, text: string, listed: string = text) => {
    chains.get(chain)!.rules.push(listed);
    s(`add rule ${T} ${chain} ${text}`);
  };
  const addSet = (name: string, map: boolean, typeLine: string, extra: string[], scriptBody: string) => {
    const o = { name, lines: [typeLine, ...extra], elements: [] as Elem[], map, script: scriptBody };
    sets.set(name, o);
    m.sets.push(o);
    s(`add ${map ? 'map' : 'set'} ${T} ${name} { ${scriptBody} }`);
  };
  const element = (set: string, e: Elem) => {
    sets.get(set)!.elements.push(e);
    const c = e.comment !== undefined ? ` comment "${e.comment}"` : '';
    s(`add element ${T} ${set} { ${e.key.join(' . ')}${c}${e.value !== undefined ? ` : ${e.value}` : ''} }`);
  };

  s(`add table ${T} { comment "rules for kube-proxy" ; }`);
  for (const [name, type, hook, prio] of BASE_CHAINS) {
    addChain(name, [`type ${type} hook ${hook} priority ${priorityText(type, hook, prio)}; policy accept;`], ` { type ${type} hook ${hook} priority ${prio} ; }`);
  }
  const jumps: [string, string, string][] = [
    ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
    ['service-endpoints-check', 'filter-input', 'ct state new'],
    ['service-endpoints-check', 'filter-forward', 'ct state new'],
    ['service-endpoints-check', 'filter-output', 'ct state new'],
    ['firewall-check', 'filter-prerouting', 'ct state new'],
    ['firewall-check', 'filter-output', 'ct state new'],
    ['services', 'nat-output', ''],
    ['services', 'nat-prerouting', ''],
    ['masquerading', 'nat-postrouting', ''],
    ['cluster-ips-check', 'filter-forward', 'ct state new'],
    ['cluster-ips-check', 'filter-output-post-dnat', 'ct state new'],
  ];
  for (const [dst, src, extra] of jumps) {
    addChain(dst);
    rule(src, `${extra ? `${extra} ` : ''}jump ${dst}`);
  }
  for (const c of ['services', 'cluster-ips-check', 'masquerading', 'mark-for-masquerade']) addChain(c);
  rule('mark-for-masquerade', 'mark set mark or 0x4000', 'meta mark set meta mark | 0x00004000');
  rule('masquerading', 'mark and 0x4000 == 0 return', 'meta mark & 0x00004000 == 0x00000000 return');
  rule('masquerading', 'mark set mark xor 0x4000', 'meta mark set meta mark ^ 0x00004000');
  rule('masquerading', 'masquerade fully-random');
  addSet('cluster-ips', false, `type ${addr}`, ['comment "Active ClusterIPs"'], `type ${addr} ; comment "Active ClusterIPs" ;`);
  rule('cluster-ips-check', `${ipX} daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"`);
  rule('cluster-ips-check', `${ipX} daddr { ${cluster.serviceCIDR} } drop comment "Drop traffic to unallocated ClusterIPs"`, `${ipX} daddr ${cluster.serviceCIDR} drop comment "Drop traffic to unallocated ClusterIPs"`);
  const primary = (options.nodePortAddresses ?? 'primary') === 'primary';
  if (primary) {
    addSet('nodeport-ips', false, `type ${addr}`, ['comment "IPs that accept NodePort traffic"'], `type ${addr} ; comment "IPs that accept NodePort traffic" ;`);
    s(`flush set ${T} nodeport-ips`);
    element('nodeport-ips', { key: [cluster.node.ip] });
  } else {
    // "add+delete rather than just delete": deleting a set that may not exist would fail.
    s(`add set ${T} nodeport-ips { type ${addr} ; comment "IPs that accept NodePort traffic" ; }`);
    s(`delete set ${T} nodeport-ips`);
  }
  addSet('no-endpoint-services', true, `type ${addr} . inet_proto . inet_service : verdict`, ['comment "vmap to drop or reject packets to services with no endpoints"'], `type ${addr} . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ;`);
  addSet('no-endpoint-nodeports', true, 'type inet_proto . inet_service : verdict', ['comment "vmap to drop or reject packets to service nodeports with no endpoints"'], 'type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ;');
  addChain('reject-chain', ['comment "helper for @no-endpoint-services / @no-endpoint-nodeports"'], ' { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }');
  rule('reject-chain', 'reject');
  rule('service-endpoints-check', `${ipX} daddr . meta l4proto . th dport vmap @no-endpoint-services`);
  const noLocalhost = v6 ? 'ip6 daddr != ::1' : 'ip daddr != 127.0.0.0/8';
  if (primary) rule('nodeport-endpoints-check', `${ipX} daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports`);
  else rule('nodeport-endpoints-check', `${noLocalhost} meta l4proto . th dport vmap @no-endpoint-nodeports`);
  addSet('firewall-ips', true, `type ${addr} . inet_proto . inet_service : verdict`, ['comment "destinations that are subject to LoadBalancerSourceRanges"'], `type ${addr} . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ;`);
  rule('firewall-check', `${ipX} daddr . meta l4proto . th dport vmap @firewall-ips`);
  addSet('service-ips', true, `type ${addr} . inet_proto . inet_service : verdict`, ['comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"'], `type ${addr} . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ;`);
  addSet('service-nodeports', true, 'type inet_proto . inet_service : verdict', ['comment "NodePort traffic"'], 'type inet_proto . inet_service : verdict ; comment "NodePort traffic" ;');
  rule('services', `${ipX} daddr . meta l4proto . th dport vmap @service-ips`);
  if (primary) rule('services', `${ipX} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`);
  else rule('services', `fib daddr type local ${noLocalhost} meta l4proto . th dport vmap @service-nodeports`);

  // "We currently fully-rebuild our sets and maps on each resync."
  for (const name of ['cluster-ips', 'firewall-ips', 'no-endpoint-services', 'no-endpoint-nodeports', 'service-ips', 'service-nodeports']) s(`flush ${sets.get(name)!.map ? 'map' : 'set'} ${T} ${name}`);
  const clusterIPsSeen = new Set<string>();
  for (const ref of cluster.syncOrder) writeServicePort(cluster, planPort(cluster, ref.service, ref.port), { addChain, rule, addSet, element, clusterIPsSeen, ipX, addr });
  return m;
}

interface W {
  addChain(name: string): void;
  rule(chain: string, text: string, listed?: string): void;
  addSet(name: string, map: boolean, typeLine: string, extra: string[], scriptBody: string): void;
  element(set: string, e: Elem): void;
  clusterIPsSeen: Set<string>;
  ipX: string;
  addr: string;
}

function writeServicePort(cluster: Cluster, p: PortPlan, w: W): void {
  const proto = p.port.protocol;
  const base = nftServiceChainBase(p);
  const svcChain = `service-${base}`;
  const localChain = `local-${base}`;
  const extChain = `external-${base}`;
  const fwChain = `firewall-${base}`;
  const epChain = (ip: string, port: number) => `endpoint-${nftEndpointChainBase(p, ip, port)}`;
  const affSet = (ip: string, port: number) => `affinity-${nftEndpointChainBase(p, ip, port)}`;
  const svc = p.svc;
  const dport = String(p.port.port);

  for (const ep of p.reachableEndpoints) w.addChain(epChain(ep.ip, ep.port));
  if (p.usesClusterPolicyChain) w.addChain(svcChain);
  if (p.usesLocalPolicyChain) w.addChain(localChain);
  const internalTrafficChain = p.internalPolicyLocal ? localChain : svcChain;
  const externalPolicyChain = p.externalPolicyLocal ? localChain : svcChain;
  if (p.usesExternalTrafficChain) w.addChain(extChain);

  let internalVerdict = '';
  let externalVerdict = '';
  if (!p.hasEndpoints) internalVerdict = externalVerdict = 'goto reject-chain';
  else {
    if (!p.hasInternalEndpoints) internalVerdict = 'drop';
    if (!p.hasExternalEndpoints) externalVerdict = 'drop';
  }
  if (!w.clusterIPsSeen.has(svc.clusterIP)) {
    w.clusterIPsSeen.add(svc.clusterIP);
    w.element('cluster-ips', { key: [svc.clusterIP] });
  }
  if (p.hasInternalEndpoints) w.element('service-ips', { key: [svc.clusterIP, proto, dport], value: `goto ${internalTrafficChain}` });
  else w.element('no-endpoint-services', { key: [svc.clusterIP, proto, dport], value: internalVerdict, comment: p.spn });
  for (const ip of svc.externalIPs) {
    if (p.hasEndpoints) w.element('service-ips', { key: [ip, proto, dport], value: `goto ${extChain}` });
    if (!p.hasExternalEndpoints) w.element('no-endpoint-services', { key: [ip, proto, dport], value: externalVerdict, comment: p.spn });
  }
  const usesFW = svc.loadBalancerIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;
  if (usesFW) w.addChain(fwChain);
  for (const ip of svc.loadBalancerIPs) {
    if (p.hasEndpoints) w.element('service-ips', { key: [ip, proto, dport], value: `goto ${extChain}` });
    if (usesFW) w.element('firewall-ips', { key: [ip, proto, dport], value: `goto ${fwChain}` });
  }
  if (!p.hasExternalEndpoints) for (const ip of svc.loadBalancerIPs) w.element('no-endpoint-services', { key: [ip, proto, dport], value: externalVerdict, comment: p.spn });
  if (p.port.nodePort !== null) {
    if (p.hasEndpoints) w.element('service-nodeports', { key: [proto, String(p.port.nodePort)], value: `goto ${extChain}` });
    if (!p.hasExternalEndpoints) w.element('no-endpoint-nodeports', { key: [proto, String(p.port.nodePort)], value: externalVerdict, comment: p.spn });
  }

  if (p.hasInternalEndpoints) {
    w.rule(internalTrafficChain, `${w.ipX} daddr ${svc.clusterIP} ${proto} dport ${dport} ${w.ipX} saddr != ${cluster.clusterCIDR} jump mark-for-masquerade`);
  }
  if (p.usesExternalTrafficChain) {
    if (!p.externalPolicyLocal) w.rule(extChain, 'jump mark-for-masquerade');
    else {
      w.rule(extChain, `${w.ipX} saddr ${cluster.clusterCIDR} goto ${svcChain} comment "short-circuit pod traffic"`);
      w.rule(extChain, 'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"');
      w.rule(extChain, `fib saddr type local goto ${svcChain} comment "short-circuit local traffic"`);
    }
    if (p.hasExternalEndpoints) w.rule(extChain, `goto ${externalPolicyChain}`);
  }
  if (usesFW) {
    const sources = [...svc.loadBalancerSourceRanges];
    if (p.allowFromNode) appendAll(sources, svc.loadBalancerIPs);
    const listed = mergeIntervals(sources);
    w.rule(fwChain, `${w.ipX} saddr != { ${sources.join(', ')} } drop`, `${w.ipX} saddr != ${listed.length === 1 ? listed[0] : `{ ${listed.join(', ')} }`} drop`);
  }
  if (svc.sessionAffinity) {
    for (const ep of p.reachableEndpoints) {
      w.addSet(affSet(ep.ip, ep.port), false, `type ${w.addr}`, ['size 65535', 'flags dynamic,timeout', `timeout ${nftDuration(svc.sessionAffinity.timeoutSeconds)}`], `type ${w.addr} ; flags dynamic,timeout ; timeout ${svc.sessionAffinity.timeoutSeconds}s ;`);
    }
  }
  const toEndpoints = (chain: string, eps: PortPlan['clusterEndpoints']) => {
    if (svc.sessionAffinity) for (const ep of eps) w.rule(chain, `${w.ipX} saddr @${affSet(ep.ip, ep.port)} goto ${epChain(ep.ip, ep.port)}`);
    const els = eps.map((ep, i) => `${i} : goto ${epChain(ep.ip, ep.port)}`).join(', ');
    w.rule(chain, `numgen random mod ${eps.length} vmap { ${els} }`);
  };
  if (p.usesClusterPolicyChain) toEndpoints(svcChain, p.clusterEndpoints);
  if (p.usesLocalPolicyChain) toEndpoints(localChain, p.localEndpoints);
  for (const ep of p.reachableEndpoints) {
    const c = epChain(ep.ip, ep.port);
    w.rule(c, `${w.ipX} saddr ${ep.ip} jump mark-for-masquerade`);
    if (svc.sessionAffinity) w.rule(c, `update @${affSet(ep.ip, ep.port)} { ${w.ipX} saddr }`);
    w.rule(c, `meta l4proto ${proto} dnat to ${joinHostPort(ep.ip, ep.port)}`);
  }
}

/**
 * An anonymous interval set as nft lists it: overlapping/adjacent prefixes merged, each merged
 * interval printed as a prefix when it is one (a host prefix as the bare address), else `a-b`.
 */
function mergeIntervals(cidrs: string[]): string[] {
  const v6 = isV6(cidrs[0].split('/')[0]);
  const bits = v6 ? 128n : 32n;
  const toBig = (a: string) => (v6 ? v6FromString(a) : BigInt(v4FromString(a)));
  const toText = (v: bigint) => (v6 ? v6ToString(v) : v4ToString(Number(v)));
  const iv = cidrs
    .map((c) => {
      const [a, l] = c.split('/');
      const len = BigInt(l ?? bits);
      const size = 1n << (bits - len);
      const start = (toBig(a) / size) * size;
      return [start, start + size - 1n] as [bigint, bigint];
    })
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const [s0, e0] of iv) {
    const last = merged[merged.length - 1];
    if (last && s0 <= last[1] + 1n) {
      if (e0 > last[1]) last[1] = e0;
    } else merged.push([s0, e0]);
  }
  return merged.map(([s0, e0]) => {
    const size = e0 - s0 + 1n;
    let len = bits;
    let sz = 1n;
    while (sz < size) {
      sz <<= 1n;
      len -= 1n;
    }
    if (sz === size && s0 % size === 0n) return len === bits ? toText(s0) : `${toText(s0)}/${len}`;
    return `${toText(s0)}-${toText(e0)}`;
  });
}

const PROTO_NUM: Record<string, number> = { tcp: 6, udp: 17, sctp: 132 };

/** The key's bytes as nft stores a concatenation: each field padded to a 4-byte register. */
function keyBytes(key: string[]): number[] {
  const out: number[] = [];
  for (const f of key) {
    if (f in PROTO_NUM) out.push(PROTO_NUM[f], 0, 0, 0);
    else if (/^\d+$/.test(f)) {
      const n = Number(f);
      out.push((n >> 8) & 255, n & 255, 0, 0);
    } else if (isV6(f)) {
      const v = v6FromString(f);
      for (let i = 15; i >= 0; i--) out.push(Number((v >> BigInt(i * 8)) & 255n));
    } else {
      const v = v4FromString(f);
      out.push((v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255);
    }
  }
  return out;
}

/**
 * The order nft lists set elements in (it sorts them with mpz comparisons): a single address
 * field sorts numerically; a concatenation's value is read in host (little-endian) byte order,
 * so the LAST byte is the most significant (port low byte, port high byte, protocol, address…).
 */
function sortKey(key: string[]): string {
  if (key.length === 1) {
    const f = key[0];
    return isV6(f) ? v6FromString(f).toString(16).padStart(32, '0') : v4FromString(f).toString(16).padStart(8, '0');
  }
  const b = keyBytes(key);
  let out = '';
  for (let i = b.length - 1; i >= 0; i--) out += String.fromCharCode(65 + (b[i] >> 4), 65 + (b[i] & 15));
  return out;
}

/** Elements in nft's listing order (keys computed once, then a plain string sort). */
function sortElements(els: Elem[]): Elem[] {
  const keyed = els.map((e) => ({ k: sortKey(e.key), e }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  return keyed.map((x) => x.e);
}

export function writeNftScript(cluster: Cluster, options: NftOptions, sink: Sink): void {
  const m = build(cluster, options);
  const w = new ChunkWriter(sink);
  w.lines(m.script);
  w.flush();
}

export function nftScript(cluster: Cluster, options: NftOptions = {}): string {
  return collect((sink) => writeNftScript(cluster, options, sink));
}

const ELEMENT_INDENT = '\t\t\t     ';

function formatElement(e: Elem): string {
  const c = e.comment !== undefined ? ` comment "${e.comment}"` : '';
  return `${e.key.join(' . ')}${c}${e.value !== undefined ? ` : ${e.value}` : ''}`;
}

export function writeNftListing(cluster: Cluster, options: NftOptions, sink: Sink): void {
  const m = build(cluster, options);
  const w = new ChunkWriter(sink);
  w.line(`table ${m.family} kube-proxy {`);
  w.line('\tcomment "rules for kube-proxy"');
  let first = true;
  for (const set of m.sets) {
    if (!first) w.line('');
    first = false;
    w.line(`\t${set.map ? 'map' : 'set'} ${set.name} {`);
    for (const l of set.lines) w.line(`\t\t${l}`);
    if (set.elements.length > 0) {
      const els = sortElements(set.elements).map(formatElement);
      if (set.map) {
        // Maps: one element per line.
        w.line(`\t\telements = { ${els.join(`,\n${ELEMENT_INDENT}`)} }`);
      } else {
        w.line(`\t\telements = { ${wrapSetElements(els, m.family === 'ip6')} }`);
      }
    }
    w.line('\t}');
  }
  for (const c of m.chains) {
    if (!first) w.line('');
    first = false;
    w.line(`\tchain ${c.name} {`);
    for (const h of c.head) w.line(`\t\t${h}`);
    for (const r of c.rules) w.line(`\t\t${r}`);
    w.line('\t}');
  }
  w.line('}');
  w.flush();
}

/**
 * nftables src/expression.c calculate_delim(): named sets of IPv4 addresses print two elements
 * per line; other key types (IPv6 addresses, concatenations, maps) one per line.
 */
function wrapSetElements(els: string[], v6: boolean): string {
  if (v6) return els.join(`,\n${ELEMENT_INDENT}`);
  const lines: string[] = [];
  for (let i = 0; i < els.length; i += 2) lines.push(els.slice(i, i + 2).join(', '));
  return lines.join(`,\n${ELEMENT_INDENT}`);
}

export function nftListing(cluster: Cluster, options: NftOptions = {}): string {
  return collect((sink) => writeNftListing(cluster, options, sink));
}
