/**
 * What kube-proxy on one node should program, computed from the API's objects the way kube-proxy
 * computes it (kubernetes/kubernetes pkg/proxy):
 *
 *  - which Services it programs at all: `serviceport.go`/`servicechangetracker.go` skip headless
 *    (`clusterIP: None`) and ExternalName Services, and Services carrying the
 *    `service.kubernetes.io/service-proxy-name` label (they belong to another proxy);
 *  - each Service port per IP family: `newBaseServiceInfo` takes the cluster IP, external IPs and
 *    load-balancer ingress IPs of the proxier's family; `UsesClusterEndpoints()` /
 *    `UsesLocalEndpoints()` decide which endpoint sets a port needs;
 *  - each endpoint as `endpointslicecache.go` reads it (`newEndpointSliceInfo`, `addEndpoints`): the
 *    first address only, slices of the other family skipped, ready = `conditions.ready` nil or true,
 *    serving = nil or true, terminating = true only when set, local = `nodeName` is this node;
 *  - which endpoints are used: `topology.go` `CategorizeEndpoints` — ready endpoints, narrowed by
 *    topology hints (`topologyModeFromHints`: every ready endpoint hinted and one hinted for this
 *    node/zone), falling back to serving-and-terminating endpoints when none is ready, separately
 *    for the Cluster and the Local sets.
 *
 * The Service's `trafficDistribution` is not read here, on purpose: kube-proxy never reads it; the
 * EndpointSlice controller turns it into hints, and kube-proxy follows the hints.
 */
import { knows, type ApiEndpoint, type ApiEndpointSlice, type ApiNode, type ApiObjects, type ApiProtocol, type ApiService, type ApiServiceField, type ApiServicePort, type ApiTrafficPolicy, type ApiWhere } from '../model/k8s-api.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatIp, parseIp } from '../model/addr.js';

export type Family = 4 | 6;
export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode';

export interface IntendedEndpoint {
  readonly ip: string;
  readonly port: number;
  readonly nodeName: string | null;
  readonly zone: string | null;
  /** Whether the endpoint is on this node; null when this node is not identified. */
  readonly local: boolean | null;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly zoneHints: readonly string[];
  readonly nodeHints: readonly string[];
  readonly slice: string;
  readonly where: ApiWhere;
}

export interface IntendedServicePort {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string | null;
  readonly protocol: ApiProtocol;
  readonly port: number;
  readonly family: Family;
  readonly clusterIP: string;
  readonly nodePort: number | null;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  readonly loadBalancerSourceRanges: readonly string[];
  /** As kube-proxy keeps it: Local only on a Service that accepts external traffic. */
  readonly externalTrafficPolicy: ApiTrafficPolicy;
  readonly internalTrafficPolicy: ApiTrafficPolicy;
  readonly affinitySeconds: number | null;
  /** Every endpoint the slices list for this port and family (before CategorizeEndpoints). */
  readonly listed: readonly IntendedEndpoint[];
  /** CategorizeEndpoints' clusterEndpoints (empty when the port never uses Cluster policy). */
  readonly cluster: readonly IntendedEndpoint[];
  /** CategorizeEndpoints' localEndpoints (empty when the port never uses Local policy). */
  readonly localSet: readonly IntendedEndpoint[];
  /** allReachableEndpoints: what the node programs endpoint rules for. */
  readonly reachable: readonly IntendedEndpoint[];
  readonly topologyMode: TopologyMode;
  /** Cluster endpoints are serving-terminating ones because none is ready. */
  readonly clusterFallback: boolean;
  readonly usesCluster: boolean;
  readonly usesLocal: boolean;
  /** Local policy but this node was not identified: which endpoints are local is unknown. */
  readonly localityUnknown: boolean;
  readonly service: ApiService;
  readonly servicePort: ApiServicePort;
  /**
   * What the API evidence does not show for this port (its Service or endpoints were read from a
   * text form, issue 30): nothing may be concluded from these. Empty for objects read whole.
   */
  readonly unknown: ReadonlySet<IntentUnknown>;
}

/**
 * Parts of an intended port the evidence does not show. `endpoints`: the endpoint set is not whole
 * (only ready ones, `+ N more`, one slice of several, or none given for a Service read from text).
 */
