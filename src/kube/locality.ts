/**
 * Is an endpoint on this node? The dumps say first: the endpoint's route goes to a local pod
 * interface or bridge (true), via another node or a tunnel (false); an address of the node itself
 * (hostNetwork endpoint) is local; without routes, the subnet of a bridge (local) or physical link
 * (remote). When they do not say, the API's objects may: an EndpointSlice endpoint (or a Pod) names
 * its `nodeName`, and this node is identified among the Node objects (by the snapshot's name, or by
 * an address from `ip addr` / --node-ip: intent.ts identifyNode). Otherwise unknown. The one
 * locality module of all three proxy modes.
 */
import { cidrContains, parseIp, type Ip } from '../model/addr.js';
import { identifyNode } from './intent.js';
import { interfaceRole, type InterfaceRole, type NetInterface } from '../model/iface.js';
import { lookupRoute, REJECT_TYPES } from '../model/route.js';
import type { NodeSnapshot } from '../model/snapshot.js';

export function endpointLocality(snapshot: NodeSnapshot, ipText: string): boolean | null {
  const ip = parseEndpointIp(ipText);
  return localityOf(snapshot, ip) ?? (ip ? (apiLocality(snapshot)?.get(`${ip.family}:${ip.value}`) ?? null) : null);
}

/**
 * endpointLocality() for the many endpoints of one snapshot (tens of thousands at 10k Services):
 * each address is answered once, as Service ports share endpoints. Always null without
 * addresses, routes and API objects.
 */
export function endpointLocalityLookup(snapshot: NodeSnapshot): (ipText: string) => boolean | null {
  if (snapshot.interfaces.length === 0 && snapshot.routes.length === 0 && snapshot.extraNodeIps.length === 0 && apiLocality(snapshot) === undefined) return () => null;
  const memo = new Map<string, boolean | null>();
  return (ipText) => {
    let local = memo.get(ipText);
    if (local === undefined) memo.set(ipText, (local = endpointLocality(snapshot, ipText)));
    return local;
  };
}

const apiIndexes = new WeakMap<NodeSnapshot, ReadonlyMap<string, boolean> | null>();

/**
 * From the API's objects: address key (`family:value`) → whether the endpoint (EndpointSlice
 * endpoint, else Pod) with that address runs on this node. Undefined when there are no API objects
 * or this node is not identified among their Nodes.
 */
function apiLocality(snapshot: NodeSnapshot): ReadonlyMap<string, boolean> | undefined {
  const known = apiIndexes.get(snapshot);
  if (known !== undefined) return known ?? undefined;
  const api = snapshot.api;
  const node = api ? identifyNode(api, snapshot) : null;
  if (!api || !node) {
    apiIndexes.set(snapshot, null);
    return undefined;
  }
  const out = new Map<string, boolean>();
  const add = (address: string, nodeName: string | null) => {
    const ip = nodeName === null ? undefined : parseIp(address);
    if (ip && !out.has(`${ip.family}:${ip.value}`)) out.set(`${ip.family}:${ip.value}`, nodeName === node.node.name);
  };
  for (const sl of api.slices) for (const e of sl.endpoints) for (const a of e.addresses) add(a, e.nodeName);
  for (const p of api.pods) for (const a of p.podIPs) add(a, p.nodeName);
  // The node's own addresses (hostNetwork endpoints) are local.
  for (const a of node.node.addresses) {
    const ip = parseIp(a);
    if (ip) out.set(`${ip.family}:${ip.value}`, true);
  }
  apiIndexes.set(snapshot, out);
  return out;
}

function localityOf(snapshot: NodeSnapshot, ip: Ip | undefined): boolean | null {
  if (!ip) return null;
  if (nodeAddresses(snapshot)[ip.family].has(ip.value)) return true;
  if (snapshot.routes.length === 0) return bySubnet(snapshot.interfaces, ip);
  const route = lookupRoute(snapshot.routes, ip);
  if (!route) return null;
  if (route.type === 'local') return true;
  // A blackhole/unreachable route says nothing about where the pod runs.
  if (REJECT_TYPES.has(route.type)) return null;
  if (route.via || route.nexthops?.some((h) => h.via)) return false;
  const dev = route.dev ?? route.nexthops?.[0]?.dev;
  if (!dev) return null;
  // Cilium routes local and remote pod CIDRs alike through cilium_host.
  if (dev.startsWith('cilium_')) return null;
  const role = deviceRole(dev);
  if (role === 'pod-veth' || role === 'bridge' || role === 'loopback') return true;
  // A tunnel, or a host on a physical link that is not this node: another machine.
  if (role === 'tunnel' || role === 'physical') return false;
  return null;
}

/** Without routes: an address inside the subnet of a pod bridge is local, of a physical link remote. */
function bySubnet(interfaces: readonly NetInterface[], ip: Ip): boolean | null {
  for (const i of interfaces) {
    if (i.name === 'kube-ipvs0') continue;
    const host = ip.family === 4 ? 32 : 128;
    if (!i.addresses.some((a) => a.ip.family === ip.family && a.prefix < host && cidrContains(a.cidr, ip))) continue;
    const role = deviceRole(i.name);
    return role === 'bridge' ? true : role === 'physical' ? false : null;
  }
  return null;
}

/** The node's own addresses by family, indexed once per interface list rather than scanned per endpoint. */
const addressIndexes = new WeakMap<NodeSnapshot, Record<4 | 6, Set<bigint>>>();

function nodeAddresses(snapshot: NodeSnapshot): Record<4 | 6, Set<bigint>> {
  const interfaces = snapshot.interfaces;
  let index = addressIndexes.get(snapshot);
  if (!index) {
    index = { 4: new Set(), 6: new Set() };
    // kube-ipvs0 holds Service VIPs, not the node's own addresses; --node-ip adds those.
    for (const i of interfaces) if (i.name !== 'kube-ipvs0') for (const a of i.addresses) index[a.ip.family].add(a.ip.value);
    for (const ip of snapshot.extraNodeIps) index[ip.family].add(ip.value);
    addressIndexes.set(snapshot, index);
  }
  return index;
}

// interfaceRole() tries a few regexes; endpoints' routes name a handful of devices.
const roles = new Map<string, InterfaceRole>();

function deviceRole(dev: string): InterfaceRole {
  let role = roles.get(dev);
  if (role === undefined) {
    role = interfaceRole(dev);
    if (roles.size < 4096) roles.set(dev, role);
  }
  return role;
}

/**
 * parseIp(), with a quick path for the plain dotted quad an endpoint nearly always is (ipaddr.js
 * validates every address several ways). Anything else, including leading zeros, goes to parseIp.
 */
function parseEndpointIp(text: string): Ip | undefined {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits === 1 && part === 0) return parseIp(text); // leading zero
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return parseIp(text);
    } else if (c === 46 && digits > 0 && dots < 3) {
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else return parseIp(text);
  }
  if (dots !== 3 || digits === 0) return parseIp(text);
  return { family: 4, value: BigInt(value * 256 + part) };
}
