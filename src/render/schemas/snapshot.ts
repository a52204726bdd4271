/** Outputs about inputs and snapshots: `kpx inspect`, `kpx dump -o json`, `kpx diff`, `kpx reverse`. */
import { arr, bool, diagnostic, document, evidence, int, mapOf, nullable, num, obj, oneOfStr, str } from './common.js';

export const INSPECT_VERSION = 1;
export const DUMP_VERSION = 1;
export const DIFF_VERSION = 1;
export const REVERSE_VERSION = 1;

const counts = mapOf(int);

export const INSPECT_SCHEMA = document(
  'inspect',
  INSPECT_VERSION,
  'kpx inspect -o json',
  obj({
    files: arr(obj({ path: str, format: str, bytes: int, counts, diagnostics: arr(diagnostic) }, { variant: str })),
    snapshot: obj({
      name: str,
      proxyModes: arr(str),
      families: arr({ enum: [4, 6] }),
      iptablesBackends: arr(str),
      counts,
      nftTables: arr(obj({ family: str, name: str, writtenBy: oneOfStr('iptables-nft', 'kube-proxy nftables mode', 'nft') })),
      missing: arr(str),
    }),
  }),
);

/** The model is each format's own parsed form (tables/chains/rules, routes, sets…): open, by format. */
export const DUMP_SCHEMA = document(
  'dump',
  DUMP_VERSION,
  'kpx dump -o json',
  obj({ file: str, format: str, counts, model: { anyOf: [{ type: 'object' }, { type: 'array' }] }, diagnostics: arr(obj({ severity: oneOfStr('error', 'warning', 'info'), code: str, message: str, line: int, column: int }, {}, { closed: false })) }),
);

const summary = obj({
  key: str,
  namespace: nullable(str),
  name: nullable(str),
  portName: nullable(str),
  protocol: nullable(str),
  port: int,
  family: { enum: [4, 6] },
  clusterIP: nullable(str),
  nodePort: nullable(int),
  state: str,
  mode: str,
  endpoints: int,
});
const endpointRef = obj({ address: str, local: nullable(bool), probability: nullable(num) });
const ruleRef = obj({ text: str, file: str, line: int });
const side = obj({ name: str, files: arr(str), servicePorts: int });
const unitKind = oneOfStr('iptables-chain', 'nft-chain', 'nft-set', 'ipset', 'ipvs');

/**
 * Added within version 1: `modes` (a diff across proxy modes), endpoint `share` changes (also for the
 * endpoints that stay when others come or go), `rules.proxyRules` / `rules.oneSided`, `evidence`
 * (evidence only one side holds, and what was therefore not compared).
 */
const serviceChange = obj({
  key: str,
  old: summary,
  new: summary,
  fields: arr(obj({ field: str, old: {}, new: {} })),
  endpointsAdded: arr(endpointRef),
  endpointsRemoved: arr(endpointRef),
  endpointsChanged: arr(obj({ address: str, field: oneOfStr('local', 'weight', 'share'), old: {}, new: {} })),
});
const unitChange = obj(
  { kind: unitKind, unit: str, status: oneOfStr('added', 'removed', 'changed'), added: arr(ruleRef), removed: arr(ruleRef), moved: arr(ruleRef) },
  { policy: obj({ old: nullable(str), new: nullable(str) }) },
);
const rules = obj(
  { explained: obj({ added: int, removed: int, moved: int }), unexplained: arr(unitChange) },
  { proxyRules: obj({ old: int, new: int }), oneSided: arr(obj({ kind: unitKind, side: oneOfStr('old', 'new'), units: int, items: int })) },
);
const modes = obj({ old: arr(str), new: arr(str), notCompared: arr(obj({ what: str, why: str })) });
const oneSidedEvidence = obj({
  oneSided: arr(obj({ side: oneOfStr('old', 'new'), kind: str, uses: arr(oneOfStr('rules', 'endpoint-locality', 'service-names')), files: arr(str) })),
  notCompared: arr(obj({ what: str, why: str })),
  localityNotCompared: int,
  frontEndsNotCompared: int,
});

export const DIFF_SCHEMA = document(
  'diff',
  DIFF_VERSION,
  'kpx diff -o json',
  obj(
    {
      old: side,
      new: side,
      services: obj({ added: arr(summary), removed: arr(summary), changed: arr(serviceChange), unchanged: int }),
      rules,
    },
    { modes, evidence: oneSidedEvidence },
  ),
);

const frontend = obj({ kind: oneOfStr('clusterIP', 'nodePort', 'externalIP', 'loadBalancerIP'), address: nullable(str), port: int, protocol: str, probability: nullable(num), policy: oneOfStr('Cluster', 'Local') }, { note: str });

export const REVERSE_SCHEMA = document(
  'reverse',
  REVERSE_VERSION,
  'kpx reverse POD-IP[:PORT] -o json',
  obj({
    target: obj({ ip: str }, { port: int }),
    nodes: arr(str),
    matches: arr(
      obj({
        node: str,
        service: str,
        namespace: nullable(str),
        name: nullable(str),
        portName: nullable(str),
        mode: str,
        endpoint: obj({ ip: str, port: nullable(int), local: nullable(bool) }, { via: str, weight: int }),
        frontends: arr(frontend),
        evidence: arr(evidence),
      }),
    ),
    otherDnat: arr(obj({ node: str, where: str, to: str, file: str, line: int, text: str })),
  }),
);
