/** Where a packet goes after NAT: the route for its destination, as people describe it. */
import { formatIp, type Ip } from '../model/addr.js';
import { interfaceRole, isUp } from '../model/iface.js';
import { policyLookup, type RoutingQuery } from '../model/policy.js';
import type { Route } from '../model/route.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { RouteInfo } from './types.js';

/** The route the kernel picks for this packet: `ip rule` when the dumps have it, else the default rules. */
export function routeFor(snapshot: NodeSnapshot, q: RoutingQuery): { route?: Route; policy?: string; undecided: number } {
  const d = policyLookup(snapshot.policyRules, snapshot.routes, q);
  const rule = d.rule && !(d.rule.priority === 0 || d.rule.priority === 32766 || d.rule.priority === 32767) ? d.rule : undefined;
  return { ...(d.route ? { route: d.route } : {}), ...(rule ? { policy: `${rule.text} (${rule.file}:${rule.line})` } : {}), undecided: d.undecided.length };
}

export function describeRoute(snapshot: NodeSnapshot, dst: Ip, q: Omit<RoutingQuery, 'dst'> = {}): RouteInfo | null {
  if (snapshot.routes.length === 0) return null;
  const found = routeFor(snapshot, { ...q, dst });
  const destination = formatIp(dst);
  const decidedBy = found.policy;
  if (!found.route && decidedBy && /unreachable|blackhole|prohibit/.test(decidedBy)) {
    return { destination, type: 'policy', table: '-', summary: `policy rule ${decidedBy}: the packet goes nowhere`, line: 0, file: '', problem: `policy rule rejects traffic to ${destination}` };
  }
  const r = found.route;
  if (!r) {
    return { destination, type: 'none', table: 'main', summary: 'no route: the packet is dropped (unreachable)', line: 0, file: '', problem: `no route to ${destination}` };
  }
  const dev = r.dev ?? r.nexthops?.[0]?.dev;
  const via = r.via?.address ?? r.nexthops?.[0]?.via?.address;
  const role = dev ? interfaceRole(dev) : undefined;
  const base = { destination, type: r.type, table: r.table, line: r.line, file: r.file, ...(decidedBy ? { policyRule: decidedBy } : {}), ...(dev ? { dev } : {}), ...(via ? { via } : {}), ...(r.src ? { src: r.src } : {}), ...(role ? { interfaceRole: role } : {}) };
  if (r.type === 'blackhole' || r.type === 'unreachable' || r.type === 'prohibit' || r.type === 'throw') {
    return { ...base, summary: `${r.type} route ${r.dstText}: the packet goes nowhere`, problem: `${r.type} route for ${destination}` };
  }
  if (r.type === 'local') return { ...base, summary: `local address: delivered to a process on this node` };
  const iface = dev ? snapshot.interfaces.find((i) => i.name === dev) : undefined;
  const down = iface && !isUp(iface) ? ` (interface ${dev} is DOWN)` : r.flags.includes('linkdown') ? ' (linkdown)' : '';
  let summary: string;
  if (via && r.dst.prefix === 0) summary = `out of the node through the default gateway ${via}${dev ? ` on ${dev}` : ''}`;
  else if (via) summary = role === 'tunnel' ? `to another node through tunnel ${dev} via ${via}` : `to another node via ${via}${dev ? ` on ${dev}` : ''}`;
  else if (role === 'pod-veth') summary = `to a pod on this node through ${dev}`;
  else if (role === 'bridge') summary = `to a pod on this node through bridge ${dev}`;
  else if (role === 'tunnel') summary = `into tunnel ${dev}`;
  else summary = `directly on ${dev ?? 'an unnamed device'}`;
  return { ...base, summary: summary + down, ...(down ? { problem: `route for ${destination} uses ${dev}, which is down` } : {}) };
}
