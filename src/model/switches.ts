/**
 * The kernel's switches around the rules, read the way the kernel reads them: forwarding at the
 * routing decision, rp_filter on the reverse path, route_localnet for 127.0.0.0/8, br_netfilter on
 * bridged frames, hairpin on bridge ports, and the room a tunnel leaves for its encapsulation.
 * One source of truth: the trace (src/trace/switches.ts) and the lint rules call these; each
 * answer carries the sysctl lines it rests on, or says the evidence lacks them (`known: false`).
 */
import type { BridgePort, NetInterface } from './iface.js';
import type { NodeSnapshot } from './snapshot.js';

export type SysctlTable = NodeSnapshot['sysctls'];

/** A sysctl line a decision rests on; value null = the key is not in the dump. */
export interface SwitchEvidence {
  readonly key: string;
  readonly value: string | null;
  readonly file: string | null;
  readonly line: number | null;
}

export type SwitchName = 'forwarding' | 'rp_filter' | 'route_localnet' | 'bridge-nf-call-iptables' | 'hairpin';

/** What the switch does to this packet. */
export interface SwitchReading {
  readonly switch: SwitchName;
  /** Whether the dumps say (false: no sysctl/bridge dump with the key; the caller assumes and says so). */
  readonly known: boolean;
  /** pass: the packet goes on; drop: the kernel drops it here; off: the feature is off (br_netfilter: the reply skips conntrack). */
  readonly effect: 'pass' | 'drop' | 'off' | 'unknown';
  readonly evidence: readonly SwitchEvidence[];
  /** The effective value (rp_filter's max, route_localnet's or…), when known. */
  readonly value?: number;
  readonly iface?: string;
}

/** An interface name as sysctl keys spell it (`flannel.1` → `flannel/1`). */
export const keyIface = (name: string) => name.replace(/\./g, '/');

/** Does the snapshot have a sysctl dump at all (a `sysctl -a`, a grep of it, a sysctl.conf)? */
export function hasSysctlDump(s: SysctlTable): boolean {
  return s.size > 0;
}

/** Does the dump look like a whole `sysctl -a` (net.* keys of many kinds), so an absent key means the kernel lacks it? */
export function isFullSysctlDump(s: SysctlTable): boolean {
  let net = 0;
  for (const k of s.keys()) if (k.startsWith('net.ipv4.') && ++net > 50) return true;
  return false;
}

function read(s: SysctlTable, key: string): SwitchEvidence {
  const e = s.get(key);
  if (e?.absent) return { key, value: null, file: e.file, line: e.line };
  return e ? { key, value: e.value.trim(), file: e.file, line: e.line } : { key, value: null, file: null, line: null };
}

const int = (e: SwitchEvidence) => (e.value !== null && /^-?\d+$/.test(e.value) ? Number(e.value) : undefined);

/**
 * IPv4: IN_DEV_FORWARD(in_dev), the input interface's own `forwarding` (writing ip_forward sets
 * every interface's; a dump without the interface's key falls back to ip_forward / all). IPv6:
 * ip6_forward() reads `net.ipv6.conf.all.forwarding` (per-interface `force_forwarding`, kernel
 * 6.17+, overrides it). Checked at the routing decision, before the FORWARD hook: a packet that
 * would be forwarded with forwarding off is dropped there, silently.
 */
