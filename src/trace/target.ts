/**
 * What `kpx trace` is asked to follow, beyond `VIP:PORT[/proto]`: a Service by name
 * (`ns/name[:port]`), a NodePort on the node (`nodeport:30080[/proto]`), a bare VIP (every port it
 * serves). Each target becomes the destinations to trace, from the Services the dumps name; a target
 * that names nothing on this node gets the nearest real ones instead ("did you mean"). Data only:
 * the words are in src/render/trace/.
 */
import { formatHostPort, formatIp, parseIp, type Ip } from '../model/addr.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { compareServicePorts, type Resolution, type ServicePort } from '../kube/types.js';
import { buildContext } from './context.js';
import { parseDestination, type Destination, type TraceProtocol } from './packet.js';
import { servicesAt } from './trace.js';

export type Target =
  | { readonly kind: 'address'; readonly text: string; readonly dest: Destination }
  | { readonly kind: 'vip'; readonly text: string; readonly ip: Ip; readonly ipText: string; readonly protocol?: TraceProtocol }
  | { readonly kind: 'service'; readonly text: string; readonly namespace: string; readonly name: string; readonly port?: string; readonly protocol?: TraceProtocol }
  | { readonly kind: 'nodeport'; readonly text: string; readonly port: number; readonly protocol?: TraceProtocol };

const PROTO = /^(tcp|udp|sctp)$/i;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i;

/** `10.96.0.10:53/udp`, `10.96.0.10`, `[fd00::a]`, `kube-system/kube-dns[:dns|:53][/udp]`, `nodeport:30080[/tcp]`. */
export function parseTarget(input: string): Target | string {
  const text = input.trim();
  const slash = text.lastIndexOf('/');
  const protoText = slash >= 0 && PROTO.test(text.slice(slash + 1)) ? text.slice(slash + 1).toLowerCase() : undefined;
  const protocol = protoText as TraceProtocol | undefined;
  const body = protoText ? text.slice(0, slash) : text;
  const np = /^nodeport:(\d{1,5})$/i.exec(body);
  if (np) {
    const port = Number(np[1]);
    if (port < 1 || port > 65535) return `nodeport ${port} is out of range`;
    return protocol ? { kind: 'nodeport', text, port, protocol } : { kind: 'nodeport', text, port };
  }
  const bare = parseIp(body);
  if (bare && !/^\[.*\]:\d+$/.test(body)) {
    const ipText = body.replace(/^\[|\]$/g, '');
    return protocol ? { kind: 'vip', text, ip: bare, ipText, protocol } : { kind: 'vip', text, ip: bare, ipText };
  }
  const svc = /^([^/:\s]+)\/([^/:\s]+)(?::([^/:\s]+))?$/.exec(body);
  if (svc && !parseIp(svc[1]) && DNS_LABEL.test(svc[1]) && DNS_LABEL.test(svc[2])) {
    return { kind: 'service', text, namespace: svc[1], name: svc[2], ...(svc[3] ? { port: svc[3] } : {}), ...(protocol ? { protocol } : {}) };
  }
  const dest = parseDestination(text);
  if (typeof dest === 'string') return `expected VIP:PORT[/proto], a bare VIP, ns/name[:port] or nodeport:PORT[/proto] (IPv6 as [addr]:port); got ${input}`;
  return { kind: 'address', text, dest };
}

/** A destination to trace, and the Service port that sent kpx there (when a name or port chose it). */
export interface PlannedTrace {
  readonly dest: Destination;
  readonly protocol: TraceProtocol;
  readonly service?: string;
}

/** A near miss: a real target the user may have meant, with the Services it reaches. */
export interface Suggestion {
  readonly target: string;
  readonly services: readonly string[];
}

/** Why a target names nothing here. */
export type NoMatchCode =
  /** The address is a Service's, but not on this port/protocol: `suggestions` are its ports. */
  | 'port-not-served'
  /** No Service has this address (nearest addresses suggested). */
  | 'unknown-address'
  | 'unknown-service'
  /** The dumps name no Service at all (IPVS mode: ipvsadm shows addresses only): trace by address. */
  | 'services-unnamed'
  /** The Service exists, but has no such port (its ports suggested). */
  | 'unknown-service-port'
  | 'unknown-nodeport';

/** How the address of a NodePort trace was chosen. */
export type NodeAddressChoice =
  | { readonly code: 'nodeport-address'; readonly address: string; readonly from: 'ip-addr' | 'node-ip' }
  /** No address of the node is known: this one is assumed to be the node's. */
  | { readonly code: 'nodeport-address-assumed'; readonly address: string };

