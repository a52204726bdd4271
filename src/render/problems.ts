/** Resolver problems (codes with fields, src/kube/problems.ts) in words: the only place they become sentences. */
import type { ProblemCode, ProblemFields, ServiceProblem } from '../kube/problems.js';

const pct = (share: number, digits: number) => `${(share * 100).toFixed(digits)}%`;

const TEXT: { [K in ProblemCode]: (p: Readonly<ProblemFields[K]>) => string } = {
  'ladder-leftover': (p) => `the probability ladder leaves ${pct(p.share, 2)} of new connections without an endpoint`,
  'ladder-unreachable-rule': (p) => `endpoint rule ${p.rule} of ${p.chain} can never be reached (an earlier rule takes every packet)`,
  'unequal-share': (p) => `endpoint ${p.endpoint} gets ${pct(p.share, 4)} of new connections, not its equal share ${pct(p.equal, 4)}`,
  'endpoint-chain-undeclared': (p) => `${p.chain} jumps to ${p.target}, which is not declared`,
  'endpoint-chain-without-dnat': (p) => `${p.chain} has no DNAT rule`,
  'service-hash-mismatch': (p) => `chain hash ${p.hash} does not match ${p.servicePort}/${p.protocol} (expected ${p.expected}): renamed or hand-edited rules?`,
  'endpoint-hash-mismatch': (p) => `${p.chain} does not match endpoint ${p.endpoint} of ${p.servicePort} (expected ${p.expected})`,
  'external-kind-ambiguous': (p) =>
    `the dump does not say whether ${p.addresses.join(', ')} ${p.addresses.length > 1 ? 'are externalIPs or LoadBalancer ingress IPs' : 'is an externalIP or a LoadBalancer ingress IP'} (kube-proxy writes the same REJECT/DROP rule for both); listed as externalIPs`,
  'balancing-chain-empty': (p) => `${p.chain} has no endpoint rules`,
  'leftover-service-chains': (p) =>
    `${p.chains} kube-proxy iptables-mode chain${p.chains === 1 ? '' : 's'} in ${p.file} table ${p.table} (${p.servicePorts} Service port${p.servicePorts === 1 ? '' : 's'}' worth, e.g. ${p.example}) ${p.chains === 1 ? 'is' : 'are'} reached by no hook: leftovers of an earlier proxy mode that act on no packet; not counted as Services (kube-proxy --cleanup removes them)`,
  'repeated-rules': (p) => `${p.chain} holds the same ${p.rules} rule${p.rules === 1 ? '' : 's'} ${p.times} times (a paste repeated?); read once`,
  'share-hidden': (p) =>
    `${p.chain} chooses endpoints with \`${p.match}\`, which the nft listing of iptables-nft prints without its probability: each endpoint's share is unknown (iptables-save shows it)`,
  'affinity-hidden': (p) =>
    `${p.chain} has session affinity (\`xt match recent\`), which the nft listing of iptables-nft prints without its timeout: the timeout is unknown (iptables-save shows it)`,
  'endpoint-chain-absent': (p) => `${p.from} goes to ${p.chain}, which is not in the dumps: its endpoint is unknown`,
  'service-chain-absent': (p) => `the dispatch rules go to ${p.chain}, which is not in the dumps: the endpoints are unknown`,
  'table-truncated': (p) =>
    `table ${p.table} of ${p.file} ends at line ${p.line} without ${p.listing === 'nft' ? 'its closing brace' : 'COMMIT'} (truncated): the ${p.listing === 'nft' ? 'chains, maps and elements' : 'chains'} after it are unknown`,
  'listing-truncated': (p) => `${p.file} ends mid-line at line ${p.line} (truncated): the real servers listed there may go on past the cut, so they and their shares are unknown`,
  'real-server-not-an-address': (p) =>
    `real server ${p.name} of ${p.vs} (${p.file}:${p.line}) is a name, not an address (ipvsadm -L without -n?): it is not counted as an endpoint, and where it sends traffic is unknown`,
  'protocol-unknown': () => 'the rules name no protocol and no Service name gives it: the protocol is unknown',
  'all-weights-zero': () => 'all real servers have weight 0 (draining)',
  'chain-unreached': (p) => `chain ${p.chain} is not reached from any base chain or map element${p.empty ? ' (empty: a stale chain kube-proxy flushed and deletes about a second later)' : ''}`,
  'ipvs-fwmark-service': (p) => `firewall-mark virtual server ${p.vs} is not a kube-proxy Service (kube-proxy creates no fwmark services); not resolved`,
  'ipvs-named-virtual-server': (p) => `virtual server ${p.vs} has a host or port name instead of numbers (ipvsadm -L without -n); not resolved`,
  'ipvs-no-set-entry': (p) => `virtual server ${p.vs} has no entry in ${p.sets.length > 1 ? `${p.sets.slice(0, -1).join(', ')} or ${p.sets[p.sets.length - 1]}` : p.sets[0]}: kube-proxy did not create it or has since forgotten it (stale)`,
  'ipvs-vip-unbound': (p) => `VIP ${p.vip} of virtual server ${p.vs} is not bound on kube-ipvs0: packets to it are not delivered locally, so IPVS never sees them`,
  'ipvs-ambiguous-group': (p) =>
    `${ipvsFront(p)} could belong to ${p.candidates.length} ClusterIP virtual servers with ${p.superset ? 'a superset of its' : 'the same'} real servers (${p.candidates.slice(0, 5).join(', ')}${p.candidates.length > 5 ? ', …' : ''}); shown on its own`,
  'ipvs-ungrouped': (p) => `${ipvsFront(p)}: no ClusterIP virtual server with matching real servers; shown on its own`,
  'ipvs-several-nodeports': (p) => `several NodePorts matched this Service port: ${p.ports.join(', ')}`,
  'ipvs-port-unknown': () => 'the Service port is unknown: only NodePort virtual servers were found (shown as port 0)',
  'ipvs-lb-no-source-ranges': (p) => `LoadBalancer ${p.vs} is in KUBE-LOAD-BALANCER-FW but has no source range entries: every client is dropped`,
  'ipvs-node-addresses-disagree': (p) => `the ${p.nodePort !== undefined ? `NodePort ${p.nodePort}` : p.vs} virtual servers do not have the same real servers on every node address`,
  'ipvs-extra-real-servers': (p) => `virtual server ${p.vs} has real servers that ${p.than} lacks${p.extra.length ? `: ${p.extra.join(', ')}` : ''}`,
  'ipvs-persistence-disagrees': (p) => `virtual servers of this Service port disagree on persistence: ${p.timeouts.map((t) => (t === null ? 'none' : `persistent ${t}`)).join(' vs ')}`,
  'ipvs-external-local-inferred': () => 'externalTrafficPolicy Local inferred: the external virtual servers have only some of the ClusterIP real servers (no -LOCAL ipset in the dumps)',
  'ipvs-internal-local-inferred': (p) => `internalTrafficPolicy Local inferred: ${p.vs} has fewer real servers than ${p.than}`,
  'ipvs-no-local-real-server': (p) =>
    p.behind === undefined
      ? `${p.policy}TrafficPolicy Local and no local real server: new connections get no destination`
      : `${p.policy}TrafficPolicy Local and no local real server behind ${p.behind.slice(0, 3).join(', ')}${p.behind.length > 3 ? ', …' : ''}`,
  'ipvs-no-real-servers': () => 'no real servers: new connections get no destination',
  'ipvs-some-draining': (p) => `${p.zero} of ${p.of} real servers have weight 0 (draining: no new connections)`,
  'ipvs-local-has-remote': (p) => `${p.vs} is Local-policy but has real servers on other nodes: ${p.remote.join(', ')}`,
  'ipvs-set-entry-without-vs': (p) => `${p.set} entry ${p.entry} has no virtual server${p.accepted ? ': traffic to it is accepted by iptables but not load-balanced' : ''}`,
  'ipvs-nodeport-without-vs': (p) => `${p.set} holds NodePort ${p.port} but no ${p.protocol.toUpperCase()} virtual server listens on port ${p.port}`,
  'ipvs-dummy-address-unused': (p) => `kube-ipvs0 holds ${p.address} but no virtual server uses it: the node accepts packets for it and answers nothing (or a host process does)`,
  'nft-two-chains': (p) => `two ${p.role} chains for one Service port: ${p.chain} and ${p.other}`,
  'nft-element-not-service-chain': (p) => `${p.set} element ${p.element} goes to ${p.target}, which is not a Service chain`,
  'nft-element-to-endpoint-chain': (p) => `${p.set} element ${p.element} goes straight to endpoint chain ${p.chain} (no service chain)`,
  'nft-element-no-goto': (p) => `${p.set} element ${p.element} has no goto/jump verdict`,
  'nft-ports-disagree': (p) => `${p.set} has port ${p.port} and ${p.other} for one Service port`,
  'nft-nodeport-not-external': (p) => `NodePort ${p.element} goes to ${p.target}, not to an external- chain`,
  'nft-element-names-no-service': (p) => `${p.set} element ${p.element} names no Service`,
  'nft-firewall-element-not-firewall': (p) => `${p.set} element ${p.element} goes to ${p.target}, not to a firewall- chain`,
  'nft-element-no-verdict': (p) => `${p.set} element ${p.element} has no verdict`,
  'nft-element-target-absent': (p) => `${p.set} element ${p.element} goes to ${p.chain}, which is not in the dump`,
  'nft-no-endpoint-verdict-passes': (p) => `${p.set} element ${p.element} has verdict ${p.verdict}: traffic to a Service without endpoints is not rejected or dropped`,
  'nft-no-endpoint-reject-and-drop': () =>
    'the no-endpoint maps both reject (no endpoints at all) and drop (no local endpoints) this Service port: kube-proxy writes one or the other',
  'nft-no-endpoint-reject-with-endpoints': () => 'no-endpoint maps reject this Service port although it has endpoints',
  'nft-nothing-delivers': () => 'no service or local chain and no no-endpoint element: kube-proxy wrote nothing that delivers or rejects this traffic',
  'nft-numgen-named-map': (p) => `${p.chain} picks endpoints from a named map (${p.map !== null ? `@${p.map}` : ''}), which kube-proxy does not write`,
  'nft-numgen-several': (p) => `${p.chain} has ${p.rules} numgen rules: only the first one can be reached for new connections`,
  'nft-numgen-key-not-number': (p) => `${p.chain}: numgen key ${p.key} is not a number`,
  'nft-numgen-not-endpoint-goto': (p) => `${p.chain}: numgen key ${p.key} has verdict ${p.verdict ?? '(none)'}, not a goto to an endpoint chain`,
  'nft-numgen-not-address': (p) => `${p.chain}: numgen key ${p.key} maps to ${p.value ?? '(nothing)'}, not an address`,
  'nft-numgen-dead-keys': (p) => `${p.chain}: numgen random mod ${p.mod}${p.offset ? ` offset ${p.offset}` : ''} never yields ${p.keys.join(', ')}; those map entries are dead`,
  'nft-numgen-gap': (p) =>
    `${p.chain}: numgen random mod ${p.mod} has no entry for ${p.missing.join(', ')}: ${((p.missing.length / p.mod) * 100).toFixed(2)}% of new connections get no endpoint`,
  'nft-no-numgen': (p) => `${p.chain} has no numgen rule choosing an endpoint`,
  'nft-balancing-not-endpoint': (p) => `${p.chain} sends new connections to ${p.target}, which is not an endpoint chain`,
  'nft-endpoint-no-dnat': (p) => `${p.chain} has no dnat rule`,
  'nft-endpoint-dnat-mismatch': (p) => `${p.chain} is named for ${p.namedIp}/${p.namedPort} but DNATs to ${p.ip}:${p.port}`,
  'nft-endpoint-other-service': (p) => `${p.chain} sends connections to ${p.target}, an endpoint of another Service port`,
  'nft-local-endpoint-not-in-service': (p) => `${p.chain} uses ${p.endpoint}, which ${p.serviceChain} does not`,
  'nft-comment-disagrees': (p) => `element comment names ${p.comment} but the chains name ${p.chains}`,
  'nft-hash-mismatch': (p) => `${p.chain}: hash ${p.hash} does not match its name (expected ${p.expected}): renamed or hand-edited?`,
  'nft-masquerade-address': (p) => `${p.chain} masquerades traffic to ${p.address}, but the cluster IP is ${p.clusterIP}`,
  'nft-masquerade-port': (p) => `service chain masquerade rule matches port ${p.port}, but the map elements use port ${p.mapPort}`,
  'nft-address-internal-chain': (p) => `${p.address} goes to the ${p.role} chain, like the cluster IP ${p.clusterIP}`,
  'nft-cluster-ip-external-chain': (p) => `the cluster IP ${p.address} goes to the external chain`,
  'nft-cluster-ip-inferred': (p) => `cluster IP ${p.address} inferred: the only one of its addresses inside ${p.range}, where every other cluster IP of the table is (no cluster-ips set before kube-proxy 1.30; ${p.others.join(', ')} taken as external)`,
  'nft-chain-target-absent': (p) => `${p.chain} goes to ${p.target}, which is not in the dump`,
  'nft-external-no-goto': (p) => `${p.chain} ends without a goto to a service or local chain: external traffic gets no endpoint`,
  'nft-firewall-no-drop': (p) => `${p.chain} has no \`saddr != { … } drop\` rule: loadBalancerSourceRanges are not enforced`,
  'nft-affinity-set-absent': (p) => `${p.set} is used for session affinity but is not in the dump`,
  'nft-affinity-no-timeout': (p) => `${p.set} has no timeout: affinity never expires`,
  'nft-affinity-other-endpoint': (p) => `${p.set} sends clients to ${p.chain}, a different endpoint`,
  'nft-affinity-target-absent': (p) => `affinity rule goes to ${p.chain}, which is not in the dump`,
};

/** How an IPVS grouping problem names the virtual server: `NodePort 30080/tcp`, `LoadBalancer IP 1.2.3.4:80/tcp`. */
function ipvsFront(p: { role: 'nodeport' | 'lb' | 'external'; id: string }): string {
  return `${p.role === 'nodeport' ? 'NodePort' : p.role === 'lb' ? 'LoadBalancer IP' : 'external IP'} ${p.id}`;
}

export function problemText(p: ServiceProblem): string {
  return (TEXT[p.code] as (f: ServiceProblem) => string)(p);
}
