/**
 * Kubernetes API objects (`kubectl get … -o json|yaml`) for `kpx redact`, deny by default: each
 * object is rebuilt from the fields kpx reads (src/extract/k8s-api.ts) and nothing else, every
 * value through its kind of pseudonym (namespace, Service, Pod, node/host, zone) or the address
 * map. Labels other than the few kpx reads, annotations, managed fields, owner references,
 * images, environment, conditions' messages, provider IDs, UIDs: left out, so they cannot leak.
 * Objects of other kinds keep only their kind, name and namespace (kpx counts them as ignored).
 */
import { Document, parseAllDocuments } from 'yaml';
import { parseCidr, parseIp } from '../model/addr.js';
import { blankPasteNoise } from '../load/index.js';
import { dropCollectionKeys } from '../source/index.js';
import { estimateYamlNodes, YAML_NODE_BUDGET } from '../load/format.js';
import type { NameKind, Redactor } from './index.js';

/** A file redact cannot rewrite (and so does not copy): the message says why. */
export class RedactRefusal extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** What a field holds, and so how its value is redacted. */
type Role = NameKind | 'ip' | 'cidr' | 'enum' | 'port-name' | 'number' | 'bool' | 'time' | 'api-version';

/** The labels kpx reads (or that say nothing of the cluster), and what their values name. */
const LABELS: Readonly<Record<string, Role>> = {
  'kubernetes.io/service-name': 'svc',
  'kubernetes.io/hostname': 'host',
  'topology.kubernetes.io/zone': 'zone',
  'failure-domain.beta.kubernetes.io/zone': 'zone',
  'topology.kubernetes.io/region': 'zone',
  'failure-domain.beta.kubernetes.io/region': 'zone',
  'service.kubernetes.io/service-proxy-name': 'name',
  'service.kubernetes.io/headless': 'enum',
  'endpointslice.kubernetes.io/managed-by': 'enum',
};

/** Lower-case values of enum fields that name nothing (Kubernetes' own controllers, empty). */
const KNOWN_VALUES = new Set(['', 'true', 'false', 'endpointslice-controller.k8s.io', 'endpointslicemirroring-controller.k8s.io']);

export function redactApiObjects(r: Redactor, text: string): string {
  const source = blankPasteNoise(text);
  const json = /^\s*[[{]/.test(source);
  if (json) {
    try {
      return JSON.stringify(top(r, JSON.parse(source)), null, 2) + '\n';
    } catch {
      // not whole JSON (cut off, one broken item): read as YAML reads it, as far as it goes
    }
  }
  if (estimateYamlNodes(source, YAML_NODE_BUDGET) > YAML_NODE_BUDGET) throw new RedactRefusal(`a YAML of more than ${YAML_NODE_BUDGET.toLocaleString('en-US')} nodes (kpx does not read it either: get the objects as JSON)`);
  const docs = parseAllDocuments(source, { logLevel: 'error', uniqueKeys: false, prettyErrors: false });
  const values: unknown[] = [];
  for (const d of Array.isArray(docs) ? docs : []) {
    try {
      dropCollectionKeys(d); // kpx does not read such pairs either (src/extract/k8s-api.ts)
      values.push(top(r, d.toJS({ maxAliasCount: 100 })));
    } catch {
      // an alias kpx does not follow: the document is left out
    }
  }
  if (json) return values.map((v) => JSON.stringify(v, null, 2)).join('\n') + '\n';
  return values.map((v) => new Document(v).toString({ lineWidth: 0 })).join('---\n');
}

function top(r: Redactor, v: unknown): unknown {
  return Array.isArray(v) ? v.map((x) => object(r, x)) : object(r, v);
}

function scalar(r: Redactor, role: Role, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  switch (role) {
    case 'number':
      return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v)) ? v : undefined;
    case 'bool':
      return typeof v === 'boolean' ? v : undefined;
    case 'port-name':
      if (typeof v === 'number') return v;
      return typeof v === 'string' && /^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/.test(v) ? v : typeof v === 'string' ? r.name('name', v) : undefined;
    case 'enum':
      return typeof v === 'string' && (/^[A-Z][A-Za-z0-9]{0,62}$/.test(v) || KNOWN_VALUES.has(v)) ? v : typeof v === 'string' ? r.opaque(v) : undefined;
    case 'time':
      return typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)$/.test(v) ? v : typeof v === 'string' ? '1970-01-01T00:00:00Z' : undefined;
    case 'api-version':
      return typeof v === 'string' && /^([a-z0-9.-]+\/)?v\d+(alpha\d+|beta\d+)?$/.test(v) ? v : typeof v === 'string' ? r.opaque(v) : undefined;
    case 'ip': {
      if (typeof v !== 'string') return undefined;
      return parseIp(v) ? r.ip(v) : r.opaque(v);
    }
    case 'cidr': {
      if (typeof v !== 'string') return undefined;
      return parseCidr(v) || parseIp(v) ? r.text(v) : r.opaque(v);
    }
    default:
      if (typeof v !== 'string') return typeof v === 'number' || typeof v === 'boolean' ? v : undefined;
      if (role === 'host' && parseIp(v)) return r.ip(v);
      if (role === 'host') r.addHostname(v);
      return r.name(role, v);
  }
}

