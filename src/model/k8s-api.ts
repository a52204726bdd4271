/**
 * The Kubernetes API server's objects, as `kubectl get svc,endpointslices,nodes,pods -o json|yaml`
 * prints them: what the cluster *intends*. Only the fields kube-proxy reads are kept (typed), each
 * object with the place it was read from, so a finding can cite it beside the dump line.
 * The legacy `Endpoints` kind is converted to slices by the reader (kube-proxy itself reads only
 * EndpointSlices since 1.22; Endpoints are read only when a cluster's dump holds no slice).
 */
export type ApiProtocol = 'tcp' | 'udp' | 'sctp';
export type ApiTrafficPolicy = 'Cluster' | 'Local';

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
}

export const EMPTY_API: ApiObjects = { files: [], services: [], slices: [], nodes: [], pods: [] };

/** Several files' objects as one set (separate files per kind); a later copy of the same object wins. */
export function mergeApiObjects(parts: readonly ApiObjects[]): ApiObjects {
  const key = (o: { namespace?: string; name: string }) => `${o.namespace ?? ''}/${o.name}`;
  const uniq = <T extends { namespace?: string; name: string }>(xs: T[]): T[] => [...new Map(xs.map((x) => [key(x), x])).values()];
  const slices = parts.flatMap((p) => p.slices);
  // Legacy Endpoints count only when no EndpointSlice is present at all (kube-proxy reads slices).
  const real = slices.filter((s) => !s.fromEndpoints);
  return {
    files: parts.flatMap((p) => p.files),
    services: uniq(parts.flatMap((p) => p.services)),
    slices: uniq(real.length > 0 ? real : slices),
    nodes: uniq(parts.flatMap((p) => p.nodes)),
    pods: uniq(parts.flatMap((p) => p.pods)),
  };
}

export const servicePortNameOf = (ns: string, name: string, port: string | null): string => (port ? `${ns}/${name}:${port}` : `${ns}/${name}`);
