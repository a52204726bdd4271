/**
 * Endpoint locality, answered from indexed node addresses and memoised per address, is what a
 * plain scan of every interface address and route says, for real endpoints and odd address texts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ipEquals, parseIp } from '../../src/model/addr.js';
import { interfaceRole } from '../../src/model/iface.js';
import { lookupRoute } from '../../src/model/route.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { endpointLocality, endpointLocalityLookup } from '../../src/kube/locality.js';
import { resolveIptables } from '../../src/kube/resolve-iptables.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { generatedNode, type GeneratedNode } from '../helpers/generated.js';

/** The definition, unoptimised: parseIp, every interface address, then the route. */
function scanLocality(snapshot: NodeSnapshot, ipText: string): boolean | null {
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
  if (role === 'tunnel' || role === 'physical') return false;
  return null;
}

const ODD = ['', '10.244.1.2 ', ' 10.244.1.2', '010.244.1.2', '10.244.01.2', '10.244.1', '10.244.1.2.3', '10..1.2', '256.1.1.1', '1.2.3.999', '1.2.3.4:80', '0.0.0.0', '255.255.255.255', '0x0a.1.1.1', '[10.244.1.2]', '::ffff:10.244.1.2', 'fd00::1', '[fd00::1]', 'fd00::1%eth0', 'not-an-ip', '1.2.3.-4'];

function addressesOf(snapshot: NodeSnapshot): string[] {
  const own = snapshot.interfaces.flatMap((i) => i.addresses.map((a) => a.address));
  const endpoints = resolveIptables(snapshot).services.flatMap((s) => s.endpoints.map((e) => e.ip));
  return [...own, ...endpoints, ...ODD];
}

const nodes: GeneratedNode[] = [];
afterAll(() => nodes.forEach((n) => n.cleanup()));

describe('endpointLocality and endpointLocalityLookup', () => {
  it('agree with a scan of interfaces and routes on the node sample', async () => {
    const snapshot = await loadSnapshot([new URL('../../samples/iptables-mode-node', import.meta.url).pathname]);
    expect(snapshot.routes.length).toBeGreaterThan(0);
    const lookup = endpointLocalityLookup(snapshot);
    const addresses = addressesOf(snapshot);
    for (const ip of [...addresses, ...addresses]) {
      const want = scanLocality(snapshot, ip);
      expect([ip, endpointLocality(snapshot, ip)]).toEqual([ip, want]);
      expect([ip, lookup(ip)]).toEqual([ip, want]);
    }
  });

  it('agree on a generated node with local and remote endpoints, IPv4 and IPv6', async () => {
    for (const family of [4, 6] as const) {
      const node = await generatedNode('iptables', { seed: 5, services: 40, family });
      nodes.push(node);
      const lookup = endpointLocalityLookup(node.snapshot);
      const answers = addressesOf(node.snapshot).map((ip) => [ip, lookup(ip)]);
      expect(answers).toEqual(addressesOf(node.snapshot).map((ip) => [ip, scanLocality(node.snapshot, ip)]));
      expect(answers.some(([, local]) => local === true) && answers.some(([, local]) => local === false)).toBe(true);
    }
  });

  it('say null for every address when the dumps have no addresses or routes', async () => {
    const snapshot = await loadSnapshot([new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url).pathname]);
    const lookup = endpointLocalityLookup(snapshot);
    for (const ip of ['10.244.0.3', '172.18.0.3', 'fd00::1', 'x']) expect(lookup(ip)).toBe(scanLocality(snapshot, ip));
    expect(lookup('10.244.0.3')).toBeNull();
  });
});
