/**
 * nftables dispatch, continued: which of a Service port's addresses is its cluster IP, which are
 * external IPs and which LoadBalancer IPs, and the front ends they make.
 *  - The cluster IP is the `service-ips` key that goes to the service-/local- chain, else an IP of
 *    the `cluster-ips` set (≥1.31), else one inside the `cluster-ips-check` drop prefix, else the
 *    daddr of the service chain's masquerade rule, else the only IP a Service port has.
 *  - Other IPs go to the external- chain. kube-proxy writes no "external IP"/"loadbalancer IP"
 *    comment in nftables mode: an IP listed in `firewall-ips` is a LoadBalancer IP; otherwise kpx
 *    guesses LoadBalancer when the port has a NodePort (type=LoadBalancer allocates one) and
 *    externalIP when it has none. Element comments saying `external`/`loadbalancer` win.
 */
import { cidrContains, formatCidr, parseCidr, parseIp, type Cidr } from '../../model/addr.js';
import type { FrontEnd } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { BalanceRead } from './balancing.js';
import { nftNames } from './identity.js';
import { isMatch, payloadIs, type Ctx, type Group, type IpEntry } from './table.js';

/** What the table says about cluster IPs, for every Service port of it. */
export interface ClusterIPHints {
  clusterIPSet: Set<string>;
  clusterRanges: Cidr[];
  /** The smallest prefix holding every cluster IP the table dispatches (tables without cluster-ips). */
  inferredRange?: Cidr;
}

export function clusterIPHints(ctx: Ctx, groups: Iterable<Group>): ClusterIPHints {
  const clusterRanges = clusterIPRanges(ctx);
  const clusterIPSet = new Set(ctx.sets.get(nftNames.clusterIPsSet)?.elements.map((e) => e.key[0]) ?? []);
  // 1.29 wrote neither the cluster-ips set nor cluster-ips-check: the cluster IPs it dispatches bound a range.
  const inferredRange = clusterIPSet.size === 0 && clusterRanges.length === 0 ? dispatchedClusterRange(groups) : undefined;
  return { clusterIPSet, clusterRanges, inferredRange };
}

