/**
 * iptables firewall and policy: the filter table's REJECT/DROP rules for Service ports without
 * (local) endpoints (KUBE-SERVICES, KUBE-EXTERNAL-SERVICES), the LoadBalancer firewall
 * (KUBE-PROXY-FIREWALL and the KUBE-FW chains' source ranges), and the traffic policies the chain
 * shapes say (externalTrafficPolicy / internalTrafficPolicy Local).
 */
import type { Chain, Rule, Ruleset, Table } from '../../model/netfilter.js';
import { formatCidr, formatHostPort, formatIp } from '../../model/addr.js';
import { kubeMarkDropChain, kubeProxyFirewallChain, kubeServicesChain, perServiceChain, servicePortPolicyLocalChainNamePrefix } from '../chains.js';
import type { CommentIdentity } from '../comments.js';
import { portProtoHash, servicePortName } from '../hash.js';
import type { Evidence } from '../types.js';
import { added, frontEnd, type Group, type Groups } from './group.js';
import { commentIdentity, evidenceOf, jumpTarget, matchesLocalDestination, ruleAddress, ruleDestination, ruleDport, ruleProtocol, unnamedNoEndpointRule } from './rules.js';

/** A filter chain's REJECT ("has no endpoints") and DROP ("has no local endpoints") rules. */
export function readNoEndpointRules(rs: Ruleset, filter: Table | undefined, chainName: string, groups: Groups): void {
  const chain = filter?.chainsByName.get(chainName);
  if (!chain) return;
  for (const r of chain.rules) {
    const id = commentIdentity(r);
    const shape = id ? undefined : unnamedNoEndpointRule(rs, r);
    if (!id && !shape) continue;
    const noEp = id ? id.rest.includes('has no endpoints') : shape === 'reject';
    const noLocal = id ? id.rest.includes('has no local endpoints') : shape === 'drop';
    if (!noEp && !noLocal) continue;
    const g = id ? namedGroup(r, id, groups) : unnamedGroup(r, groups);
    const ev = evidenceOf(r);
    g.evidence.push(ev);
    (g.filterChains ??= new Set()).add(chainName);
    if (noEp) g.noEndpoints = true;
    if (noLocal) {
      g.noLocalEndpoints = true;
      // A DROP for the cluster IP (filter KUBE-SERVICES) is internalTrafficPolicy: Local; for
      // external addresses and node ports (KUBE-EXTERNAL-SERVICES) externalTrafficPolicy: Local.
      if (chainName === kubeServicesChain) g.internalLocal = true;
      else g.externalLocal = true;
    }
    noEndpointFrontEnd(g, r, ev, chainName);
  }
}

/** The rule's comment names the Service port: its group is the chain hash of that name. */
function namedGroup(r: Rule, id: CommentIdentity, groups: Groups): Group {
  const proto = ruleProtocol(r) ?? 'tcp';
  const g = groups.of(portProtoHash(servicePortName(id.namespace, id.name, id.portName), proto));
  if (!g.identity) g.identity = id;
  g.protocol ??= proto;
  return g;
}

/**
 * Without its comment the rule does not say which Service it is for: one Service port per
 * address (or node port), named by it; its protocol is the rule's own. A Service port whose
 * chains name it (by hash) and that claims the same address or node port is the one.
 */
function unnamedGroup(r: Rule, groups: Groups): Group {
  const dst = ruleDestination(r);
  const port = ruleDport(r)!;
  const proto = ruleProtocol(r);
  const nodePort = matchesLocalDestination(r);
  const same = (x: Group) =>
    x.protocol === proto && (nodePort ? x.nodePort === port : x.port === port && (x.clusterIP === dst || x.externalIPs?.has(dst!) || x.loadBalancerIPs?.has(dst!)));
  const known = [...groups.byHash.values()].find(same);
  if (known) return known;
  const anchor = dst && !nodePort ? formatHostPort(dst.replace(/\/(32|128)$/, ''), port) : `nodeport-${port}`;
  const g = groups.of(`unnamed ${proto ?? '?'} ${anchor}`);
  g.anchor = anchor;
  if (proto) g.protocol ??= proto;
  return g;
}

