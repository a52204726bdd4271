/**
 * Service drafts: what the generator means to create before addresses, node ports and pods are
 * allocated — the catalogue shapes (one Service per kube-proxy case worth testing) and the random
 * mix. generateCluster() (./cluster.ts) turns drafts into Services.
 */
import type { Family, Mix, NodeInfo, Protocol, ServiceType, Shape, TrafficPolicy } from './cluster-model.js';
import type { Rng } from './util.js';

const NAMESPACES = ['default', 'kube-system', 'monitoring', 'ingress', 'payments', 'search', 'cart', 'auth', 'data', 'web'];
const WORDS = ['api', 'web', 'db', 'cache', 'queue', 'auth', 'search', 'cart', 'front', 'back', 'store', 'gw', 'mail', 'log', 'metrics', 'ui', 'admin', 'billing', 'report', 'sync'];
const PORT_NAMES: [string, Protocol, number, number][] = [
  ['http', 'tcp', 80, 8080],
  ['https', 'tcp', 443, 8443],
  ['grpc', 'tcp', 9090, 9090],
  ['metrics', 'tcp', 9100, 9100],
  ['admin', 'tcp', 8081, 8081],
  ['dns', 'udp', 53, 5353],
  ['syslog', 'udp', 514, 5514],
  ['stats', 'udp', 8125, 8125],
];

export interface Draft {
  namespace: string;
  name: string;
  type: ServiceType;
  clusterIP?: string;
  ports: { name: string | null; protocol: Protocol; port: number; targetPort: number }[];
  /** Pods: count and how many must be on this node (-1 = random placement). */
  pods: number;
  localPods?: number;
  /** Pods that must NOT be on this node. */
  noLocal?: boolean;
  fixedEndpoints?: { ip: string; node: NodeInfo }[];
  externalIPs?: number;
  loadBalancerIPs?: number;
  sourceRanges?: string[];
  externalTrafficPolicy?: TrafficPolicy;
  internalTrafficPolicy?: TrafficPolicy;
  affinity?: number;
  shape: string;
}

const p = (name: string | null, protocol: Protocol, port: number, targetPort = port) => ({ name, protocol, port, targetPort });

/** The draft of one catalogue shape (`nodes`: provisional; the `kubernetes` endpoint is on the first). */
export function shapeDraft(shape: Shape, family: Family, nodes: readonly NodeInfo[]): Draft {
  const nodeNet = family === 4 ? '172.18.0.0/16' : 'fc00:f853:ccd:e793::/64';
  const ranges = family === 4 ? ['203.0.113.0/25', '198.51.100.7/32'] : ['2001:db8:cafe::/48'];
  const base = { namespace: 'shapes', name: shape, type: 'ClusterIP' as ServiceType, shape };
  switch (shape) {
    case 'kubernetes':
      return {
        ...base,
        namespace: 'default',
        name: 'kubernetes',
        clusterIP: family === 4 ? '10.96.0.1' : 'fd00:10:96::1',
        ports: [p('https', 'tcp', 443, 6443)],
        pods: 0,
        fixedEndpoints: [{ ip: nodes[0].ip, node: nodes[0] }],
      };
    case 'kube-dns':
      return {
        ...base,
        namespace: 'kube-system',
        name: 'kube-dns',
        clusterIP: family === 4 ? '10.96.0.10' : 'fd00:10:96::a',
        ports: [p('dns', 'udp', 53), p('dns-tcp', 'tcp', 53), p('metrics', 'tcp', 9153)],
        pods: 2,
        localPods: 1,
      };
    case 'single-endpoint':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 1 };
    case 'two-endpoints':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 2 };
    case 'three-endpoints':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 3 };
    case 'seven-endpoints':
      return { ...base, ports: [p('http', 'tcp', 80, 8080), p('grpc', 'tcp', 9090)], pods: 7, localPods: 2 };
    case 'no-endpoints':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 0 };
    case 'nodeport':
      return { ...base, type: 'NodePort', ports: [p('http', 'tcp', 80, 8080)], pods: 3 };
    case 'nodeport-no-endpoints':
      return { ...base, type: 'NodePort', ports: [p('http', 'tcp', 80, 8080)], pods: 0 };
    case 'nodeport-local':
      return { ...base, type: 'NodePort', ports: [p('http', 'tcp', 80, 8080)], pods: 3, localPods: 1, externalTrafficPolicy: 'Local' };
    case 'nodeport-local-no-local-endpoints':
      return { ...base, type: 'NodePort', ports: [p('http', 'tcp', 80, 8080)], pods: 2, noLocal: true, externalTrafficPolicy: 'Local' };
    case 'loadbalancer':
      return { ...base, type: 'LoadBalancer', ports: [p('http', 'tcp', 80, 8080), p('https', 'tcp', 443, 8443)], pods: 2, loadBalancerIPs: 1 };
    case 'loadbalancer-local':
      return { ...base, type: 'LoadBalancer', ports: [p('http', 'tcp', 80, 8080)], pods: 3, localPods: 1, loadBalancerIPs: 1, externalTrafficPolicy: 'Local' };
    case 'loadbalancer-source-ranges':
      return { ...base, type: 'LoadBalancer', ports: [p('http', 'tcp', 80, 8080)], pods: 2, loadBalancerIPs: 1, sourceRanges: ranges };
    case 'loadbalancer-source-ranges-node':
      return { ...base, type: 'LoadBalancer', ports: [p('http', 'tcp', 80, 8080)], pods: 2, loadBalancerIPs: 2, sourceRanges: [ranges[0], nodeNet] };
    case 'loadbalancer-no-endpoints':
      return { ...base, type: 'LoadBalancer', ports: [p('http', 'tcp', 80, 8080)], pods: 0, loadBalancerIPs: 1 };
    case 'external-ips':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 2, externalIPs: 2 };
    case 'external-ips-no-endpoints':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 0, externalIPs: 1 };
    case 'internal-local':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 3, localPods: 1, internalTrafficPolicy: 'Local' };
    case 'internal-local-no-local-endpoints':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 2, noLocal: true, internalTrafficPolicy: 'Local' };
    case 'affinity':
      return { ...base, ports: [p('http', 'tcp', 80, 8080)], pods: 3, affinity: 10800 };
    case 'affinity-custom-timeout':
      return { ...base, type: 'NodePort', ports: [p('http', 'tcp', 80, 8080)], pods: 2, affinity: 3600 };
    case 'affinity-local':
      return { ...base, type: 'LoadBalancer', ports: [p('http', 'tcp', 80, 8080)], pods: 3, localPods: 1, loadBalancerIPs: 1, affinity: 10800, externalTrafficPolicy: 'Local' };
    case 'sctp':
      return { ...base, ports: [p('diameter', 'sctp', 3868)], pods: 2 };
    case 'sctp-nodeport':
      return { ...base, type: 'NodePort', ports: [p(null, 'sctp', 9999)], pods: 1 };
    case 'udp-multiport':
      return { ...base, ports: [p('dns', 'udp', 53, 5353), p('dns-tcp', 'tcp', 53, 5353), p('syslog', 'udp', 514, 5514)], pods: 2 };
    case 'unnamed-port':
      return { ...base, ports: [p(null, 'tcp', 8080)], pods: 2 };
  }
  throw new Error(`unknown shape ${shape as string}`);
}