export type Plan =
  | { readonly kind: 'trace'; readonly traces: readonly PlannedTrace[]; readonly nodeAddress?: NodeAddressChoice }
  | { readonly kind: 'no-match'; readonly code: NoMatchCode; readonly target: string; readonly suggestions: readonly Suggestion[]; readonly more?: number };

const PROTO_ORDER: readonly TraceProtocol[] = ['udp', 'tcp', 'sctp'];

export const serviceLabel = (s: ServicePort): string => (s.namespace && s.name ? `${s.namespace}/${s.name}${s.portName ? ':' + s.portName : ''}` : `(unnamed ${s.id})`);

/** Every address a Service port answers on (cluster IP, external IPs, load-balancer IPs). */
function addressesOf(s: ServicePort): string[] {
  return [s.clusterIP, ...s.externalIPs, ...s.loadBalancerIPs].filter((a): a is string => a !== null);
}

const sameIp = (a: string, ip: Ip) => {
  const x = parseIp(a);
  return x !== undefined && x.family === ip.family && x.value === ip.value;
};

function destinationOf(ipText: string, port: number, protocol: TraceProtocol): Destination {
  return { ip: parseIp(ipText)!, ipText, port, protocol };
}

/** Group Service ports by `addr:port/proto` as suggestions, in the Services' order. */
function suggest(ports: readonly ServicePort[], target: (s: ServicePort) => string | undefined, limit = 6): Suggestion[] {
  const by = new Map<string, string[]>();
  for (const s of [...ports].sort(compareServicePorts)) {
    const t = target(s);
    if (!t) continue;
    const list = by.get(t) ?? [];
    if (!list.includes(serviceLabel(s))) list.push(serviceLabel(s));
    by.set(t, list);
  }
  return [...by].slice(0, limit).map(([t, services]) => ({ target: t, services }));
}

const vipPort = (s: ServicePort, addr = s.clusterIP ?? addressesOf(s)[0]) => (addr && s.protocol ? `${formatHostPort(addr, s.port)}/${s.protocol}` : undefined);

/** Levenshtein distance: how many one-character edits turn `a` into `b` (typos in addresses and names). */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length];
}

/** The candidates nearest to `text` (a typo away: at most a third of its length in edits, at least 2), best first. */
function nearest<T>(text: string, candidates: readonly T[], key: (c: T) => string, limit = 3): T[] {
  const max = Math.max(2, Math.floor(text.length / 3));
  return candidates
    .map((c) => ({ c, d: editDistance(text.toLowerCase(), key(c).toLowerCase()) }))
    .filter((x) => x.d <= max)
    .sort((a, b) => a.d - b.d)
    .slice(0, limit)
    .map((x) => x.c);
}

/** Is this address known to the dumps as something to trace to directly (a pod or the node)? */
function knownNonService(res: Resolution, snapshot: NodeSnapshot, ip: Ip): boolean {
  if (snapshot.extraNodeIps.some((n) => n.family === ip.family && n.value === ip.value)) return true;
  if (snapshot.interfaces.some((i) => i.addresses.some((a) => a.ip.family === ip.family && a.ip.value === ip.value))) return true;
  return res.services.some((s) => s.endpoints.some((e) => sameIp(e.ip, ip)));
}

/** The node address a NodePort is traced on: the default route's source or device address, else the first global one. */
export function nodeAddressFor(snapshot: NodeSnapshot, family: 4 | 6): NodeAddressChoice {
  const given = snapshot.extraNodeIps.find((ip) => ip.family === family);
  if (given) return { code: 'nodeport-address', address: formatIp(given), from: 'node-ip' };
  const def = snapshot.routes.find((r) => r.dst.family === family && r.dst.prefix === 0 && r.table === 'main');
  const addrs = snapshot.interfaces.flatMap((i) => i.addresses.filter((a) => a.ip.family === family && !isLoopbackOrLinkLocal(a.ip)).map((a) => ({ dev: i.name, ip: a.ip })));
  const src = def?.src ? parseIp(def.src) : undefined;
  const pick = (src && addrs.find((a) => a.ip.value === src.value)) ?? addrs.find((a) => a.dev === def?.dev) ?? addrs.find((a) => !/^(cni|flannel|cali|vxlan|tunl|kube-ipvs|docker|cilium|weave|veth)/.test(a.dev)) ?? addrs[0];
  if (pick) return { code: 'nodeport-address', address: formatIp(pick.ip), from: 'ip-addr' };
  // A documentation address (RFC 5737 / 3849): obviously not a real one, and printed as an assumption.
  return { code: 'nodeport-address-assumed', address: family === 4 ? '192.0.2.1' : '2001:db8::1' };
}

