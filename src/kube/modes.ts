/**
 * Which kube-proxy modes a snapshot shows evidence of, and which dumps are missing for which
 * questions. kube-proxy knowledge over the model (no I/O), so lint, report, cluster and inspect use
 * it without depending on how files were loaded.
 */
import type { NodeSnapshot, ProxyMode } from '../model/snapshot.js';

const isKubeIptablesChain = (n: string) => /^KUBE-(SVC|SVL|EXT|FW|SEP|XLB)-/.test(n);

/** Which kube-proxy modes this snapshot shows evidence of. */
export function proxyModes(s: NodeSnapshot): ProxyMode[] {
  const modes: ProxyMode[] = [];
  if (s.rulesets.some((r) => r.tables.some((t) => t.chains.some((c) => isKubeIptablesChain(c.name))))) modes.push('iptables');
  const ipvsSets = s.ipsets.some((x) => x.name === 'KUBE-CLUSTER-IP' || x.name === 'KUBE-6-CLUSTER-IP');
  const ipvsRules = s.rulesets.some((r) => r.tables.some((t) => t.chains.some((c) => c.rules.some((rule) => rule.matches.some((m) => m.kind === 'set' && /^KUBE-(6-)?CLUSTER-IP$/.test(m.name))))));
  const dummy = s.interfaces.some((i) => i.name === 'kube-ipvs0');
  if (s.ipvs.some((d) => d.virtualServers.length > 0) || ipvsSets || ipvsRules || dummy) modes.push('ipvs');
  if (s.nft.some((n) => n.tables.some((t) => t.name === 'kube-proxy'))) modes.push('nftables');
  return modes;
}

/** What is missing for which questions, as short sentences for `kpx inspect`. */
export function missingDumps(s: NodeSnapshot): string[] {
  const out: string[] = [];
  const modes = proxyModes(s);
  if (s.rulesets.length === 0 && s.nft.length === 0) out.push('no iptables-save or nft ruleset: Service rules cannot be resolved');
  if (s.interfaces.length === 0 && s.extraNodeIps.length === 0) out.push("no `ip addr`: the node's own addresses (addrtype LOCAL, NodePorts) are unknown unless given with --node-ip");
  if (s.routes.length === 0) out.push('no `ip route`: where a packet goes after DNAT cannot be said');
  if (modes.includes('ipvs') && s.ipvs.length === 0) out.push('IPVS mode, but no `ipvsadm -Ln`: virtual servers and real servers are unknown');
  if (modes.includes('ipvs') && s.ipsets.length === 0) out.push('IPVS mode, but no `ipset list`: set matches cannot be decided');
  if (s.rulesets.some((r) => r.tables.some((t) => t.chains.some((c) => c.rules.some((x) => x.matches.some((m) => m.kind === 'set')))))) {
    if (s.ipsets.length === 0) out.push('rules use -m set, but no `ipset list` was given: those matches cannot be decided');
  }
  return out;
}
