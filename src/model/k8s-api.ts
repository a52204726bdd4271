/**
 * The Kubernetes API server's objects, as `kubectl get svc,endpointslices,nodes,pods -o json|yaml`
 * prints them: what the cluster *intends*. Only the fields kube-proxy reads are kept (typed), each
 * object with the place it was read from, so a finding can cite it beside the dump line.
 * The legacy `Endpoints` kind is converted to slices by the reader (kube-proxy itself reads only
 * EndpointSlices since 1.22; Endpoints are read only when a cluster's dump holds no slice).
 */
export type ApiProtocol = 'tcp' | 'udp' | 'sctp';
export type ApiTrafficPolicy = 'Cluster' | 'Local';

/**
 * What a text form shows of an object (issue 30): `kubectl get` tables, `kubectl describe`. kpx reads
 * exactly what the text shows; every field not in `shows` holds a placeholder (the API's default or
 * null) that is never evidence: intent and drift ask `knows()` before concluding from a field.
 * Absent on objects read from `-o yaml|json`, where every field is known.
 */
export interface ApiTextForm<F extends string> {
  /** How it was read: `kubectl get`, `kubectl get -o wide`, `kubectl describe`, `markdown table`. */
  readonly form: string;
  readonly shows: ReadonlySet<F>;
}

/**
 * Service fields a text form may show or not. `externalAddresses`: the external and load-balancer
 * addresses together, whole (a table's EXTERNAL-IP mixes both kinds and clips them at 16 characters).
 */
export type ApiServiceField =
  | 'namespace'
  | 'type'
  | 'clusterIPs'
  | 'portNames'
  | 'targetPorts'
  | 'selector'
  | 'externalIPs'
  | 'loadBalancerIPs'
  | 'externalAddresses'
  | 'loadBalancerSourceRanges'
  | 'externalTrafficPolicy'
  | 'internalTrafficPolicy'
  | 'sessionAffinity'
  | 'sessionAffinityTimeout'
  | 'healthCheckNodePort'
  | 'trafficDistribution'
  | 'labels';

/**
 * EndpointSlice (or Endpoints) fields a text form may show. `notReady`: endpoints that are not ready
 * are listed too (`kubectl get ep` and describe's Endpoints line show only ready ones).
 */
export type ApiSliceField = 'serviceName' | 'portNames' | 'protocols' | 'ready' | 'notReady' | 'serving' | 'terminating' | 'nodeName' | 'zone' | 'hints';

export interface ApiSliceText extends ApiTextForm<ApiSliceField> {
  /** Endpoints the text left out (`+ 2 more...`); 0 when it shows every one it has. */
  readonly hidden: number;
  /** The text is every endpoint the Service has (an Endpoints object), not one slice of several. */
  readonly wholeService: boolean;
}

/** Does the object's evidence show this field? Always true for objects read whole (`-o yaml|json`). */
export function knows<F extends string>(o: { readonly text?: ApiTextForm<F> }, field: F): boolean {
  return o.text === undefined || o.text.shows.has(field);
}

/** Where an object (or one of its fields) was read: file, 1-based line and column, and that line's text. */
export interface ApiWhere {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly text: string;
}

export interface ApiServicePort {
  readonly name: string | null;
  readonly protocol: ApiProtocol;
  readonly port: number;
  readonly nodePort: number | null;
  /** Number or name, as the Service says (the slice carries the resolved port). */
  readonly targetPort: number | string | null;
}

export interface ApiService {
  readonly namespace: string;
  readonly name: string;
  readonly type: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  /** The primary cluster IP; `None` for a headless Service, null when unset. */
  readonly clusterIP: string | null;
  /** spec.clusterIPs (dual stack), or [clusterIP]. */
  readonly clusterIPs: readonly string[];
  readonly ports: readonly ApiServicePort[];
  readonly selector: Readonly<Record<string, string>> | null;
  readonly externalName: string | null;
  readonly externalIPs: readonly string[];
  /** status.loadBalancer.ingress[].ip (what kube-proxy programs), not spec.loadBalancerIP. */
  readonly loadBalancerIPs: readonly string[];
  readonly loadBalancerSourceRanges: readonly string[];
  readonly externalTrafficPolicy: ApiTrafficPolicy;
  readonly internalTrafficPolicy: ApiTrafficPolicy;
  /** ClientIP affinity timeout in seconds (default 10800), or null for None. */
  readonly sessionAffinitySeconds: number | null;
  readonly trafficDistribution: string | null;
  readonly healthCheckNodePort: number | null;
  /** The `service.kubernetes.io/service-proxy-name` label: such Services belong to another proxy. */
  readonly serviceProxyName: string | null;
  readonly where: ApiWhere;
  /** Read from a text form: which fields it shows (the others are unknown). */
  readonly text?: ApiTextForm<ApiServiceField>;
}

