/**
 * The API objects of a generated cluster, as `kubectl get svc,endpointslices,nodes,pods -A -o json`
 * prints them (a `List`): the intent the generated node's dumps implement. Drift options make the
 * API disagree with the dumps in one known way each, so tests can check each is found exactly once.
 * Headless and ExternalName Services are added (kube-proxy programs nothing for them), with their
 * pods, so an agreeing API exercises them too.
 */
import type { Cluster, Endpoint, NodeInfo, Service, ServicePort } from './cluster.js';

export const DRIFTS = [
  'service-not-programmed',
  'service-stale',
  'endpoint-not-programmed',
  'endpoint-stale',
  'terminating-programmed',
  'traffic-policy',
  'session-affinity',
  'node-port',
  'external-ip',
  'load-balancer-ip',
  'source-range',
] as const;
export type DriftOption = (typeof DRIFTS)[number];

/** What a drift option changed: the Service port (kube-proxy's name) and the address concerned. */
export interface AppliedDrift {
  readonly kind: DriftOption;
  readonly service: string;
  readonly address: string;
}

export interface ApiObjectsOptions {
  readonly drift?: readonly DriftOption[];
  /** Zones by node index (default: zone-a, zone-b, zone-c in turn). */
  readonly zones?: boolean;
  /**
   * Topology hints (`forZones`: the endpoint's own zone) on the endpoints of hint-eligible Services, as
   * the EndpointSlice controller writes them for `trafficDistribution: PreferClose`; the node views of
   * cluster-bundle.ts then program only their zone's endpoints, as kube-proxy does.
   */
  readonly hints?: boolean;
}

/** Nodes' zones: zone-a, zone-b, zone-c in turn by node index. */
export const zoneOf = (i: number): string => `zone-${'abc'[i % 3]}`;

/**
 * Services the generator gives topology hints: Cluster policies both ways and no affinity (so only
 * topology.go's zone filter decides the endpoint set), and endpoints in every zone of the cluster
 * (else a zone without endpoints would make kube-proxy there ignore the hints).
 */
export function hintEligible(s: Service, nodes: readonly NodeInfo[]): boolean {
  if (s.type !== 'ClusterIP' || s.internalTrafficPolicy !== 'Cluster' || s.sessionAffinity !== null || s.ports.length === 0) return false;
  const index = new Map(nodes.map((n) => [n.name, n.index]));
  const have = new Set(s.ports[0].endpoints.map((e) => zoneOf(index.get(e.nodeName) ?? 0)));
  return have.size === Math.min(3, nodes.length);
}

type Json = Record<string, unknown>;
const PROTO = { tcp: 'TCP', udp: 'UDP', sctp: 'SCTP' } as const;
const hostPort = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
const spn = (s: Service, p: ServicePort) => (p.name ? `${s.namespace}/${s.name}:${p.name}` : `${s.namespace}/${s.name}`);
const vip = (s: Service, p: ServicePort) => `${hostPort(s.clusterIP, p.port)}/${p.protocol}`;

