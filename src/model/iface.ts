/**
 * Interfaces and their addresses as `ip addr` / `ip -j addr` show them. Plain readonly data.
 */
import type { Cidr, Family, Ip } from './addr.js';

export interface InterfaceAddress {
  readonly family: Family;
  /** The local address as printed, without the prefix length. */
  readonly address: string;
  readonly ip: Ip;
  readonly prefix: number;
  /** The prefix the address lives in (of the peer for point-to-point `peer` addresses). */
  readonly cidr: Cidr;
  readonly scope?: string;
  /** IPv4 label (`eth0`, `eth0:1`). */
  readonly label?: string;
  readonly brd?: string;
  readonly peer?: string;
  /** `secondary`, `dynamic`, `noprefixroute`, `nodad`, `tentative`, … */
  readonly flags: readonly string[];
  /** `forever` or `86390sec` in text; seconds (4294967295 = forever) in JSON, normalised to text form. */
  readonly validLft?: string;
  readonly preferredLft?: string;
  readonly line: number;
}

export interface NetInterface {
  readonly index?: number;
  readonly name: string;
  /** After `@`: the lower device (`eth0` for `eth0.100@eth0`) or peer (`if5` for a veth in another netns). */
  readonly link?: string;
  /** `<BROADCAST,MULTICAST,UP,LOWER_UP>` words. */
  readonly flags: readonly string[];
  /** Operational state (`UP`, `DOWN`, `UNKNOWN`, `LOWERLAYERDOWN`). */
  readonly state?: string;
  readonly mtu?: number;
  readonly qdisc?: string;
  readonly group?: string;
  readonly qlen?: number;
  /** `ether`, `loopback`, `none`, `ipip`, … (after `link/`). */
  readonly linkType?: string;
  readonly mac?: string;
  readonly master?: string;
  readonly altnames?: readonly string[];
  /** `link-netns NAME` / `link-netnsid N` (veth peers in another namespace). */
  readonly linkNetns?: string;
  readonly linkNetnsId?: number;
  readonly addresses: readonly InterfaceAddress[];
  /** `ip -d link` / `ip -d -j link` details: the link's kind and the parameters kpx uses. */
  readonly linkInfo?: LinkInfo;
  /** Everything else, as printed (`mode DEFAULT`, `-d` details, …). */
  readonly extra: Readonly<Record<string, string>>;
  readonly line: number;
  readonly file: string;
}

/**
 * What `ip -d link` says about a link beyond its header: its kind (`vxlan`, `ipip`, `geneve`,
 * `wireguard`, `veth`, `bridge`, …), tunnel endpoints, a bridge's netfilter switches, and — for a
 * bridge port — the port's settings (the `bridge_slave …` line).
 */
export interface LinkInfo {
  readonly kind?: string;
  /** Tunnel parameters (vxlan/geneve `id`, `local`, `remote`, `group`, `dev`, `dstport`). */
  readonly tunnel?: { readonly id?: number; readonly local?: string; readonly remote?: string; readonly group?: string; readonly dev?: string; readonly dstport?: number };
  /** A bridge's own `nf_call_iptables` / `nf_call_ip6tables` (per-bridge br_netfilter switches). */
  readonly bridge?: { readonly nfCallIptables?: boolean; readonly nfCallIp6tables?: boolean; readonly vlanFiltering?: boolean };
  /** This link as a bridge port. */
  readonly bridgePort?: Omit<BridgePort, 'port' | 'file'>;
  readonly minMtu?: number;
  readonly maxMtu?: number;
  /** Line of the detail (kind) line. */
  readonly line: number;
}

/**
 * A bridge port's settings, from `ip -d link` (`bridge_slave`), `bridge -d link`, or the sysfs
 * `brif/PORT/hairpin_mode` listing. Hairpin lets a frame leave by the port it came in on (a pod
 * reaching itself through its Service when br_netfilter bridges the DNATed frame).
 */
export interface BridgePort {
  readonly port: string;
  readonly bridge?: string;
  /** STP state: `forwarding`, `disabled`, `blocking`, `listening`, `learning`. */
  readonly state?: string;
  readonly hairpin?: boolean;
  readonly learning?: boolean;
  readonly file: string;
  readonly line: number;
  /** Line text as evidence (`hairpin off …`, `/sys/class/net/cni0/brif/veth1/hairpin_mode:0`). */
  readonly text?: string;
}

export interface BridgePortDump {
  readonly ports: readonly BridgePort[];
  readonly unsupported: readonly { readonly line: number; readonly text: string; readonly reason: string }[];
}

/** The kernel release (`uname -r`) and, when given, the whole `uname -a` / `/proc/version` line. */
export interface KernelInfo {
  readonly release: string;
  readonly text: string;
  readonly file: string;
  readonly line: number;
}

export interface AddrDump {
  readonly interfaces: readonly NetInterface[];
  readonly unsupported: readonly { readonly line: number; readonly text: string; readonly reason: string }[];
}

/** Administratively up (`UP` flag; `-br` dumps only have the state, then `state UP`/`UNKNOWN` counts). */
export function isUp(i: NetInterface): boolean {
  if (i.flags.length) return i.flags.includes('UP');
  return i.state === 'UP' || i.state === 'UNKNOWN';
}

/** Every address configured on the node (what `-m addrtype --dst-type LOCAL` matches, minus broadcast). */
export function localAddresses(ifaces: readonly NetInterface[]): Ip[] {
  return ifaces.flatMap((i) => i.addresses.map((a) => a.ip));
}

export type InterfaceRole = 'pod-veth' | 'bridge' | 'tunnel' | 'ipvs-dummy' | 'physical' | 'loopback' | 'other';

/**
 * What an interface is for, from its name alone (CNI conventions): cali*, veth*, lxc* (Cilium, not
 * lxc_health) → pod-veth; cni0/docker0/cbr0/kube-bridge → bridge; tunl0, flannel.1, vxlan.calico,
 * vxlan-v6.calico, cilium_vxlan/cilium_geneve/cilium_host/cilium_net, wireguard.cali, kube-ipip… →
 * tunnel; kube-ipvs0 → ipvs-dummy; lo → loopback; eth, ens, eno, enp, bond, em prefixes → physical.
 */
export function interfaceRole(name: string): InterfaceRole {
  if (name === 'lo') return 'loopback';
  if (name === 'kube-ipvs0') return 'ipvs-dummy';
  if (/^(cni\d*|docker\d+|cbr\d+|kube-bridge|br-[0-9a-f]+|cni-podman\d+)$/.test(name)) return 'bridge';
  if (/^(tunl\d+|flannel\.\d+|flannel-wg|vxlan[.-]|vxlan-v6\.calico|cilium_(vxlan|geneve|host|net|ipip\d*)|wireguard\.cali|wg-v6\.cali|kube-ipip|nodelocaldns$)/.test(name)) {
    return name === 'nodelocaldns' ? 'other' : 'tunnel';
  }
  if (/^(cali[0-9a-f]|veth|lxc(?!_health))/.test(name)) return 'pod-veth';
  if (/^(eth\d|ens|eno|enp|enx|em\d|bond\d|wlan|wlp)/.test(name)) return 'physical';
  return 'other';
}

/** The interface that has this address, if any. */
export function interfaceWithAddress(ifaces: readonly NetInterface[], ip: Ip): NetInterface | undefined {
  return ifaces.find((i) => i.addresses.some((a) => a.ip.family === ip.family && a.ip.value === ip.value));
}
