/**
 * Is an endpoint on this node? Only the dumps can say: the endpoint's route goes to a local pod
 * interface or bridge (true), via another node or a tunnel (false); an address of the node itself
 * (hostNetwork endpoint) is local. Unknown without routes.
 */
import { ipEquals, parseIp } from '../model/addr.js';
import { interfaceRole } from '../model/iface.js';
import { lookupRoute } from '../model/route.js';
import type { NodeSnapshot } from '../model/snapshot.js';

export function endpointLocality(snapshot: NodeSnapshot, ipText: string): boolean | null {
  const ip = parseIp(ipText);
  if (!ip) return null;
  for (const i of snapshot.interfaces) for (const a of i.addresses) if (ipEquals(a.ip, ip)) return true;
  if (snapshot.routes.length === 0) return null;
  const route = lookupRoute(snapshot.routes, ip);
  if (!route) return null;
  if (route.type === 'local') return true;
  if (route.via) return false;
  const dev = route.dev ?? route.nexthops?.[0]?.dev;
  if (!dev) return null;
  const role = interfaceRole(dev);
  if (role === 'pod-veth' || role === 'bridge') return true;
  // A tunnel, or a host on a physical link that is not this node: another machine.
  if (role === 'tunnel' || role === 'physical') return false;
  return null;
}
