/**
 * The dumps and cases of the kernel comparison (trace-vs-kernel.test.ts): the seed kind sample
 * and generated kube-proxy iptables-mode dumps (several seeds, flannel and calico, IPv4 and
 * IPv6), each with the cases that exercise its Service shapes.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCluster, iptablesSave, type Cluster, type GenerateOptions, type Service, type Shape } from '../../../src/generate/index.js';
import type { OracleCase, OracleDump } from './compare.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const FIXTURES = join(ROOT, 'test/fixtures/oracle');

export interface OracleSuite {
  readonly dump: OracleDump;
  readonly cases: readonly OracleCase[];
}

/** samples/iptables-mode-kind (seed 001): a kind worker, CoreDNS 10.244.0.3/.4, API server 172.18.0.3:6443. */
export function kindSuite(): OracleSuite {
  const iptables = readFileSync(join(ROOT, 'samples/iptables-mode-kind/iptables-save.txt'), 'utf8');
  const dump: OracleDump = { name: 'kind-sample', scenario: { iptables, nodeAddresses: ['172.18.0.2'], podCidr: '10.244.0.0/16' } };
  const dns = { dst: '10.96.0.10', dport: 53 };
  const cases: OracleCase[] = [
    { label: 'kind: 10.96.0.10:53/udp from an external client → CoreDNS 50/50, masqueraded', proto: 'udp', ...dns, from: 'external', packets: 1200, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'kind: 10.96.0.10:53/udp from a pod → CoreDNS 50/50, not masqueraded', proto: 'udp', ...dns, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: false } },
    { label: 'kind: 10.96.0.10:53/tcp from a pod (dns-tcp)', proto: 'tcp', ...dns, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: false } },
    { label: 'kind: 10.96.0.10:53/udp from the node itself (OUTPUT path)', proto: 'udp', ...dns, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'kind: 10.96.0.1:443 from a pod → 172.18.0.3:6443 (kind-masq-agent masquerades)', proto: 'tcp', dst: '10.96.0.1', dport: 443, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
    { label: 'kind: 10.96.0.1:443 from an external client → 172.18.0.3:6443', proto: 'tcp', dst: '10.96.0.1', dport: 443, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
    { label: 'kind: 10.96.0.10:9999 → no Service: passes unchanged', proto: 'tcp', dst: '10.96.0.10', dport: 9999, from: 'external', timeoutMs: 300, premise: { verdicts: ['PASS'], outcomes: 1 } },
    { label: 'kind: hairpin 10.96.0.10:53/udp from CoreDNS 10.244.0.3 itself', proto: 'udp', ...dns, from: { ip: '10.244.0.3' }, hairpin: true, premise: { verdicts: ['DNAT'], outcomes: 2 } },
  ];
  return { dump, cases };
}

export function byShape(c: Cluster, shape: Shape): Service {
  const s = c.services.find((x) => x.shape === shape);
  if (!s) throw new Error(`seed ${c.seed}: no ${shape} Service`);
  return s;
}

/** An unused address in THIS node's pod range (a local pod that is not an endpoint). */
export function localPod(c: Cluster): string {
  const base = c.node.podCIDR.split('/')[0];
  return c.family === 4 ? base.replace(/\.0$/, '.250') : `${base.replace(/::$/, '')}::fff0`;
}

function generated(name: string, opts: GenerateOptions): { cluster: Cluster; dump: OracleDump } {
  const cluster = generateCluster(opts);
  const text = iptablesSave(cluster);
  const scenario = cluster.family === 4 ? { iptables: text } : { ip6tables: text };
  return { cluster, dump: { name, scenario: { ...scenario, nodeAddresses: [cluster.node.ip], podCidr: cluster.clusterCIDR } } };
}

