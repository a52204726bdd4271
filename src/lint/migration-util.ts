/**
 * Shared by the migrate-* rules (`kpx migrate-check --to nftables`): what mode the node runs, its
 * own addresses and which of them nftables mode's default `nodePortAddresses: primary` serves,
 * its NodePorts, and the dump lines that show each.
 *
 * Sources the rules cite in their docs: the kubernetes.io page "Virtual IPs and Service Proxies",
 * section "Migrating from iptables mode to nftables" (content/en/docs/reference/networking/
 * virtual-ips.md in kubernetes/website); KEP-3866 (keps/sig-network/3866-nftables-proxy);
 * kubernetes pkg/proxy/nftables/proxier.go and supported.go.
 */
import { cidrContains, formatIp, parseCidr, parseIp, type Ip } from '../model/addr.js';
import type { InterfaceAddress, NetInterface } from '../model/iface.js';
import type { Rule } from '../model/netfilter.js';
import type { ServicePort } from '../kube/types.js';
import type { LintContext } from './context.js';
import { ruleRelated } from './context.js';
import type { Related } from './rule.js';
import { kubeProxyConfigs, natRules } from './kube-proxy-util.js';

export type SourceMode = 'iptables' | 'ipvs' | 'nftables';

/** The mode kube-proxy runs in on this node today (IPVS nodes also have KUBE-* iptables chains). */
export function sourceMode(ctx: LintContext): SourceMode | undefined {
  if (ctx.modes.includes('ipvs')) return 'ipvs';
  if (ctx.modes.includes('iptables')) return 'iptables';
  if (ctx.modes.includes('nftables')) return 'nftables';
  return undefined;
}

/** Moving from iptables or IPVS mode (not already in nftables mode). */
export const migrating = (ctx: LintContext): boolean => {
  const m = sourceMode(ctx);
  return m === 'iptables' || m === 'ipvs';
};

export interface LocalAddress {
  readonly iface: NetInterface;
  readonly addr: InterfaceAddress;
  readonly related: Related;
}

const addrLine = (i: NetInterface, a: InterfaceAddress): Related => ({ file: i.file, line: a.line, text: `${i.name}: ${a.address}/${a.prefix}` });

/** The node's own addresses, as `ip addr` lists them (without loopback, link-local IPv6, kube-ipvs0). */
export function localAddresses(ctx: LintContext): LocalAddress[] {
  const out: LocalAddress[] = [];
  for (const iface of ctx.snapshot.interfaces) {
    if (iface.name === 'kube-ipvs0' || iface.linkType === 'loopback' || iface.name === 'lo') continue;
    for (const addr of iface.addresses) {
      if (addr.family === 6 && addr.address.toLowerCase().startsWith('fe80:')) continue;
      if (addr.family === 4 && addr.address.startsWith('127.')) continue;
      out.push({ iface, addr, related: addrLine(iface, addr) });
    }
  }
  return out;
}

export interface Primary {
  readonly ips: readonly Ip[];
  /** How they were chosen, said in findings: given, from the API's Node, or assumed. */
  readonly how: string;
  readonly assumed: boolean;
}

/**
 * The node's primary address(es), which nftables mode's default `nodePortAddresses: primary` serves
 * (kube-proxy's node IP: the Node's first InternalIP per family). From --node-ip, else the API's
 * Node that owns one of the local addresses, else assumed: the first global address of the
 * interface of the default route (said as an assumption).
 */
