/**
 * kube-proxy's chain vocabulary (pkg/proxy/iptables/proxier.go), and who owns the other chains.
 */

/** Entry chain: one rule per Service IP:port (nat), REJECTs for Services without endpoints (filter). */
export const kubeServicesChain = 'KUBE-SERVICES';
/** NodePort dispatch, reached by KUBE-SERVICES' last rule for LOCAL destinations. */
export const kubeNodePortsChain = 'KUBE-NODEPORTS';
/** Filter-table REJECT/DROP for external traffic to Services without (local) endpoints. */
export const kubeExternalServicesChain = 'KUBE-EXTERNAL-SERVICES';
/** Filter-table drops for loadBalancerSourceRanges (≥1.25). */
export const kubeProxyFirewallChain = 'KUBE-PROXY-FIREWALL';
export const kubeMarkMasqChain = 'KUBE-MARK-MASQ';
export const kubeMarkDropChain = 'KUBE-MARK-DROP';
export const kubePostroutingChain = 'KUBE-POSTROUTING';
/** Cluster-policy load-balancing chain of a Service port. */
export const servicePortPolicyClusterChainNamePrefix = 'KUBE-SVC-';
/** Local-policy load-balancing chain (only local endpoints). */
export const servicePortPolicyLocalChainNamePrefix = 'KUBE-SVL-';
/** External-destination chain: masquerade decisions, then SVC or SVL. */
export const serviceExternalChainNamePrefix = 'KUBE-EXT-';
/** LoadBalancer source-range firewall chain. */
export const serviceFirewallChainNamePrefix = 'KUBE-FW-';
/** Pre-1.24 local external chain. */
export const serviceLBChainNamePrefix = 'KUBE-XLB-';
/** One chain per endpoint: hairpin masquerade, then DNAT. */
export const servicePortEndpointChainNamePrefix = 'KUBE-SEP-';

const PER_SERVICE = /^KUBE-(SVC|SVL|EXT|FW|XLB)-([A-Z2-7]{16})$/;

export type PerServiceRole = 'SVC' | 'SVL' | 'EXT' | 'FW' | 'XLB';

/** `KUBE-SVC-ERIFXISQEP7F7OF4` → {role: 'SVC', hash: 'ERIFXISQEP7F7OF4'}. */
export function perServiceChain(name: string): { role: PerServiceRole; hash: string } | undefined {
  const m = PER_SERVICE.exec(name);
  return m ? { role: m[1] as PerServiceRole, hash: m[2] } : undefined;
}

export function isEndpointChain(name: string): boolean {
  return name.startsWith(servicePortEndpointChainNamePrefix);
}

// Who owns a chain is decided in one place, with every other object's owner.
export { chainOwner } from './owner.js';
