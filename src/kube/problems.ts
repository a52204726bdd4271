/**
 * Resolver problems as data: a code and the fields that say what is wrong. Only renderers
 * (src/render/problems.ts) turn them into sentences; lint rules and other consumers read codes.
 */

export interface ProblemFields {
  // --- iptables mode
  /** The statistic ladder leaves a share of new connections without an endpoint. */
  'ladder-leftover': { chain: string; share: number };
  /** An endpoint rule after one that takes every packet. */
  'ladder-unreachable-rule': { chain: string; rule: number };
  /** An endpoint's share is not the equal share kube-proxy writes. */
  'unequal-share': { endpoint: string; share: number; equal: number };
  'endpoint-chain-undeclared': { chain: string; target: string };
  'endpoint-chain-without-dnat': { chain: string };
  'service-hash-mismatch': { hash: string; servicePort: string; protocol: string; expected: string };
  'endpoint-hash-mismatch': { chain: string; endpoint: string; servicePort: string; expected: string };
  /** REJECT/DROP rules for external addresses do not say whether they are externalIPs or LB IPs. */
  'external-kind-ambiguous': { addresses: string[] };
  'balancing-chain-empty': { chain: string };
  /** A block of rules appears more than once in a chain, identically (a paste repeated). */
  'repeated-rules': { chain: string; times: number; rules: number };
  /** The nft view of iptables-nft shows an endpoint rule's `-m statistic` only as `xt match statistic`: shares unknown. */
  'share-hidden': { chain: string; match: string };
  /** …and `-m recent --rcheck` only as `xt match recent`: affinity is on, its timeout unknown. */
  'affinity-hidden': { chain: string };
  /**
   * Resolution-wide: kube-proxy iptables-mode Service chains no built-in chain reaches (leftovers of
   * an earlier proxy mode, or of a kube-proxy that stopped): they act on no packet, so they are no
   * Service's state. `servicePorts`: how many Service ports they would have been.
   */
  'leftover-service-chains': { table: string; chains: number; servicePorts: number; example: string; file: string };
  // --- absences the builder reports
  'endpoint-chain-absent': { chain: string; from: string };
  'service-chain-absent': { chain: string };
  /** listing 'nft': an nft listing cut before the table's closing brace (else iptables-save without COMMIT). */
  'table-truncated': { table: string; file: string; line: number; listing?: 'nft' };
  'listing-truncated': { file: string; line: number };
  'real-server-not-an-address': { vs: string; name: string; file: string; line: number };
  'protocol-unknown': Record<string, never>;
  // --- IPVS mode
  /** Every real server has weight 0: no new connection is accepted. */
  'all-weights-zero': Record<string, never>;
  'ipvs-fwmark-service': { vs: string };
  /** `ipvsadm -L` without -n: a host or port name instead of numbers. */
  'ipvs-named-virtual-server': { vs: string };
  /** The virtual server is in none of the ipsets kube-proxy keeps for its kind (stale). */
  'ipvs-no-set-entry': { vs: string; sets: string[] };
  'ipvs-vip-unbound': { vip: string; vs: string };
  /** A NodePort / external / LB virtual server matches several ClusterIP ones (superset: Local policy). */
  'ipvs-ambiguous-group': { role: 'nodeport' | 'lb' | 'external'; id: string; candidates: string[]; superset: boolean };
  'ipvs-ungrouped': { role: 'nodeport' | 'lb' | 'external'; id: string };
  'ipvs-several-nodeports': { ports: number[] };
  'ipvs-port-unknown': Record<string, never>;
  'ipvs-lb-no-source-ranges': { vs: string };
  'ipvs-node-addresses-disagree': { nodePort?: number; vs?: string };
  /** `extra` empty: not listed. */
  'ipvs-extra-real-servers': { vs: string; than: string; extra: string[] };
  'ipvs-persistence-disagrees': { timeouts: (number | null)[] };
  'ipvs-external-local-inferred': Record<string, never>;
  'ipvs-internal-local-inferred': { vs: string; than: string };
  /** No local real server under a Local policy (behind: the virtual servers; absent: the Service port as a whole). */
  'ipvs-no-local-real-server': { policy: 'external' | 'internal'; behind?: string[] };
  'ipvs-no-real-servers': Record<string, never>;
  'ipvs-some-draining': { zero: number; of: number };
  'ipvs-local-has-remote': { vs: string; remote: string[] };
  /** accepted: the set lets iptables accept the traffic (KUBE-CLUSTER-IP…), which IPVS then does not balance. */
  'ipvs-set-entry-without-vs': { set: string; entry: string; accepted: boolean };
  'ipvs-nodeport-without-vs': { set: string; port: number; protocol: string };
  'ipvs-dummy-address-unused': { address: string };
  // --- nftables mode (resolution-wide)
  /** No base chain or map element reaches the chain: stale, or hand-edited. */
  'chain-unreached': { chain: string; empty: boolean };
  // --- nftables mode (per Service port). `set` is a map's name, `element` its key as listed (`10.0.0.1 . tcp . 80`).
  /** Two chains of one role (service-, local-, external-, firewall-) claim one Service port. */
  'nft-two-chains': { role: string; chain: string; other: string };
  'nft-element-not-service-chain': { set: string; element: string; target: string };
  'nft-element-to-endpoint-chain': { set: string; element: string; chain: string };
  'nft-element-no-goto': { set: string; element: string };
  'nft-ports-disagree': { set: string; port: number; other: number };
  'nft-nodeport-not-external': { element: string; target: string | undefined };
  'nft-element-names-no-service': { set: string; element: string };
  'nft-firewall-element-not-firewall': { set: string; element: string; target: string | undefined };
  // no-endpoint maps
  'nft-element-no-verdict': { set: string; element: string };
  'nft-element-target-absent': { set: string; element: string; chain: string };
  /** verdict: as listed (`accept`, `jump x`). */
  'nft-no-endpoint-verdict-passes': { set: string; element: string; verdict: string };
  'nft-no-endpoint-reject-and-drop': Record<string, never>;
  'nft-no-endpoint-reject-with-endpoints': Record<string, never>;
  'nft-nothing-delivers': Record<string, never>;
  // balancing (numgen) in service-/local- chains
  /** map: the named map (`@name`), null when the vmap names none. */
  'nft-numgen-named-map': { chain: string; map: string | null };
  'nft-numgen-several': { chain: string; rules: number };
  'nft-numgen-key-not-number': { chain: string; key: string };
  /** verdict / value: the element's right side as listed, null when it has none. */
  'nft-numgen-not-endpoint-goto': { chain: string; key: string; verdict: string | null };
  'nft-numgen-not-address': { chain: string; key: string; value: string | null };
  /** keys: map keys `numgen random mod <mod> offset <offset>` never yields. */
  'nft-numgen-dead-keys': { chain: string; mod: number; offset: number; keys: string[] };
  /** missing: the numgen values (offset included) no element answers; their share gets no endpoint. */
  'nft-numgen-gap': { chain: string; mod: number; missing: number[] };
  'nft-no-numgen': { chain: string };
  'nft-balancing-not-endpoint': { chain: string; target: string };
  'nft-endpoint-no-dnat': { chain: string };
  /** The endpoint chain's name (namedIp/namedPort) against its dnat rule (ip:port). */
  'nft-endpoint-dnat-mismatch': { chain: string; namedIp: string; namedPort: number | null; ip: string | undefined; port: number | null };
  'nft-endpoint-other-service': { chain: string; target: string };
  /** endpoint: an endpoint chain, or `ip:port` of a dnat map entry. */
  'nft-local-endpoint-not-in-service': { chain: string; endpoint: string; serviceChain: string };
  // identity, front ends, masquerade
  /** comment / chains: `namespace/name:port` from the element comment and from the chain names. */
  'nft-comment-disagrees': { comment: string; chains: string };
  'nft-hash-mismatch': { chain: string; hash: string; expected: string };
  'nft-masquerade-address': { chain: string; address: string; clusterIP: string | undefined };
  'nft-masquerade-port': { port: number; mapPort: number };
  /** role: the service-ips element's chain role for a non-cluster address (service, local). */
  'nft-address-internal-chain': { address: string; role: string; clusterIP: string | undefined };
  'nft-cluster-ip-external-chain': { address: string };
  /**
   * No cluster-ips set nor cluster-ips-check (kube-proxy 1.29): of the addresses only a no-endpoint
   * map names, the one inside `range` (the smallest prefix holding every cluster IP the table
   * dispatches) is taken for the cluster IP. A note, not a fault.
   */
  'nft-cluster-ip-inferred': { address: string; range: string; others: string[] };
  'nft-chain-target-absent': { chain: string; target: string };
  'nft-external-no-goto': { chain: string };
  'nft-firewall-no-drop': { chain: string };
  // session affinity
  'nft-affinity-set-absent': { set: string };
  'nft-affinity-no-timeout': { set: string };
  'nft-affinity-other-endpoint': { set: string; chain: string };
  'nft-affinity-target-absent': { chain: string };
}

