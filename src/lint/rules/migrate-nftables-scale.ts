import type { ServicePort } from '../../kube/types.js';
import { createRule } from '../rule.js';

export interface NftScale {
  servicePorts: number;
  clusterIPs: number;
  serviceIPs: number;
  serviceNodePorts: number;
  noEndpointElements: number;
  firewallIPs: number;
  /** Per Service port chains (service-, local-, external-, firewall-). */
  serviceChains: number;
  /** endpoint- chains: every endpoint up to 1.35, only affinity Services' from 1.36. */
  endpointChainsBefore136: number;
  endpointChainsFrom136: number;
  affinitySets: number;
  /** Anonymous `numgen … map` DNAT maps: 1.36 writes one per policy chain without affinity, 1.37 not for a lone endpoint. */
  dnatMaps136: number;
  dnatMaps137: number;
}

/** What kube-proxy's nftables mode writes for these Service ports (proxier.go, syncProxyRules; nft-layout.ts). */
export function nftScale(services: readonly ServicePort[]): NftScale {
  const n: NftScale = { servicePorts: services.length, clusterIPs: new Set(services.map((s) => s.clusterIP).filter((x) => x !== null)).size, serviceIPs: 0, serviceNodePorts: 0, noEndpointElements: 0, firewallIPs: 0, serviceChains: 0, endpointChainsBefore136: 0, endpointChainsFrom136: 0, affinitySets: 0, dnatMaps136: 0, dnatMaps137: 0 };
  for (const s of services) {
    const eps = s.endpoints.length;
    const external = [...s.externalIPs, ...s.loadBalancerIPs].length;
    const addresses = (s.clusterIP ? 1 : 0) + external;
    const policyChains = (s.externalTrafficPolicy === 'Local' || s.internalTrafficPolicy === 'Local') && (external > 0 || s.nodePort !== null) ? 2 : 1;
    if (eps > 0) {
      n.serviceIPs += addresses;
      n.serviceChains += policyChains + (external > 0 || s.nodePort !== null ? 1 : 0);
      if (s.nodePort !== null) n.serviceNodePorts++;
    } else n.noEndpointElements += addresses + (s.nodePort !== null ? 1 : 0);
    if (s.loadBalancerSourceRanges.length > 0 && s.loadBalancerIPs.length > 0) {
      n.serviceChains++;
      n.firewallIPs += s.loadBalancerIPs.length;
    }
    n.endpointChainsBefore136 += eps;
    if (s.sessionAffinity) {
      n.endpointChainsFrom136 += eps;
      n.affinitySets += eps;
    } else if (eps > 0) {
      n.dnatMaps136 += policyChains;
      if (eps > 1) n.dnatMaps137 += policyChains;
    }
  }
  return n;
}

/**
 * Issue #139513 (kubernetes): many maps make each nftables transaction slow, hence 1.37's plain
 * DNAT for a lone endpoint (PR #140723); the sizes here say what this node's Services will create.
 */
export default createRule({
  id: 'migrate-nftables-scale',
  meta: {
    category: 'migration',
    description: "How big kube-proxy's nftables table will be for this node's Services: map and set elements, chains, DNAT maps.",
    severity: 'info',
    docs: [
      'nftables mode keeps one element per Service address in verdict maps (`service-ips`, `service-nodeports`,',
      '`no-endpoint-services`, `firewall-ips`) and the `cluster-ips` set, and chains per Service port; up to',
      '1.35 one `endpoint-…` chain per endpoint, from 1.36 only for session affinity, the other Services DNAT with',
      'an anonymous `numgen random mod N map` (1.37: a plain `dnat to` for a lone endpoint) (kubernetes',
      'pkg/proxy/nftables/proxier.go; PRs #136499, #140723). Lookups do not grow with these numbers, the work of',
      "each transaction does: many maps slow kube-proxy's syncs (kubernetes#139513).",
      '',
      'One finding for the node, with the counts worked out from the Services kpx read in these dumps.',
      '',
      '**Fix:** nothing to fix; with tens of thousands of Service ports prefer kube-proxy 1.36+ (no per-endpoint',
      'chains) and watch `sync_proxy_rules_duration_seconds` after the switch.',
    ].join('\n'),
    messages: {
      scale:
        'for {{ports}} Service ports nftables mode will write about {{serviceIPs}} service-ips, {{nodePorts}} service-nodeports, {{noEndpoint}} no-endpoint and {{firewall}} firewall-ips elements and {{clusterIPs}} cluster-ips; {{chains}} Service chains; {{before}} endpoint chains up to 1.35, from 1.36 {{after}} endpoint chains and {{maps}} DNAT maps ({{maps137}} from 1.37)',
    },
  },
  check(ctx) {
    const services = ctx.resolution.services;
    if (services.length === 0) return;
    const n = nftScale(services);
    const file = ctx.snapshot.files.find((f) => f.format === 'iptables-save' || f.format === 'nft' || f.format === 'ipvsadm')?.path ?? ctx.snapshot.files[0]?.path ?? ctx.snapshot.name;
    ctx.report({
      messageId: 'scale',
      data: { ports: n.servicePorts, serviceIPs: n.serviceIPs, nodePorts: n.serviceNodePorts, noEndpoint: n.noEndpointElements, firewall: n.firewallIPs, clusterIPs: n.clusterIPs, chains: n.serviceChains, before: n.endpointChainsBefore136, after: n.endpointChainsFrom136, maps: n.dnatMaps136, maps137: n.dnatMaps137 },
      file,
      line: 0,
    });
  },
});
