/**
 * A deterministic model of a Kubernetes cluster as one node's kube-proxy sees it: Services,
 * their ports and endpoints, which endpoints are on THIS node, and the node's addresses.
 * Every renderer (iptables, ipvs, nftables, routes, ground truth) reads this one model.
 */
import {
  createRng,
  isV6,
  joinHostPort,
  portProtoHash,
  type Rng,
  v4FromString,
  v4ToString,
  v6FromString,
  v6ToString,
} from './util.js';

import type { Cluster, Cni, Endpoint, Family, GenerateOptions, Mix, NodeInfo, Service, ServicePort, ServicePortRef, ServiceType, TrafficPolicy } from './cluster-model.js';
import { DEFAULT_MIX, SHAPES } from './cluster-model.js';
import { randomDraft, shapeDraft, type Draft } from './drafts.js';

export * from './cluster-model.js';

interface Allocator {
  serviceIP(): string;
  nodePort(): number | null;
  externalIP(): string;
  lbIP(): string;
}

function makeAllocator(family: Family, rng: Rng): Allocator {
  const usedSvc = new Set<string>();
  const usedNodePorts = new Set<number>();
  let ext = 0;
  let lb = 0;
  const svcBase4 = v4FromString('10.96.0.0');
  const svcBase6 = v6FromString('fd00:10:96::');
  const reserve = (ip: string) => usedSvc.add(ip);
  reserve(family === 4 ? '10.96.0.1' : 'fd00:10:96::1');
  reserve(family === 4 ? '10.96.0.10' : 'fd00:10:96::a');
  const extBlocks4 = ['203.0.113.0', '198.51.100.0', '192.0.2.0'];
  return {
    serviceIP() {
      for (;;) {
        // 10.96.0.0/12 (IPv4) or fd00:10:96::/108 (IPv6): skip .0 and the broadcast-looking .255.
        const off = rng.int(2, family === 4 ? (1 << 20) - 2 : (1 << 20) - 2);
        const ip = family === 4 ? v4ToString(svcBase4 + off) : v6ToString(svcBase6 + BigInt(off));
        if ((off & 255) === 0 || (off & 255) === 255 || usedSvc.has(ip)) continue;
        usedSvc.add(ip);
        return ip;
      }
    },
    nodePort() {
      if (usedNodePorts.size >= 2768 - 8) return null;
      for (;;) {
        const p = rng.int(30000, 32767);
        if (!usedNodePorts.has(p)) {
          usedNodePorts.add(p);
          return p;
        }
      }
    },
    externalIP() {
      const i = ext++;
      if (family === 6) return v6ToString(v6FromString('2001:db8:e::') + BigInt(i + 1));
      if (i < 3 * 254) return v4ToString(v4FromString(extBlocks4[Math.floor(i / 254)]) + (i % 254) + 1);
      return v4ToString(v4FromString('100.64.0.0') + (i - 3 * 254) + 1);
    },
    lbIP() {
      const i = lb++;
      if (family === 6) return v6ToString(v6FromString('2001:db8:1b::') + BigInt(i + 1));
      // 172.18.200.0 .. 172.18.255.255 (a MetalLB-style pool inside the node network), then 100.100/16.
      if (i < 56 * 256 - 2) return v4ToString(v4FromString('172.18.200.1') + i);
      return v4ToString(v4FromString('100.100.0.1') + i);
    },
  };
}

interface PodPool {
  /** A new pod on a random node (or on `node` when given). */
  pod(node?: NodeInfo): { ip: string; node: NodeInfo };
}

function makePodPool(nodes: readonly NodeInfo[], family: Family, rng: Rng): PodPool {
  const next = new Map<number, number>();
  const maxHost = family === 4 ? 254 : 65000;
  return {
    pod(node) {
      for (let tries = 0; ; tries++) {
        const n = node ?? nodes[rng.int(0, nodes.length - 1)];
        const used = next.get(n.index) ?? 1;
        if (used >= maxHost) {
          if (node || tries > nodes.length * 4) throw new Error(`node ${n.name} has no free pod IPs`);
          continue;
        }
        next.set(n.index, used + 1);
        const host = used + 1; // .1 is the gateway (cni0)
        const base = n.podCIDR.split('/')[0];
        const ip = family === 4 ? v4ToString(v4FromString(base) + host) : v6ToString(v6FromString(base) + BigInt(host));
        return { ip, node: n };
      }
    },
  };
}

