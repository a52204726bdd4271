/**
 * `kpx summarize -o json`: one node's analysis (src/cluster/summary.ts). `kpx services --nodes`
 * reads summaries written on other machines, so it checks each against this schema before using
 * it (src/render/schemas/validate.ts): a summary that does not fit is reported, and the other
 * nodes are compared. Members kpx reads are typed; the rest (interfaces, routes, problems'
 * fields) are open.
 */
import { arr, bool, int, mapOf, nullable, num, obj, oneOfStr, str, type Schema } from './common.js';

/** Bumped with src/cluster/summary.ts SUMMARY_SCHEMA_VERSION. */
export const NODE_SUMMARY_VERSION = 1;

/** `[file index, line]`. */
const ref: Schema = { type: 'array', items: int, minItems: 2, maxItems: 2 };
const refs = arr(ref);
const open = (required: Record<string, Schema> = {}) => obj(required, {}, { closed: false });

const file = obj({
  path: str,
  format: str,
  bytes: int,
  counts: mapOf(num),
  errors: int,
  warnings: int,
  firstErrors: arr(obj({ code: str, line: int, column: int, message: str })),
});

const endpoint = obj({ ip: str, port: nullable(int), probability: nullable(num), local: nullable(bool), evidence: refs }, { via: str, weight: num });

const service = obj(
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
    identifiedBy: str,
    owned: arr(obj({ role: str, name: str }, { address: str })),
    frontEnds: arr(obj({ kind: str, ip: nullable(str), port: nullable(int), evidence: ref })),
    anchor: str,
    hashVerified: nullable(bool),
    problems: arr(open({ code: str })),
    evidence: refs,
  },
  {},
  { closed: false },
);

const finding = obj({ ruleId: str, severity: oneOfStr('error', 'warning', 'info'), message: str, fingerprint: str, evidence: refs }, { service: str });

export const NODE_SUMMARY_SCHEMA: Schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: `https://kpx.invalid/schemas/node-summary/v${NODE_SUMMARY_VERSION}.json`,
  title: 'kpx summarize -o json',
  type: 'object',
  required: ['kind', 'schemaVersion', 'kpxVersion', 'node', 'files', 'modes', 'services', 'others', 'problems', 'findings', 'findingCounts', 'interfaces', 'routes', 'extraNodeIps'],
  properties: {
    kind: { const: 'kpx-node-summary' },
    schemaVersion: { const: NODE_SUMMARY_VERSION, description: "the version of this document's shape; bumped when a member is removed or changes meaning" },
    kpxVersion: str,
    node: str,
    files: arr(file),
    modes: arr(oneOfStr('iptables', 'ipvs', 'nftables')),
    services: arr(service),
    others: arr(open({ kind: str, name: str, owner: str, file: str })),
    problems: arr(obj({ problem: open({ code: str }), evidence: refs })),
    findings: arr(finding),
    findingCounts: obj({ error: int, warning: int, info: int }),
    interfaces: arr(open({ name: str })),
    routes: arr(open()),
    extraNodeIps: arr(str),
  },
  additionalProperties: true,
};