export type ProblemCode = keyof ProblemFields;

export type ServiceProblem = { [K in ProblemCode]: { readonly code: K } & Readonly<ProblemFields[K]> }[ProblemCode];

/** A problem of one code, typed by its fields. */
export function problem<K extends ProblemCode>(code: K, fields: ProblemFields[K]): ServiceProblem {
  return { code, ...fields } as ServiceProblem;
}

/**
 * Codes that are notes rather than faults: an inference kpx made, or a state the Service is
 * already in. They do not turn a healthy Service port into a partial one.
 */
const NOTES: ReadonlySet<ProblemCode> = new Set<ProblemCode>([
  'nft-cluster-ip-inferred',
  'share-hidden',
  'affinity-hidden',
  // IPVS problems are notes, as they were when they were sentences (their states come from NoEndpointFacts).
  'ipvs-fwmark-service',
  'ipvs-named-virtual-server',
  'ipvs-no-set-entry',
  'ipvs-vip-unbound',
  'ipvs-ambiguous-group',
  'ipvs-ungrouped',
  'ipvs-several-nodeports',
  'ipvs-port-unknown',
  'ipvs-lb-no-source-ranges',
  'ipvs-node-addresses-disagree',
  'ipvs-extra-real-servers',
  'ipvs-persistence-disagrees',
  'ipvs-external-local-inferred',
  'ipvs-internal-local-inferred',
  'ipvs-no-local-real-server',
  'ipvs-no-real-servers',
  'ipvs-some-draining',
  'ipvs-local-has-remote',
  'ipvs-set-entry-without-vs',
  'ipvs-nodeport-without-vs',
  'ipvs-dummy-address-unused',
]);

export function degrades(p: ServiceProblem): boolean {
  return !NOTES.has(p.code);
}

/** Problems without repeats (same code and fields), in order. */
export function uniqueProblems(list: readonly ServiceProblem[]): ServiceProblem[] {
  if (list.length < 2) return list.slice();
  // A problem whose code occurs once cannot repeat another: only the others are turned into
  // JSON to compare (a problem can list thousands of candidates; most lists have no repeat).
  const counts = new Map<string, number>();
  for (const p of list) counts.set(p.code, (counts.get(p.code) ?? 0) + 1);
  if (counts.size === list.length) return list.slice();
  const seen = new Set<string>();
  return list.filter((p) => {
    if (counts.get(p.code) === 1) return true;
    const k = JSON.stringify(p);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}