export type IntentUnknown =
  | 'namespace'
  | 'portName'
  | 'endpoints'
  | 'externalTrafficPolicy'
  | 'internalTrafficPolicy'
  | 'sessionAffinity'
  | 'sessionAffinityTimeout'
  | 'externalAddresses'
  | 'loadBalancerSourceRanges'
  | 'proxyName'
  | 'type';

export type NoRulesReason = 'headless' | 'external-name' | 'no-cluster-ip' | 'other-proxy';

/** A Service kube-proxy programs nothing for, and why. */
export interface ServiceWithoutRules {
  readonly service: ApiService;
  readonly reason: NoRulesReason;
  /** Endpoint addresses the slices list (what DNS returns for a headless Service). */
  readonly addresses: readonly string[];
}

export interface Intent {
  /** The Node object of this node, when identified (by name, else by an address the dumps show). */
  readonly node: ApiNode | null;
  readonly nodeIdentifiedBy: 'name' | 'address' | null;
  readonly zone: string | null;
  readonly ports: readonly IntendedServicePort[];
  readonly withoutRules: readonly ServiceWithoutRules[];
}

const familyOf = (ip: string): Family => (ip.includes(':') ? 6 : 4);

/** This node among the API's Nodes: by the snapshot's name, else by an address the dumps show. */
export function identifyNode(api: ApiObjects, snapshot: Pick<NodeSnapshot, 'name' | 'interfaces' | 'extraNodeIps'>): { node: ApiNode; by: 'name' | 'address' } | null {
  const byName = api.nodes.find((n) => n.name === snapshot.name);
  if (byName) return { node: byName, by: 'name' };
  const mine = new Set<string>();
  for (const i of snapshot.interfaces) for (const a of i.addresses) if (a.scope !== 'host') mine.add(canonical(a.address));
  for (const ip of snapshot.extraNodeIps) mine.add(formatIp(ip));
  const byAddr = api.nodes.find((n) => n.addresses.some((a) => mine.has(canonical(a))));
  return byAddr ? { node: byAddr, by: 'address' } : null;
}

function canonical(ip: string): string {
  const p = parseIp(ip);
  return p ? formatIp(p) : ip;
}

/** serviceport.go shouldSkipService / the service-proxy-name informer filter. */
function noRulesReason(s: ApiService): NoRulesReason | null {
  if (s.serviceProxyName !== null) return 'other-proxy';
  if (s.type === 'ExternalName') return 'external-name';
  if (s.clusterIP === 'None') return 'headless';
  if (s.clusterIP === null) return 'no-cluster-ip';
  return null;
}

/**
 * The intent for this node, computed once per (API objects, snapshot) pair: resolving (API names),
 * `services`, the drift behind the api- lint rules and `--nodes` each ask for it. Both are
 * immutable model objects; a snapshot with other node addresses is another object, another intent.
 */
const intents = new WeakMap<ApiObjects, WeakMap<object, Intent>>();

export function intendedDataplane(api: ApiObjects, snapshot: Pick<NodeSnapshot, 'name' | 'interfaces' | 'extraNodeIps'>): Intent {
  let bySnapshot = intents.get(api);
  if (!bySnapshot) intents.set(api, (bySnapshot = new WeakMap()));
  let intent = bySnapshot.get(snapshot);
  if (!intent) bySnapshot.set(snapshot, (intent = computeIntent(api, snapshot)));
  return intent;
}

