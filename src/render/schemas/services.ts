/** `kpx services -o json|yaml` (and `--service X`, which adds `evidence`). The README's table explains each member. */
import { arr, bool, document, evidence, int, judgementCaveat, mapOf, nullable, num, obj, oneOfStr, str, unknownPart } from './common.js';

/**
 * 2: `state` is the judgement's (src/judge: a claim of absence needs a rule that says so or whole
 * evidence, else `unknown`), Service ports carry `judgement` when it says more than healthy, and
 * the document a `judgement` of the node's evidence (partial tables, stale rules, leftovers, second views).
 */
export const SERVICES_VERSION = 2;

/** A Service port's judgement (docs/json.md): the REASON code, how many more, the unknown share, caveats. */
const serviceJudgement = obj({ reason: nullable(str), more: int, unknown: unknownPart, caveats: arr(judgementCaveat) });

/** What the node's answers rest on, said once (docs/json.md). */
export const nodeJudgement = obj({
  evidence: arr(obj({ file: str, dialect: oneOfStr('iptables', 'nft', 'ipvs'), table: str, kind: oneOfStr('cut', 'grep', 'restore-input', 'edited', 'second-view', 'missing'), message: str }, {}, { closed: false })),
  stale: nullable(obj({ file: str, line: int, tool: str, count: int, since: str, last: str, message: str }, {}, { closed: false })),
  leftovers: arr(obj({ file: str, table: str, chains: int, servicePorts: int, example: str, message: str }, {}, { closed: false })),
  secondViews: arr(obj({ kind: oneOfStr('iptables-restore-input', 'iptables-save', 'nft-transaction'), file: str, of: str, rules: int, matched: int, differingCount: int, differing: arr(obj({ line: int, text: str, chain: str })) }, { family: { enum: [4, 6] } })),
  liveModes: arr(oneOfStr('iptables', 'ipvs', 'nftables')),
});

const endpoint = obj({ ip: str, port: nullable(int), probability: nullable(num), local: nullable(bool) }, { via: str, weight: int, evidence: arr(evidence) });

export const servicePort = obj(
  {
    id: str,
    namespace: nullable(str),
    name: nullable(str),
    portName: nullable(str),
    protocol: nullable(oneOfStr('tcp', 'udp', 'sctp')),
    port: int,
    clusterIP: nullable(str),
    nodePort: nullable(int),
    externalIPs: arr(str),
    loadBalancerIPs: arr(str),
    loadBalancerSourceRanges: arr(str),
    externalTrafficPolicy: oneOfStr('Cluster', 'Local'),
    internalTrafficPolicy: oneOfStr('Cluster', 'Local'),
    sessionAffinity: nullable(obj({ timeoutSeconds: nullable(int) })),
    state: oneOfStr('healthy', 'no-endpoints', 'no-local-endpoints', 'partial', 'unknown'),
    endpoints: arr(endpoint),
    mode: oneOfStr('iptables', 'ipvs', 'nftables'),
    family: { enum: [4, 6] },
    identifiedBy: oneOfStr('comment', 'hash', 'set-comment', 'address'),
    chains: mapOf(str),
    hashVerified: nullable(bool),
    problems: arr(str),
  },
  { evidence: arr(evidence), judgement: serviceJudgement },
);

const foreignObject = obj({ kind: oneOfStr('chain', 'ipset', 'virtual-server', 'nft-chain'), name: str, owner: str, file: str }, { table: str, line: int, leftover: { const: true } });

export const SERVICES_SCHEMA = document(
  'services',
  SERVICES_VERSION,
  'kpx services -o json',
  obj({ services: arr(servicePort), others: arr(foreignObject), problems: arr(obj({ message: str, evidence: arr(evidence) })) }, { judgement: nodeJudgement }),
);
