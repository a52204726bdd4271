/** `kpx services -o json|yaml` (and `--service X`, which adds `evidence`). The README's table explains each member. */
import { arr, bool, document, evidence, int, mapOf, nullable, num, obj, oneOfStr, str } from './common.js';

export const SERVICES_VERSION = 1;

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
  { evidence: arr(evidence) },
);

const foreignObject = obj({ kind: oneOfStr('chain', 'ipset', 'virtual-server', 'nft-chain'), name: str, owner: str, file: str }, { table: str, line: int });

export const SERVICES_SCHEMA = document(
  'services',
  SERVICES_VERSION,
  'kpx services -o json',
  obj({ services: arr(servicePort), others: arr(foreignObject), problems: arr(obj({ message: str, evidence: arr(evidence) })) }),
);