function computeIntent(api: ApiObjects, snapshot: Pick<NodeSnapshot, 'name' | 'interfaces' | 'extraNodeIps'>): Intent {
  const id = identifyNode(api, snapshot);
  const nodeName = id?.node.name ?? null;
  const zone = id?.node.zone ?? null;
  const slicesBySvc = new Map<string, ApiEndpointSlice[]>();
  for (const sl of api.slices) {
    if (sl.serviceName === null) continue; // endpointSliceCacheKeys: a slice without the label is ignored
    const k = `${sl.namespace}/${sl.serviceName}`;
    const list = slicesBySvc.get(k);
    if (list) list.push(sl);
    else slicesBySvc.set(k, [sl]);
  }
  const ports: IntendedServicePort[] = [];
  const withoutRules: ServiceWithoutRules[] = [];
  const podNode = podNodeByIp(api);
  for (const svc of api.services) {
    // A cluster IP the text does not show (redacted): nothing can be keyed to this Service.
    if (!knows(svc, 'clusterIPs') && !knows(svc, 'type')) continue;
    const slices = slicesBySvc.get(`${svc.namespace}/${svc.name}`) ?? [];
    if (!knows(svc, 'clusterIPs') && svc.type !== 'ExternalName') continue;
    const why = noRulesReason(svc);
    if (why !== null) {
      const addresses = [...new Set(slices.flatMap((s) => s.endpoints.map((e) => e.addresses[0]).filter((a): a is string => a !== undefined)))].sort();
      withoutRules.push({ service: svc, reason: why, addresses });
      continue;
    }
    for (const clusterIP of svc.clusterIPs) {
      const family = familyOf(clusterIP);
      for (const sp of svc.ports) ports.push(intendPort(svc, sp, clusterIP, family, slices, nodeName, zone, podNode));
    }
  }
  return { node: id?.node ?? null, nodeIdentifiedBy: id?.by ?? null, zone, ports, withoutRules };
}

/** Each pod's node by its IP (`kubectl get pods -o wide`, Pod objects): where an endpoint runs when its slice does not say. */
function podNodeByIp(api: ApiObjects): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const p of api.pods) if (p.nodeName !== null && !p.deleting) for (const ip of p.podIPs) out.set(ip, p.nodeName);
  return out;
}

/**
 * Is this endpoint set whole? Slices read whole are (as kpx always took them); a text form is only
 * when it shows every endpoint of the Service, ready or not (`kubectl describe endpoints`). A
 * Service read from text with no endpoint evidence at all: unknown, not empty.
 */
function endpointsWhole(svc: ApiService, slices: readonly ApiEndpointSlice[]): boolean {
  if (slices.length === 0) return svc.text === undefined;
  const whole = (s: ApiEndpointSlice) => s.text !== undefined && s.text.wholeService && s.text.hidden === 0 && s.text.shows.has('notReady') && s.text.shows.has('portNames') && s.text.shows.has('protocols');
  // One text that is the Service's whole endpoint set (an Endpoints object described) makes the others, views of it, no loss.
  return slices.some(whole) || slices.every((s) => s.text === undefined);
}

/** What the evidence does not show of this Service port (see IntentUnknown). */
function unknownsOf(svc: ApiService, sp: ApiServicePort, slices: readonly ApiEndpointSlice[]): Set<IntentUnknown> {
  const u = new Set<IntentUnknown>();
  if (!endpointsWhole(svc, slices)) u.add('endpoints');
  if (svc.text === undefined) return u;
  const k = (f: ApiServiceField, what: IntentUnknown) => {
    if (!knows(svc, f)) u.add(what);
  };
  k('namespace', 'namespace');
  k('type', 'type');
  k('externalTrafficPolicy', 'externalTrafficPolicy');
  k('internalTrafficPolicy', 'internalTrafficPolicy');
  k('sessionAffinity', 'sessionAffinity');
  k('sessionAffinityTimeout', 'sessionAffinityTimeout');
  k('externalAddresses', 'externalAddresses');
  k('loadBalancerSourceRanges', 'loadBalancerSourceRanges');
  k('labels', 'proxyName');
  if (sp.name === null && !knows(svc, 'portNames')) u.add('portName');
  return u;
}

