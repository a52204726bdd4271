/**
 * The node's `ip addr` and `ip route` (iproute2 6.1 text form) so traces can follow a packet
 * after DNAT: eth0 with the node IP, the CNI's devices (flannel: cni0 bridge + flannel.1 VXLAN with
 * onlink routes to other nodes' pod ranges; calico: one caliXXXX veth and /32 route per local pod,
 * tunl0 IPIP routes via other nodes, a blackhole for the node's own block), a default route, and
 * in IPVS mode the kube-ipvs0 dummy holding every Service VIP.
 */
import type { Cluster, NodeInfo } from './cluster.js';
import { sha256Base32, v4FromString, v4ToString, v6FromString, v6ToString } from './util.js';

export interface NodeOptions {
  /** Add kube-ipvs0 with every bound VIP (IPVS mode). */
  ipvs?: boolean;
  /** VIPs to bind on kube-ipvs0 (default: computed by the caller). */
  ipvsAddresses?: readonly string[];
}

export interface Iface {
  index: number;
  name: string;
  /** Name as printed (`eth0@if9`, `vethXXXX@if3`). */
  printed: string;
  flags: string;
  mtu: number;
  qdisc: string;
  state: string;
  qlen?: number;
  link: string;
  /** [address/len, brd?, scope] */
  addrs: { cidr: string; brd?: string; scope: string; v6: boolean }[];
}