function isLoopbackOrLinkLocal(ip: Ip): boolean {
  if (ip.family === 4) return ip.value >> 24n === 127n || ip.value >> 16n === 0xa9fen;
  return ip.value === 1n || ip.value >> 118n === 0x3fan;
}

/** The traces a target asks for, or the near misses when it names nothing on this node. */
export function planTarget(target: Target, res: Resolution, snapshot: NodeSnapshot, opts: { readonly protocol?: TraceProtocol; readonly exact?: boolean } = {}): Plan {
  const protocolFlag = opts.protocol;
  const services = res.services;
  const protocol = protocolFlag ?? (target.kind === 'address' ? target.dest.protocol : target.protocol);
  const withProto = (ports: readonly ServicePort[]) => ports.filter((s) => s.protocol !== null && (!protocol || s.protocol === protocol));
  const byProto = (a: PlannedTrace, b: PlannedTrace) => PROTO_ORDER.indexOf(a.protocol) - PROTO_ORDER.indexOf(b.protocol);
  switch (target.kind) {
    case 'address': {
      const d = target.dest;
      const atIp = services.filter((s) => addressesOf(s).some((a) => sameIp(a, d.ip)));
      // By VIP and port, or by node port on one of the node's addresses.
      const here = withProto(servicesAt(res, d, undefined, buildContext(snapshot, { established: false, affinityHit: false })));
      const protocols = protocol ? [protocol] : [...new Set(here.map((s) => s.protocol!))].sort((a, b) => PROTO_ORDER.indexOf(a) - PROTO_ORDER.indexOf(b));
      if (here.length > 0 || (!protocol && atIp.some((s) => s.port === d.port && s.protocol === null))) {
        return { kind: 'trace', traces: (protocols.length ? protocols : ['tcp' as const]).map((p) => ({ dest: { ...d, protocol: p }, protocol: p })) };
      }
      if (atIp.length > 0 && !opts.exact) return { kind: 'no-match', code: 'port-not-served', target: target.text, suggestions: suggest(atIp, (s) => vipPort(s, d.ipText)) };
      if (!opts.exact && !knownNonService(res, snapshot, d.ip)) {
        const near = nearestAddresses(d.ipText, services);
        if (near.length) return { kind: 'no-match', code: 'unknown-address', target: target.text, suggestions: near };
      }
      // No Service here, and not a near miss: trace the address as asked (a pod, the node, anything).
      const p = protocol ?? 'tcp';
      return { kind: 'trace', traces: [{ dest: { ...d, protocol: p }, protocol: p }] };
    }
    case 'vip': {
      const atIp = withProto(services.filter((s) => addressesOf(s).some((a) => sameIp(a, target.ip))));
      if (atIp.length === 0) return { kind: 'no-match', code: 'unknown-address', target: target.text, suggestions: nearestAddresses(target.ipText, services) };
      const traces = [...atIp].sort(compareServicePorts).map((s) => ({ dest: destinationOf(target.ipText, s.port, s.protocol!), protocol: s.protocol!, service: serviceLabel(s) }));
      return { kind: 'trace', traces: dedupe(traces) };
    }
    case 'service': {
      const svc = services.filter((s) => s.namespace === target.namespace && s.name === target.name);
      if (svc.length === 0 && !services.some((s) => s.namespace && s.name)) {
        const vips = suggest(services, (s) => s.clusterIP ?? undefined, Infinity).map((x) => ({
          target: x.target,
          services: services.filter((s) => s.clusterIP === x.target && s.protocol).sort(compareServicePorts).map((s) => `${s.port}/${s.protocol}`),
        }));
        return { kind: 'no-match', code: 'services-unnamed', target: target.text, suggestions: vips.slice(0, 12), ...(vips.length > 12 ? { more: vips.length - 12 } : {}) };
      }
      if (svc.length === 0) {
        const names = [...new Set(services.filter((s) => s.namespace && s.name).map((s) => `${s.namespace}/${s.name}`))];
        const near = nearest(`${target.namespace}/${target.name}`, names, (n) => n, 5);
        // Same name in another namespace is a likely miss too.
        for (const n of names) if (n.endsWith(`/${target.name}`) && !near.includes(n)) near.push(n);
        return { kind: 'no-match', code: 'unknown-service', target: target.text, suggestions: near.map((n) => ({ target: n, services: [] })) };
      }
      const ports = withProto(svc.filter((s) => target.port === undefined || s.portName === target.port || String(s.port) === target.port));
      if (ports.length === 0) return { kind: 'no-match', code: 'unknown-service-port', target: target.text, suggestions: suggest(svc, (s) => (s.protocol ? `${target.namespace}/${target.name}:${s.portName ?? s.port}/${s.protocol}` : undefined)).map((x) => ({ ...x, services: svc.filter((s) => x.target.endsWith(`:${s.portName ?? s.port}/${s.protocol}`)).map((s) => vipPort(s) ?? '') })) };
      const traces = [...ports].sort(compareServicePorts).flatMap((s) => {
        const addr = s.clusterIP ?? addressesOf(s)[0];
        return addr ? [{ dest: destinationOf(addr, s.port, s.protocol!), protocol: s.protocol!, service: serviceLabel(s) }] : [];
      });
      return { kind: 'trace', traces: dedupe(traces).sort(byProto) };
    }
    case 'nodeport': {
      const ports = withProto(services.filter((s) => s.nodePort === target.port));
      if (ports.length === 0) {
        const all = services.filter((s) => s.nodePort !== null && s.protocol !== null);
        const near = nearest(String(target.port), all, (s) => String(s.nodePort), 6);
        return { kind: 'no-match', code: 'unknown-nodeport', target: target.text, suggestions: suggest(near, (s) => `nodeport:${s.nodePort}/${s.protocol}`) };
      }
      const family = ports.some((s) => s.family === 4) ? 4 : 6;
      const nodeAddress = nodeAddressFor(snapshot, family);
      const protocols = [...new Set(ports.filter((s) => s.family === family).map((s) => s.protocol!))].sort((a, b) => PROTO_ORDER.indexOf(a) - PROTO_ORDER.indexOf(b));
      return { kind: 'trace', traces: protocols.map((p) => ({ dest: destinationOf(nodeAddress.address, target.port, p), protocol: p })), nodeAddress };
    }
  }
}

