/**
 * What the API's objects, when the bundle holds them, decide that the dumps cannot. kube-proxy
 * leaves a ClusterIP virtual server without real servers both when the Service has no endpoints
 * and when its internalTrafficPolicy is Local and none of them is on this node
 * (pkg/proxy/ipvs/proxier.go syncEndpoint: with onlyNodeLocalEndpoints and no local endpoint it
 * falls back to CategorizeEndpoints' clusterEndpoints, which are nil for a Service that uses no
 * Cluster policy), and no ipset says which policy a ClusterIP has. The Service and its
 * EndpointSlices say both.
 */
import { formatIp, parseIp } from '../../model/addr.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { intendedDataplane, type IntendedServicePort } from '../intent.js';
import type { Vs } from './types.js';

/** Why a ClusterIP virtual server has no real servers. */
export type EmptyClusterIP = 'no-endpoints' | 'internal-local' | 'undecided';

export type EmptyClusterIPDecider = (anchor: Vs) => EmptyClusterIP;

const key = (family: number, ip: string, protocol: string, port: number) => `${family}|${ip}|${protocol}|${port}`;

export function emptyClusterIPDecider(snapshot: NodeSnapshot): EmptyClusterIPDecider {
  const api = snapshot.api;
  if (!api) return () => 'undecided';
  let index: Map<string, IntendedServicePort[]> | undefined;
  return (a) => {
    index ??= indexPorts(intendedDataplane(api, snapshot).ports);
    const ports = index.get(key(a.family, a.ipText, a.protocol, a.port)) ?? [];
    return ports.length === 1 ? decide(ports[0]) : 'undecided';
  };
}

function decide(p: IntendedServicePort): EmptyClusterIP {
  if (p.unknown.has('endpoints')) return 'undecided';
  // CategorizeEndpoints' hasAnyEndpoints: a ready endpoint, or a serving one that is terminating.
  if (!p.listed.some((e) => e.ready || (e.serving && e.terminating))) return 'no-endpoints';
  if (p.unknown.has('internalTrafficPolicy')) return 'undecided';
  // Endpoints exist and the policy is Cluster: the dumps' empty virtual server stands (stale rules are drift's to say).
  return p.internalTrafficPolicy === 'Local' ? 'internal-local' : 'no-endpoints';
}

function indexPorts(ports: readonly IntendedServicePort[]): Map<string, IntendedServicePort[]> {
  const index = new Map<string, IntendedServicePort[]>();
  for (const p of ports) {
    const ip = parseIp(p.clusterIP);
    if (!ip) continue;
    const k = key(p.family, formatIp(ip), p.protocol, p.port);
    const list = index.get(k);
    if (list) list.push(p);
    else index.set(k, [p]);
  }
  return index;
}
