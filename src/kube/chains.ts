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

const KUBE_INFRA = new Set([
  'KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL', 'KUBE-MARK-MASQ', 'KUBE-MARK-DROP',
  'KUBE-POSTROUTING', 'KUBE-FORWARD', 'KUBE-FIREWALL', 'KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY', 'KUBE-IPTABLES-HINT',
  'KUBE-LOAD-BALANCER', 'KUBE-NODE-PORT', 'KUBE-IPVS-FILTER', 'KUBE-IPVS-OUT-FILTER', 'KUBE-SOURCE-RANGES-FIREWALL',
]);

/** Who wrote a chain, from its name (FORMATS.md §1.7). Built-in chains are the kernel's. */
export function chainOwner(name: string): string {
  if (KUBE_INFRA.has(name) || /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-/.test(name)) return 'kube-proxy';
  if (/^KUBE-(ROUTER|POD-FW|NWPLCY)/.test(name)) return 'kube-router';
  if (/^(cali|felix)-/.test(name)) return 'calico';
  if (/^(CILIUM|OLD_CILIUM)_/.test(name)) return 'cilium';
  if (/^DOCKER/.test(name)) return 'docker';
  if (/^(KIND|IP-MASQ)/.test(name)) return name.startsWith('KIND') ? 'kind' : 'ip-masq-agent';
  if (/^FLANNEL/.test(name)) return 'flannel';
  if (/^(AWS-|AWS_)/.test(name)) return 'aws-vpc-cni';
  if (/^CNI-/.test(name)) return 'cni-plugins';
  if (/^WEAVE/.test(name)) return 'weave';
  if (/^(ISTIO_|ztunnel)/.test(name)) return 'istio';
  if (/^(IN_|FWDI_|FWDO_|OUT_|PRE_|POST_|FORWARD_|INPUT_|OUTPUT_)/.test(name)) return 'firewalld';
  if (/^(nixos-fw|ufw-|f2b-|LIBVIRT_)/.test(name)) return name.startsWith('ufw') ? 'ufw' : name.startsWith('f2b') ? 'fail2ban' : name.startsWith('LIBVIRT') ? 'libvirt' : 'nixos';
  if (/^KUBE-/.test(name)) return 'kube-proxy';
  return 'unknown';
}