function intendPort(svc: ApiService, sp: ApiServicePort, clusterIP: string, family: Family, slices: readonly ApiEndpointSlice[], nodeName: string | null, zone: string | null, podNode: ReadonlyMap<string, string> = new Map()): IntendedServicePort {
  const externalIPs = svc.externalIPs.filter((ip) => familyOf(ip) === family);
  const loadBalancerIPs = svc.type === 'LoadBalancer' ? svc.loadBalancerIPs.filter((ip) => familyOf(ip) === family) : [];
  const nodePort = svc.type === 'NodePort' || svc.type === 'LoadBalancer' ? sp.nodePort : null;
  // serviceport.go ExternallyAccessible(): a NodePort, external IPs or load-balancer IPs.
  const external = (nodePort ?? 0) !== 0 || externalIPs.length > 0 || loadBalancerIPs.length > 0;
  // newBaseServiceInfo: externalPolicyLocal only for a Service that takes external traffic
  // (apiservice.ExternalPolicyLocal: type NodePort or LoadBalancer with policy Local).
  const externalLocal = svc.externalTrafficPolicy === 'Local' && (svc.type === 'NodePort' || svc.type === 'LoadBalancer');
  const internalLocal = svc.internalTrafficPolicy === 'Local';
  // serviceport.go UsesClusterEndpoints / UsesLocalEndpoints.
  const usesCluster = !internalLocal || external;
  const usesLocal = internalLocal || (externalLocal && external);
  const listed = endpointsFor(sp, family, slices, nodeName, podNode);
  const cat = categorizeEndpoints(listed, { usesCluster, usesLocal }, nodeName, zone);
  return {
    namespace: svc.namespace,
    name: svc.name,
    portName: sp.name,
    protocol: sp.protocol,
    port: sp.port,
    family,
    clusterIP,
    nodePort,
    externalIPs,
    loadBalancerIPs,
    loadBalancerSourceRanges: svc.type === 'LoadBalancer' ? svc.loadBalancerSourceRanges.filter((r) => familyOf(r) === family) : [],
    externalTrafficPolicy: externalLocal ? 'Local' : 'Cluster',
    internalTrafficPolicy: svc.internalTrafficPolicy,
    affinitySeconds: svc.sessionAffinitySeconds,
    listed,
    ...cat,
    usesCluster,
    usesLocal,
    localityUnknown: usesLocal && nodeName === null,
    service: svc,
    servicePort: sp,
    unknown: unknownsOf(svc, sp, slices),
  };
}

/**
 * endpointslicecache.go endpointInfoByServicePort + addEndpoints: the slice port with the Service
 * port's name and protocol gives the endpoint port; the first address of each endpoint, of the
 * proxier's family; deduplicated by `IP:port`, sorted by that string (byEndpoint).
 */
function endpointsFor(sp: ApiServicePort, family: Family, slices: readonly ApiEndpointSlice[], nodeName: string | null, podNode: ReadonlyMap<string, string>): IntendedEndpoint[] {
  const out = new Map<string, IntendedEndpoint>();
  for (const sl of slices) {
    if (sl.addressType === 'FQDN') continue;
    // A text form without port names or protocols (`kubectl get ep`) cannot say which Service port an address is for.
    if (sl.text && (!sl.text.shows.has('portNames') || !sl.text.shows.has('protocols'))) continue;
    const port = sl.ports.find((p) => (p.name ?? '') === (sp.name ?? '') && p.protocol === sp.protocol);
    if (!port || port.port === null || port.port === 0) continue;
    for (const e of sl.endpoints) {
      const ip = e.addresses[0];
      if (ip === undefined || familyOf(ip) !== family) continue;
      const ep = endpointOf(e.nodeName === null && podNode.has(ip) ? { ...e, nodeName: podNode.get(ip)! } : e, ip, port.port, nodeName, sl.name);
      const key = ip.includes(':') ? `[${ip}]:${port.port}` : `${ip}:${port.port}`;
      if (!out.has(key) || ep.local === true) out.set(key, ep);
    }
  }
  return [...out.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, e]) => e);
}

function endpointOf(e: ApiEndpoint, ip: string, port: number, nodeName: string | null, slice: string): IntendedEndpoint {
  return {
    ip,
    port,
    nodeName: e.nodeName,
    zone: e.zone,
    local: nodeName === null ? null : e.nodeName === nodeName,
    // newEndpointSliceInfo: ready and serving default to true when unset; terminating to false.
    ready: e.conditions.ready ?? true,
    serving: e.conditions.serving ?? e.conditions.ready ?? true,
    terminating: e.conditions.terminating ?? false,
    zoneHints: e.hints?.forZones ?? [],
    nodeHints: e.hints?.forNodes ?? [],
    slice,
    where: e.where,
  };
}

export interface Categorized {
  readonly cluster: readonly IntendedEndpoint[];
  readonly localSet: readonly IntendedEndpoint[];
  readonly reachable: readonly IntendedEndpoint[];
  readonly topologyMode: TopologyMode;
  readonly clusterFallback: boolean;
}

