/**
 * kube-proxy nftables mode for the generated cluster, in any layout since 1.29 (nft-layout.ts says
 * which release wrote what, and where that is read from), in two forms:
 *  - `nftScript()`: the `nft -f` transaction kube-proxy's first full sync runs (knftables
 *    style: `add` then `flush` of every chain it ensures, `add`+`flush` (or `add`+`delete`) of
 *    nodeport-ips, `flush` of the dispatch maps before their elements are written);
 *  - `nftListing()`: what `nft list table ip kube-proxy` (nftables 1.0.6) prints once it is loaded.
 * Source: kubernetes pkg/proxy/nftables/proxier.go (setupNFTables, syncProxyRules,
 * writeServiceToEndpointRules) at the commits nft-layout.ts cites; listing layout from nftables
 * src/rule.c and observed output.
 */
import { type Cluster, planPort, type PortPlan } from './cluster.js';
import { DEFAULT_NFT_LAYOUT, nftLayout, nftLayoutFor, type NftLayout, type NftLayoutId } from './nft-layout.js';
import { ChunkWriter, collect, isV6, joinHostPort, sha256Base32, type Sink, v4FromString, v4ToString, v6FromString, v6ToString } from './util.js';

export interface NftOptions {
  /** kube-proxy --nodeport-addresses: 'primary' (the node IP) or 'all'; unset: the layout's default. */
  nodePortAddresses?: 'primary' | 'all';
  /** The kube-proxy release whose layout to write (`1.31`, `v1.36.2`); see nft-layout.ts. */
  kubeProxyVersion?: string;
  /** The layout itself (wins over kubeProxyVersion). Default: DEFAULT_NFT_LAYOUT. */
  nftLayout?: NftLayoutId;
}

