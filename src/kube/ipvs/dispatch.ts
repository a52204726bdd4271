/**
 * Dispatch: what each virtual server is (a ClusterIP, an externalIP, a LoadBalancer IP or a
 * node address × NodePort). kube-proxy says it in its ipsets (KUBE-CLUSTER-IP,
 * KUBE-EXTERNAL-IP[-LOCAL], KUBE-LOAD-BALANCER[-LOCAL], KUBE-NODE-PORT-[LOCAL-]TCP/UDP bitmaps,
 * KUBE-NODE-PORT-[LOCAL-]SCTP-HASH); without them the node's addresses decide (a VIP is bound to
 * the dummy interface kube-ipvs0, a NodePort virtual server listens on a node address), and
 * without those the default NodePort range.
 */
import type { InterfaceAddress, NetInterface } from '../../model/iface.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { problem } from '../problems.js';
import { vsEvidence } from './evidence.js';
import { nameFromMembers } from './identity.js';
import { ipKey, nodePortSet, type FamilySets } from './sets.js';
import type { Vs } from './types.js';

/** kube-proxy's default --service-node-port-range, used only when no ipset or `ip addr` says which VIPs are node addresses. */
const NODE_PORT_RANGE = { from: 30000, to: 32767 };

export interface NodeAddresses {
  /** The addresses of kube-ipvs0 (the VIPs), by ipKey. */
  readonly ipvs0: ReadonlyMap<string, { iface: NetInterface; address: InterfaceAddress }>;
  /** The node's own addresses (every other interface, and the ones given on the command line), by ipKey. */
  readonly node: ReadonlySet<string>;
  /** Whether the dumps say which addresses the node has at all. */
  readonly known: boolean;
  readonly haveIpvs0: boolean;
}

export function nodeAddresses(snapshot: NodeSnapshot): NodeAddresses {
  const ipvs0Ifaces = snapshot.interfaces.filter((i) => i.name === 'kube-ipvs0');
  const ipvs0 = new Map<string, { iface: NetInterface; address: InterfaceAddress }>();
  for (const i of ipvs0Ifaces) for (const a of i.addresses) ipvs0.set(ipKey(a.ip.family, a.ip.value), { iface: i, address: a });
  const node = new Set<string>();
  for (const i of snapshot.interfaces) if (i.name !== 'kube-ipvs0') for (const a of i.addresses) node.add(ipKey(a.ip.family, a.ip.value));
  for (const ip of snapshot.extraNodeIps) node.add(ipKey(ip.family, ip.value));
  return { ipvs0, node, known: snapshot.interfaces.length > 0 || snapshot.extraNodeIps.length > 0, haveIpvs0: ipvs0Ifaces.length > 0 };
}

/** Sets `v`'s role, policy, set members and name. */
export function classify(v: Vs, sets: FamilySets, addrs: NodeAddresses): void {
  const k = ipKey(v.ip.family, v.ip.value);
  const isNodeAddr = addrs.node.has(k);
  v.ipvs0 = addrs.ipvs0.get(k);
  if (!roleFromSets(v, sets)) roleFromAddresses(v, sets, addrs, isNodeAddr);
  if (v.role !== 'nodeport' && addrs.haveIpvs0 && !v.ipvs0 && !isNodeAddr) {
    v.problems.push({ problem: problem('ipvs-vip-unbound', { vip: v.ipText, vs: v.key }), evidence: [vsEvidence(v.vs)] });
  }
  v.spn = nameFromMembers(v.members);
}

/** The role a kube-proxy set gives; false when no set has the virtual server. */
function roleFromSets(v: Vs, sets: FamilySets): boolean {
  const at = (base: string) => sets.ipPort(base, v.ip, v.protocol, v.port);
  const cluster = at('KUBE-CLUSTER-IP');
  if (cluster.length) {
    v.role = 'cluster';
    v.members = cluster;
    v.policy = null;
    return true;
  }
  const lb = at('KUBE-LOAD-BALANCER');
  if (lb.length) {
    v.role = 'lb';
    v.members = lb;
    v.localMembers = at('KUBE-LOAD-BALANCER-LOCAL');
    v.fwMembers = at('KUBE-LOAD-BALANCER-FW');
    v.sourceCidrMembers = at('KUBE-LOAD-BALANCER-SOURCE-CIDR');
    v.sourceIpMembers = at('KUBE-LOAD-BALANCER-SOURCE-IP');
    v.policy = v.localMembers.length ? 'Local' : sets.available('KUBE-LOAD-BALANCER-LOCAL') ? 'Cluster' : null;
    return true;
  }
  const ext = at('KUBE-EXTERNAL-IP');
  const extLocal = at('KUBE-EXTERNAL-IP-LOCAL');
  if (ext.length || extLocal.length) {
    v.role = 'external';
    v.members = [...ext, ...extLocal];
    v.localMembers = extLocal;
    v.policy = extLocal.length ? 'Local' : sets.available('KUBE-EXTERNAL-IP-LOCAL') ? 'Cluster' : null;
    return true;
  }
  const np = nodePortMembers(v, sets, false);
  const npLocal = nodePortMembers(v, sets, true);
  if ((np.length || npLocal.length) && !v.ipvs0) {
    v.role = 'nodeport';
    v.members = [...np, ...npLocal];
    v.localMembers = npLocal;
    v.policy = npLocal.length ? 'Local' : sets.available(nodePortSet(v.protocol, true)) ? 'Cluster' : null;
    return true;
  }
  return false;
}

function nodePortMembers(v: Vs, sets: FamilySets, local: boolean) {
  const base = nodePortSet(v.protocol, local);
  if (v.protocol === 'sctp') return sets.ipPort(base, v.ip, v.protocol, v.port);
  const r = sets.port(base, v.port);
  return r ? [r] : [];
}

/** In no kube-proxy set (or the sets were not dumped): decide from the addresses. */
function roleFromAddresses(v: Vs, sets: FamilySets, addrs: NodeAddresses, isNodeAddr: boolean): void {
  const npBase = nodePortSet(v.protocol, false);
  if (addrs.known) v.role = isNodeAddr && !v.ipvs0 ? 'nodeport' : 'cluster';
  else v.role = !sets.available(npBase) && v.port >= NODE_PORT_RANGE.from && v.port <= NODE_PORT_RANGE.to ? 'nodeport' : 'cluster';
  if (v.role === 'nodeport') v.policy = null;
  if (sets.available('KUBE-CLUSTER-IP')) {
    const expected = v.role === 'nodeport' ? [npBase] : ['KUBE-CLUSTER-IP', 'KUBE-EXTERNAL-IP', 'KUBE-LOAD-BALANCER'];
    v.problems.push({ problem: problem('ipvs-no-set-entry', { vs: v.key, sets: expected }), evidence: [vsEvidence(v.vs)] });
  }
}