const servingTerminating = (e: IntendedEndpoint) => e.serving && e.terminating;

/**
 * topology.go CategorizeEndpoints, line for line: Cluster endpoints are the ready ones the
 * topology mode allows, else (none ready anywhere) the serving-terminating ones; Local endpoints
 * are the local ready ones, else the local serving-terminating ones; allReachable is their union.
 * An endpoint whose locality is unknown (this node not identified) counts as not local.
 */
export function categorizeEndpoints(endpoints: readonly IntendedEndpoint[], svc: { usesCluster: boolean; usesLocal: boolean }, nodeName: string | null, zone: string | null): Categorized {
  let cluster: IntendedEndpoint[] = [];
  let localSet: IntendedEndpoint[] = [];
  let topologyMode: TopologyMode = '';
  let clusterFallback = false;
  let useServingTerminating = false;
  if (endpoints.length === 0) return { cluster, localSet, reachable: [], topologyMode, clusterFallback };
  if (svc.usesCluster) {
    topologyMode = topologyModeFromHints(endpoints, nodeName, zone);
    cluster = endpoints.filter((e) => e.ready && availableForTopology(e, topologyMode, nodeName, zone));
    if (cluster.length === 0) {
      cluster = endpoints.filter(servingTerminating);
      clusterFallback = cluster.length > 0;
    }
  }
  if (!svc.usesLocal) return { cluster, localSet, reachable: cluster, topologyMode, clusterFallback };
  const isLocal = (e: IntendedEndpoint) => e.local === true;
  if (endpoints.some((e) => e.ready && isLocal(e))) localSet = endpoints.filter((e) => isLocal(e) && e.ready);
  else if (endpoints.some((e) => !e.ready && servingTerminating(e) && isLocal(e))) {
    useServingTerminating = true;
    localSet = endpoints.filter((e) => isLocal(e) && servingTerminating(e));
  }
  if (!svc.usesCluster) return { cluster, localSet, reachable: localSet, topologyMode, clusterFallback };
  if (topologyMode === '' && !useServingTerminating) return { cluster, localSet, reachable: cluster, topologyMode, clusterFallback };
  const union = new Map<string, IntendedEndpoint>();
  for (const e of [...cluster, ...localSet]) union.set(`${e.ip}|${e.port}`, e);
  return { cluster, localSet, reachable: [...union.values()], topologyMode, clusterFallback };
}

/**
 * topology.go topologyModeFromHints: PreferSameNode when every ready endpoint has a node hint and
 * one names this node (the PreferSameTrafficDistribution gate, on by default since 1.34); else
 * PreferSameZone when every ready endpoint has a zone hint and one names this node's zone; else ''.
 */
export function topologyModeFromHints(endpoints: readonly IntendedEndpoint[], nodeName: string | null, zone: string | null): TopologyMode {
  let ready = false;
  let allNode = true;
  let forNode = false;
  let allZone = true;
  let forZone = false;
  for (const e of endpoints) {
    if (!e.ready) continue;
    ready = true;
    if (e.nodeHints.length === 0) allNode = false;
    else if (nodeName !== null && e.nodeHints.includes(nodeName)) forNode = true;
    if (e.zoneHints.length === 0) allZone = false;
    else if (zone !== null && e.zoneHints.includes(zone)) forZone = true;
  }
  if (!ready) return '';
  if (allNode && forNode) return 'PreferSameNode';
  if (allZone && forZone) return 'PreferSameZone';
  return '';
}

/** topology.go availableForTopology. */
function availableForTopology(e: IntendedEndpoint, mode: TopologyMode, nodeName: string | null, zone: string | null): boolean {
  if (mode === '') return true;
  if (mode === 'PreferSameNode') return nodeName !== null && e.nodeHints.includes(nodeName);
  return zone !== null && e.zoneHints.includes(zone);
}

/** kube-proxy's ServicePortName string: `ns/name:port`, or `ns/name` for an unnamed port. */
export const intendedPortName = (p: Pick<IntendedServicePort, 'namespace' | 'name' | 'portName'>): string => (p.portName ? `${p.namespace}/${p.name}:${p.portName}` : `${p.namespace}/${p.name}`);