/** What a REJECT/DROP rule claims: a node port, the cluster IP, or an external address (of either kind). */
function noEndpointFrontEnd(g: Group, r: Rule, ev: Evidence, chainName: string): void {
  const dst = ruleDestination(r);
  const port = ruleDport(r);
  if (port !== undefined && matchesLocalDestination(r)) {
    g.nodePort = port;
    frontEnd(g, 'node-port', null, port, ev);
  } else if (dst && chainName === kubeServicesChain) {
    g.clusterIP ??= dst;
    frontEnd(g, 'cluster-ip', dst, port ?? null, ev);
    if (port !== undefined) g.port ??= port;
  } else if (dst) {
    if (!g.loadBalancerIPs?.has(dst)) {
      g.externalIPs = added(g.externalIPs, dst);
      g.ambiguousExternal = true;
      frontEnd(g, 'external-ip', dst, port ?? null, ev);
    }
    if (port !== undefined) g.port ??= port;
  }
}

/** filter KUBE-PROXY-FIREWALL (≥1.25): the LoadBalancer IPs whose traffic goes through a KUBE-FW chain. */
export function readProxyFirewall(filter: Table | undefined, groups: Groups): void {
  const fwChain = filter?.chainsByName.get(kubeProxyFirewallChain);
  for (const r of fwChain?.rules ?? []) {
    const target = jumpTarget(r);
    const ps = target ? perServiceChain(target) : undefined;
    const id = commentIdentity(r);
    const viaComment = id && /traffic not accepted by (KUBE-FW-[A-Z2-7]{16})/.exec(id.rest);
    const hash = ps?.hash ?? (viaComment ? perServiceChain(viaComment[1])?.hash : undefined);
    if (!hash) continue;
    const g = groups.of(hash);
    const ev = evidenceOf(r);
    g.evidence.push(ev);
    (g.filterChains ??= new Set()).add(kubeProxyFirewallChain);
    const dst = ruleDestination(r);
    if (dst) {
      g.externalIPs?.delete(dst);
      g.loadBalancerIPs = added(g.loadBalancerIPs, dst);
      frontEnd(g, 'load-balancer-ip', dst, ruleDport(r) ?? null, ev);
    }
  }
}

/** EXT chains of externalTrafficPolicy: Local send to the SVL chain. */
function jumpsToLocalChain(chain: Chain): boolean {
  for (const r of chain.rules) {
    const t = jumpTarget(r);
    if (t && t.startsWith(servicePortPolicyLocalChainNamePrefix) && perServiceChain(t)?.role === 'SVL') return true;
  }
  return false;
}

/** The traffic policies the chain shapes and the no-local-endpoint DROPs say. */
export function trafficPolicies(g: Group): { externalTrafficPolicy: 'Cluster' | 'Local'; internalTrafficPolicy: 'Cluster' | 'Local' } {
  let externalTrafficPolicy: 'Cluster' | 'Local' = 'Cluster';
  if (g.xlb) externalTrafficPolicy = 'Local';
  if (g.ext && jumpsToLocalChain(g.ext)) externalTrafficPolicy = 'Local';
  if (g.externalLocal) externalTrafficPolicy = 'Local';
  const internalTrafficPolicy: 'Cluster' | 'Local' = g.clusterTarget === 'SVL' || g.internalLocal ? 'Local' : 'Cluster';
  return { externalTrafficPolicy, internalTrafficPolicy };
}

/** Source ranges from the firewall chains (nat ≤1.24, filter ≥1.25); their rules join the evidence. */
export function readSourceRanges(g: Group, fwChains: readonly Chain[], evidence: Evidence[]): void {
  for (const fw of fwChains) {
    for (const r of fw.rules) {
      evidence.push(evidenceOf(r));
      const src = ruleAddress(r, 'src', false);
      const t = jumpTarget(r) ?? r.target?.kind;
      if (!src?.cidr || t === kubeMarkDropChain || t === 'drop') continue;
      // kube-proxy also lets the LoadBalancer IPs themselves through (hairpin via the LB): not a user range.
      const host = src.cidr.prefix === (src.cidr.family === 4 ? 32 : 128) ? formatIp({ family: src.cidr.family, value: src.cidr.network }) : undefined;
      if (host && g.loadBalancerIPs?.has(host)) continue;
      g.sourceRanges = added(g.sourceRanges, formatCidr(src.cidr));
    }
  }
}