export function forwardingSwitch(s: SysctlTable, family: 4 | 6, iif: string | undefined): SwitchReading {
  const evidence: SwitchEvidence[] = [];
  const decide = (e: SwitchEvidence, iface?: string): SwitchReading | undefined => {
    const v = int(e);
    if (v === undefined) return undefined;
    evidence.push(e);
    return { switch: 'forwarding', known: true, effect: v ? 'pass' : 'drop', evidence, value: v, ...(iface ? { iface } : {}) };
  };
  if (family === 4) {
    const keys = [...(iif ? [`net.ipv4.conf.${keyIface(iif)}.forwarding`] : []), 'net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding'];
    for (const k of keys) {
      const r = decide(read(s, k), k.includes('.conf.') && iif && !k.includes('.all.') ? iif : undefined);
      if (r) return r;
    }
  } else {
    const all = read(s, 'net.ipv6.conf.all.forwarding');
    const v = int(all);
    if (v !== undefined) {
      evidence.push(all);
      if (v === 0 && iif) {
        const force = read(s, `net.ipv6.conf.${keyIface(iif)}.force_forwarding`);
        if (int(force) === 1) return { switch: 'forwarding', known: true, effect: 'pass', evidence: [...evidence, force], value: 1, iface: iif };
      }
      return { switch: 'forwarding', known: true, effect: v ? 'pass' : 'drop', evidence, value: v };
    }
  }
  return { switch: 'forwarding', known: false, effect: 'unknown', evidence: [] };
}

/**
 * rp_filter on the input interface: the kernel uses max(all, iface) (IN_DEV_RPFILTER). 1 (strict):
 * the route back to the source must leave by the interface the packet came in on; 2 (loose): any
 * route back will do. `reverse` is the route lookup for the source: its devices, or undefined when
 * there is none (or an unreachable/blackhole one).
 */
export function rpFilterSwitch(s: SysctlTable, iif: string | undefined, reverse: readonly string[] | undefined): SwitchReading {
  const all = read(s, 'net.ipv4.conf.all.rp_filter');
  const own = iif ? read(s, `net.ipv4.conf.${keyIface(iif)}.rp_filter`) : undefined;
  const a = int(all);
  const o = own ? int(own) : undefined;
  if (a === undefined && o === undefined) return { switch: 'rp_filter', known: false, effect: 'unknown', evidence: [] };
  const evidence = [all, ...(own ? [own] : [])].filter((e) => e.value !== null);
  // Without the interface's own key the maximum is known only when `all` is already 2 (the largest value).
  if (o === undefined && iif && a !== 2) return { switch: 'rp_filter', known: false, effect: 'unknown', evidence, iface: iif };
  const mode = Math.max(a ?? 0, o ?? 0);
  const base = { switch: 'rp_filter' as const, known: true, evidence, value: mode, ...(iif ? { iface: iif } : {}) };
  if (mode === 0) return { ...base, effect: 'pass' };
  if (!reverse || reverse.length === 0) return { ...base, effect: 'drop' };
  if (mode === 1 && iif && !reverse.includes(iif)) return { ...base, effect: 'drop' };
  return { ...base, effect: 'pass' };
}

/**
 * route_localnet (IN_DEV_ROUTE_LOCALNET: `all` or the interface's). Input: a packet to 127.0.0.0/8
 * arriving on `dev` is a martian unless it is on. Output: a locally generated packet from 127.x
 * whose destination NAT sent it out of `dev` (a NodePort on localhost) is refused at rerouting
 * unless it is on (__mkroute_output).
 */
export function routeLocalnetSwitch(s: SysctlTable, dev: string | undefined): SwitchReading {
  const all = read(s, 'net.ipv4.conf.all.route_localnet');
  const own = dev ? read(s, `net.ipv4.conf.${keyIface(dev)}.route_localnet`) : undefined;
  const a = int(all);
  const o = own ? int(own) : undefined;
  const evidence = [all, ...(own ? [own] : [])].filter((e) => e.value !== null);
  if (a === 1 || o === 1) return { switch: 'route_localnet', known: true, effect: 'pass', evidence, value: 1, ...(dev ? { iface: dev } : {}) };
  if (a === 0 && (o === 0 || !dev)) return { switch: 'route_localnet', known: true, effect: 'drop', evidence, value: 0, ...(dev ? { iface: dev } : {}) };
  return { switch: 'route_localnet', known: false, effect: 'unknown', evidence, ...(dev ? { iface: dev } : {}) };
}