interface EndpointDraft {
  ep: Endpoint;
  ready: boolean;
  terminating: boolean;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A Service as the API will show it: a deep copy the drift options may edit, or drop (`keep`). */
interface ServiceDraft {
  svc: Mutable<Service>;
  ports: { port: Mutable<ServicePort>; eps: EndpointDraft[] }[];
  keep: boolean;
}

function draftServices(cluster: Cluster): ServiceDraft[] {
  return cluster.services.map((s) => ({
    svc: { ...s, externalIPs: [...s.externalIPs], loadBalancerIPs: [...s.loadBalancerIPs], loadBalancerSourceRanges: [...s.loadBalancerSourceRanges] },
    ports: s.ports.map((p) => ({ port: { ...p }, eps: p.endpoints.map((ep): EndpointDraft => ({ ep, ready: true, terminating: false })) })),
    keep: true,
  }));
}

/**
 * One drift option that edits a Service of the cluster: which Service it may pick (never `kubernetes`,
 * never one another option already edited) and the edit, which returns the address concerned.
 */
interface ServiceDrift {
  readonly kind: DriftOption;
  readonly eligible: (s: ServiceDraft) => boolean;
  readonly apply: (s: ServiceDraft, family: Cluster['family']) => string;
}

/** A single-port Service whose endpoints, three or more, no policy or affinity filters. */
const plainMulti = (x: ServiceDraft) =>
  x.ports.length === 1 && x.ports[0].eps.length >= 3 && x.svc.type === 'ClusterIP' && x.svc.internalTrafficPolicy === 'Cluster' && x.svc.sessionAffinity === null;
/** A single-port Service of `type` with endpoints and a Cluster internal policy. */
const withEndpoints = (x: ServiceDraft, type: Service['type']) =>
  x.svc.type === type && x.ports.length === 1 && x.ports[0].eps.length > 0 && x.svc.internalTrafficPolicy === 'Cluster';

/** The Service-editing drifts, in the order they pick their Services (the order decides which one each gets). */
const SERVICE_DRIFTS: readonly ServiceDrift[] = [
  {
    kind: 'service-stale',
    eligible: (x) => withEndpoints(x, 'ClusterIP'),
    apply: (s) => {
      s.keep = false;
      return vip(s.svc, s.ports[0].port);
    },
  },
  {
    kind: 'endpoint-stale',
    eligible: plainMulti,
    apply: (s) => {
      const gone = s.ports[0].eps.pop()!;
      return hostPort(gone.ep.ip, gone.ep.port);
    },
  },
  {
    kind: 'terminating-programmed',
    eligible: plainMulti,
    apply: (s) => {
      const t = s.ports[0].eps[0];
      t.ready = false;
      t.terminating = true;
      return hostPort(t.ep.ip, t.ep.port);
    },
  },
  {
    kind: 'endpoint-not-programmed',
    eligible: plainMulti,
    apply: (s) => {
      const last = s.ports[0].eps[s.ports[0].eps.length - 1].ep;
      const ip = nextIp(last.ip);
      s.ports[0].eps.push({ ep: { ip, port: last.port, nodeName: last.nodeName, local: last.local }, ready: true, terminating: false });
      return hostPort(ip, last.port);
    },
  },
  {
    kind: 'traffic-policy',
    eligible: (x) => withEndpoints(x, 'NodePort') && x.svc.externalTrafficPolicy === 'Cluster',
    apply: (s) => {
      s.svc.externalTrafficPolicy = 'Local';
      return vip(s.svc, s.ports[0].port);
    },
  },
  {
    kind: 'session-affinity',
    eligible: (x) => withEndpoints(x, 'ClusterIP') && x.svc.sessionAffinity === null,
    apply: (s) => {
      s.svc.sessionAffinity = { timeoutSeconds: 10800 };
      return vip(s.svc, s.ports[0].port);
    },
  },
  {
    kind: 'node-port',
    eligible: (x) => x.svc.type === 'NodePort' && x.ports.length === 1 && x.ports[0].port.nodePort !== null,
    apply: (s) => {
      const np = s.ports[0].port.nodePort! === 32767 ? 30000 : s.ports[0].port.nodePort! + 1;
      s.ports[0].port.nodePort = np;
      return `NodePort ${np}`;
    },
  },
  {
    kind: 'external-ip',
    eligible: (x) => withEndpoints(x, 'ClusterIP') && x.svc.externalIPs.length === 0,
    apply: (s, family) => {
      const ip = family === 4 ? '192.0.2.250' : '2001:db8::fa';
      (s.svc.externalIPs as string[]).push(ip);
      return ip;
    },
  },
  {
    kind: 'load-balancer-ip',
    eligible: (x) => x.svc.type === 'LoadBalancer' && x.svc.loadBalancerIPs.length === 1 && x.ports.length === 1 && x.svc.loadBalancerSourceRanges.length === 0,
    apply: (s, family) => {
      const ip = family === 4 ? '198.51.100.250' : '2001:db8:1::fa';
      (s.svc.loadBalancerIPs as string[]).push(ip);
      return ip;
    },
  },
  {
    kind: 'source-range',
    eligible: (x) => x.svc.type === 'LoadBalancer' && x.svc.loadBalancerSourceRanges.length > 0 && x.ports.length === 1,
    apply: (s, family) => {
      const r = family === 4 ? '100.64.0.0/10' : 'fd99::/64';
      (s.svc.loadBalancerSourceRanges as string[]).push(r);
      return r;
    },
  },
];

/** Applies the chosen Service-editing drifts, each to the first eligible Service no other drift took. */
function applyServiceDrifts(services: ServiceDraft[], drift: ReadonlySet<DriftOption>, family: Cluster['family']): AppliedDrift[] {
  const applied: AppliedDrift[] = [];
  const used = new Set<ServiceDraft>();
  for (const d of SERVICE_DRIFTS) {
    if (!drift.has(d.kind)) continue;
    const s = services.find((x) => x.keep && x.svc.name !== 'kubernetes' && !used.has(x) && d.eligible(x));
    if (!s) continue;
    used.add(s);
    const address = d.apply(s, family);
    applied.push({ kind: d.kind, service: spn(s.svc, s.ports[0].port), address });
  }
  return applied;
}

function nodeJson(n: NodeInfo, opts: ApiObjectsOptions): Json {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: n.name, labels: { 'kubernetes.io/hostname': n.name, ...(opts.zones === false ? {} : { 'topology.kubernetes.io/zone': zoneOf(n.index) }) } },
    spec: { podCIDR: n.podCIDR, podCIDRs: [n.podCIDR] },
    status: { addresses: [{ type: 'InternalIP', address: n.ip }, { type: 'Hostname', address: n.name }] },
  };
}

