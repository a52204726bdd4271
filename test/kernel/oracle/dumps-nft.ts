/**
 * kube-proxy nftables mode in the kernel comparison (issue 9, acceptance 3): generated clusters
 * (several seeds, IPv4 and IPv6) rendered by the generator's nftables mode. The kernel is given
 * the `nft -f` transaction kube-proxy would run (`nftScript`); kpx is given what the kernel
 * prints back, `nft list ruleset` read from the node namespace after loading (that is what a
 * user hands kpx), so kpx never sees the generator's own listing.
 */
import { generateCluster, nftLayoutOf, nftScript, type Cluster, type GenerateOptions, type NftLayoutId, type NftOptions } from '../../../src/generate/index.js';
import type { OracleCase, OracleDump } from './compare.js';
import { byShape, localPod, type OracleSuite } from './dumps.js';

function generatedNft(name: string, opts: GenerateOptions, nft: NftOptions = {}): { cluster: Cluster; dump: OracleDump } {
  const cluster = generateCluster(opts);
  const layout = nft.nftLayout ? `-kp${nft.nftLayout}` : '';
  return {
    cluster,
    dump: { name: `${name}${layout}`, scenario: { nft: nftScript(cluster, nft), nodeAddresses: [cluster.node.ip], podCidr: cluster.clusterCIDR }, kpxReads: 'kernel-nft-listing' },
  };
}

/** Cases that rest on @cluster-ips / cluster-ips-check (kube-proxy ≥1.30). */
const CLUSTER_IPS_CASE = /@cluster-ips|unallocated ClusterIP|filter-output-post-dnat/;

/**
 * The cases as the layout makes them: without cluster-ips (1.29) a ClusterIP port no Service has,
 * or an unallocated ClusterIP, is neither rejected nor dropped — the packet passes unchanged.
 */
function forLayout(cases: OracleCase[], nft: NftOptions): OracleCase[] {
  if (nftLayoutOf(nft).clusterIPs) return cases;
  return cases.map((c) => (CLUSTER_IPS_CASE.test(c.label) ? { ...c, label: `${c.label.replace(/ → (REJECT|DROP).*$/, '')} → passes unchanged (no cluster-ips before 1.30)`, timeoutMs: 300, premise: { verdicts: ['PASS'] as const, outcomes: 1 } } : c));
}

/** An address inside the service CIDR that no Service has (kube-proxy: "Drop traffic to unallocated ClusterIPs"). */
function unallocatedClusterIP(c: Cluster): string {
  const used = new Set(c.services.map((s) => s.clusterIP));
  for (let i = 250; i > 2; i--) {
    const ip = c.family === 4 ? `10.96.200.${i}` : `fd00:10:96::ff:${i.toString(16)}`;
    if (!used.has(ip)) return ip;
  }
  throw new Error('no unallocated ClusterIP');
}

