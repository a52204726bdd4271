/**
 * kube-proxy IPVS mode → Service ports (KUBE-PROXY.md "IPVS mode", FORMATS.md §2.3 and §3;
 * kubernetes pkg/proxy/ipvs/proxier.go).
 *
 * In IPVS mode the Services live in three places: `ipvsadm -Ln` (one virtual server per
 * ClusterIP:port, per externalIP:port, per LoadBalancer IP:port and per node address × NodePort,
 * each with the same real servers, or only the local ones under a Local policy), the kube-proxy
 * ipsets (which VIP:port is what, KUBE-LOOP-BACK for local endpoints), and the dummy interface
 * kube-ipvs0 holding every VIP. Read by concern:
 *  - servers.ts: the virtual servers of every listing, merged; sets.ts: the ipsets, indexed;
 *  - dispatch.ts: what each virtual server is (ipsets, else the node's addresses);
 *  - grouping.ts: virtual servers → Service ports; identity.ts: names from set comments;
 *  - balancing.ts: real servers, weights, shares, locality;
 *  - firewall.ts: source ranges, traffic policies, no-endpoint facts;
 *  - facts.ts: a group → neutral facts → the one builder; leftovers.ts: what no virtual server uses;
 *  - evidence.ts: the parsed entries printed back in their dump's syntax.
 *
 * Pure: reads only the snapshot.
 */
import { cutVirtualServer, type VirtualServer } from '../../model/ipvs.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { endpointLocalityLookup } from '../locality.js';
import { sortServicePorts } from '../shared/sort.js';
import type { ForeignObject, Resolution, ServicePort } from '../types.js';
import { classify, nodeAddresses } from './dispatch.js';
import { servicePortOf } from './facts.js';
import { groupVirtualServers } from './grouping.js';
import { otherObjects, unusedEntries } from './leftovers.js';
import { readVirtualServers } from './servers.js';
import { mergeSets, setsByFamily } from './sets.js';
import type { Problem } from './types.js';

export { parseServicePortComment } from './identity.js';
export { ipvsSetName } from './sets.js';

export function resolveIpvs(snapshot: NodeSnapshot): Resolution {
  const problems: Problem[] = [];
  const others: ForeignObject[] = [];
  const allSets = mergeSets(snapshot.ipsets);
  const sets = setsByFamily(allSets);
  const addrs = nodeAddresses(snapshot);
  const { vss, listings } = readVirtualServers(snapshot, others, problems);
  for (const v of vss) classify(v, sets[v.family], addrs);
  const groups = groupVirtualServers(vss);
  const cutAt = cutListings(snapshot);
  const ctx = { sets, cutAt, locality: endpointLocalityLookup(snapshot), problems };
  const services: ServicePort[] = groups.map((g) => servicePortOf(ctx, g));
  if (listings > 0 && cutAt.size === 0) unusedEntries(vss, sets, addrs, problems);
  otherObjects(snapshot, allSets.values(), others);
  // By id first, so that Service ports the common order cannot tell apart keep one order.
  services.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  sortServicePorts(services);
  return { services, others, problems };
}

/** A listing cut mid-line: its last virtual server's real servers may go on past the cut. */
function cutListings(snapshot: NodeSnapshot): Map<VirtualServer, { file: string; line: number }> {
  const cutAt = new Map<VirtualServer, { file: string; line: number }>();
  for (const d of snapshot.ipvs) {
    const vs = cutVirtualServer(d);
    if (vs) cutAt.set(vs, { file: vs.file, line: d.truncated!.line });
  }
  return cutAt;
}