/** The smallest prefix holding every address a service-ips element sends to a service-/local- chain (≥ 2 of one family). */
function dispatchedClusterRange(groups: Iterable<Group>): Cidr | undefined {
  let lo: bigint | undefined;
  let hi: bigint | undefined;
  let family: 4 | 6 | undefined;
  let n = 0;
  for (const g of groups) {
    for (const e of g.ips.values()) {
      if (e.target !== 'service' && e.target !== 'local') continue;
      const ip = parseIp(e.ip);
      if (!ip || (family !== undefined && ip.family !== family)) return undefined;
      family = ip.family;
      lo = lo === undefined || ip.value < lo ? ip.value : lo;
      hi = hi === undefined || ip.value > hi ? ip.value : hi;
      n++;
    }
  }
  if (n < 2 || lo === undefined || hi === undefined || family === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  let prefix = bits;
  while (prefix > 0 && lo >> BigInt(bits - prefix) !== hi >> BigInt(bits - prefix)) prefix--;
  const network = (lo >> BigInt(bits - prefix)) << BigInt(bits - prefix);
  return { family, network, prefix };
}

/** `ip daddr 10.96.0.0/16 drop` in cluster-ips-check: the Service CIDR(s). */
function clusterIPRanges(ctx: Ctx): Cidr[] {
  const out: Cidr[] = [];
  for (const r of ctx.chains.get(nftNames.clusterIPsCheckChain)?.rules ?? []) {
    if (!r.exprs.some((e) => e.kind === 'verdict' && e.verdict === 'drop')) continue;
    for (const e of r.exprs) {
      if (!isMatch(e) || !payloadIs(e.left, 'daddr') || e.op === '!=') continue;
      const values = e.right.kind === 'value' ? [e.right.text] : e.right.kind === 'set' ? e.right.elements.map((x) => x.key[0]) : [];
      for (const v of values) {
        const c = parseCidr(v);
        if (c) out.push(c);
      }
    }
  }
  return out;
}

export interface Addresses {
  clusterIP?: string;
  /** The chain role the cluster IP's service-ips element goes to. */
  internalTarget?: IpEntry['target'];
  port?: number;
  externalIPs: Set<string>;
  loadBalancerIPs: Set<string>;
}

/** A cluster IP from the map targets, the cluster-ips set, the Service CIDR, or (1.29) the dispatched range. */
function clusterIPFromMaps(g: Group, entries: readonly IpEntry[], hints: ClusterIPHints, problems: ServiceProblem[]): { clusterIP?: string; internalTarget?: IpEntry['target'] } {
  let clusterIP: string | undefined = entries.find((e) => e.target === 'service' || e.target === 'local')?.ip;
  const internalTarget = clusterIP ? g.ips.get(clusterIP)!.target : undefined;
  clusterIP ??= entries.find((e) => hints.clusterIPSet.has(e.ip))?.ip;
  clusterIP ??= entries.find((e) => {
    const ip = parseIp(e.ip);
    return ip && hints.clusterRanges.some((c) => cidrContains(c, ip));
  })?.ip;
  if (clusterIP === undefined && hints.inferredRange && entries.length > 1) {
    const range = hints.inferredRange;
    const inside = entries.filter((e) => {
      const ip = parseIp(e.ip);
      return e.target === undefined && ip && cidrContains(range, ip);
    });
    if (inside.length === 1) {
      clusterIP = inside[0].ip;
      problems.push(problem('nft-cluster-ip-inferred', { address: clusterIP, range: formatCidr(range), others: entries.filter((e) => e.ip !== clusterIP).map((e) => e.ip) }));
    }
  }
  return { clusterIP, internalTarget };
}

/** The Service port's addresses: cluster IP (and port), external IPs, LoadBalancer IPs. */
export function addressesOf(g: Group, svcRead: BalanceRead | undefined, localRead: BalanceRead | undefined, hints: ClusterIPHints, kindHints: ReadonlyMap<string, 'external' | 'loadbalancer'> | undefined, problems: ServiceProblem[]): Addresses {
  const entries = [...g.ips.values()];
  const fromMaps = clusterIPFromMaps(g, entries, hints, problems);
  const internalTarget = fromMaps.internalTarget;
  let clusterIP = fromMaps.clusterIP;
  const masq = svcRead?.masq ?? localRead?.masq;
  if (masq?.ip && clusterIP && masq.ip !== clusterIP) problems.push(problem('nft-masquerade-address', { chain: (svcRead?.masq ? svcRead : localRead)!.chain.name, address: masq.ip, clusterIP }));
  clusterIP ??= masq?.ip;
  if (clusterIP === undefined && entries.length === 1 && entries[0].target !== 'external') clusterIP = entries[0].ip;
  const port = g.port ?? masq?.port;
  if (masq?.port !== undefined && g.port !== undefined && masq.port !== g.port) problems.push(problem('nft-masquerade-port', { port: masq.port, mapPort: g.port }));

  // External IPs and LoadBalancer IPs.
  const externalIPs = new Set<string>();
  const loadBalancerIPs = new Set<string>(g.lbIPs);
  for (const e of entries) {
    if (e.ip === clusterIP || loadBalancerIPs.has(e.ip)) continue;
    const h = kindHints?.get(e.ip);
    if (h === 'loadbalancer' || (h === undefined && g.nodePort !== undefined)) loadBalancerIPs.add(e.ip);
    else externalIPs.add(e.ip);
  }
  for (const e of entries) {
    if (e.ip !== clusterIP && e.target && e.target !== 'external' && e.target !== 'firewall') problems.push(problem('nft-address-internal-chain', { address: e.ip, role: e.target, clusterIP }));
    if (e.ip === clusterIP && e.target === 'external') problems.push(problem('nft-cluster-ip-external-chain', { address: e.ip }));
  }
  return { clusterIP, internalTarget, port, externalIPs, loadBalancerIPs };
}

/** Every address (and the NodePort) that dispatches to the Service port, with its map element. */
export function nftFrontEnds(g: Group, clusterIP: string | undefined, externalIPs: ReadonlySet<string>, loadBalancerIPs: ReadonlySet<string>): FrontEnd[] {
  const out: FrontEnd[] = [];
  const fallback = g.evidence[0];
  for (const e of g.ips.values()) {
    const evidence = e.evidence ?? fallback;
    if (!evidence) continue;
    const kind = e.ip === clusterIP ? 'cluster-ip' : loadBalancerIPs.has(e.ip) ? 'load-balancer-ip' : externalIPs.has(e.ip) ? 'external-ip' : undefined;
    if (kind) out.push({ kind, ip: e.ip, port: g.port ?? null, evidence });
  }
  if (g.nodePort !== undefined && fallback) out.push({ kind: 'node-port', ip: null, port: g.nodePort, evidence: g.nodePortEvidence ?? fallback });
  return out;
}