/** The layout these options select (a version before 1.29 or not a version is an error). */
export function nftLayoutOf(options: NftOptions): NftLayout {
  if (options.nftLayout) return nftLayout(options.nftLayout);
  if (options.kubeProxyVersion === undefined) return nftLayout(DEFAULT_NFT_LAYOUT);
  const id = nftLayoutFor(options.kubeProxyVersion);
  if (!id) throw new Error(`kube-proxy ${options.kubeProxyVersion}: no nftables layout (nftables mode exists from 1.29)`);
  return nftLayout(id);
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

/**
 * How nft 1.0.6 lists kube-proxy's base-chain priorities: symbolic only where the value is a
 * standard one for that family/hook (`dstnat` for nat prerouting, `srcnat` for nat postrouting,
 * `dstnat - 10` for filter prerouting, `filter` for 0); the output hook's -110/-90 are plain numbers.
 */
function priorityText(hook: string, prio: number): string {
  if (prio === 0) return 'filter';
  if (hook === 'prerouting' && prio === -100) return 'dstnat';
  if (hook === 'prerouting' && prio === -110) return 'dstnat - 10';
  if (hook === 'postrouting' && prio === 100) return 'srcnat';
  return String(prio);
}

const modelCache = new WeakMap<Cluster, Map<string, NftModel>>();

/** Build (once per cluster and options) the objects kube-proxy's transaction creates. */
function build(cluster: Cluster, options: NftOptions): NftModel {
  const layout = nftLayoutOf(options);
  const npa = options.nodePortAddresses ?? layout.defaultNodePortAddresses;
  const key = `${layout.id}/${npa}`;
  let byOpt = modelCache.get(cluster);
  if (!byOpt) {
    byOpt = new Map();
    modelCache.set(cluster, byOpt);
  }
  let m = byOpt.get(key);
  if (!m) {
    m = buildModel(cluster, layout, npa === 'primary');
    byOpt.set(key, m);
  }
  return m;
}

/** The transaction being written: its objects and the `add …` lines, in order. */
interface Tx {
  readonly m: NftModel;
  readonly layout: NftLayout;
  readonly cluster: Cluster;
  readonly T: string;
  /** The layout writes the mark inline (`mark set mark or 0x4000`) instead of `jump mark-for-masquerade`. */
  readonly masq: string;
  readonly masqListed: string;
  s(line: string): void;
  addChain(name: string, head?: string[], scriptExtra?: string): void;
  rule(chain: string, text: string, listed?: string): void;
  addSet(name: string, map: boolean, typeLine: string, extra: string[], scriptBody: string): void;
  element(set: string, e: Elem): void;
  hasSet(name: string): boolean;
}

function newTx(cluster: Cluster, layout: NftLayout): Tx {
  const v6 = cluster.family === 6;
  const m: NftModel = { family: v6 ? 'ip6' : 'ip', addr: v6 ? 'ipv6_addr' : 'ipv4_addr', ipX: v6 ? 'ip6' : 'ip', sets: [], chains: [], script: [] };
  const T = `${m.family} kube-proxy`;
  const chains = new Map<string, NftModel['chains'][number]>();
  const sets = new Map<string, NftModel['sets'][number]>();
  const s = (line: string) => m.script.push(line);
  const inline = layout.masquerade === 'inline';
  return {
    m,
    layout,
    cluster,
    T,
    masq: inline ? 'mark set mark or 0x4000' : 'jump mark-for-masquerade',
    masqListed: inline ? 'meta mark set meta mark | 0x00004000' : 'jump mark-for-masquerade',
    s,
    addChain(name, head = [], scriptExtra = '') {
      if (chains.has(name)) return;
      const c = { name, head, rules: [] as string[], script: scriptExtra };
      chains.set(name, c);
      m.chains.push(c);
      // ensureChain(): add, then flush whatever an earlier sync left in it.
      s(`add chain ${T} ${name}${scriptExtra}`);
      s(`flush chain ${T} ${name}`);
    },
    rule(chain, text, listed = text) {
      chains.get(chain)!.rules.push(listed);
      s(`add rule ${T} ${chain} ${text}`);
    },
    addSet(name, map, typeLine, extra, scriptBody) {
      const o = { name, lines: [typeLine, ...extra], elements: [] as Elem[], map, script: scriptBody };
      sets.set(name, o);
      m.sets.push(o);
      s(`add ${map ? 'map' : 'set'} ${T} ${name} { ${scriptBody} }`);
    },
    element(set, e) {
      sets.get(set)!.elements.push(e);
      const c = e.comment !== undefined ? ` comment "${e.comment}"` : '';
      s(`add element ${T} ${set} { ${e.key.join(' . ')}${c}${e.value !== undefined ? ` : ${e.value}` : ''} }`);
    },
    hasSet: (name) => sets.has(name),
  };
}

function buildModel(cluster: Cluster, layout: NftLayout, primary: boolean): NftModel {
  const tx = newTx(cluster, layout);
  setupBaseChains(tx);
  setupMasquerade(tx);
  if (layout.clusterIPs) setupClusterIPs(tx);
  setupNodePortIPs(tx, primary);
  setupNoEndpoints(tx, primary);
  setupDispatch(tx, primary);
  // "We currently fully-rebuild our sets and maps on each resync" (1.29); 1.30+: nftElementStorage.reset().
  const flushed = layout.clusterIPs
    ? ['cluster-ips', 'service-ips', 'firewall-ips', 'no-endpoint-services', 'no-endpoint-nodeports', 'service-nodeports']
    : ['firewall-ips', 'no-endpoint-services', 'no-endpoint-nodeports', 'service-ips', 'service-nodeports'];
  if (layout.masquerade === 'inline') flushed.push(HAIRPIN_SET);
  for (const name of flushed) tx.s(`flush ${tx.m.sets.find((x) => x.name === name)!.map ? 'map' : 'set'} ${tx.T} ${name}`);
  const seen = { clusterIPs: new Set<string>(), hairpin: new Set<string>() };
  for (const ref of cluster.syncOrder) writeServicePort(tx, planPort(cluster, ref.service, ref.port), seen);
  return tx.m;
}

const HAIRPIN_SET = 'hairpin-connections';

/** The table, its base chains, and the jumps from them (setupNFTables()). */
function setupBaseChains(tx: Tx): void {
  const { layout, T } = tx;
  tx.s(`add table ${T} { comment "rules for kube-proxy" ; }`);
  // 1.30+ (#123162): "add+delete" once so a base chain whose priority changed is recreated.
  if (layout.recreateBaseChains) {
    for (const [name] of layout.baseChains) {
      tx.s(`add chain ${T} ${name}`);
      tx.s(`delete chain ${T} ${name}`);
    }
  }
  for (const [name, type, hook, prio] of layout.baseChains) {
    tx.addChain(name, [`type ${type} hook ${hook} priority ${priorityText(hook, prio)}; policy accept;`], ` { type ${type} hook ${hook} priority ${prio} ; }`);
  }
  for (const [dst, src, extra] of layout.jumps) {
    tx.addChain(dst);
    tx.rule(src, `${extra ? `${extra} ` : ''}jump ${dst}`);
  }
  const top = ['services', ...(layout.clusterIPs ? ['cluster-ips-check'] : []), 'masquerading', ...(layout.masquerade === 'chain' ? ['mark-for-masquerade'] : [])];
  for (const c of top) tx.addChain(c);
}

/** mark-for-masquerade + masquerading (≤1.35), or masquerading with the hairpin set (1.36+). */
function setupMasquerade(tx: Tx): void {
  const { m } = tx;
  if (tx.layout.masquerade === 'chain') {
    tx.rule('mark-for-masquerade', 'mark set mark or 0x4000', 'meta mark set meta mark | 0x00004000');
    tx.rule('masquerading', 'mark and 0x4000 == 0 return', 'meta mark & 0x00004000 == 0x00000000 return');
    tx.rule('masquerading', 'mark set mark xor 0x4000', 'meta mark set meta mark ^ 0x00004000');
    tx.rule('masquerading', 'masquerade fully-random');
    return;
  }
  const type = `${m.addr} . ${m.addr} . inet_proto . inet_service`;
  tx.addSet(HAIRPIN_SET, false, `type ${type}`, ['comment "service hairpin connections"'], `type ${type} ; comment "service hairpin connections" ;`);
  tx.rule('masquerading', 'mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random', 'meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random');
  tx.rule('masquerading', `ct status dnat ${m.ipX} saddr . ${m.ipX} daddr . meta l4proto . th dport @${HAIRPIN_SET} masquerade fully-random`);
}

function setupClusterIPs(tx: Tx): void {
  const { m, cluster } = tx;
  tx.addSet('cluster-ips', false, `type ${m.addr}`, ['comment "Active ClusterIPs"'], `type ${m.addr} ; comment "Active ClusterIPs" ;`);
  tx.rule('cluster-ips-check', `${m.ipX} daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"`);
  tx.rule('cluster-ips-check', `${m.ipX} daddr { ${cluster.serviceCIDR} } drop comment "Drop traffic to unallocated ClusterIPs"`, `${m.ipX} daddr ${cluster.serviceCIDR} drop comment "Drop traffic to unallocated ClusterIPs"`);
}

function setupNodePortIPs(tx: Tx, primary: boolean): void {
  const { m, T } = tx;
  if (primary) {
    tx.addSet('nodeport-ips', false, `type ${m.addr}`, ['comment "IPs that accept NodePort traffic"'], `type ${m.addr} ; comment "IPs that accept NodePort traffic" ;`);
    tx.s(`flush set ${T} nodeport-ips`);
    tx.element('nodeport-ips', { key: [tx.cluster.node.ip] });
  } else {
    // "add+delete rather than just delete": deleting a set that may not exist would fail.
    tx.s(`add set ${T} nodeport-ips { type ${m.addr} ; comment "IPs that accept NodePort traffic" ; }`);
    tx.s(`delete set ${T} nodeport-ips`);
  }
}

const noLocalhostOf = (m: NftModel) => (m.family === 'ip6' ? 'ip6 daddr != ::1' : 'ip daddr != 127.0.0.0/8');

/** The no-endpoint maps, reject-chain, and the check chain(s) that apply them. */
function setupNoEndpoints(tx: Tx, primary: boolean): void {
  const { m, layout } = tx;
  const ipType = `${m.addr} . inet_proto . inet_service : verdict`;
  tx.addSet('no-endpoint-services', true, `type ${ipType}`, ['comment "vmap to drop or reject packets to services with no endpoints"'], `type ${ipType} ; comment "vmap to drop or reject packets to services with no endpoints" ;`);
  tx.addSet('no-endpoint-nodeports', true, 'type inet_proto . inet_service : verdict', ['comment "vmap to drop or reject packets to service nodeports with no endpoints"'], 'type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ;');
  tx.addChain('reject-chain', ['comment "helper for @no-endpoint-services / @no-endpoint-nodeports"'], ' { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }');
  tx.rule('reject-chain', 'reject');
  const combined = layout.endpointsCheck === 'combined';
  const svcCheck = combined ? 'endpoints-check' : 'service-endpoints-check';
  const npCheck = combined ? 'endpoints-check' : 'nodeport-endpoints-check';
  tx.rule(svcCheck, `${m.ipX} daddr . meta l4proto . th dport vmap @no-endpoint-services`);
  const noLocalhost = noLocalhostOf(m);
  // 1.29's endpoints-check also ran in forward/output, hence `fib daddr type local` there.
  if (primary) tx.rule(npCheck, `${m.ipX} daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports`);
  else tx.rule(npCheck, `${combined ? 'fib daddr type local ' : ''}${noLocalhost} meta l4proto . th dport vmap @no-endpoint-nodeports`);
}

/** firewall-ips + firewall-check, service-ips / service-nodeports + services. */
function setupDispatch(tx: Tx, primary: boolean): void {
  const { m, layout, cluster } = tx;
  const ipType = `${m.addr} . inet_proto . inet_service : verdict`;
  tx.addSet('firewall-ips', true, `type ${ipType}`, ['comment "destinations that are subject to LoadBalancerSourceRanges"'], `type ${ipType} ; comment "destinations that are subject to LoadBalancerSourceRanges" ;`);
  tx.rule('firewall-check', `${m.ipX} daddr . meta l4proto . th dport vmap @firewall-ips`);
  tx.addSet('service-ips', true, `type ${ipType}`, ['comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"'], `type ${ipType} ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ;`);
  tx.addSet('service-nodeports', true, 'type inet_proto . inet_service : verdict', ['comment "NodePort traffic"'], 'type inet_proto . inet_service : verdict ; comment "NodePort traffic" ;');
  if (layout.masquerade === 'inline') {
    // 1.36 (#136499): one rule instead of a masquerade rule in every service chain.
    tx.rule('services', `${m.ipX} daddr @cluster-ips ${m.ipX} saddr != ${cluster.clusterCIDR} ${tx.masq} comment "masquerade clusterIP traffic from outside cluster"`, `${m.ipX} daddr @cluster-ips ${m.ipX} saddr != ${cluster.clusterCIDR} ${tx.masqListed} comment "masquerade clusterIP traffic from outside cluster"`);
  }
  tx.rule('services', `${m.ipX} daddr . meta l4proto . th dport vmap @service-ips`);
  if (primary) tx.rule('services', `${m.ipX} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`);
  else tx.rule('services', `fib daddr type local ${noLocalhostOf(m)} meta l4proto . th dport vmap @service-nodeports`);
}

interface Seen {
  clusterIPs: Set<string>;
  hairpin: Set<string>;
}

/** The chain names of one Service port. */
function chainNames(p: PortPlan) {
  const base = nftServiceChainBase(p);
  return {
    svc: `service-${base}`,
    local: `local-${base}`,
    ext: `external-${base}`,
    fw: `firewall-${base}`,
    ep: (ip: string, port: number) => `endpoint-${nftEndpointChainBase(p, ip, port)}`,
    aff: (ip: string, port: number) => `affinity-${nftEndpointChainBase(p, ip, port)}`,
  };
}

/** syncProxyRules()' body for one Service port: chains first, map elements, then rules. */
function writeServicePort(tx: Tx, p: PortPlan, seen: Seen): void {
  const n = chainNames(p);
  const svc = p.svc;
  const epChains = tx.layout.endpointChains === 'all' || svc.sessionAffinity !== null;
  for (const ep of p.reachableEndpoints) {
    if (epChains) tx.addChain(n.ep(ep.ip, ep.port));
    if (tx.layout.masquerade === 'inline') {
      // #136499: "Add endpoint to the hairpin set" (every locally reachable endpoint).
      const key = [ep.ip, ep.ip, p.port.protocol, String(ep.port)];
      if (!seen.hairpin.has(key.join(' '))) {
        seen.hairpin.add(key.join(' '));
        tx.element(HAIRPIN_SET, { key });
      }
    }
  }
  if (p.usesClusterPolicyChain) tx.addChain(n.svc);
  if (p.usesLocalPolicyChain) tx.addChain(n.local);
  if (p.usesExternalTrafficChain) tx.addChain(n.ext);
  writeElements(tx, p, n, seen);
  writeRules(tx, p, n, epChains);
}

function writeElements(tx: Tx, p: PortPlan, n: ReturnType<typeof chainNames>, seen: Seen): void {
  const svc = p.svc;
  const proto = p.port.protocol;
  const dport = String(p.port.port);
  const internalChain = p.internalPolicyLocal ? n.local : n.svc;
  let internalVerdict = '';
  let externalVerdict = '';
  if (!p.hasEndpoints) internalVerdict = externalVerdict = 'goto reject-chain';
  else {
    if (!p.hasInternalEndpoints) internalVerdict = 'drop';
    if (!p.hasExternalEndpoints) externalVerdict = 'drop';
  }
  if (tx.layout.clusterIPs && !seen.clusterIPs.has(svc.clusterIP)) {
    seen.clusterIPs.add(svc.clusterIP);
    tx.element('cluster-ips', { key: [svc.clusterIP] });
  }
  if (p.hasInternalEndpoints) tx.element('service-ips', { key: [svc.clusterIP, proto, dport], value: `goto ${internalChain}` });
  else tx.element('no-endpoint-services', { key: [svc.clusterIP, proto, dport], value: internalVerdict, comment: p.spn });
  for (const ip of svc.externalIPs) {
    if (p.hasEndpoints) tx.element('service-ips', { key: [ip, proto, dport], value: `goto ${n.ext}` });
    if (!p.hasExternalEndpoints) tx.element('no-endpoint-services', { key: [ip, proto, dport], value: externalVerdict, comment: p.spn });
  }
  const usesFW = svc.loadBalancerIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0;
  if (usesFW) tx.addChain(n.fw);
  for (const ip of svc.loadBalancerIPs) {
    if (p.hasEndpoints) tx.element('service-ips', { key: [ip, proto, dport], value: `goto ${n.ext}` });
    if (usesFW) tx.element('firewall-ips', { key: [ip, proto, dport], value: `goto ${n.fw}`, ...(tx.layout.firewallElementComment ? { comment: p.spn } : {}) });
  }
  if (!p.hasExternalEndpoints) for (const ip of svc.loadBalancerIPs) tx.element('no-endpoint-services', { key: [ip, proto, dport], value: externalVerdict, comment: p.spn });
  if (p.port.nodePort !== null) {
    if (p.hasEndpoints) tx.element('service-nodeports', { key: [proto, String(p.port.nodePort)], value: `goto ${n.ext}` });
    if (!p.hasExternalEndpoints) tx.element('no-endpoint-nodeports', { key: [proto, String(p.port.nodePort)], value: externalVerdict, comment: p.spn });
  }
}

function writeRules(tx: Tx, p: PortPlan, n: ReturnType<typeof chainNames>, epChains: boolean): void {
  const { m, cluster } = tx;
  const svc = p.svc;
  const proto = p.port.protocol;
  const internalChain = p.internalPolicyLocal ? n.local : n.svc;
  const externalPolicyChain = p.externalPolicyLocal ? n.local : n.svc;
  // ≤1.35: the masquerade rule of internal traffic sits in the service chain; 1.36 moved it to `services`.
  if (p.hasInternalEndpoints && tx.layout.masquerade === 'chain') {
    tx.rule(internalChain, `${m.ipX} daddr ${svc.clusterIP} ${proto} dport ${p.port.port} ${m.ipX} saddr != ${cluster.clusterCIDR} jump mark-for-masquerade`);
  }
  if (p.usesExternalTrafficChain) {
    if (!p.externalPolicyLocal) tx.rule(n.ext, tx.masq, tx.masqListed);
    else {
      tx.rule(n.ext, `${m.ipX} saddr ${cluster.clusterCIDR} goto ${n.svc} comment "short-circuit pod traffic"`);
      tx.rule(n.ext, `fib saddr type local ${tx.masq} comment "masquerade local traffic"`, `fib saddr type local ${tx.masqListed} comment "masquerade local traffic"`);
      tx.rule(n.ext, `fib saddr type local goto ${n.svc} comment "short-circuit local traffic"`);
    }
    if (p.hasExternalEndpoints) tx.rule(n.ext, `goto ${externalPolicyChain}`);
  }
  if (svc.loadBalancerIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0) {
    const sources = [...svc.loadBalancerSourceRanges];
    if (p.allowFromNode) sources.push(...svc.loadBalancerIPs);
    const listed = mergeIntervals(sources);
    tx.rule(n.fw, `${m.ipX} saddr != { ${sources.join(', ')} } drop`, `${m.ipX} saddr != ${listed.length === 1 ? listed[0] : `{ ${listed.join(', ')} }`} drop`);
  }
  if (svc.sessionAffinity) {
    for (const ep of p.reachableEndpoints) {
      tx.addSet(n.aff(ep.ip, ep.port), false, `type ${m.addr}`, ['size 65535', 'flags dynamic,timeout', `timeout ${nftDuration(svc.sessionAffinity.timeoutSeconds)}`], `type ${m.addr} ; flags dynamic,timeout ; timeout ${svc.sessionAffinity.timeoutSeconds}s ;`);
    }
  }
  if (p.usesClusterPolicyChain) writeServiceToEndpointRules(tx, p, n, n.svc, p.clusterEndpoints, epChains);
  if (p.usesLocalPolicyChain) writeServiceToEndpointRules(tx, p, n, n.local, p.localEndpoints, epChains);
  if (!epChains) return;
  for (const ep of p.reachableEndpoints) {
    const c = n.ep(ep.ip, ep.port);
    // 1.36+: the hairpin set does what this rule did.
    if (tx.layout.masquerade === 'chain') tx.rule(c, `${m.ipX} saddr ${ep.ip} jump mark-for-masquerade`);
    if (svc.sessionAffinity) tx.rule(c, `update @${n.aff(ep.ip, ep.port)} { ${m.ipX} saddr }`);
    tx.rule(c, `meta l4proto ${proto} dnat to ${joinHostPort(ep.ip, ep.port)}`);
  }
}

/**
 * writeServiceToEndpointRules(): affinity gotos, then the numgen split — to endpoint chains, or
 * (1.36+, no affinity) a DNAT map, or (1.37+) a plain DNAT for a lone endpoint.
 */
function writeServiceToEndpointRules(tx: Tx, p: PortPlan, n: ReturnType<typeof chainNames>, chain: string, eps: PortPlan['clusterEndpoints'], epChains: boolean): void {
  const { m } = tx;
  const proto = p.port.protocol;
  if (epChains) {
    if (p.svc.sessionAffinity) for (const ep of eps) tx.rule(chain, `${m.ipX} saddr @${n.aff(ep.ip, ep.port)} goto ${n.ep(ep.ip, ep.port)}`);
    const els = eps.map((ep, i) => `${i} : goto ${n.ep(ep.ip, ep.port)}`).join(', ');
    tx.rule(chain, `numgen random mod ${eps.length} vmap { ${els} }`);
    return;
  }
  if (eps.length === 1 && tx.layout.singleEndpoint === 'direct') {
    tx.rule(chain, `meta l4proto ${proto} dnat to ${joinHostPort(eps[0].ip, eps[0].port)}`);
    return;
  }
  const els = eps.map((ep, i) => `${i} : ${ep.ip} . ${ep.port}`);
  tx.rule(chain, `meta l4proto ${proto} dnat ${m.ipX} addr . port to numgen random mod ${eps.length} map { ${els.join(' , ')} }`, `meta l4proto ${proto} dnat ${m.ipX} to numgen random mod ${eps.length} map { ${els.join(', ')} }`);
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
        w.line(`\t\telements = { ${wrapSetElements(els, set.lines[0] !== 'type ipv4_addr')} }`);
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
function wrapSetElements(els: string[], onePerLine: boolean): string {
  if (onePerLine) return els.join(`,\n${ELEMENT_INDENT}`);
  const lines: string[] = [];
  for (let i = 0; i < els.length; i += 2) lines.push(els.slice(i, i + 2).join(', '));
  return lines.join(`,\n${ELEMENT_INDENT}`);
}

export function nftListing(cluster: Cluster, options: NftOptions = {}): string {
  return collect((sink) => writeNftListing(cluster, options, sink));
}
