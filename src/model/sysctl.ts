/**
 * Kernel parameters from `sysctl -a` & co., with a typed view of the ones kube-proxy and the
 * CNIs depend on (KUBE-PROXY.md "Sysctls kube-proxy expects"). Plain data + pure helpers.
 */

export interface SysctlEntry {
  /** Dotted key as sysctl prints it (interface names with dots use `/`: `net.ipv4.conf.flannel/1.rp_filter`). */
  readonly key: string;
  /** Value as printed, trimmed (multi-value keys keep their tabs/spaces: `4096\t131072\t6291456`). */
  readonly value: string;
  readonly line: number;
}

export interface SysctlDump {
  readonly entries: readonly SysctlEntry[];
  /** key → value; the last occurrence wins (as when sysctl.conf files are applied in order). */
  readonly values: ReadonlyMap<string, string>;
  readonly unsupported: readonly { readonly line: number; readonly text: string; readonly reason: string }[];
  /** Keys sysctl said do not exist in this kernel (`cannot stat /proc/sys/…`, `setting key "…": No such file or directory`). */
  readonly absent?: readonly { readonly key: string; readonly line: number }[];
}

/** `net.ipv4.conf.<iface>.<name>` per-interface values, plus `all` and `default`. */
export interface ConfValues {
  readonly all?: number;
  readonly default?: number;
  readonly perInterface: Readonly<Record<string, number>>;
}

export interface KubeProxySysctls {
  readonly ipvsConntrack?: number;
  readonly connReuseMode?: number;
  readonly expireNodestConn?: number;
  readonly expireQuiescentTemplate?: number;
  readonly ipForward?: number;
  readonly ipv6Forwarding?: number;
  readonly bridgeNfCallIptables?: number;
  readonly bridgeNfCallIp6tables?: number;
  readonly arpIgnore: ConfValues;
  readonly arpAnnounce: ConfValues;
  readonly rpFilter: ConfValues;
  readonly routeLocalnet: ConfValues;
}

export const SYSCTL_KEYS = {
  ipvsConntrack: 'net.ipv4.vs.conntrack',
  connReuseMode: 'net.ipv4.vs.conn_reuse_mode',
  expireNodestConn: 'net.ipv4.vs.expire_nodest_conn',
  expireQuiescentTemplate: 'net.ipv4.vs.expire_quiescent_template',
  ipForward: 'net.ipv4.ip_forward',
  ipv6Forwarding: 'net.ipv6.conf.all.forwarding',
  bridgeNfCallIptables: 'net.bridge.bridge-nf-call-iptables',
  bridgeNfCallIp6tables: 'net.bridge.bridge-nf-call-ip6tables',
} as const;

function num(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  return /^-?\d+$/.test(t) ? Number(t) : undefined;
}

