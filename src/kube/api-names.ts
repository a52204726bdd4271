/**
 * Names from the API for Service ports the dumps do not name: IPVS virtual servers and ipset members
 * carry no names, nor do iptables/nftables rules written without comments. A Service port is named
 * only when exactly one intended port matches it (by cluster IP, port and protocol, or by the
 * NodePort/external address or real servers an IPVS virtual server shares with it: drift.ts
 * matchPorts); a name the dumps give is never replaced.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { intendedDataplane } from './intent.js';
import { matchPorts } from './drift.js';
import { compareServicePorts, type Resolution, type ServicePort } from './types.js';

export function withApiNames(snapshot: NodeSnapshot, res: Resolution): Resolution {
  if (!snapshot.api) return res;
  const matched = matchPorts(res, intendedDataplane(snapshot.api, snapshot));
  let changed = false;
  const services = res.services.map((s): ServicePort => {
    const p = matched.get(s);
    // A name the text does not show whole (a table's namespace or port names): not given.
    if (!p || s.namespace !== null || p.unknown.has('namespace') || p.unknown.has('portName')) return s;
    changed = true;
    const protocol = s.protocol ?? p.protocol;
    const spn = p.portName ? `${p.namespace}/${p.name}:${p.portName}` : `${p.namespace}/${p.name}`;
    return { ...s, id: `${spn}/${protocol}`, namespace: p.namespace, name: p.name, portName: p.portName, protocol, identifiedBy: 'api' };
  });
  return changed ? { ...res, services: services.sort(compareServicePorts) } : res;
}
