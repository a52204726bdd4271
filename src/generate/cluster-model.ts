/**
 * The generated cluster's model: the types every renderer reads (Services, ports, endpoints,
 * nodes, the cluster), and the generator's options (the random mix, the catalogue of shapes).
 */
export type Protocol = 'tcp' | 'udp' | 'sctp';
export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer';
export type TrafficPolicy = 'Cluster' | 'Local';
export type Family = 4 | 6;
export type Cni = 'flannel' | 'calico';

export interface Endpoint {
  readonly ip: string;
  readonly port: number;
  readonly nodeName: string;
  /** The pod runs on THIS node. */
  readonly local: boolean;
}

export interface ServicePort {
  /** null for an unnamed port (only allowed on single-port Services). */
  readonly name: string | null;
  readonly protocol: Protocol;
  readonly port: number;
  readonly targetPort: number;
  readonly nodePort: number | null;
  /** Ready endpoints in kube-proxy's order (sorted by the `IP:port` string). */
  readonly endpoints: readonly Endpoint[];
}

export interface Service {
  readonly namespace: string;
  readonly name: string;
  readonly type: ServiceType;
  readonly clusterIP: string;
  readonly ports: readonly ServicePort[];
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  readonly loadBalancerSourceRanges: readonly string[];
  readonly externalTrafficPolicy: TrafficPolicy;
  readonly internalTrafficPolicy: TrafficPolicy;
  readonly sessionAffinity: { readonly timeoutSeconds: number } | null;
  /** Allocated for type=LoadBalancer with externalTrafficPolicy=Local. */
  readonly healthCheckNodePort: number | null;
  /** Which catalogue shape produced it ('random' for the mix). */
  readonly shape: string;
}

export interface NodeInfo {
  readonly name: string;
  readonly index: number;
  readonly ip: string;
  /** This node's pod range (a /24 for IPv4, a /64 for IPv6). */
  readonly podCIDR: string;
}

export interface Cluster {
  readonly seed: number;
  readonly family: Family;
  readonly cni: Cni;
  readonly clusterCIDR: string;
  readonly serviceCIDR: string;
  /** THIS node. */
  readonly node: NodeInfo;
  readonly nodes: readonly NodeInfo[];
  readonly services: readonly Service[];
  /** Sum over Service ports of endpoints (kube-proxy's totalEndpoints). */
  readonly totalEndpoints: number;
  /** Service ports in the order kube-proxy's Go map iteration happened to visit them. */
  readonly syncOrder: readonly ServicePortRef[];
}

export interface ServicePortRef {
  readonly service: Service;
  readonly port: ServicePort;
}

/** The probabilities of the default random mix (per Service). */
export interface Mix {
  nodePort: number;
  loadBalancer: number;
  externalIPs: number;
  sourceRanges: number;
  externalLocal: number;
  internalLocal: number;
  affinity: number;
  noEndpoints: number;
  udp: number;
  sctp: number;
  multiPort: number;
}

export const DEFAULT_MIX: Mix = {
  nodePort: 0.08,
  loadBalancer: 0.04,
  externalIPs: 0.02,
  sourceRanges: 0.3,
  externalLocal: 0.25,
  internalLocal: 0.02,
  affinity: 0.03,
  noEndpoints: 0.04,
  udp: 0.05,
  sctp: 0.005,
  multiPort: 0.2,
};

/** Named shapes tests can force. Each appears once when listed in `shapes`. */
export const SHAPES = [
  'kubernetes',
  'kube-dns',
  'single-endpoint',
  'two-endpoints',
  'three-endpoints',
  'seven-endpoints',
  'no-endpoints',
  'nodeport',
  'nodeport-no-endpoints',
  'nodeport-local',
  'nodeport-local-no-local-endpoints',
  'loadbalancer',
  'loadbalancer-local',
  'loadbalancer-source-ranges',
  'loadbalancer-source-ranges-node',
  'loadbalancer-no-endpoints',
  'external-ips',
  'external-ips-no-endpoints',
  'internal-local',
  'internal-local-no-local-endpoints',
  'affinity',
  'affinity-custom-timeout',
  'affinity-local',
  'sctp',
  'sctp-nodeport',
  'udp-multiport',
  'unnamed-port',
] as const;
export type Shape = (typeof SHAPES)[number];

export interface GenerateOptions {
  seed: number;
  /** Number of Service objects (catalogue shapes included). */
  services: number;
  family?: Family;
  cni?: Cni;
  /** Number of nodes; default grows with the number of pods (~100 pods per node, at least 3). */
  nodes?: number;
  /** Shapes always included first; default: every shape in SHAPES. Use [] for a pure random mix. */
  shapes?: readonly Shape[];
  /** Endpoints per Service in the random mix, inclusive range (default 1..10, with a 10% tail up to 20). */
  endpoints?: { min: number; max: number };
  /** Add one Service with this many endpoints (e.g. 1100, to force large-cluster mode). */
  bigService?: number;
  mix?: Partial<Mix>;
}