/** Seed 101, IPv4, flannel: ClusterIP ladders (1, 2, 3, 7 endpoints), NodePort, Local policy, externalIPs, no endpoints, hairpin. */
export function flannelSuite(): OracleSuite {
  const { cluster: c, dump } = generated('gen-101-v4-flannel', {
    seed: 101,
    services: 14,
    family: 4,
    cni: 'flannel',
    shapes: ['kubernetes', 'kube-dns', 'single-endpoint', 'two-endpoints', 'three-endpoints', 'seven-endpoints', 'no-endpoints', 'nodeport', 'nodeport-local', 'nodeport-local-no-local-endpoints', 'external-ips'],
  });
  const node = c.node.ip;
  const one = byShape(c, 'single-endpoint');
  const two = byShape(c, 'two-endpoints');
  const three = byShape(c, 'three-endpoints');
  const seven = byShape(c, 'seven-endpoints');
  const none = byShape(c, 'no-endpoints');
  const np = byShape(c, 'nodeport');
  const npl = byShape(c, 'nodeport-local');
  const npln = byShape(c, 'nodeport-local-no-local-endpoints');
  const ext = byShape(c, 'external-ips');
  const dns = byShape(c, 'kube-dns');
  const pod = localPod(c);
  const cases: OracleCase[] = [
    { label: 'gen101: ClusterIP, 1 endpoint, from a pod', proto: 'tcp', dst: one.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'gen101: ClusterIP, 2 endpoints, from an external client (masquerade)', proto: 'tcp', dst: two.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen101: ClusterIP, 3 endpoints, from a pod', proto: 'tcp', dst: three.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 3 } },
    { label: 'gen101: ClusterIP, 7 endpoints (http), from a pod', proto: 'tcp', dst: seven.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 7 } },
    { label: 'gen101: ClusterIP, 7 endpoints (grpc 9090), from the node', proto: 'tcp', dst: seven.clusterIP, dport: 9090, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 7, masquerade: true } },
    { label: 'gen101: kube-dns 53/udp from a pod elsewhere in the cluster CIDR', proto: 'udp', dst: dns.clusterIP, dport: 53, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'gen101: no endpoints → REJECT (external)', proto: 'tcp', dst: none.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'gen101: no endpoints → REJECT (from the node)', proto: 'tcp', dst: none.clusterIP, dport: 80, from: 'node', premise: { verdicts: ['REJECT'] } },
    { label: 'gen101: NodePort on the node address from an external client', proto: 'tcp', dst: node, dport: np.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'gen101: NodePort, externalTrafficPolicy Local, external client → the local endpoint only, no masquerade', proto: 'tcp', dst: node, dport: npl.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'gen101: NodePort Local from the node itself → every endpoint, masqueraded', proto: 'tcp', dst: node, dport: npl.ports[0].nodePort!, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'gen101: NodePort Local without local endpoints, external → DROP', proto: 'tcp', dst: node, dport: npln.ports[0].nodePort!, from: 'external', timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'gen101: NodePort Local without local endpoints, from the node → remote endpoints', proto: 'tcp', dst: node, dport: npln.ports[0].nodePort!, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'gen101: externalIP from an external client', proto: 'tcp', dst: ext.externalIPs[0], dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen101: hairpin, the single endpoint calls its own Service', proto: 'tcp', dst: one.clusterIP, dport: 80, from: { ip: one.ports[0].endpoints[0].ip }, hairpin: true, premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
    { label: 'gen101: hairpin, one of 3 endpoints calls its own Service', proto: 'tcp', dst: three.clusterIP, dport: 80, from: { ip: three.ports[0].endpoints[1].ip }, hairpin: true, premise: { verdicts: ['DNAT'], outcomes: 3 } },
  ];
  return { dump, cases };
}