/** Seed 501, IPv4, flannel: ClusterIP ladders (1, 2, 3, 7), REJECTs, NodePort (Cluster/Local), externalIPs, node, hairpin. */
export function nftFlannelSuite(nft: NftOptions = {}): OracleSuite {
  const { cluster: c, dump } = generatedNft('nft-501-v4-flannel', {
    seed: 501,
    services: 14,
    family: 4,
    cni: 'flannel',
    shapes: ['kube-dns', 'single-endpoint', 'two-endpoints', 'three-endpoints', 'seven-endpoints', 'no-endpoints', 'nodeport', 'nodeport-no-endpoints', 'nodeport-local', 'nodeport-local-no-local-endpoints', 'external-ips'],
  }, nft);
  const node = c.node.ip;
  const one = byShape(c, 'single-endpoint');
  const two = byShape(c, 'two-endpoints');
  const three = byShape(c, 'three-endpoints');
  const seven = byShape(c, 'seven-endpoints');
  const none = byShape(c, 'no-endpoints');
  const np = byShape(c, 'nodeport');
  const npn = byShape(c, 'nodeport-no-endpoints');
  const npl = byShape(c, 'nodeport-local');
  const npln = byShape(c, 'nodeport-local-no-local-endpoints');
  const ext = byShape(c, 'external-ips');
  const dns = byShape(c, 'kube-dns');
  const pod = localPod(c);
  const cases: OracleCase[] = [
    { label: 'nft501: ClusterIP, 1 endpoint, from a pod', proto: 'tcp', dst: one.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'nft501: ClusterIP, 2 endpoints, external (masquerade)', proto: 'tcp', dst: two.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft501: ClusterIP, 3 endpoints (numgen mod 3), from a pod', proto: 'tcp', dst: three.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: false } },
    { label: 'nft501: ClusterIP, 7 endpoints (numgen mod 7), from a pod', proto: 'tcp', dst: seven.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 7 } },
    { label: 'nft501: ClusterIP, 7 endpoints (grpc), from the node', proto: 'tcp', dst: seven.clusterIP, dport: 9090, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 7, masquerade: true } },
    { label: 'nft501: kube-dns 53/udp from a pod elsewhere in the cluster CIDR', proto: 'udp', dst: dns.clusterIP, dport: 53, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: false } },
    { label: 'nft501: no endpoints → REJECT via @no-endpoint-services (external)', proto: 'tcp', dst: none.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'nft501: no endpoints → REJECT via @no-endpoint-services (from the node)', proto: 'tcp', dst: none.clusterIP, dport: 80, from: 'node', premise: { verdicts: ['REJECT'] } },
    { label: 'nft501: ClusterIP port without a Service → REJECT via @cluster-ips (external, tcp)', proto: 'tcp', dst: two.clusterIP, dport: 8443, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'nft501: ClusterIP port without a Service → REJECT via @cluster-ips (pod, udp)', proto: 'udp', dst: one.clusterIP, dport: 81, from: { ip: pod }, premise: { verdicts: ['REJECT'] } },
    { label: 'nft501: ClusterIP port without a Service → REJECT (from the node, filter-output-post-dnat)', proto: 'tcp', dst: three.clusterIP, dport: 81, from: 'node', premise: { verdicts: ['REJECT'] } },
    { label: 'nft501: unallocated ClusterIP in the service CIDR → DROP', proto: 'tcp', dst: unallocatedClusterIP(c), dport: 80, from: 'external', timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'nft501: NodePort on the node address, external', proto: 'tcp', dst: node, dport: np.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'nft501: NodePort without endpoints → REJECT via @no-endpoint-nodeports', proto: 'tcp', dst: node, dport: npn.ports[0].nodePort!, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'nft501: NodePort Local, external → the local endpoint, source kept', proto: 'tcp', dst: node, dport: npl.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'nft501: NodePort Local from the node itself → every endpoint, masqueraded', proto: 'tcp', dst: node, dport: npl.ports[0].nodePort!, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'nft501: NodePort Local without local endpoints, external → DROP', proto: 'tcp', dst: node, dport: npln.ports[0].nodePort!, from: 'external', timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'nft501: externalIP, external', proto: 'tcp', dst: ext.externalIPs[0], dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft501: hairpin, one of 3 endpoints calls its own Service', proto: 'tcp', dst: three.clusterIP, dport: 80, from: { ip: three.ports[0].endpoints[1].ip }, hairpin: true, premise: { verdicts: ['DNAT'], outcomes: 3 } },
  ];
  return { dump, cases: forLayout(cases, nft) };
}

