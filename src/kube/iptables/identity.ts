/**
 * iptables identity: which Service port a group of chains is. kube-proxy's comments name it
 * (`ns/name:port cluster IP`) on the dispatch rules or, failing those, on any rule of its chains;
 * without a name the anchor is what else names it (balancing chain, node port, external address).
 */
import type { Chain } from '../../model/netfilter.js';
import { formatHostPort } from '../../model/addr.js';
import type { CommentIdentity } from '../comments.js';
import type { Protocol } from '../types.js';
import type { Group } from './group.js';
import { commentIdentity, ruleProtocol } from './rules.js';

/** Identity from any rule of the group's chains, when the dispatch rules had no comment. */
export function identityFromChains(chains: readonly (Chain | undefined)[]): CommentIdentity | undefined {
  for (const c of chains) {
    if (!c) continue;
    for (const r of c.rules) {
      const id = commentIdentity(r);
      if (id) return id;
    }
  }
  return undefined;
}

export function protocolFromChains(chains: readonly (Chain | undefined)[]): Protocol | undefined {
  for (const c of chains) {
    if (!c) continue;
    for (const r of c.rules) {
      const p = ruleProtocol(r);
      if (p) return p;
    }
  }
  return undefined;
}

/**
 * What names a Service port the rules do not name and that has no cluster IP (the builder uses the
 * cluster IP when there is one): its balancing chain, else — like a Service known only by its
 * REJECT/DROP rules — its node port (`nodeport-30302`) or external address (`203.0.113.3:80`);
 * only then the chain that holds it (a KUBE-EXT/FW/XLB chain with neither, e.g. a grep).
 */
export function anchorOf(g: Group, balancing: Chain | undefined): string {
  if (balancing) return balancing.name;
  if (g.anchor) return g.anchor;
  if (g.nodePort !== undefined) return `nodeport-${g.nodePort}`;
  const ip = g.loadBalancerIPs?.values().next().value ?? g.externalIPs?.values().next().value;
  if (ip !== undefined && g.port !== undefined) return formatHostPort(ip.replace(/\/(32|128)$/, ''), g.port);
  return g.ext?.name ?? g.xlb?.name ?? g.fw?.[0]?.chain.name ?? `KUBE-SVC-${g.hash}`;
}