function mac(seed: string): string {
  const h = sha256Base32(seed, 12);
  const bytes = [0x02, ...Array.from({ length: 5 }, (_, i) => (h.charCodeAt(i * 2) * 7 + h.charCodeAt(i * 2 + 1)) & 255)];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

function gateway(cluster: Cluster, node: NodeInfo, host: number): string {
  const base = node.podCIDR.split('/')[0];
  return cluster.family === 4 ? v4ToString(v4FromString(base) + host) : v6ToString(v6FromString(base) + BigInt(host));
}

function localPods(cluster: Cluster): string[] {
  const set = new Set<string>();
  for (const s of cluster.services) for (const p of s.ports) for (const e of p.endpoints) if (e.local && e.ip !== cluster.node.ip) set.add(e.ip);
  return [...set];
}

/** An interface before its ifindex, which is its place in the node's list. */
type IfaceDraft = Omit<Iface, 'index'>;

const loopback = (): IfaceDraft => ({
  name: 'lo',
  printed: 'lo',
  flags: 'LOOPBACK,UP,LOWER_UP',
  mtu: 65536,
  qdisc: 'noqueue',
  state: 'UNKNOWN',
  qlen: 1000,
  link: 'link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00',
  addrs: [
    { cidr: '127.0.0.1/8', scope: 'host lo', v6: false },
    { cidr: '::1/128', scope: 'host ', v6: true },
  ],
});

/** The node's own address, on a veth of the kind (docker) network. */
function eth0(cluster: Cluster): IfaceDraft {
  const n = cluster.node;
  const v6 = cluster.family === 6;
  const nodePrefix = v6 ? 64 : 16;
  return {
    name: 'eth0',
    printed: 'eth0@if9',
    flags: 'BROADCAST,MULTICAST,UP,LOWER_UP',
    mtu: 1500,
    qdisc: 'noqueue',
    state: 'UP',
    link: `link/ether ${mac(`eth0-${n.name}`)} brd ff:ff:ff:ff:ff:ff link-netnsid 0`,
    addrs: v6
      ? [{ cidr: `${n.ip}/${nodePrefix}`, scope: 'global nodad ', v6: true }]
      : [{ cidr: `${n.ip}/${nodePrefix}`, brd: '172.18.255.255', scope: 'global eth0', v6: false }],
  };
}

/** flannel's VXLAN device, the cni0 bridge with the pod CIDR's gateway, and a veth per local pod. */
function flannelInterfaces(cluster: Cluster, pods: readonly string[]): IfaceDraft[] {
  const n = cluster.node;
  const v6 = cluster.family === 6;
  const flannelAddr = gateway(cluster, n, 0);
  const cni0 = gateway(cluster, n, 1);
  const plen = n.podCIDR.split('/')[1];
  return [
    {
      name: 'flannel.1',
      printed: 'flannel.1',
      flags: 'BROADCAST,MULTICAST,UP,LOWER_UP',
      mtu: 1450,
      qdisc: 'noqueue',
      state: 'UNKNOWN',
      link: `link/ether ${mac(`flannel-${n.name}`)} brd ff:ff:ff:ff:ff:ff`,
      addrs: v6 ? [{ cidr: `${flannelAddr}/128`, scope: 'global ', v6: true }] : [{ cidr: `${flannelAddr}/32`, scope: 'global flannel.1', v6: false }],
    },
    {
      name: 'cni0',
      printed: 'cni0',
      flags: 'BROADCAST,MULTICAST,UP,LOWER_UP',
      mtu: 1450,
      qdisc: 'noqueue',
      state: 'UP',
      qlen: 1000,
      link: `link/ether ${mac(`cni0-${n.name}`)} brd ff:ff:ff:ff:ff:ff`,
      addrs: v6
        ? [{ cidr: `${cni0}/${plen}`, scope: 'global ', v6: true }]
        : [{ cidr: `${cni0}/${plen}`, brd: v4ToString(v4FromString(n.podCIDR.split('/')[0]) + 255), scope: 'global cni0', v6: false }],
    },
    ...pods.map((ip): IfaceDraft => {
      const name = `veth${sha256Base32(ip, 8).toLowerCase()}`;
      return {
        name,
        printed: `${name}@if3`,
        flags: 'BROADCAST,MULTICAST,UP,LOWER_UP',
        mtu: 1450,
        qdisc: 'noqueue',
        state: 'UP',
        link: `link/ether ${mac(name)} brd ff:ff:ff:ff:ff:ff link-netns cni-${sha256Base32(`ns${ip}`, 8).toLowerCase()}`,
        addrs: [],
      };
    }),
  ];
}

/** calico's IPIP tunnel (IPv4 only) and a cali* veth per local pod (no bridge: routed). */
function calicoInterfaces(cluster: Cluster, pods: readonly string[]): IfaceDraft[] {
  const out: IfaceDraft[] = [];
  if (cluster.family !== 6) {
    const tunl = gateway(cluster, cluster.node, 192);
    out.push({
      name: 'tunl0',
      printed: 'tunl0@NONE',
      flags: 'NOARP,UP,LOWER_UP',
      mtu: 1480,
      qdisc: 'noqueue',
      state: 'UNKNOWN',
      qlen: 1000,
      link: 'link/ipip 0.0.0.0 brd 0.0.0.0',
      addrs: [{ cidr: `${tunl}/32`, scope: 'global tunl0', v6: false }],
    });
  }
  for (const ip of pods) {
    const name = `cali${sha256Base32(ip, 11).toLowerCase()}`;
    out.push({
      name,
      printed: `${name}@if3`,
      flags: 'BROADCAST,MULTICAST,UP,LOWER_UP',
      mtu: 1480,
      qdisc: 'noqueue',
      state: 'UP',
      link: `link/ether ee:ee:ee:ee:ee:ee brd ff:ff:ff:ff:ff:ff link-netns cni-${sha256Base32(`ns${ip}`, 8).toLowerCase()}`,
      addrs: [],
    });
  }
  return out;
}

/** IPVS mode's dummy device holding every bound VIP (down, no ARP). */
function kubeIpvs0(cluster: Cluster, addresses: readonly string[]): IfaceDraft {
  return {
    name: 'kube-ipvs0',
    printed: 'kube-ipvs0',
    flags: 'BROADCAST,NOARP',
    mtu: 1500,
    qdisc: 'noop',
    state: 'DOWN',
    link: `link/ether ${mac(`kube-ipvs0-${cluster.node.name}`)} brd ff:ff:ff:ff:ff:ff`,
    addrs: addresses.map((a) => (a.includes(':') ? { cidr: `${a}/128`, scope: 'global ', v6: true } : { cidr: `${a}/32`, scope: 'global kube-ipvs0', v6: false })),
  };
}

/** The node's interfaces in ifindex order. */
export function nodeInterfaces(cluster: Cluster, options: NodeOptions = {}): Iface[] {
  const pods = localPods(cluster);
  const drafts = [loopback(), eth0(cluster), ...(cluster.cni === 'flannel' ? flannelInterfaces(cluster, pods) : calicoInterfaces(cluster, pods))];
  if (options.ipvs) drafts.push(kubeIpvs0(cluster, options.ipvsAddresses ?? []));
  return drafts.map((d, i) => ({ index: i + 1, ...d }));
}

/** Local addresses other than loopback and kube-ipvs0 (the IPVS NodePort addresses). */
export function nodeAddresses(cluster: Cluster): string[] {
  const out: string[] = [];
  for (const i of nodeInterfaces(cluster)) {
    if (i.name === 'lo') continue;
    for (const a of i.addrs) if (a.v6 === (cluster.family === 6)) out.push(a.cidr.split('/')[0]);
  }
  return out;
}

/** `ip addr` (iproute2 6.1). */
export function ipAddr(cluster: Cluster, options: NodeOptions = {}): string {
  const out: string[] = [];
  for (const i of nodeInterfaces(cluster, options)) {
    out.push(`${i.index}: ${i.printed}: <${i.flags}> mtu ${i.mtu} qdisc ${i.qdisc} state ${i.state} group default ${i.qlen ? `qlen ${i.qlen}` : ''}`);
    out.push(`    ${i.link}`);
    for (const a of i.addrs) {
      out.push(`    ${a.v6 ? 'inet6' : 'inet'} ${a.cidr}${a.brd ? ` brd ${a.brd}` : ''} scope ${a.scope}`);
      out.push('       valid_lft forever preferred_lft forever');
    }
  }
  return `${out.join('\n')}\n`;
}

/** `ip route` (main table; `ip -6 route` for IPv6 clusters), in FIB dump order (by destination). */
export function ipRoute(cluster: Cluster): string {
  const v6 = cluster.family === 6;
  const n = cluster.node;
  // iproute2 6.x prints IPv4 routes with a trailing space, IPv6 routes without.
  const t = v6 ? '' : ' ';
  const rows: [string, string][] = [];
  const pods = localPods(cluster);
  if (cluster.cni === 'flannel') {
    for (const o of cluster.nodes) {
      if (o === n) {
        const src = gateway(cluster, n, 1);
        rows.push([o.podCIDR, v6 ? `${o.podCIDR} dev cni0 proto kernel metric 256 pref medium` : `${o.podCIDR} dev cni0 proto kernel scope link src ${src}${t}`]);
      } else {
        const via = gateway(cluster, o, 0);
        rows.push([o.podCIDR, v6 ? `${o.podCIDR} via ${via} dev flannel.1 metric 1024 onlink pref medium` : `${o.podCIDR} via ${via} dev flannel.1 onlink${t}`]);
      }
    }
  } else {
    for (const o of cluster.nodes) {
      if (o === n) rows.push([o.podCIDR, v6 ? `blackhole ${o.podCIDR} dev lo proto bird metric 1024 pref medium` : `blackhole ${o.podCIDR} proto bird${t}`]);
      else rows.push([o.podCIDR, v6 ? `${o.podCIDR} via ${o.ip} dev eth0 proto bird metric 1024 pref medium` : `${o.podCIDR} via ${o.ip} dev tunl0 proto bird onlink${t}`]);
    }
    const ifs = nodeInterfaces(cluster).filter((i) => i.name.startsWith('cali'));
    pods.forEach((ip, k) => {
      const dev = ifs[k]?.name ?? 'cali0';
      rows.push([v6 ? `${ip}/128` : `${ip}/32`, v6 ? `${ip} dev ${dev} metric 1024 pref medium` : `${ip} dev ${dev} scope link${t}`]);
    });
  }
  rows.push(v6 ? ['fc00:f853:ccd:e793::/64', 'fc00:f853:ccd:e793::/64 dev eth0 proto kernel metric 256 pref medium'] : ['172.18.0.0/16', `172.18.0.0/16 dev eth0 proto kernel scope link src ${n.ip}${t}`]);
  const key = (cidr: string): [bigint, number] => {
    const [a, l] = cidr.split('/');
    return [v6 ? v6FromString(a) : BigInt(v4FromString(a)), Number(l)];
  };
  rows.sort((x, y) => {
    const [a, al] = key(x[0]);
    const [b, bl] = key(y[0]);
    return a < b ? -1 : a > b ? 1 : al - bl;
  });
  // `ip -6 route` lists ::/0 last; IPv4 lists 0.0.0.0/0 first.
  const lines = v6 ? [...rows.map((r) => r[1]), 'default via fc00:f853:ccd:e793::1 dev eth0 metric 1024 pref medium'] : [`default via 172.18.0.1 dev eth0${t}`, ...rows.map((r) => r[1])];
  return `${lines.join('\n')}\n`;
}