/** Seed 502, IPv4, calico: LoadBalancer (plain, Local, source ranges), affinity first-packet odds, SCTP, UDP, internalTrafficPolicy. */
export function nftCalicoSuite(nft: NftOptions = {}): OracleSuite {
  const { cluster: c, dump } = generatedNft('nft-502-v4-calico', {
    seed: 502,
    services: 16,
    family: 4,
    cni: 'calico',
    endpoints: { min: 1, max: 6 },
    shapes: [
      'loadbalancer',
      'loadbalancer-local',
      'loadbalancer-source-ranges',
      'loadbalancer-source-ranges-node',
      'loadbalancer-no-endpoints',
      'affinity',
      'sctp',
      'udp-multiport',
      'internal-local',
      'internal-local-no-local-endpoints',
      'external-ips-no-endpoints',
    ],
  }, nft);
  const lb = byShape(c, 'loadbalancer');
  const lbl = byShape(c, 'loadbalancer-local');
  const lbr = byShape(c, 'loadbalancer-source-ranges');
  const lbn = byShape(c, 'loadbalancer-source-ranges-node');
  const lbe = byShape(c, 'loadbalancer-no-endpoints');
  const aff = byShape(c, 'affinity');
  const sctp = byShape(c, 'sctp');
  const udp = byShape(c, 'udp-multiport');
  const il = byShape(c, 'internal-local');
  const iln = byShape(c, 'internal-local-no-local-endpoints');
  const exn = byShape(c, 'external-ips-no-endpoints');
  const pod = localPod(c);
  const cases: OracleCase[] = [
    { label: 'nft502: LoadBalancer IP, external', proto: 'tcp', dst: lb.loadBalancerIPs[0], dport: 443, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft502: LoadBalancer Local → the local endpoint, source kept', proto: 'tcp', dst: lbl.loadBalancerIPs[0], dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'nft502: LoadBalancer Local from a pod → every endpoint (short-circuit)', proto: 'tcp', dst: lbl.loadBalancerIPs[0], dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: false } },
    { label: 'nft502: loadBalancerSourceRanges, allowed client (203.0.113.0/25)', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft502: loadBalancerSourceRanges, allowed client (198.51.100.7/32)', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: { ip: '198.51.100.7' }, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft502: loadBalancerSourceRanges, denied client → DROP (firewall chain)', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: { ip: '192.0.2.77' }, timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'nft502: source ranges incl. the node network, from the node itself', proto: 'tcp', dst: lbn.loadBalancerIPs[1], dport: 80, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'nft502: LoadBalancer without endpoints → REJECT', proto: 'tcp', dst: lbe.loadBalancerIPs[0], dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'nft502: externalIP without endpoints → REJECT', proto: 'tcp', dst: exn.externalIPs[0], dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'nft502: session affinity, first-packet odds (3 endpoints; affinity sets flushed per packet)', proto: 'tcp', dst: aff.clusterIP, dport: 80, from: { ip: pod }, clearRecentEachPacket: true, premise: { verdicts: ['DNAT'], outcomes: 3 } },
    { label: 'nft502: SCTP ClusterIP (2 endpoints), external', proto: 'sctp', dst: sctp.clusterIP, dport: 3868, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft502: UDP 53 of a multi-port Service (→ 5353), from a pod', proto: 'udp', dst: udp.clusterIP, dport: 53, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: false } },
    { label: 'nft502: UDP 514 of a multi-port Service (→ 5514), external', proto: 'udp', dst: udp.clusterIP, dport: 514, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft502: internalTrafficPolicy Local → the local endpoint only', proto: 'tcp', dst: il.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 1 } },
    { label: 'nft502: internalTrafficPolicy Local without local endpoints → DROP', proto: 'tcp', dst: iln.clusterIP, dport: 80, from: { ip: pod }, timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'nft502: a port the Service does not have → REJECT (@cluster-ips)', proto: 'udp', dst: lb.clusterIP, dport: 81, from: 'external', premise: { verdicts: ['REJECT'] } },
  ];
  return { dump, cases: forLayout(cases, nft) };
}

/** Seed 503, IPv6, flannel. */
export function nftIpv6Suite(nft: NftOptions = {}): OracleSuite {
  const { cluster: c, dump } = generatedNft('nft-503-v6-flannel', {
    seed: 503,
    services: 10,
    family: 6,
    cni: 'flannel',
    shapes: ['kube-dns', 'single-endpoint', 'two-endpoints', 'three-endpoints', 'nodeport', 'loadbalancer-source-ranges', 'no-endpoints', 'nodeport-local'],
  }, nft);
  const node = c.node.ip;
  const two = byShape(c, 'two-endpoints');
  const three = byShape(c, 'three-endpoints');
  const np = byShape(c, 'nodeport');
  const npl = byShape(c, 'nodeport-local');
  const lbr = byShape(c, 'loadbalancer-source-ranges');
  const none = byShape(c, 'no-endpoints');
  const dns = byShape(c, 'kube-dns');
  const one = byShape(c, 'single-endpoint');
  const pod = localPod(c);
  const cases: OracleCase[] = [
    { label: 'nft503 v6: ClusterIP, 2 endpoints, external', proto: 'tcp', dst: two.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft503 v6: ClusterIP, 3 endpoints, from a pod', proto: 'tcp', dst: three.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: false } },
    { label: 'nft503 v6: kube-dns [VIP]:53/udp from a pod', proto: 'udp', dst: dns.clusterIP, dport: 53, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'nft503 v6: NodePort, external', proto: 'tcp', dst: node, dport: np.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'nft503 v6: NodePort Local, external → local endpoint', proto: 'tcp', dst: node, dport: npl.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'nft503 v6: source ranges, allowed client 2001:db8:cafe::5', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: { ip: '2001:db8:cafe::5' }, premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'nft503 v6: source ranges, denied client → DROP', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: 'external', timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'nft503 v6: no endpoints → REJECT (ICMPv6, seen directly)', proto: 'tcp', dst: none.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'nft503 v6: ClusterIP port without a Service → REJECT via @cluster-ips', proto: 'tcp', dst: two.clusterIP, dport: 81, from: { ip: pod }, premise: { verdicts: ['REJECT'] } },
    { label: 'nft503 v6: ClusterIP from the node itself', proto: 'tcp', dst: one.clusterIP, dport: 80, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
  ];
  return { dump, cases: forLayout(cases, nft) };
}

/**
 * Seed 504, IPv4, `--nodeport-addresses` unset ('all': NodePorts via `fib daddr type local`),
 * affinity with Local policy, SCTP NodePort, an unnamed port, and the random mix's ladders.
 */
export function nftAllAddressesSuite(nft: NftOptions = {}): OracleSuite {
  const { cluster: c, dump } = generatedNft(
    'nft-504-v4-nodeport-all',
    { seed: 504, services: 16, family: 4, cni: 'flannel', endpoints: { min: 1, max: 9 }, shapes: ['nodeport', 'affinity-custom-timeout', 'affinity-local', 'sctp-nodeport', 'unnamed-port'] },
    { ...nft, nodePortAddresses: 'all' },
  );
  const node = c.node.ip;
  const np = byShape(c, 'nodeport');
  const aff = byShape(c, 'affinity-custom-timeout');
  const affl = byShape(c, 'affinity-local');
  const sctp = byShape(c, 'sctp-nodeport');
  const unnamed = byShape(c, 'unnamed-port');
  const cases: OracleCase[] = [
    { label: 'nft504: NodePort via fib daddr type local, external', proto: 'tcp', dst: node, dport: np.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'nft504: NodePort via fib daddr type local, from the node', proto: 'tcp', dst: node, dport: np.ports[0].nodePort!, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'nft504: a port that is no NodePort on the node address → passes unchanged', proto: 'udp', dst: node, dport: 29999, from: 'external', timeoutMs: 300, premise: { verdicts: ['PASS'], outcomes: 1 } },
    { label: 'nft504: NodePort with session affinity, first-packet odds', proto: 'tcp', dst: node, dport: aff.ports[0].nodePort!, from: 'external', clearRecentEachPacket: true, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'nft504: LoadBalancer Local + affinity, external → the local endpoint', proto: 'tcp', dst: affl.loadBalancerIPs[0], dport: 80, from: 'external', clearRecentEachPacket: true, packets: 60, premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'nft504: SCTP NodePort (unnamed port), external', proto: 'sctp', dst: node, dport: sctp.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
    { label: 'nft504: unnamed port 8080, from a pod', proto: 'tcp', dst: unnamed.clusterIP, dport: 8080, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 2 } },
  ];
  // Random-mix ClusterIP Services: one per distinct endpoint count (first port; tcp/udp).
  const counts = new Set<number>();
  for (const s of c.services) {
    if (s.shape !== 'random' || s.sessionAffinity || s.internalTrafficPolicy === 'Local') continue;
    const p = s.ports[0];
    const n = p.endpoints.length;
    if (p.protocol === 'sctp' || counts.has(n) || n > 9) continue;
    counts.add(n);
    cases.push({
      label: `nft504: random ${s.namespace}/${s.name} ${p.protocol}/${p.port} (${n} endpoint${n === 1 ? '' : 's'})`,
      proto: p.protocol,
      dst: s.clusterIP,
      dport: p.port,
      from: counts.size % 2 ? 'pod' : 'external',
      ...(n === 0 ? { premise: { verdicts: ['REJECT'] as const } } : { premise: { verdicts: ['DNAT'] as const, outcomes: n } }),
    });
    if (counts.size >= 4) break;
  }
  return { dump, cases: forLayout(cases, nft) };
}

export function allNftSuites(): OracleSuite[] {
  return [nftFlannelSuite(), nftCalicoSuite(), nftIpv6Suite(), nftAllAddressesSuite()];
}

/**
 * The suites for one kube-proxy layout (the default layout's run is allNftSuites), chosen by what
 * the layout changes, to keep the kernel run short: every layout runs seed 501 (ClusterIP ladders,
 * REJECTs, NodePorts, hairpin); 502 (LoadBalancer, firewall, affinity, internalTrafficPolicy) where
 * the filter chains, the firewall elements or the affinity chains changed (1.29, 1.34, 1.36); 503
 * (IPv6) where the rule text of a DNAT changed (1.36 maps, 1.37 plain `dnat to [addr]:port`); 504
 * (--nodeport-addresses unset, fib) for 1.29, whose default that is.
 */
export function layoutNftSuites(layout: NftLayoutId): OracleSuite[] {
  const nft: NftOptions = { nftLayout: layout };
  const suites = [nftFlannelSuite(nft)];
  if (layout === '1.29' || layout === '1.34' || layout === '1.36') suites.push(nftCalicoSuite(nft));
  if (layout === '1.36' || layout === '1.37') suites.push(nftIpv6Suite(nft));
  if (layout === '1.29') suites.push(nftAllAddressesSuite(nft));
  return suites;
}