/** Seed 202, IPv4, calico: LoadBalancer (plain, Local, source ranges), affinity, SCTP, UDP multi-port, internalTrafficPolicy Local. */
export function calicoSuite(): OracleSuite {
  const { cluster: c, dump } = generated('gen-202-v4-calico', {
    seed: 202,
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
  });
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
    { label: 'gen202: LoadBalancer IP from an external client', proto: 'tcp', dst: lb.loadBalancerIPs[0], dport: 443, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen202: LoadBalancer Local → the local endpoint, source kept', proto: 'tcp', dst: lbl.loadBalancerIPs[0], dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'gen202: LoadBalancer Local from a pod → every endpoint', proto: 'tcp', dst: lbl.loadBalancerIPs[0], dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 3 } },
    { label: 'gen202: loadBalancerSourceRanges, allowed client (203.0.113.0/25)', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen202: loadBalancerSourceRanges, allowed client (198.51.100.7/32)', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: { ip: '198.51.100.7' }, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen202: loadBalancerSourceRanges, denied client → DROP', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: { ip: '192.0.2.77' }, timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'gen202: source ranges incl. the node network, from the node itself', proto: 'tcp', dst: lbn.loadBalancerIPs[1], dport: 80, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'gen202: LoadBalancer without endpoints → REJECT', proto: 'tcp', dst: lbe.loadBalancerIPs[0], dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'gen202: externalIP without endpoints → REJECT', proto: 'tcp', dst: exn.externalIPs[0], dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'gen202: session affinity, first-packet odds (3 endpoints)', proto: 'tcp', dst: aff.clusterIP, dport: 80, from: { ip: pod }, clearRecentEachPacket: true, premise: { verdicts: ['DNAT'], outcomes: 3 } },
    { label: 'gen202: SCTP ClusterIP (2 endpoints), external', proto: 'sctp', dst: sctp.clusterIP, dport: 3868, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen202: UDP 53 of a multi-port Service (→ 5353)', proto: 'udp', dst: udp.clusterIP, dport: 53, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: false } },
    { label: 'gen202: UDP 514 of a multi-port Service (→ 5514), external', proto: 'udp', dst: udp.clusterIP, dport: 514, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen202: TCP 53 of the same Service (dns-tcp)', proto: 'tcp', dst: udp.clusterIP, dport: 53, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'gen202: internalTrafficPolicy Local → the local endpoint only', proto: 'tcp', dst: il.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 1 } },
    { label: 'gen202: internalTrafficPolicy Local without local endpoints → DROP', proto: 'tcp', dst: iln.clusterIP, dport: 80, from: { ip: pod }, timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'gen202: a port the Service does not have → passes unchanged', proto: 'udp', dst: lb.clusterIP, dport: 81, from: 'external', timeoutMs: 300, premise: { verdicts: ['PASS'] } },
  ];
  return { dump, cases };
}

/** Seed 303, IPv6, flannel. */
export function ipv6Suite(): OracleSuite {
  const { cluster: c, dump } = generated('gen-303-v6-flannel', {
    seed: 303,
    services: 10,
    family: 6,
    cni: 'flannel',
    shapes: ['kube-dns', 'single-endpoint', 'two-endpoints', 'three-endpoints', 'nodeport', 'loadbalancer-source-ranges', 'no-endpoints', 'nodeport-local'],
  });
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
    { label: 'gen303 v6: ClusterIP, 2 endpoints, external', proto: 'tcp', dst: two.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen303 v6: ClusterIP, 3 endpoints, from a pod', proto: 'tcp', dst: three.clusterIP, dport: 80, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: false } },
    { label: 'gen303 v6: kube-dns [VIP]:53/udp from a pod', proto: 'udp', dst: dns.clusterIP, dport: 53, from: { ip: pod }, premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'gen303 v6: NodePort on the node address, external', proto: 'tcp', dst: node, dport: np.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 3, masquerade: true } },
    { label: 'gen303 v6: NodePort Local, external → local endpoint', proto: 'tcp', dst: node, dport: npl.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'gen303 v6: source ranges, allowed client 2001:db8:cafe::5', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: { ip: '2001:db8:cafe::5' }, premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'gen303 v6: source ranges, denied client → DROP', proto: 'tcp', dst: lbr.loadBalancerIPs[0], dport: 80, from: 'external', timeoutMs: 400, premise: { verdicts: ['DROP'] } },
    { label: 'gen303 v6: no endpoints → REJECT (icmp6-port-unreachable)', proto: 'tcp', dst: none.clusterIP, dport: 80, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'gen303 v6: ClusterIP from the node itself', proto: 'tcp', dst: one.clusterIP, dport: 80, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
  ];
  return { dump, cases };
}

/** Seed 404, IPv4, flannel, mostly the random mix: whatever ladders the generator drew, plus NodePort affinity and SCTP NodePort. */
export function randomSuite(): OracleSuite {
  const { cluster: c, dump } = generated('gen-404-v4-random', {
    seed: 404,
    services: 18,
    family: 4,
    cni: 'flannel',
    endpoints: { min: 1, max: 10 },
    shapes: ['affinity-custom-timeout', 'sctp-nodeport', 'unnamed-port'],
  });
  const node = c.node.ip;
  const aff = byShape(c, 'affinity-custom-timeout');
  const sctp = byShape(c, 'sctp-nodeport');
  const unnamed = byShape(c, 'unnamed-port');
  const cases: OracleCase[] = [
    { label: 'gen404: NodePort with session affinity, first-packet odds', proto: 'tcp', dst: node, dport: aff.ports[0].nodePort!, from: 'external', clearRecentEachPacket: true, premise: { verdicts: ['DNAT'], outcomes: 2, masquerade: true } },
    { label: 'gen404: SCTP NodePort (unnamed port), external', proto: 'sctp', dst: node, dport: sctp.ports[0].nodePort!, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
    { label: 'gen404: unnamed port 8080, from the node', proto: 'tcp', dst: unnamed.clusterIP, dport: 8080, from: 'node', premise: { verdicts: ['DNAT'], outcomes: 2 } },
  ];
  // Random-mix ClusterIP Services: one per distinct endpoint count (first port; tcp/udp).
  const counts = new Set<number>();
  for (const s of c.services) {
    if (s.shape !== 'random' || s.sessionAffinity || s.internalTrafficPolicy === 'Local') continue;
    const p = s.ports[0];
    const n = p.endpoints.length;
    if (p.protocol === 'sctp' || counts.has(n) || n > 10) continue;
    counts.add(n);
    cases.push({
      label: `gen404: random ${s.namespace}/${s.name} ${p.protocol}/${p.port} (${n} endpoint${n === 1 ? '' : 's'})`,
      proto: p.protocol,
      dst: s.clusterIP,
      dport: p.port,
      from: counts.size % 2 ? 'pod' : 'external',
      ...(n === 0 ? { premise: { verdicts: ['REJECT'] as const } } : { premise: { verdicts: ['DNAT'] as const, outcomes: n } }),
    });
    if (counts.size >= 5) break;
  }
  return { dump, cases };
}

/** Hand-written: negations, multiport, marks, nth, addrtype, in test/fixtures/oracle/matches.iptables. */
export function matchesSuite(): OracleSuite {
  const iptables = readFileSync(join(FIXTURES, 'matches.iptables'), 'utf8');
  const dump: OracleDump = { name: 'fixture-matches', scenario: { iptables, nodeAddresses: ['172.18.0.2'], podCidr: '10.244.0.0/16' } };
  const cases: OracleCase[] = [
    { label: 'matches: ! -s 10.244.0.0/16 decides masquerade (external)', proto: 'tcp', dst: '10.96.1.1', dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: true } },
    { label: 'matches: ! -s 10.244.0.0/16 decides masquerade (pod)', proto: 'tcp', dst: '10.96.1.1', dport: 80, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
    { label: 'matches: multiport + ! --dport; nth ladder 1/3 each', proto: 'udp', dst: '10.96.1.2', dport: 1002, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 3 } },
    { label: 'matches: ! -d excluded port range falls through to REJECT', proto: 'udp', dst: '10.96.1.2', dport: 1005, from: 'external', premise: { verdicts: ['REJECT'] } },
    { label: 'matches: MARK set in mangle then matched in nat (random 0.2 / 0.8)', proto: 'tcp', dst: '10.96.1.3', dport: 443, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 2 } },
    { label: 'matches: addrtype --src-type LOCAL from the node → DROP in filter OUTPUT', proto: 'tcp', dst: '10.96.1.4', dport: 80, from: 'node', premise: { verdicts: ['DROP'] } },
    { label: 'matches: same VIP from a pod → DNAT', proto: 'tcp', dst: '10.96.1.4', dport: 80, from: 'pod', premise: { verdicts: ['DNAT'], outcomes: 1 } },
  ];
  return { dump, cases };
}

/**
 * Hand-written: explicit ACCEPT vs no rule (test/fixtures/oracle/accept.iptables). The kernel
 * sees both as PASS; kpx labels them ACCEPT and NONE (checked in oracle/labels.test.ts).
 */
export function acceptSuite(): OracleSuite {
  const iptables = readFileSync(join(FIXTURES, 'accept.iptables'), 'utf8');
  const dump: OracleDump = { name: 'fixture-accept', scenario: { iptables, nodeAddresses: ['172.18.0.2'], podCidr: '10.244.0.0/16' } };
  const cases: OracleCase[] = [
    { label: 'accept: explicit -j ACCEPT in FORWARD → PASS (kpx: ACCEPT)', proto: 'tcp', dst: '10.96.5.5', dport: 80, from: 'external', timeoutMs: 300, premise: { verdicts: ['PASS'], outcomes: 1 } },
    { label: 'accept: no rule at all → PASS (kpx: NONE)', proto: 'tcp', dst: '10.96.5.6', dport: 80, from: 'external', timeoutMs: 300, premise: { verdicts: ['PASS'], outcomes: 1 } },
    { label: 'accept: explicit -j ACCEPT in OUTPUT, from the node → PASS (kpx: ACCEPT)', proto: 'tcp', dst: '10.96.5.5', dport: 80, from: 'node', timeoutMs: 300, premise: { verdicts: ['PASS'], outcomes: 1 } },
    { label: 'accept: DNAT next to them', proto: 'tcp', dst: '10.96.5.7', dport: 80, from: 'external', premise: { verdicts: ['DNAT'], outcomes: 1, masquerade: false } },
  ];
  return { dump, cases };
}

export function allSuites(): OracleSuite[] {
  return [kindSuite(), flannelSuite(), calicoSuite(), ipv6Suite(), randomSuite(), matchesSuite(), acceptSuite()];
}