export function randomDraft(rng: Rng, i: number, mix: Mix, epRange: { min: number; max: number }): Draft {
  const namespace = rng.pick(NAMESPACES);
  const name = `${rng.pick(WORDS)}-${rng.pick(WORDS)}-${i.toString(36)}`;
  const r = rng.next();
  const type: ServiceType = r < mix.loadBalancer ? 'LoadBalancer' : r < mix.loadBalancer + mix.nodePort ? 'NodePort' : 'ClusterIP';
  const ports: Draft['ports'] = [];
  if (rng.chance(mix.multiPort)) {
    const count = rng.int(2, 4);
    const names = new Set<string>();
    while (ports.length < count) {
      const [pn, proto, port, target] = rng.pick(PORT_NAMES);
      if (names.has(pn)) continue;
      names.add(pn);
      ports.push({ name: pn, protocol: proto, port, targetPort: target });
    }
  } else {
    const proto: Protocol = rng.chance(mix.sctp) ? 'sctp' : rng.chance(mix.udp) ? 'udp' : 'tcp';
    const port = rng.pick([80, 443, 8080, 8443, 9000, 5432, 6379, 3306, 27017, 9092, 11211, 5672]);
    const named = rng.chance(0.6);
    ports.push({ name: named ? rng.pick(['http', 'web', 'tcp', 'client', 'main']) : null, protocol: proto, port, targetPort: rng.chance(0.5) ? port : rng.int(1024, 65000) });
  }
  let pods = 0;
  if (!rng.chance(mix.noEndpoints)) {
    pods = rng.chance(0.9) ? rng.int(epRange.min, epRange.max) : rng.int(epRange.max, Math.max(epRange.max, 20));
  }
  const external = type !== 'ClusterIP';
  return {
    namespace,
    name,
    type,
    ports,
    pods,
    externalIPs: rng.chance(mix.externalIPs) ? rng.int(1, 2) : 0,
    loadBalancerIPs: type === 'LoadBalancer' ? 1 : 0,
    sourceRanges: type === 'LoadBalancer' && rng.chance(mix.sourceRanges) ? rng.pick([['10.0.0.0/8'], ['203.0.113.0/24', '198.51.100.0/25'], ['192.168.0.0/16']]) : undefined,
    externalTrafficPolicy: external && rng.chance(mix.externalLocal) ? 'Local' : 'Cluster',
    internalTrafficPolicy: rng.chance(mix.internalLocal) ? 'Local' : 'Cluster',
    affinity: rng.chance(mix.affinity) ? rng.pick([10800, 10800, 600, 3600]) : undefined,
    shape: 'random',
  };
}