/** One slice per Service (kube-proxy merges slices; the port list is the Service's). */
function endpointSliceJson(cluster: Cluster, { svc, ports }: ServiceDraft, opts: ApiObjectsOptions, nodeIndex: ReadonlyMap<string, number>): Json {
  const eps = new Map<string, EndpointDraft>();
  for (const p of ports) for (const e of p.eps) eps.set(e.ep.ip, e);
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc.name}-x1k2z`, namespace: svc.namespace, labels: { 'kubernetes.io/service-name': svc.name, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } },
    addressType: cluster.family === 4 ? 'IPv4' : 'IPv6',
    endpoints: [...eps.values()].map((e) => ({
      addresses: [e.ep.ip],
      conditions: { ready: e.ready, serving: true, terminating: e.terminating },
      nodeName: e.ep.nodeName,
      ...(opts.zones === false ? {} : { zone: zoneOf(nodeIndex.get(e.ep.nodeName) ?? 0) }),
      ...(opts.hints && hintEligible(svc, cluster.nodes) ? { hints: { forZones: [{ name: zoneOf(nodeIndex.get(e.ep.nodeName) ?? 0) }] } } : {}),
      targetRef: { kind: 'Pod', namespace: svc.namespace, name: podName(svc, e.ep) },
    })),
    // The slice's ports carry the target port, by the Service port's name and protocol.
    ports: ports.map((p) => ({ name: p.port.name ?? '', protocol: PROTO[p.port.protocol], port: p.eps[0]?.ep.port ?? p.port.targetPort })),
  };
}

/** The Service the `service-not-programmed` drift adds to the API only, and what it applied. */
function unprogrammedService(cluster: Cluster): { item: Json; applied: AppliedDrift } {
  const ip = cluster.family === 4 ? '10.96.255.250' : 'fd00:10:96::fffa';
  return {
    item: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'drift-new', namespace: 'default' }, spec: { type: 'ClusterIP', clusterIP: ip, clusterIPs: [ip], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], selector: { app: 'drift-new' } } },
    applied: { kind: 'service-not-programmed', service: 'default/drift-new:http', address: `${hostPort(ip, 80)}/tcp` },
  };
}

/** Services kube-proxy programs nothing for: headless (with a pod's slice) and ExternalName. */
function servicesWithoutRules(cluster: Cluster): Json[] {
  const node = cluster.nodes[0];
  const headlessIp = nextIp(node.podCIDR.split('/')[0], 250);
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db-headless', namespace: 'data' }, spec: { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'], ports: [{ name: 'pg', port: 5432, protocol: 'TCP', targetPort: 5432 }], selector: { app: 'db' } } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'db-headless-h8s7q', namespace: 'data', labels: { 'kubernetes.io/service-name': 'db-headless' } },
      addressType: cluster.family === 4 ? 'IPv4' : 'IPv6',
      endpoints: [{ addresses: [headlessIp], conditions: { ready: true, serving: true, terminating: false }, nodeName: node.name }],
      ports: [{ name: 'pg', protocol: 'TCP', port: 5432 }],
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'mail-relay', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'smtp.example.com' } },
  ];
}

/** The List and what the drift options changed in it. */
export function apiObjects(cluster: Cluster, opts: ApiObjectsOptions = {}): { list: Json; applied: AppliedDrift[] } {
  const drift = new Set(opts.drift ?? []);
  const services = draftServices(cluster);
  const applied = applyServiceDrifts(services, drift, cluster.family);
  const nodeIndex = new Map(cluster.nodes.map((n) => [n.name, n.index]));
  const items: Json[] = cluster.nodes.map((n) => nodeJson(n, opts));
  const pods = new Map<string, Json>();
  for (const draft of services) {
    if (!draft.keep) continue;
    items.push(serviceJson(draft.svc, draft.ports.map((p) => p.port)));
    items.push(endpointSliceJson(cluster, draft, opts, nodeIndex));
    for (const p of draft.ports) for (const e of p.eps) pods.set(`${draft.svc.namespace}/${podName(draft.svc, e.ep)}`, podJson(draft.svc, e));
  }
  if (drift.has('service-not-programmed')) {
    const { item, applied: added } = unprogrammedService(cluster);
    items.push(item);
    applied.push(added);
  }
  for (const item of servicesWithoutRules(cluster)) items.push(item);
  for (const p of pods.values()) items.push(p);
  return { list: { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } }, applied };
}

function serviceJson(s: Service, ports: readonly ServicePort[]): Json {
  const spec: Json = {
    type: s.type,
    clusterIP: s.clusterIP,
    clusterIPs: [s.clusterIP],
    ipFamilies: [s.clusterIP.includes(':') ? 'IPv6' : 'IPv4'],
    ports: ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, protocol: PROTO[p.protocol], targetPort: p.targetPort, ...(p.nodePort !== null ? { nodePort: p.nodePort } : {}) })),
    selector: { app: s.name },
    sessionAffinity: s.sessionAffinity ? 'ClientIP' : 'None',
    ...(s.sessionAffinity ? { sessionAffinityConfig: { clientIP: { timeoutSeconds: s.sessionAffinity.timeoutSeconds } } } : {}),
    internalTrafficPolicy: s.internalTrafficPolicy,
    ...(s.type !== 'ClusterIP' ? { externalTrafficPolicy: s.externalTrafficPolicy } : {}),
    ...(s.externalIPs.length ? { externalIPs: s.externalIPs } : {}),
    ...(s.loadBalancerSourceRanges.length ? { loadBalancerSourceRanges: s.loadBalancerSourceRanges } : {}),
    ...(s.healthCheckNodePort !== null ? { healthCheckNodePort: s.healthCheckNodePort } : {}),
  };
  const status = s.type === 'LoadBalancer' ? { loadBalancer: { ingress: s.loadBalancerIPs.map((ip) => ({ ip })) } } : { loadBalancer: {} };
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: s.name, namespace: s.namespace }, spec, status };
}

function podName(s: Service, ep: Endpoint): string {
  return `${s.name}-${ep.ip.replace(/[.:]/g, '-')}`;
}

function podJson(s: Service, e: EndpointDraft): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: podName(s, e.ep), namespace: s.namespace, labels: { app: s.name }, ...(e.terminating ? { deletionTimestamp: '2026-01-15T11:59:30Z' } : {}) },
    spec: { nodeName: e.ep.nodeName },
    status: { phase: 'Running', podIP: e.ep.ip, podIPs: [{ ip: e.ep.ip }] },
  };
}

/** The address `step` after `ip` (IPv4 dotted or IPv6), for endpoints the dumps do not have. */
function nextIp(ip: string, step = 1): string {
  if (!ip.includes(':')) {
    const n = ip.split('.').reduce((a, o) => a * 256 + Number(o), 0) + step;
    return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
  }
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t].map((g) => parseInt(g, 16));
  groups[7] += step;
  return groups.map((g) => g.toString(16)).join(':');
}
