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
  'protocol-unknown': () => 'the rules name no protocol and no Service name gives it: the protocol is unknown',
  'all-weights-zero': () => 'all real servers have weight 0 (draining)',
  'chain-unreached': (p) => `chain ${p.chain} is not reached from any base chain or map element${p.empty ? ' (empty: a stale chain kube-proxy flushed and deletes about a second later)' : ''}`,
  'ipvs-text': (p) => p.text,
  'nft-text': (p) => p.text,
};

export function problemText(p: ServiceProblem): string {
  return (TEXT[p.code] as (f: ServiceProblem) => string)(p);
}
