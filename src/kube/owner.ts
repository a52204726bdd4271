/**
 * Who wrote an object kpx did not attribute to a Service: iptables chains, ipsets, nftables tables.
 * The one ownership module of all three proxy modes.
 */
import type { NftTable } from '../model/nft.js';

const KUBE_INFRA = new Set([
  'KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL', 'KUBE-MARK-MASQ', 'KUBE-MARK-DROP',
  'KUBE-POSTROUTING', 'KUBE-FORWARD', 'KUBE-FIREWALL', 'KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY', 'KUBE-IPTABLES-HINT',
  'KUBE-LOAD-BALANCER', 'KUBE-NODE-PORT', 'KUBE-IPVS-FILTER', 'KUBE-IPVS-OUT-FILTER', 'KUBE-SOURCE-RANGES-FIREWALL',
]);

/** Who wrote a chain or an ipset, from its name (FORMATS.md §1.7). Built-in chains are the kernel's. */
export function chainOwner(name: string): string {
  if (KUBE_INFRA.has(name) || /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-/.test(name)) return 'kube-proxy';
  if (/^KUBE-(ROUTER|POD-FW|NWPLCY)/.test(name)) return 'kube-router';
  if (/^(cali|felix)-/.test(name) || /^cali\d/.test(name)) return 'calico';
  if (/^cilium/i.test(name)) return 'cilium';
  if (/^kube-router/i.test(name)) return 'kube-router';
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

/** Who owns an nftables table that is not kube-proxy's. */
export function nftTableOwner(t: NftTable): string {
  if (t.fromIptablesNft) return 'iptables-nft';
  const n = t.name.toLowerCase();
  if (n === 'kube-proxy') return 'kube-proxy';
  if (n.includes('calico') || n.startsWith('cali')) return 'calico';
  if (n.includes('cilium')) return 'cilium';
  if (n.includes('flannel')) return 'flannel';
  if (n.includes('firewalld')) return 'firewalld';
  if (n.includes('kube-router')) return 'kube-router';
  if (n.includes('antrea')) return 'antrea';
  if (n.includes('docker')) return 'docker';
  if (n.includes('libvirt')) return 'libvirt';
  if (n.includes('kube-network-policies')) return 'kube-network-policies';
  if (n.includes('kindnet')) return 'kindnet';
  if (n === 'nixos-fw') return 'nixos';
  if (['nat', 'filter', 'mangle', 'raw', 'security'].includes(n) && (t.family === 'ip' || t.family === 'ip6')) return 'iptables-nft';
  return 'unknown';
}
