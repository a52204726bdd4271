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
  // --- absences the builder reports
  'endpoint-chain-absent': { chain: string; from: string };
  'service-chain-absent': { chain: string };
  /** listing 'nft': an nft listing cut before the table's closing brace (else iptables-save without COMMIT). */
  'table-truncated': { table: string; file: string; line: number; listing?: 'nft' };
  'listing-truncated': { file: string; line: number };
  'protocol-unknown': Record<string, never>;
  // --- IPVS mode
  /** Every real server has weight 0: no new connection is accepted. */
  'all-weights-zero': Record<string, never>;
  // --- nftables mode (resolution-wide)
  /** No base chain or map element reaches the chain: stale, or hand-edited. */
  'chain-unreached': { chain: string; empty: boolean };
  // --- not yet typed: the IPVS and nftables readers still describe these in words (see README).
  'ipvs-text': { text: string };
  'nft-text': { text: string };
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
const NOTES: ReadonlySet<ProblemCode> = new Set<ProblemCode>(['ipvs-text', 'share-hidden', 'affinity-hidden']);

export function degrades(p: ServiceProblem): boolean {
  return !NOTES.has(p.code);
}

/** Problems without repeats (same code and fields), in order. */
export function uniqueProblems(list: readonly ServiceProblem[]): ServiceProblem[] {
  if (list.length < 2) return list.slice();
  const seen = new Set<string>();
  const out: ServiceProblem[] = [];
  for (const p of list) {
    const k = JSON.stringify(p);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(p);
  }
  return out;
}