/** Interface name as used in keys (`flannel/1`) → as ip shows it (`flannel.1`). */
export function ifaceFromKey(part: string): string {
  return part.replace(/\//g, '.');
}

/** Collect `net.ipv4.conf.*.<name>`; interface names are returned as ip shows them (`flannel.1`). */
export function confValues(values: ReadonlyMap<string, string>, name: string): ConfValues {
  const per: Record<string, number> = {};
  let all: number | undefined;
  let def: number | undefined;
  const prefix = 'net.ipv4.conf.';
  const suffix = `.${name}`;
  for (const [k, v] of values) {
    if (!k.startsWith(prefix) || !k.endsWith(suffix)) continue;
    const iface = k.slice(prefix.length, k.length - suffix.length);
    if (!iface || iface.includes('.')) continue;
    const n = num(v);
    if (n === undefined) continue;
    if (iface === 'all') all = n;
    else if (iface === 'default') def = n;
    else per[ifaceFromKey(iface)] = n;
  }
  const out: { all?: number; default?: number; perInterface: Record<string, number> } = { perInterface: per };
  if (all !== undefined) out.all = all;
  if (def !== undefined) out.default = def;
  return out;
}

export function kubeProxySysctls(dump: Pick<SysctlDump, 'values'>): KubeProxySysctls {
  const v = dump.values;
  const out: Record<string, unknown> = {
    arpIgnore: confValues(v, 'arp_ignore'),
    arpAnnounce: confValues(v, 'arp_announce'),
    rpFilter: confValues(v, 'rp_filter'),
    routeLocalnet: confValues(v, 'route_localnet'),
  };
  for (const [field, key] of Object.entries(SYSCTL_KEYS)) {
    const n = num(v.get(key));
    if (n !== undefined) out[field] = n;
  }
  return out as unknown as KubeProxySysctls;
}

/**
 * The value the kernel uses for an interface: rp_filter, arp_ignore and arp_announce take the
 * maximum of `all` and the interface's value; route_localnet is `all || iface`
 * (IN_DEV_MAXCONF / IN_DEV_ORCONF in include/linux/inetdevice.h). Undefined when unknown.
 */
export function effectiveConf(c: ConfValues, name: 'rp_filter' | 'arp_ignore' | 'arp_announce' | 'route_localnet', iface: string): number | undefined {
  const own = c.perInterface[iface];
  if (own === undefined && c.all === undefined) return undefined;
  if (name === 'route_localnet') return (c.all ?? 0) || (own ?? 0) ? 1 : 0;
  return Math.max(c.all ?? 0, own ?? 0);
}

export interface SysctlFinding {
  readonly key: string;
  readonly expected: string;
  /** undefined when the dump does not have the key. */
  readonly actual?: string;
  readonly message: string;
}

/**
 * Compare with what kube-proxy expects (KUBE-PROXY.md) in ipvs mode: vs.conntrack=1, expire_nodest_conn=1,
 * expire_quiescent_template=1, conn_reuse_mode (0 breaks connections during rolling updates),
 * arp_ignore=1 and arp_announce=2 on `all` (kube-ipvs0 VIPs must not be announced).
 * Keys absent from the dump are reported only when `reportMissing` is set.
 */
export function checkKubeProxySysctls(dump: Pick<SysctlDump, 'values'>, mode: 'iptables' | 'ipvs' | 'nftables', reportMissing = false): SysctlFinding[] {
  const v = dump.values;
  const out: SysctlFinding[] = [];
  const want = (key: string, expected: string, why: string) => {
    const actual = v.get(key);
    if (actual === undefined) {
      if (reportMissing) out.push({ key, expected, message: `${key} is not in the dump (kube-proxy expects ${expected}: ${why})` });
    } else if (actual.trim() !== expected) out.push({ key, expected, actual, message: `${key} = ${actual}, kube-proxy expects ${expected}: ${why}` });
  };
  // ip_forward and bridge-nf-call-iptables are read as the trace reads them (src/model/switches.ts,
  // lint rules kernel-forwarding-off and kernel-bridge-nf-off), per interface and bridge.
  if (mode === 'ipvs') {
    want(SYSCTL_KEYS.ipvsConntrack, '1', 'IPVS connections need conntrack for SNAT/masquerade');
    want(SYSCTL_KEYS.expireNodestConn, '1', 'connections to deleted real servers must be dropped');
    want(SYSCTL_KEYS.expireQuiescentTemplate, '1', 'persistent templates of weight-0 servers must expire');
    want('net.ipv4.conf.all.arp_ignore', '1', 'VIPs on kube-ipvs0 must not answer ARP');
    want('net.ipv4.conf.all.arp_announce', '2', 'VIPs on kube-ipvs0 must not be announced');
    const reuse = v.get(SYSCTL_KEYS.connReuseMode);
    if (reuse !== undefined && reuse.trim() === '0') {
      out.push({ key: SYSCTL_KEYS.connReuseMode, expected: '1', actual: reuse, message: 'net.ipv4.vs.conn_reuse_mode = 0: connections reusing a source port go to terminated endpoints during rolling updates' });
    }
  }
  return out;
}
