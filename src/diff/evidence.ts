/**
 * Evidence one side of a diff has and the other does not. A dump missing from one side is not a
 * change: the Services and rules are compared on what both sides hold, and what only one side
 * holds is said once (issue 29: a bundle with `ip route` against one without reported every
 * endpoint's locality as changed and buried the one real change).
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import type { ServicePort } from '../kube/types.js';
import type { NotCompared } from './modes.js';

/** A kind of evidence a side holds, named by the dump that gives it. */
export type EvidenceKind =
  | 'iptables v4'
  | 'iptables v6'
  | 'nft'
  | 'ipset'
  | 'ipvs'
  | 'ip route'
  | 'ip addr'
  | 'ip rule'
  | 'sysctl'
  | 'bridge ports'
  | 'kernel version'
  | 'kube-proxy log'
  | 'kube-proxy config'
  | 'API objects'
  | 'conntrack'
  | 'conntrack stats';

/** What the evidence kind decides, so that its absence on one side leaves it uncompared. */
export type EvidenceUse = 'rules' | 'endpoint-locality' | 'service-names';

/** What a diff compares with each kind (empty: nothing the diff compares rests on it). */
export const EVIDENCE_USE: Readonly<Record<EvidenceKind, readonly EvidenceUse[]>> = {
  'iptables v4': ['rules'],
  'iptables v6': ['rules'],
  nft: ['rules'],
  ipset: ['rules'],
  ipvs: ['rules'],
  // Locality (is an endpoint on this node) is read from routes and the node's addresses (kube/locality.ts).
  'ip route': ['endpoint-locality'],
  'ip addr': ['endpoint-locality'],
  // The API names the Services an IPVS dump shows by address only, and places endpoints on nodes.
  'API objects': ['service-names', 'endpoint-locality'],
  'ip rule': [],
  sysctl: [],
  'bridge ports': [],
  'kernel version': [],
  'kube-proxy log': [],
  'kube-proxy config': [],
  conntrack: [],
  'conntrack stats': [],
};

const FORMAT_KIND: Readonly<Record<string, EvidenceKind>> = {
  nft: 'nft',
  'nft-json': 'nft',
  'ipset-list': 'ipset',
  'ipset-save': 'ipset',
  ipvsadm: 'ipvs',
  'ip-route': 'ip route',
  'ip-route-json': 'ip route',
  'ip-addr': 'ip addr',
  'ip-addr-json': 'ip addr',
  'ip-rule': 'ip rule',
  'ip-rule-json': 'ip rule',
  sysctl: 'sysctl',
  'bridge-link': 'bridge ports',
  'sysfs-net': 'bridge ports',
  uname: 'kernel version',
  'kube-proxy-log': 'kube-proxy log',
  'kube-proxy-config': 'kube-proxy config',
  'k8s-api': 'API objects',
  conntrack: 'conntrack',
  'conntrack-stats': 'conntrack stats',
};

/** The evidence kinds a snapshot holds, each with the files that hold it (in the snapshot's order). */
export function evidenceOf(s: NodeSnapshot): Map<EvidenceKind, string[]> {
  const out = new Map<EvidenceKind, string[]>();
  const add = (k: EvidenceKind, file: string) => {
    const list = out.get(k) ?? [];
    if (!list.includes(file)) list.push(file);
    out.set(k, list);
  };
  // iptables by family: an ip6tables-save and an iptables-save are two kinds of evidence.
  for (const rs of s.rulesets) add(rs.family === 6 ? 'iptables v6' : 'iptables v4', rs.file);
  for (const f of s.files) {
    const k = FORMAT_KIND[f.format];
    if (k) add(k, f.path);
  }
  return out;
}

export interface OneSidedEvidence {
  readonly side: 'old' | 'new';
  readonly kind: EvidenceKind;
  readonly uses: readonly EvidenceUse[];
  readonly files: readonly string[];
}

