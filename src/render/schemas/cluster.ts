/** Cluster bundles: `kpx services --nodes -o json` and `kpx trace --node A -o json`. */
import { arr, document, int, mapOf, nullable, num, obj, oneOfStr, str } from './common.js';
import { condition, outcome, trace } from './trace.js';

export const SERVICES_NODES_VERSION = 1;
export const TRACE_CLUSTER_VERSION = 1;

const difference = obj({ kind: oneOfStr('missing-service', 'endpoints', 'mode', 'chains', 'policy', 'address', 'state', 'locality'), message: str, nodes: arr(str) });

const comparison = obj({
  key: str,
  label: str,
  protocol: nullable(str),
  port: int,
  clusterIP: nullable(str),
  presentOn: arr(str),
  missingOn: arr(str),
  agreeing: arr(str),
  views: arr(obj({ node: str, mode: oneOfStr('iptables', 'ipvs', 'nftables'), state: oneOfStr('healthy', 'no-endpoints', 'no-local-endpoints', 'partial', 'unknown'), endpoints: arr(str), chains: arr(str), problems: arr(str) })),
  endpoints: arr(obj({ endpoint: str, nodes: arr(str), localOn: arr(str), owner: nullable(str) })),
  differences: arr(difference),
});

export const SERVICES_NODES_SCHEMA = document(
  'services-nodes',
  SERVICES_NODES_VERSION,
  'kpx services --nodes -o json',
  obj(
    { nodes: arr(str), modes: mapOf(arr(str)), services: arr(comparison), differences: arr(difference), summary: obj({ servicePorts: int, agreeing: int, differing: int }) },
    // Nodes given that could not be read (a damaged summary): not compared, and why.
    { skipped: arr(obj({ node: str, path: str, reason: str })) },
  ),
);

const hop = obj(
  {
    node: str,
    role: oneOfStr('origin', 'transit', 'destination'),
    outcomeIndex: int,
    outcome,
    next: nullable(obj({ node: nullable(str), how: str, summary: str, file: str, line: int }, { gateway: str, dev: str })),
  },
  { arriving: obj({ src: str, sport: int, dst: str, dport: int, protocol: str, srcReason: str }), trace },
);

const path = obj({
  probability: num,
  verdict: oneOfStr('DNAT', 'ACCEPT', 'DROP', 'REJECT', 'NONE', 'UNKNOWN'),
  destination: str,
  nodes: arr(str),
  hops: arr(hop),
  end: obj({ kind: oneOfStr('pod', 'node-local', 'dropped', 'unknown', 'no-route', 'outside', 'unowned', 'loop', 'too-many-hops'), node: str, summary: str }, { interface: str, owner: obj({ node: str }, {}, { closed: false }) }),
  problems: arr(str),
  assumptions: arr(str),
  conditions: arr(condition),
});

const crossTrace = obj({
  request: obj({ destination: str, protocol: oneOfStr('tcp', 'udp', 'sctp'), node: str, from: str, src: str }),
  nodes: arr(str),
  origin: obj({ node: str, trace }),
  paths: arr(path),
});

/** Added within version 1: `noMatch` (the target names nothing on the first node: the near misses, as `kpx trace`'s). */
const noMatch = obj({ code: str, target: str, suggestions: arr(obj({ target: str, services: arr(str) })) }, { more: int, kind: str });

export const TRACE_CLUSTER_SCHEMA = document('trace-cluster', TRACE_CLUSTER_VERSION, 'kpx trace -i CLUSTER --node A -o json', obj({ traces: arr(crossTrace) }, { noMatch }));