export function primaryAddresses(ctx: LintContext, locals: readonly LocalAddress[]): Primary {
  const s = ctx.snapshot;
  if (s.extraNodeIps.length > 0) return { ips: s.extraNodeIps, how: 'given with --node-ip', assumed: false };
  const mine = new Set(locals.map((l) => formatIp(l.addr.ip)));
  const node = s.api?.nodes.find((n) => n.addresses.some((a) => mine.has(a)));
  if (node) {
    const ips: Ip[] = [];
    for (const f of [4, 6] as const) {
      const ip = node.addresses.map((a) => parseIp(a)).find((x) => x !== undefined && x.family === f && mine.has(formatIp(x)));
      if (ip) ips.push(ip);
    }
    return { ips, how: `the Node ${node.name}'s address in the API objects`, assumed: false };
  }
  const defaults = s.routes.filter((r) => (r.table === 'main' || r.table === '254') && r.dst.prefix === 0);
  const ips: Ip[] = [];
  for (const f of [4, 6] as const) {
    const route = defaults.find((r) => r.family === f && r.dev);
    const src = route?.src;
    const l = locals.find((x) => x.addr.family === f && (src !== undefined ? x.addr.address === src : route === undefined || x.iface.name === route.dev) && (x.addr.scope ?? 'global') === 'global');
    if (l) ips.push(l.addr.ip);
  }
  return { ips, how: 'assumed: the first address of the default route’s interface (no --node-ip, no Node object)', assumed: true };
}

/** Explicit CIDRs of `nodePortAddresses` in kube-proxy's configuration (undefined: unset, or `primary`). */
export function configuredNodePortCidrs(ctx: LintContext): { cidrs: string[]; related: Related } | undefined {
  for (const c of kubeProxyConfigs(ctx)) {
    const v = c.nodePortAddresses;
    if (!v || v.value.length === 0) continue;
    const cidrs = v.value.filter((x) => x !== 'primary');
    if (cidrs.length === 0) continue;
    return { cidrs, related: { file: c.file, line: v.line, text: v.text } };
  }
  return undefined;
}

/** Does a CIDR of `nodePortAddresses` hold this address? */
export function inCidrs(cidrs: readonly string[], ip: Ip): boolean {
  return cidrs.some((c) => {
    const net = parseCidr(c.includes('/') ? c : `${c}/${c.includes(':') ? 128 : 32}`);
    return net !== undefined && net.family === ip.family && cidrContains(net, ip);
  });
}

/** Service ports with a NodePort, by `proto/port`. */
export function nodePorts(ctx: LintContext): Map<string, ServicePort[]> {
  const out = new Map<string, ServicePort[]>();
  for (const s of ctx.resolution.services) {
    if (s.nodePort === null) continue;
    const k = `${s.nodePort}/${s.protocol ?? 'tcp'}`;
    const list = out.get(k) ?? [];
    list.push(s);
    out.set(k, list);
  }
  return out;
}

/** `30080/tcp (ns/svc:http), …` — at most `max`, then how many more. */
export function nodePortList(ctx: LintContext, ports: Map<string, ServicePort[]>, max = 5): string {
  const items = [...ports].sort(([a], [b]) => parseInt(a, 10) - parseInt(b, 10)).map(([k, list]) => `${k} (${list.map((s) => ctx.serviceLabel(s)).join(', ')})`);
  return items.length > max ? `${items.slice(0, max).join(', ')} and ${items.length - max} more` : items.join(', ');
}

/** KUBE-SERVICES' jumps to KUBE-NODEPORTS: for every LOCAL destination, or per listed address. */
export function nodePortDispatch(ctx: LintContext): { local: Rule[]; addresses: Map<string, Rule> } {
  const local: Rule[] = [];
  const addresses = new Map<string, Rule>();
  for (const r of natRules(ctx, 'KUBE-SERVICES')) {
    if (!(r.target?.kind === 'jump' && (r.target.chain === 'KUBE-NODEPORTS' || r.target.chain === 'KUBE-NODE-PORT'))) continue;
    if (r.matches.some((m) => m.kind === 'addrtype' && m.dir === 'dst' && !m.negated && m.types.includes('LOCAL'))) local.push(r);
    for (const m of r.matches) if (m.kind === 'address' && m.dir === 'dst' && !m.negated) addresses.set(m.text.replace(/\/(32|128)$/, ''), r);
  }
  return { local, addresses };
}

export const rulesRelated = (rules: readonly Rule[]): Related[] => rules.map(ruleRelated);