/**
 * br_netfilter: do bridged frames traverse iptables? `net.bridge.bridge-nf-call-iptables`
 * (`…-ip6tables` for IPv6), or the bridge's own `nf_call_iptables` option (either turns it on).
 * In a whole `sysctl -a` without any net.bridge.* key, br_netfilter is not loaded: off.
 */
export function bridgeNfSwitch(s: SysctlTable, family: 4 | 6, bridge: NetInterface | undefined): SwitchReading & { moduleLoaded?: boolean } {
  const key = family === 4 ? 'net.bridge.bridge-nf-call-iptables' : 'net.bridge.bridge-nf-call-ip6tables';
  const e = read(s, key);
  const own = family === 4 ? bridge?.linkInfo?.bridge?.nfCallIptables : bridge?.linkInfo?.bridge?.nfCallIp6tables;
  const iface = bridge ? { iface: bridge.name } : {};
  const v = int(e);
  if (v === 1 || own === true) return { switch: 'bridge-nf-call-iptables', known: true, effect: 'pass', evidence: v === 1 ? [e] : [], value: 1, ...iface };
  if (v === 0) return { switch: 'bridge-nf-call-iptables', known: true, effect: 'off', evidence: [e], value: 0, ...iface };
  // sysctl said the key does not exist in this kernel (`cannot stat /proc/sys/net/bridge/…`): br_netfilter is not loaded.
  const gone = s.get(key);
  if (gone?.absent) return { switch: 'bridge-nf-call-iptables', known: true, effect: 'off', evidence: [{ key, value: null, file: gone.file, line: gone.line }], value: 0, moduleLoaded: false, ...iface };
  if (isFullSysctlDump(s) && ![...s.keys()].some((k) => k.startsWith('net.bridge.'))) {
    return { switch: 'bridge-nf-call-iptables', known: true, effect: 'off', evidence: [e], value: 0, moduleLoaded: false, ...iface };
  }
  return { switch: 'bridge-nf-call-iptables', known: false, effect: 'unknown', evidence: [], ...iface };
}

/**
 * Hairpin on the ports of `bridge`: a frame the bridge sends back out of the port it came in on
 * (a pod reaching itself through its Service, the DNAT done on the bridged frame) passes only
 * with hairpin on. Which port the pod is behind is not in the dumps: when the bridge's ports
 * disagree, the answer is unknown.
 */
export function hairpinSwitch(ports: readonly BridgePort[] | undefined, bridge: string): SwitchReading & { ports: readonly BridgePort[] } {
  const mine = (ports ?? []).filter((p) => p.bridge === bridge && p.hairpin !== undefined);
  // One reading per port (several dumps may list it): the first file's.
  const byPort = new Map<string, BridgePort>();
  for (const p of mine) if (!byPort.has(p.port)) byPort.set(p.port, p);
  const list = [...byPort.values()];
  if (list.length === 0) return { switch: 'hairpin', known: false, effect: 'unknown', evidence: [], ports: [], iface: bridge };
  const on = list.filter((p) => p.hairpin).length;
  const evidence = list.map((p) => ({ key: `${p.bridge}/${p.port} hairpin`, value: p.hairpin ? 'on' : 'off', file: p.file, line: p.line }));
  const effect = on === list.length ? 'pass' : on === 0 ? 'drop' : 'unknown';
  return { switch: 'hairpin', known: effect !== 'unknown', effect, evidence, ports: list, iface: bridge };
}

// ---------------------------------------------------------------------------------------------
// MTU

/** Bytes each tunnel kind adds in front of the inner packet, by the underlay's family. */
export function tunnelOverhead(kind: string, underlay: 4 | 6 = 4): number | undefined {
  switch (kind) {
    case 'vxlan':
      return underlay === 4 ? 50 : 70; // outer Ethernet 14 + IP 20/40 + UDP 8 + VXLAN 8
    case 'geneve':
      return underlay === 4 ? 50 : 70; // the same without options (options add more)
    case 'ipip':
      return 20;
    case 'sit':
      return 20;
    case 'ip6tnl':
      return 40;
    case 'gre':
      return 24;
    case 'wireguard':
      return underlay === 4 ? 60 : 80; // IP 20/40 + UDP 8 + WireGuard 32
  }
  return undefined;
}