/** Copy `fields` of `o` (role, or a function for nested values) into a new object, leaving out the rest. */
function pick(r: Redactor, o: unknown, fields: Readonly<Record<string, Role | ((v: unknown) => unknown)>>): Obj | undefined {
  if (!isObj(o)) return undefined;
  const out: Obj = {};
  for (const [k, how] of Object.entries(fields)) {
    if (!(k in o)) continue;
    const v = typeof how === 'function' ? how(o[k]) : Array.isArray(o[k]) ? (o[k] as unknown[]).map((x) => scalar(r, how, x)) : scalar(r, how, o[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function labels(r: Redactor, v: unknown): Obj | undefined {
  if (!isObj(v)) return undefined;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    const role = LABELS[k] ?? (k.startsWith('node-role.kubernetes.io/') ? 'enum' : undefined);
    if (role !== undefined) out[k] = scalar(r, role, x);
  }
  return out;
}

/** A selector: every key and value pseudonymized (kpx reads only that there is one). */
function selector(r: Redactor, v: unknown): Obj | undefined {
  if (!isObj(v)) return undefined;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [r.name('label', k), typeof x === 'string' ? r.name('label', x) : x]));
}

function metadata(r: Redactor, v: unknown, kind: string): Obj | undefined {
  const nameKind: NameKind = kind === 'Service' || kind === 'Endpoints' ? 'svc' : kind === 'Pod' ? 'pod' : kind === 'Node' ? 'host' : 'name';
  return pick(r, v, {
    name: nameKind,
    namespace: 'ns',
    deletionTimestamp: 'time',
    labels: (x) => labels(r, x),
  });
}

const port = (r: Redactor) => (p: unknown) => list(p).map((x) => pick(r, x, { name: 'port-name', protocol: 'enum', port: 'number', nodePort: 'number', targetPort: 'port-name', appProtocol: 'enum' }));
const targetRef = (r: Redactor) => (t: unknown) => {
  const kind = isObj(t) && t.kind === 'Pod' ? 'pod' : 'name';
  return pick(r, t, { kind: 'enum', name: kind, namespace: 'ns' });
};

function object(r: Redactor, v: unknown): unknown {
  if (!isObj(v)) return v === null || typeof v === 'number' || typeof v === 'boolean' ? v : typeof v === 'string' ? r.opaque(v) : undefined;
  const kind = typeof v.kind === 'string' ? v.kind : '';
  if (kind.endsWith('List') && Array.isArray(v.items)) return { ...pick(r, v, { apiVersion: 'api-version', kind: 'enum' }), items: v.items.map((x) => object(r, x)) };
  const head = { ...pick(r, v, { apiVersion: 'api-version', kind: 'enum' }), ...(v.metadata !== undefined ? { metadata: metadata(r, v.metadata, kind) } : {}) };
  switch (kind) {
    case 'Service':
      return { ...head, ...pick(r, v, { spec: (s) => serviceSpec(r, s), status: (s) => pick(r, s, { loadBalancer: (lb) => pick(r, lb, { ingress: (i) => list(i).map((x) => pick(r, x, { ip: 'ip', hostname: 'host', ipMode: 'enum' })) }) }) }) };
    case 'EndpointSlice':
      return {
        ...head,
        ...pick(r, v, {
          addressType: 'enum',
          endpoints: (e) =>
            list(e).map((x) =>
              pick(r, x, {
                addresses: (a) => list(a).map((y) => (v.addressType === 'FQDN' ? scalar(r, 'host', y) : scalar(r, 'ip', y))),
                conditions: (c) => pick(r, c, { ready: 'bool', serving: 'bool', terminating: 'bool' }),
                nodeName: 'host',
                zone: 'zone',
                hostname: 'name',
                targetRef: targetRef(r),
                hints: (h) => pick(r, h, { forZones: (z) => list(z).map((y) => pick(r, y, { name: 'zone' })), forNodes: (z) => list(z).map((y) => pick(r, y, { name: 'host' })) }),
              }),
            ),
          ports: port(r),
        }),
      };
    case 'Endpoints': {
      const address = (a: unknown) => list(a).map((x) => pick(r, x, { ip: 'ip', nodeName: 'host', hostname: 'name', targetRef: targetRef(r) }));
      return { ...head, ...pick(r, v, { subsets: (s) => list(s).map((x) => pick(r, x, { addresses: address, notReadyAddresses: address, ports: port(r) })) }) };
    }
    case 'Node':
      return {
        ...head,
        ...pick(r, v, {
          spec: (s) => pick(r, s, { podCIDR: 'cidr', podCIDRs: 'cidr' }),
          status: (s) => pick(r, s, { addresses: (a) => list(a).map((x) => nodeAddress(r, x)) }),
        }),
      };
    case 'Pod':
      return {
        ...head,
        ...pick(r, v, {
          spec: (s) => pick(r, s, { nodeName: 'host' }),
          status: (s) => pick(r, s, { phase: 'enum', podIP: 'ip', podIPs: (p) => list(p).map((x) => pick(r, x, { ip: 'ip' })), hostIP: 'ip', hostIPs: (p) => list(p).map((x) => pick(r, x, { ip: 'ip' })) }),
        }),
      };
    default:
      return head;
  }
}

function serviceSpec(r: Redactor, s: unknown): Obj | undefined {
  return pick(r, s, {
    type: 'enum',
    clusterIP: 'ip',
    clusterIPs: 'ip',
    ports: port(r),
    selector: (x) => selector(r, x),
    externalName: 'host',
    externalIPs: 'ip',
    loadBalancerIP: 'ip',
    loadBalancerSourceRanges: 'cidr',
    externalTrafficPolicy: 'enum',
    internalTrafficPolicy: 'enum',
    sessionAffinity: 'enum',
    sessionAffinityConfig: (c) => pick(r, c, { clientIP: (x) => pick(r, x, { timeoutSeconds: 'number' }) }),
    trafficDistribution: 'enum',
    healthCheckNodePort: 'number',
    ipFamilies: 'enum',
    ipFamilyPolicy: 'enum',
  });
}

function nodeAddress(r: Redactor, a: unknown): Obj | undefined {
  const dns = isObj(a) && typeof a.type === 'string' && /DNS|Hostname/.test(a.type);
  return pick(r, a, { type: 'enum', address: dns ? 'host' : 'ip' });
}
