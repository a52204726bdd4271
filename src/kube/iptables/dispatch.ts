/**
 * iptables dispatch: which addresses and ports lead to which Service port. The nat table's
 * KUBE-SERVICES (cluster IPs, external IPs, LoadBalancer IPs) and KUBE-NODEPORTS (node ports) jump
 * to the per-Service chains; each rule is a front end of the Service port the chain's hash names.
 */
import type { Rule, Ruleset, Table } from '../../model/netfilter.js';
import { perServiceChain, type PerServiceRole } from '../chains.js';
import { added, addChain, frontEnd, hasNatFirewall, type Group, type Groups } from './group.js';
import type { Evidence } from '../types.js';
import { commentIdentity, evidenceOf, jumpTarget, ruleDestination, ruleDport, ruleProtocol } from './rules.js';

type EntryKind = 'cluster' | 'external' | 'loadbalancer' | 'nodeport';

/**
 * Per-Service chains in every table, grouped by hash. (Index loops over the ~100k chains: this
 * runs once, unoptimised, where for…of allocates a step object per chain.)
 */
export function groupPerServiceChains(rs: Ruleset, groups: Groups): void {
  for (const t of rs.tables) {
    const chains = t.chains;
    for (let i = 0; i < chains.length; i++) {
      const ps = perServiceChain(chains[i].name);
      if (ps) addChain(groups.of(ps.hash), t.name, ps.role, chains[i]);
    }
  }
}

function classifyEntry(rest: string, targetRole: string | undefined): EntryKind | undefined {
  if (rest.startsWith('cluster IP')) return 'cluster';
  if (rest.startsWith('external IP')) return 'external';
  if (rest.startsWith('loadbalancer IP')) return 'loadbalancer';
  if (rest === '' && (targetRole === 'SVC' || targetRole === 'SVL')) return 'cluster';
  return undefined;
}

/** A nat KUBE-SERVICES / KUBE-NODEPORTS chain's jumps to per-Service chains, as front ends. */
export function readDispatch(nat: Table | undefined, chainName: string, isNodePorts: boolean, groups: Groups): void {
  const chain = nat?.chainsByName.get(chainName);
  if (!chain) return;
  for (const r of chain.rules) {
    const target = jumpTarget(r);
    const ps = target ? perServiceChain(target) : undefined;
    if (!ps) continue;
    const g = groups.of(ps.hash);
    const id = commentIdentity(r);
    if (!g.identity && id) g.identity = id;
    const ev = evidenceOf(r);
    g.evidence.push(ev);
    g.natDispatch = true;
    if (!nat?.chainsByName.has(target!)) g.absentChain ??= target;
    const proto = ruleProtocol(r);
    if (proto) g.protocol ??= proto;
    if (isNodePorts) nodePortEntry(g, r, ev);
    else addressEntry(g, r, ev, ps.role, id?.rest ?? '');
  }
}

function nodePortEntry(g: Group, r: Rule, ev: Evidence): void {
  const port = ruleDport(r);
  if (port === undefined) return;
  g.nodePort = port;
  frontEnd(g, 'node-port', null, port, ev);
}

/** A KUBE-SERVICES rule: the comment says which address it is, else the target chain's role does. */
function addressEntry(g: Group, r: Rule, ev: Evidence, role: PerServiceRole, rest: string): void {
  const port = ruleDport(r);
  const dst = ruleDestination(r);
  let kind = classifyEntry(rest, role);
  if (!kind) kind = role === 'SVC' || role === 'SVL' ? (g.clusterIP === undefined ? 'cluster' : 'external') : hasNatFirewall(g) || role === 'FW' ? 'loadbalancer' : 'external';
  if (kind === 'cluster') {
    // The first claim is the Service's own; a later one (another address to the same chain) is
    // kept as a front end, which duplicate-service-vip compares with the other Services' claims.
    if (g.clusterIP === undefined) {
      if (dst) g.clusterIP = dst;
      if (port !== undefined) g.port = port;
      g.clusterTarget = role;
    }
  } else if (dst) {
    if (kind === 'external') g.externalIPs = added(g.externalIPs, dst);
    else g.loadBalancerIPs = added(g.loadBalancerIPs, dst);
  }
  if (dst) frontEnd(g, kind === 'cluster' ? 'cluster-ip' : kind === 'external' ? 'external-ip' : 'load-balancer-ip', dst, port ?? null, ev);
  if (port !== undefined && kind !== 'cluster') g.port ??= port;
}