export interface ApiEndpointConditions {
  /** null when the API omits it: kube-proxy then takes ready = true (endpointslicecache.go). */
  readonly ready: boolean | null;
  readonly serving: boolean | null;
  readonly terminating: boolean | null;
}

export interface ApiEndpoint {
  readonly addresses: readonly string[];
  readonly conditions: ApiEndpointConditions;
  readonly nodeName: string | null;
  readonly zone: string | null;
  readonly hints: { readonly forZones: readonly string[]; readonly forNodes: readonly string[] } | null;
  readonly where: ApiWhere;
}

export interface ApiEndpointSlice {
  readonly namespace: string;
  readonly name: string;
  /** The `kubernetes.io/service-name` label: the Service this slice belongs to. */
  readonly serviceName: string | null;
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly ports: readonly { readonly name: string | null; readonly protocol: ApiProtocol; readonly port: number | null }[];
  readonly endpoints: readonly ApiEndpoint[];
  /** Converted from a legacy `Endpoints` object. */
  readonly fromEndpoints: boolean;
  readonly where: ApiWhere;
  /** Read from a text form: which fields it shows and how many endpoints it left out. */
  readonly text?: ApiSliceText;
}

export interface ApiNode {
  readonly name: string;
  readonly zone: string | null;
  /** status.addresses (InternalIP, ExternalIP) and spec.podCIDRs. */
  readonly addresses: readonly string[];
  readonly podCIDRs: readonly string[];
  readonly where: ApiWhere;
}

export interface ApiPod {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string | null;
  readonly podIPs: readonly string[];
  readonly phase: string | null;
  readonly deleting: boolean;
  readonly where: ApiWhere;
}

export interface ApiObjects {
  readonly files: readonly string[];
  readonly services: readonly ApiService[];
  readonly slices: readonly ApiEndpointSlice[];
  readonly nodes: readonly ApiNode[];
  readonly pods: readonly ApiPod[];
  /**
   * Which Service listings are whole: the namespaces every Service of which is listed (`*`: all of
   * them). A Service the dumps show in a namespace not covered may simply not have been pasted.
   * Absent: the objects were read as a whole dump (`kubectl get … -A -o json`): every namespace.
   */
  readonly serviceNamespaces?: readonly string[];
}

export const EMPTY_API: ApiObjects = { files: [], services: [], slices: [], nodes: [], pods: [] };

/** Does the API evidence list every Service of this namespace (so one it lacks is really absent)? */
export function listsAllServicesOf(api: ApiObjects, namespace: string | null): boolean {
  if (api.serviceNamespaces === undefined) return true;
  return api.serviceNamespaces.includes('*') || (namespace !== null && api.serviceNamespaces.includes(namespace));
}

/** Several files' objects as one set (separate files per kind); a later copy of the same object wins. */
export function mergeApiObjects(parts: readonly ApiObjects[]): ApiObjects {
  const key = (o: { namespace?: string; name: string }) => `${o.namespace ?? ''}/${o.name}`;
  const uniq = <T extends { namespace?: string; name: string }>(xs: T[]): T[] => [...new Map(xs.map((x) => [key(x), x])).values()];
  const slices = parts.flatMap((p) => p.slices);
  // Legacy Endpoints count only when no EndpointSlice is present at all (kube-proxy reads slices).
  const real = slices.filter((s) => !s.fromEndpoints);
  // Coverage: a part read whole covers every namespace; else the union of what the parts list whole.
  const covered = parts.some((p) => p.serviceNamespaces === undefined) ? undefined : [...new Set(parts.flatMap((p) => p.serviceNamespaces ?? []))];
  return {
    files: parts.flatMap((p) => p.files),
    services: uniqBest(parts.flatMap((p) => p.services)),
    slices: uniqBest(real.length > 0 ? real : slices),
    nodes: uniq(parts.flatMap((p) => p.nodes)),
    pods: uniq(parts.flatMap((p) => p.pods)),
    ...(covered !== undefined ? { serviceNamespaces: covered } : {}),
  };
}

/**
 * One copy per object: an object read whole (`-o yaml`) wins over a text form of it (a table row
 * beside the YAML), else the text form showing more fields, else the later copy.
 */
function uniqBest<T extends { namespace?: string; name: string; text?: ApiTextForm<string> }>(xs: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  const score = (x: T) => (x.text === undefined ? Number.MAX_SAFE_INTEGER : x.text.shows.size);
  for (const x of xs) {
    const key = `${x.namespace ?? ''}/${x.name}`;
    const prev = byKey.get(key);
    if (!prev || score(x) >= score(prev)) byKey.set(key, x);
  }
  return [...byKey.values()];
}

export const servicePortNameOf = (ns: string, name: string, port: string | null): string => (port ? `${ns}/${name}:${port}` : `${ns}/${name}`);