function dedupe(traces: PlannedTrace[]): PlannedTrace[] {
  const seen = new Set<string>();
  return traces.filter((t) => {
    const k = `${t.dest.ipText}:${t.dest.port}/${t.protocol}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Service addresses a typo away from `ipText`, with the ports they serve. */
function nearestAddresses(ipText: string, services: readonly ServicePort[]): Suggestion[] {
  const addrs = [...new Set(services.flatMap(addressesOf))];
  return nearest(ipText, addrs, (a) => a).map((a) => {
    const at = services.filter((s) => addressesOf(s).includes(a)).sort(compareServicePorts);
    return { target: a, services: [...new Set(at.map((s) => `${serviceLabel(s)} ${s.port}/${s.protocol ?? '?'}`))] };
  });
}

/**
 * The Service ports a target names (`services --service`, `graph --service`, `report --service`):
 * the same grammar as `kpx trace`. `ns/name[:port]` by name and port name or number, a bare VIP by
 * any of a Service's addresses (cluster, external, LoadBalancer), `VIP:PORT` by address and port,
 * `nodeport:PORT` by NodePort; a `/proto` suffix narrows each to that protocol.
 */
export function targetSelects(t: Target): (s: ServicePort) => boolean {
  const proto = t.kind === 'address' ? t.dest.protocol : t.protocol;
  const protoOk = (s: ServicePort) => proto === undefined || s.protocol === proto;
  switch (t.kind) {
    case 'service':
      return (s) => s.namespace === t.namespace && s.name === t.name && (t.port === undefined || s.portName === t.port || String(s.port) === t.port) && protoOk(s);
    case 'vip':
      return (s) => addressesOf(s).some((a) => sameIp(a, t.ip)) && protoOk(s);
    case 'address':
      return (s) => s.port === t.dest.port && addressesOf(s).some((a) => sameIp(a, t.dest.ip)) && protoOk(s);
    case 'nodeport':
      return (s) => s.nodePort === t.port && protoOk(s);
  }
}

/**
 * Why nothing was selected, with the near misses: the trace planner's answer, or (for an address
 * the planner would trace as given, a pod or anything) a plain unknown address.
 */
export function noMatchFor(t: Target, res: Resolution, snapshot: NodeSnapshot): Extract<Plan, { kind: 'no-match' }> {
  const plan = planTarget(t, res, snapshot);
  return plan.kind === 'no-match' ? plan : { kind: 'no-match', code: 'unknown-address', target: t.text, suggestions: [] };
}