/** The evidence kinds only one side holds, old side first, in EVIDENCE_USE's order. */
export function oneSidedEvidence(oldEv: Map<EvidenceKind, string[]>, newEv: Map<EvidenceKind, string[]>): OneSidedEvidence[] {
  const out: OneSidedEvidence[] = [];
  for (const [side, mine, other] of [
    ['old', oldEv, newEv],
    ['new', newEv, oldEv],
  ] as const) {
    for (const kind of Object.keys(EVIDENCE_USE) as EvidenceKind[]) {
      const files = mine.get(kind);
      if (files && !other.has(kind)) out.push({ side, kind, uses: EVIDENCE_USE[kind], files });
    }
  }
  return out;
}

/**
 * IPVS mode reads what a virtual server is for from kube-proxy's ipsets: which addresses are
 * external or LoadBalancer IPs, which front ends have a Local policy, the source ranges. Without
 * the listing on one side those are unknown there (the resolver's defaults), not changed.
 */
const IPVS_WITHOUT_IPSET: readonly NotCompared[] = [
  { what: 'externalTrafficPolicy', why: "IPVS mode marks a Local policy in kube-proxy's ipsets (KUBE-NODE-PORT-LOCAL-*, KUBE-EXTERNAL-IP-LOCAL, KUBE-LOAD-BALANCER-LOCAL)" },
  { what: 'no-endpoints vs no-local-endpoints', why: 'which of the two a virtual server without real servers is depends on that policy' },
  { what: 'nodePort and external addresses', why: 'IPVS mode tells a NodePort, external or LoadBalancer front end from a ClusterIP one by the ipsets KUBE-NODE-PORT-*, KUBE-EXTERNAL-IP and KUBE-LOAD-BALANCER' },
  { what: 'loadBalancerSourceRanges', why: 'IPVS mode lists them in KUBE-LOAD-BALANCER-SOURCE-CIDR' },
];

/**
 * What cannot be compared for want of evidence on one side. The ipset listing matters only to a
 * side kube-proxy's IPVS mode wrote and that lacks it (an iptables-mode side needs none).
 */
export function notComparedWithout(oneSided: readonly OneSidedEvidence[], modes: { readonly old: readonly string[]; readonly new: readonly string[] }): NotCompared[] {
  const lacking = (side: 'old' | 'new') => oneSided.some((e) => e.kind === 'ipset' && e.side !== side);
  if ((lacking('old') && modes.old.includes('ipvs')) || (lacking('new') && modes.new.includes('ipvs'))) return [...IPVS_WITHOUT_IPSET];
  return [];
}

/**
 * Does one-sided evidence decide which Service a front end belongs to (names from ipset comments
 * or API objects)? Then the Services are paired as across modes: by name where both name them,
 * else by address.
 */
export function identityOneSided(oneSided: readonly OneSidedEvidence[]): boolean {
  return oneSided.some((e) => e.kind === 'ipset' || e.kind === 'API objects');
}

/** The value of a field as compared without the one-sided evidence (undefined: not compared). */
export function valueWithout(notCompared: readonly NotCompared[], field: string, base: unknown): unknown {
  const left = (what: string) => notCompared.some((n) => n.what.startsWith(what));
  if (field === 'externalTrafficPolicy' && left('externalTrafficPolicy')) return undefined;
  if (field === 'loadBalancerSourceRanges' && left('loadBalancerSourceRanges')) return undefined;
  if (field === 'state' && left('no-endpoints vs no-local-endpoints') && base === 'no-local-endpoints') return 'no-endpoints';
  if ((field === 'externalIPs' || field === 'loadBalancerIPs' || field === 'externalAddresses' || field === 'nodePort') && left('nodePort and external addresses')) return undefined;
  return base;
}

/**
 * Without the ipset listing an IPVS side cannot attach an external or LoadBalancer front end to
 * its Service: it shows it as a Service of its own, at that address. Such front ends (an unnamed
 * Service at an address either side knows as external) are not added or removed Services: they
 * are counted as not compared.
 */
export function unattachedFrontEnd(all: readonly ServicePort[]): (s: ServicePort) => boolean {
  const external = new Set<string>();
  for (const s of all) {
    for (const ip of [...s.externalIPs, ...s.loadBalancerIPs]) external.add(`${ip}:${s.port}/${s.protocol}`);
    if (s.clusterIP === null && s.name === null) external.add(s.id);
  }
  return (s) => s.name === null && external.has(s.id);
}