function makeNodes(count: number, family: Family, clusterPrefix: number): NodeInfo[] {
  const nodes: NodeInfo[] = [];
  for (let i = 0; i < count; i++) {
    const name = i === 0 ? 'k8s-control-plane' : i === 1 ? 'k8s-worker' : `k8s-worker${i}`;
    let ip: string;
    let podCIDR: string;
    if (family === 4) {
      ip = v4ToString(v4FromString('172.18.0.2') + i + Math.floor(i / 250) * 6);
      podCIDR = `${v4ToString(v4FromString('10.244.0.0') + i * 256)}/24`;
    } else {
      ip = v6ToString(v6FromString('fc00:f853:ccd:e793::2') + BigInt(i));
      podCIDR = `${v6ToString(v6FromString('fd00:10:244::') + (BigInt(i) << 64n))}/64`;
    }
    nodes.push({ name, index: i, ip, podCIDR });
  }
  void clusterPrefix;
  return nodes;
}

/** ServicePortName.String(): `ns/name:port`, or `ns/name` for an unnamed port. */
export function servicePortName(svc: { namespace: string; name: string }, port: { name: string | null }): string {
  return port.name ? `${svc.namespace}/${svc.name}:${port.name}` : `${svc.namespace}/${svc.name}`;
}

/** kube-proxy's endpoint order: sort by the `IP:port` string (byEndpoint, endpointslicecache.go). */
export function sortEndpoints(eps: Endpoint[]): Endpoint[] {
  const key = (e: Endpoint) => joinHostPort(e.ip, e.port);
  return eps.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function v6SourceRange(r: string): string {
  // Documentation IPv4 ranges have no meaning in an IPv6 cluster: map them to 2001:db8::/32 blocks.
  if (!isV6(r.split('/')[0])) return r.startsWith('10.') ? 'fd00::/8' : '2001:db8:cafe::/48';
  return r;
}

/**
 * Every Service's draft: the catalogue shapes first (drafted against provisional nodes, as the
 * real ones depend on the number of pods), then the random mix, then the big Service if asked.
 */
function draftAll(options: GenerateOptions, family: Family, provisional: readonly NodeInfo[], rng: Rng): Draft[] {
  const mix: Mix = { ...DEFAULT_MIX, ...options.mix };
  const epRange = options.endpoints ?? { min: 1, max: 10 };
  const shapes = (options.shapes ?? SHAPES).filter((s) => SHAPES.includes(s));
  const drafts: Draft[] = [];
  for (const s of shapes) drafts.push(shapeDraft(s, family, provisional));
  const draftRng = rng.fork('drafts');
  for (let i = drafts.length; i < options.services; i++) drafts.push(randomDraft(draftRng, i, mix, epRange));
  if (options.bigService && options.bigService > 0) {
    drafts.push({ namespace: 'big', name: 'fanout', type: 'ClusterIP', ports: [{ name: 'http', protocol: 'tcp', port: 80, targetPort: 8080 }], pods: options.bigService, shape: 'big-service' });
  }
  return drafts;
}

/** The nodes (about 100 pods each, at least 3) and the cluster CIDR wide enough for their pod ranges. */
function layOutNodes(drafts: readonly Draft[], family: Family, nodeCountHint: number | undefined): { nodes: NodeInfo[]; clusterCIDR: string } {
  const totalPods = drafts.reduce((n, d) => n + d.pods, 0);
  const nodeCount = Math.max(3, nodeCountHint ?? Math.ceil(totalPods / 100));
  const maxNodes = family === 4 ? 4096 : 65536;
  if (nodeCount > maxNodes) throw new Error(`too many nodes (${nodeCount})`);
  const clusterPrefix = family === 4 ? (nodeCount <= 256 ? 16 : nodeCount <= 1024 ? 14 : 12) : nodeCount <= 256 ? 56 : 48;
  const clusterCIDR = family === 4 ? `10.244.0.0/${clusterPrefix}` : `fd00:10:244::/${clusterPrefix}`;
  return { nodes: makeNodes(nodeCount, family, clusterPrefix), clusterCIDR };
}

/** What turning drafts into Services draws from: addresses, node ports and pods, and where pods go. */
interface Placement {
  readonly family: Family;
  readonly alloc: Allocator;
  readonly pods: PodPool;
  /** Picks a node other than this one. */
  readonly place: Rng;
  readonly thisNode: NodeInfo;
  readonly others: readonly NodeInfo[];
  /** The node the `kubernetes` Service's endpoint is on (the control plane), and its provisional stand-in. */
  readonly apiServerNode: NodeInfo;
  readonly provisionalApiServerNode: NodeInfo;
}

/** The draft's pods (shared by all ports of the Service): fixed ones, then new ones placed as the draft asks. */
function podsOf(d: Draft, at: Placement): { ip: string; node: NodeInfo }[] {
  const podList: { ip: string; node: NodeInfo }[] = [];
  if (d.fixedEndpoints) {
    for (const f of d.fixedEndpoints) podList.push(f.node === at.provisionalApiServerNode ? { ip: at.apiServerNode.ip, node: at.apiServerNode } : f);
  }
  for (let k = 0; k < d.pods; k++) {
    let node: NodeInfo | undefined;
    if (d.localPods !== undefined && k < d.localPods) node = at.thisNode;
    else if (d.localPods !== undefined || d.noLocal) node = at.others[at.place.int(0, at.others.length - 1)];
    podList.push(at.pods.pod(node));
  }
  return podList;
}

/** A draft made a Service: pods, node ports, then the addresses, allocated in that order (the seed's output depends on it). */
function serviceOf(d: Draft, at: Placement): Service {
  const { alloc, family } = at;
  const podList = podsOf(d, at);
  const type = d.type;
  const isExternalType = type === 'NodePort' || type === 'LoadBalancer';
  const ports: ServicePort[] = d.ports.map((p) => {
    const nodePort = isExternalType ? alloc.nodePort() : null;
    const eps = sortEndpoints(
      podList.map((pod) => ({
        ip: pod.ip,
        port: d.fixedEndpoints && d.name === 'kubernetes' ? 6443 : p.targetPort,
        nodeName: pod.node.name,
        local: pod.node === at.thisNode,
      })),
    );
    return { name: p.name, protocol: p.protocol, port: p.port, targetPort: p.targetPort, nodePort, endpoints: eps };
  });
  // Out of NodePorts: the API server would refuse; keep the Service as ClusterIP instead.
  const effectiveType: ServiceType = isExternalType && ports.some((p) => p.nodePort === null) ? 'ClusterIP' : type;
  const finalPorts = effectiveType === type ? ports : ports.map((p) => ({ ...p, nodePort: null }));
  const lbIPs = effectiveType === 'LoadBalancer' ? Array.from({ length: d.loadBalancerIPs ?? 1 }, () => alloc.lbIP()) : [];
  const eTP: TrafficPolicy = effectiveType !== 'ClusterIP' ? d.externalTrafficPolicy ?? 'Cluster' : 'Cluster';
  const ranges = effectiveType === 'LoadBalancer' && d.sourceRanges ? (family === 6 ? d.sourceRanges.map(v6SourceRange) : d.sourceRanges) : [];
  return {
    namespace: d.namespace,
    name: d.name,
    type: effectiveType,
    clusterIP: d.clusterIP ?? alloc.serviceIP(),
    ports: finalPorts,
    externalIPs: Array.from({ length: d.externalIPs ?? 0 }, () => alloc.externalIP()),
    loadBalancerIPs: lbIPs,
    loadBalancerSourceRanges: [...new Set(ranges)],
    externalTrafficPolicy: eTP,
    internalTrafficPolicy: d.internalTrafficPolicy ?? 'Cluster',
    sessionAffinity: d.affinity ? { timeoutSeconds: d.affinity } : null,
    healthCheckNodePort: effectiveType === 'LoadBalancer' && eTP === 'Local' ? alloc.nodePort() : null,
    shape: d.shape,
  };
}

const byNamespaceAndName = (a: Service, b: Service) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function generateCluster(options: GenerateOptions): Cluster {
  const family: Family = options.family ?? 4;
  const cni: Cni = options.cni ?? 'flannel';
  const rng = createRng(options.seed);
  // Draft everything first so the number of pods (and so nodes) is known.
  const provisional = makeNodes(Math.max(options.nodes ?? 3, 3), family, 16);
  const drafts = draftAll(options, family, provisional, rng);
  const { nodes, clusterCIDR } = layOutNodes(drafts, family, options.nodes);
  const thisNode = nodes[1];
  const at: Placement = {
    family,
    alloc: makeAllocator(family, rng.fork('alloc')),
    pods: makePodPool(nodes, family, rng.fork('pods')),
    place: rng.fork('place'),
    thisNode,
    others: nodes.filter((n) => n !== thisNode),
    apiServerNode: nodes[0],
    provisionalApiServerNode: provisional[0],
  };
  const services: Service[] = [];
  const seen = new Set<string>();
  for (const d of drafts) {
    const key = `${d.namespace}/${d.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    services.push(serviceOf(d, at));
  }
  services.sort(byNamespaceAndName);
  const syncOrder: ServicePortRef[] = [];
  for (const s of services) for (const p of s.ports) syncOrder.push({ service: s, port: p });
  rng.fork('order').shuffle(syncOrder);
  const totalEndpoints = syncOrder.reduce((n, r) => n + r.port.endpoints.length, 0);
  return {
    seed: options.seed,
    family,
    cni,
    clusterCIDR,
    serviceCIDR: family === 4 ? '10.96.0.0/12' : 'fd00:10:96::/108',
    node: thisNode,
    nodes,
    services,
    totalEndpoints,
    syncOrder,
  };
}

// ---------------------------------------------------------------------------------------------
// kube-proxy's per-service-port decisions (pkg/proxy/serviceport.go, topology.go,
// iptables/proxier.go syncProxyRules), shared by every renderer.

export interface PortPlan {
  readonly svc: Service;
  readonly port: ServicePort;
  /** `ns/name:port` (ServicePortName.String()). */
  readonly spn: string;
  readonly hash: string;
  readonly externallyAccessible: boolean;
  readonly externalPolicyLocal: boolean;
  readonly internalPolicyLocal: boolean;
  readonly clusterEndpoints: readonly Endpoint[];
  readonly localEndpoints: readonly Endpoint[];
  /** Endpoints that get a KUBE-SEP / endpoint-… chain on this node. */
  readonly reachableEndpoints: readonly Endpoint[];
  readonly hasEndpoints: boolean;
  readonly hasInternalEndpoints: boolean;
  readonly hasExternalEndpoints: boolean;
  readonly usesClusterPolicyChain: boolean;
  readonly usesLocalPolicyChain: boolean;
  readonly usesExternalTrafficChain: boolean;
  readonly usesFWChain: boolean;
  /** A loadBalancerSourceRanges entry contains the node IP. */
  readonly allowFromNode: boolean;
}

export function planPort(cluster: Cluster, svc: Service, port: ServicePort): PortPlan {
  const spn = servicePortName(svc, port);
  const externallyAccessible = port.nodePort !== null || svc.externalIPs.length > 0 || svc.loadBalancerIPs.length > 0;
  const externalPolicyLocal = (svc.type === 'NodePort' || svc.type === 'LoadBalancer') && svc.externalTrafficPolicy === 'Local';
  const internalPolicyLocal = svc.internalTrafficPolicy === 'Local';
  const usesCluster = !internalPolicyLocal || externallyAccessible;
  const usesLocal = internalPolicyLocal || (externalPolicyLocal && externallyAccessible);
  const all = port.endpoints;
  const clusterEndpoints = usesCluster ? all : [];
  const localEndpoints = usesLocal ? all.filter((e) => e.local) : [];
  const reachable = !usesLocal ? clusterEndpoints : !usesCluster ? localEndpoints : all;
  const hasEndpoints = all.length > 0;
  const hasInternalEndpoints = hasEndpoints && (!internalPolicyLocal || localEndpoints.length > 0);
  const hasExternalEndpoints = hasEndpoints && (!externalPolicyLocal || localEndpoints.length > 0);
  const nodeIP = cluster.node.ip;
  return {
    svc,
    port,
    spn,
    hash: portProtoHash(spn, port.protocol),
    externallyAccessible,
    externalPolicyLocal,
    internalPolicyLocal,
    clusterEndpoints,
    localEndpoints,
    reachableEndpoints: reachable,
    hasEndpoints,
    hasInternalEndpoints,
    hasExternalEndpoints,
    usesClusterPolicyChain: clusterEndpoints.length > 0 && usesCluster,
    usesLocalPolicyChain: localEndpoints.length > 0 && usesLocal,
    usesExternalTrafficChain: hasEndpoints && externallyAccessible,
    usesFWChain: hasEndpoints && svc.loadBalancerIPs.length > 0 && svc.loadBalancerSourceRanges.length > 0,
    allowFromNode: svc.loadBalancerSourceRanges.some((r) => rangeContains(r, nodeIP)),
  };
}

function rangeContains(cidr: string, ip: string): boolean {
  const [net, len] = cidr.split('/');
  if (isV6(net) !== isV6(ip)) return false;
  if (isV6(ip)) {
    const l = BigInt(len);
    const mask = l === 0n ? 0n : ((1n << l) - 1n) << (128n - l);
    return (v6FromString(net) & mask) === (v6FromString(ip) & mask);
  }
  const l = Number(len);
  const mask = l === 0 ? 0 : (0xffffffff << (32 - l)) >>> 0;
  return ((v4FromString(net) & mask) >>> 0) === ((v4FromString(ip) & mask) >>> 0);
}