export interface MtuHop {
  readonly iface: string;
  readonly mtu: number;
  readonly role: 'in' | 'out' | 'underlay';
  readonly file: string;
  readonly line: number;
}

/** A tunnel whose MTU plus its encapsulation does not fit the underlay's MTU. */
export interface MtuShortfall {
  readonly tunnel: string;
  readonly kind: string;
  readonly tunnelMtu: number;
  readonly overhead: number;
  readonly underlay: string;
  readonly underlayMtu: number;
  /** tunnelMtu + overhead - underlayMtu. */
  readonly excess: number;
}

/** The underlay of a tunnel: its `dev` parameter, else the interface that holds its `local` address. */
export function tunnelUnderlay(tunnel: NetInterface, interfaces: readonly NetInterface[]): NetInterface | undefined {
  const t = tunnel.linkInfo?.tunnel;
  if (t?.dev) return interfaces.find((i) => i.name === t.dev);
  if (t?.local) return interfaces.find((i) => i.name !== tunnel.name && i.addresses.some((a) => a.address === t.local));
  return undefined;
}

/** Does this tunnel leave room for its encapsulation on its underlay? undefined when the dumps cannot say. */
export function tunnelShortfall(tunnel: NetInterface, interfaces: readonly NetInterface[]): MtuShortfall | undefined {
  const kind = tunnel.linkInfo?.kind;
  const overhead = kind ? tunnelOverhead(kind, tunnel.linkInfo?.tunnel?.local?.includes(':') ? 6 : 4) : undefined;
  const under = tunnelUnderlay(tunnel, interfaces);
  if (overhead === undefined || tunnel.mtu === undefined || under?.mtu === undefined) return undefined;
  const excess = tunnel.mtu + overhead - under.mtu;
  return excess > 0 ? { tunnel: tunnel.name, kind: kind!, tunnelMtu: tunnel.mtu, overhead, underlay: under.name, underlayMtu: under.mtu, excess } : undefined;
}

/**
 * The largest packet that crosses these interfaces unfragmented: the smallest MTU on the way, and
 * for a tunnel, its underlay's MTU less the encapsulation.
 */
export function pathMtu(
  interfaces: readonly NetInterface[],
  inIface: string | undefined,
  outIface: string | undefined,
): { hops: MtuHop[]; largest?: number; shortfall?: MtuShortfall; underlayUnknown?: string } {
  const hops: MtuHop[] = [];
  const add = (name: string | undefined, role: MtuHop['role']) => {
    const i = name ? interfaces.find((x) => x.name === name) : undefined;
    if (i?.mtu !== undefined) hops.push({ iface: i.name, mtu: i.mtu, role, file: i.file, line: i.line });
    return i;
  };
  add(inIface, 'in');
  const out = add(outIface, 'out');
  let shortfall: MtuShortfall | undefined;
  let limit = Infinity;
  if (out?.linkInfo?.kind && tunnelOverhead(out.linkInfo.kind) !== undefined) {
    const under = tunnelUnderlay(out, interfaces);
    if (under) add(under.name, 'underlay');
    shortfall = tunnelShortfall(out, interfaces);
    const overhead = tunnelOverhead(out.linkInfo.kind, out.linkInfo.tunnel?.local?.includes(':') ? 6 : 4);
    if (under?.mtu !== undefined && overhead !== undefined) limit = under.mtu - overhead;
    // The tunnel's underlay is not in the dumps (no ip addr holding its local address): the room is unknown, so is the largest packet.
    else return { hops, underlayUnknown: out.name };
  }
  const mtus = hops.filter((h) => h.role !== 'underlay').map((h) => h.mtu);
  const largest = Math.min(limit, ...mtus);
  return { hops, ...(Number.isFinite(largest) ? { largest } : {}), ...(shortfall ? { shortfall } : {}) };
}
