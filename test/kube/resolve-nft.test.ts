import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isKubeProxyNftTable, nftNameHash, parseNftObjectName, resolveNft } from '../../src/kube/resolve-nft.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { generateCluster, NFT_LAYOUTS, SHAPES, writeBundle, type NftOptions, type TruthService } from '../../src/generate/index.js';
import { problemText } from '../../src/render/problems.js';
import { nftTableOwner } from '../../src/kube/owner.js';
const texts = (ps: readonly Parameters<typeof problemText>[0][]) => ps.map(problemText);
const messages = <E,>(ps: readonly { problem: Parameters<typeof problemText>[0]; evidence: readonly E[] }[]) => ps.map((p) => ({ message: problemText(p.problem), evidence: p.evidence }));

const fx = (name: string) => join('test', 'fixtures', 'nft-mode', name);

async function resolveFixture(name: string, withRoutes = true): Promise<Resolution> {
  const snap = await loadSnapshot(withRoutes ? [fx(name), fx('routes.txt')] : [fx(name)]);
  return resolveNft(snap);
}

function svc(r: Resolution, id: string): ServicePort {
  const s = r.services.find((x) => x.id === id);
  if (!s) throw new Error(`no ${id} in ${r.services.map((x) => x.id).join(', ')}`);
  return s;
}

const eps = (s: ServicePort) => s.endpoints.map((e) => [e.ip, e.port, e.probability, e.local]);

describe('names and hashes', () => {
  it('parses per-Service and per-endpoint names (unnamed port, IPv6 endpoint)', () => {
    expect(parseNftObjectName('service-P6J77WGM-riset/hellopod-np-svc/tcp/')).toMatchObject({
      role: 'service',
      hash: 'P6J77WGM',
      key: 'riset/hellopod-np-svc/tcp/',
      namespace: 'riset',
      name: 'hellopod-np-svc',
      protocol: 'tcp',
      portName: null,
    });
    expect(parseNftObjectName('endpoint-AAAA-ns1/svc1/tcp/p80__fd00.10.180..1/80')).toMatchObject({
      role: 'endpoint',
      key: 'ns1/svc1/tcp/p80',
      endpointIp: 'fd00:10:180::1',
      endpointPort: 80,
    });
    expect(parseNftObjectName('affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80')).toMatchObject({ role: 'affinity', endpointIp: '10.180.0.1', endpointPort: 80 });
    expect(parseNftObjectName('mark-for-masquerade')).toBeUndefined();
  });

  it("computes kube-proxy's hashAndTruncate prefix (values from proxier.go comments and the k3s dump)", () => {
    expect(nftNameHash('ns1/svc1/tcp/p80')).toBe('ULMVA6XW');
    expect(nftNameHash('ns1/svc1/tcp/p80__10.180.0.1/80')).toBe('5OJB2KTY');
    expect(nftNameHash('kube-system/kube-dns/tcp/dns-tcp')).toBe('NWBZK7IH');
    expect(nftNameHash('riset/hellopod-np-svc/tcp/')).toBe('P6J77WGM');
  });
});

describe('resolveNft on hand-written fixtures', () => {
  it('cluster-basic: ClusterIP Services, uneven numgen shares, unnamed port, UDP, locality from routes', async () => {
    const r = await resolveFixture('cluster-basic.nft');
    expect(r.services.map((s) => s.id)).toEqual(['default/plain/tcp', 'default/web:http/tcp', 'kube-system/kube-dns:dns/udp']);
    const web = svc(r, 'default/web:http/tcp');
    expect(web).toMatchObject({
      namespace: 'default',
      name: 'web',
      portName: 'http',
      protocol: 'tcp',
      port: 80,
      clusterIP: '10.96.0.20',
      nodePort: null,
      state: 'healthy',
      mode: 'nftables',
      family: 4,
      identifiedBy: 'hash',
      hashVerified: true,
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      sessionAffinity: null,
      problems: [],
    });
    expect(eps(web)).toEqual([
      ['10.244.1.5', 8080, 0.5, true],
      ['10.244.2.6', 8080, 0.25, false],
      ['10.244.2.7', 8080, 0.25, false],
    ]);
    expect(web.endpoints[0].via).toBe('endpoint-HGNPOIJ5-default/web/tcp/http__10.244.1.5/8080');
    expect(web.chains.service).toBe(`service-${nftNameHash('default/web/tcp/http')}-default/web/tcp/http`);
    // Evidence points at the dump: the service-ips element and the endpoint chain's dnat.
    expect(web.evidence[0]).toMatchObject({ line: 14, where: 'ip kube-proxy/service-ips' });
    expect(web.endpoints[0].evidence.some((e) => e.text === 'meta l4proto tcp dnat to 10.244.1.5:8080')).toBe(true);
    const plain = svc(r, 'default/plain/tcp');
    expect(plain.portName).toBeNull();
    expect(plain.port).toBe(8080);
    expect(eps(plain)).toEqual([['10.244.2.9', 8080, 1, false]]);
    const dns = svc(r, 'kube-system/kube-dns:dns/udp');
    expect(dns.protocol).toBe('udp');
    expect(eps(dns)).toEqual([
      ['10.244.1.3', 53, 0.5, true],
      ['10.244.2.3', 53, 0.5, false],
    ]);
    expect(r.problems).toEqual([]);
    expect(r.others.map((o) => [o.name, o.owner, o.kind])).toEqual([
      ['nat-prerouting', 'kube-proxy', 'nft-chain'],
      ['nat-output', 'kube-proxy', 'nft-chain'],
      ['services', 'kube-proxy', 'nft-chain'],
      ['mark-for-masquerade', 'kube-proxy', 'nft-chain'],
    ]);
  });

  it('without routes, locality is unknown (null)', async () => {
    const r = await resolveFixture('cluster-basic.nft', false);
    expect(svc(r, 'default/web:http/tcp').endpoints.map((e) => e.local)).toEqual([null, null, null]);
  });

  it('external-local: eTP Local from external- → local-, iTP Local from the cluster IP, LB guess vs externalIP', async () => {
    const r = await resolveFixture('external-local.nft');
    const front = svc(r, 'shop/front:http/tcp');
    expect(front).toMatchObject({
      clusterIP: '10.96.0.30',
      nodePort: 31080,
      externalTrafficPolicy: 'Local',
      internalTrafficPolicy: 'Cluster',
      loadBalancerIPs: ['192.0.2.10'],
      externalIPs: [],
      state: 'healthy',
      problems: [],
    });
    expect(Object.keys(front.chains)).toEqual(['service', 'local', 'external', 'endpoint0', 'endpoint1']);
    // Endpoints from the Cluster chain; locality from membership of the local- chain.
    expect(eps(front)).toEqual([
      ['10.244.1.20', 8080, 0.5, true],
      ['10.244.2.20', 8080, 0.5, false],
    ]);
    const internal = svc(r, 'shop/internal:https/tcp');
    expect(internal).toMatchObject({ clusterIP: '10.96.0.31', internalTrafficPolicy: 'Local', externalTrafficPolicy: 'Cluster', state: 'healthy' });
    expect(internal.chains.local).toMatch(/^local-/);
    expect(eps(internal)).toEqual([['10.244.1.21', 8443, 1, true]]);
    const extip = svc(r, 'shop/extip:web/tcp');
    expect(extip).toMatchObject({ clusterIP: '10.96.0.32', port: 8080, externalIPs: ['198.51.100.5'], loadBalancerIPs: [], nodePort: null, externalTrafficPolicy: 'Cluster' });
  });

  it('no-endpoints: reject → no-endpoints, drop → no-local-endpoints, comment and address identity', async () => {
    const r = await resolveFixture('no-endpoints.nft');
    expect(r.services.map((s) => s.id)).toEqual(['shop/empty:http/tcp', 'shop/etl:http/tcp', 'shop/itl:http/tcp', '10.96.0.43:9000/tcp']);
    expect(svc(r, 'shop/empty:http/tcp')).toMatchObject({
      identifiedBy: 'set-comment',
      hashVerified: null,
      clusterIP: '10.96.0.40',
      port: 80,
      nodePort: 30040,
      // Not in cluster-ips, Service has a NodePort: kpx guesses a LoadBalancer IP.
      loadBalancerIPs: ['192.0.2.40'],
      state: 'no-endpoints',
      endpoints: [],
      chains: {},
      problems: [],
    });
    const etl = svc(r, 'shop/etl:http/tcp');
    expect(etl).toMatchObject({ externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Cluster', nodePort: 30042, state: 'no-local-endpoints', problems: [] });
    expect(eps(etl)).toEqual([['10.244.2.30', 8080, 1, false]]);
    expect(svc(r, 'shop/itl:http/tcp')).toMatchObject({ clusterIP: '10.96.0.41', internalTrafficPolicy: 'Local', state: 'no-local-endpoints', endpoints: [] });
    expect(svc(r, '10.96.0.43:9000/tcp')).toMatchObject({ namespace: null, name: null, identifiedBy: 'address', clusterIP: '10.96.0.43', state: 'no-endpoints' });
    expect(r.problems).toEqual([]);
  });

  it('firewall-affinity: source ranges (LB IP allowFromNode entry dropped, bare address → /32), affinity timeout, comment hint', async () => {
    const r = await resolveFixture('firewall-affinity.nft');
    const web = svc(r, 'lb/web:http/tcp');
    expect(web).toMatchObject({
      clusterIP: '10.96.0.50',
      nodePort: 30050,
      loadBalancerIPs: ['203.0.113.5'],
      externalIPs: [],
      loadBalancerSourceRanges: ['10.0.0.0/8', '198.51.100.7/32'],
      sessionAffinity: { timeoutSeconds: 3600 },
      state: 'healthy',
      hashVerified: true,
      problems: [],
    });
    expect(web.chains.firewall).toMatch(/^firewall-/);
    expect(web.chains.affinity0).toBe(`affinity-${nftNameHash('lb/web/tcp/http__10.244.1.50/8080')}-lb/web/tcp/http__10.244.1.50/8080`);
    expect(eps(web)).toEqual([
      ['10.244.1.50', 8080, 0.5, true],
      ['10.244.2.50', 8080, 0.5, false],
    ]);
    const nofw = svc(r, 'lb/nofw:https/tcp');
    expect(nofw).toMatchObject({ loadBalancerIPs: ['172.18.200.9'], externalIPs: ['192.0.2.77'], loadBalancerSourceRanges: [], sessionAffinity: null });
  });

  it('numgen-map-v6: ≥1.33 dnat numgen map and IPv6 endpoint chains', async () => {
    const r = await resolveFixture('numgen-map-v6.nft');
    const web = svc(r, 'v6/web:http/tcp');
    expect(web).toMatchObject({ family: 6, clusterIP: 'fd00:10:96::20', port: 80, state: 'healthy', hashVerified: true, problems: [] });
    expect(eps(web)).toEqual([
      ['fd00:10:244:1::5', 8080, 0.6666666667, null],
      ['fd00:10:244:2::6', 8080, 0.3333333333, null],
    ]);
    expect(web.endpoints[0].via).toBeUndefined();
    const old = svc(r, 'v6/old:http/tcp');
    expect(eps(old)).toEqual([['fd00:10:244:2::7', 80, 1, null]]);
    expect(old.endpoints[0].via).toBe(`endpoint-${nftNameHash('v6/old/tcp/http__fd00.10.244.2..7/80')}-v6/old/tcp/http__fd00.10.244.2..7/80`);
    expect(old.hashVerified).toBe(true);
  });

  it('v1.36-listing (a real v1.36.2 node, trimmed by its author): hairpin set, inline masquerade, DNAT maps without endpoint chains', async () => {
    const res = await resolveFixture('v1.36-listing.nft', false);
    expect(res.services.map((s) => [s.namespace, s.name, s.portName, s.clusterIP, s.port, s.state])).toEqual([
      ['default', 'kubernetes', 'https', '10.96.0.1', 443, 'healthy'],
      ['kproxy-lab', 'backend-api', 'http', '10.100.192.23', 80, 'healthy'],
    ]);
    const api = res.services[1];
    expect(api.endpoints.map((e) => [e.ip, e.port, e.probability])).toEqual([
      ['10.244.0.10', 9898, 0.5],
      ['10.244.0.8', 9898, 0.5],
    ]);
    expect(api.hashVerified).toBe(true);
    expect(api.problems).toEqual([]);
    expect(res.services[0].endpoints.map((e) => [e.ip, e.port, e.probability])).toEqual([['192.168.0.231', 6443, 1]]);
  });

  it('broken: every consistency problem is reported with evidence', async () => {
    const r = await resolveFixture('broken.nft');
    const missing = svc(r, 'broken/missing:http/tcp');
    // The service chain is not in the dump: its endpoints are unknown (not partial, not no-endpoints).
    expect(missing.state).toBe('unknown');
    expect(missing.problems).toEqual([{ code: 'service-chain-absent', chain: `service-${nftNameHash('broken/missing/tcp/http')}-broken/missing/tcp/http` }]);
    expect(missing.evidence[0]).toMatchObject({ line: 6, text: expect.stringContaining('10.96.0.60 . tcp . 80 : goto service-') });

    const holes = svc(r, 'broken/holes:http/tcp');
    expect(holes.state).toBe('partial');
    expect(texts(holes.problems).some((p) => /numgen random mod 3 never yields 5/.test(p))).toBe(true);
    expect(texts(holes.problems).some((p) => /has no entry for 2: 33\.33% of new connections get no endpoint/.test(p))).toBe(true);
    expect(texts(holes.problems).some((p) => /__10\.244\.2\.61\/8080 has no dnat rule/.test(p))).toBe(true);
    expect(texts(holes.problems).some((p) => /__10\.244\.2\.62\/8080, which is not in the dump/.test(p))).toBe(true);
    // Endpoints still listed, from the chain names, with their real shares (1/3 each, 1/3 lost).
    expect(eps(holes)).toEqual([
      ['10.244.2.61', 8080, 0.3333333333, false],
      ['10.244.2.62', 8080, 0.3333333333, false],
    ]);

    const bad = svc(r, 'broken/badhash:http/tcp');
    expect(bad.hashVerified).toBe(false);
    expect(bad.state).toBe('partial');
    expect(texts(bad.problems)[0]).toMatch(/hash BADHASH2 does not match its name \(expected [A-Z2-7]{8}\)/);
    expect(texts(bad.problems)[1]).toMatch(/named for 10\.244\.2\.63\/8080 but DNATs to 10\.244\.2\.99:8080/);
    expect(eps(bad)).toEqual([['10.244.2.99', 8080, 1, false]]);

    expect(messages(r.problems).map((p) => [p.message.replace(/-[A-Z2-7]{8}-/, '-H-'), p.evidence[0]?.line])).toEqual([
      ['service-ips element 10.96.0.63 . tcp . 80 goes to mark-for-masquerade, which is not a Service chain', 9],
      ['chain service-H-broken/stale/tcp/http is not reached from any base chain or map element (empty: a stale chain kube-proxy flushed and deletes about a second later)', 44],
      ['chain endpoint-H-broken/stale/tcp/http__10.244.2.64/8080 is not reached from any base chain or map element', 48],
    ]);
    expect(r.problems[2].evidence[1].text).toBe('meta l4proto tcp dnat to 10.244.2.64:8080');
    expect(r.services.some((s) => s.name === 'stale')).toBe(false);
    expect(r.others.filter((o) => o.name.includes('stale')).map((o) => o.owner)).toEqual(['kube-proxy', 'kube-proxy']);
  });

  it('other-tables: owners by table, iptables-nft tables are not read as nftables mode', async () => {
    const snap = await loadSnapshot([fx('other-tables.nft')]);
    expect(snap.nft[0].tables.map((t) => [t.name, isKubeProxyNftTable(t), nftTableOwner(t)])).toEqual([
      ['kube-proxy', true, 'kube-proxy'],
      ['firewalld', false, 'firewalld'],
      ['calico', false, 'calico'],
      ['flannel-ipv4', false, 'flannel'],
      ['nat', false, 'iptables-nft'],
    ]);
    const r = resolveNft(snap);
    expect(r.services).toEqual([]);
    expect(r.others.map((o) => `${o.table} ${o.name} ${o.owner}`)).toEqual([
      'ip kube-proxy nat-prerouting kube-proxy',
      'ip kube-proxy services kube-proxy',
      'inet firewalld filter_INPUT firewalld',
      'ip calico filter-cali-from-wl-dispatch calico',
      'ip calico filter-cali-fw-cali123 calico',
      'ip flannel-ipv4 postrtg flannel',
      'ip nat KUBE-SERVICES iptables-nft',
      'ip nat KUBE-SVC-NPX46M4PTMTKRN6Y iptables-nft',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Generated clusters (src/generate) in nftables mode: resolveNft must give back the ground truth.

const round = (p: number) => Math.round(p * 1e10) / 1e10;

/**
 * What the node's nft rules can show of a truth entry. kube-proxy writes no chain for endpoints a
 * node never uses: with internalTrafficPolicy Local and no external access only the local- chain
 * exists, so only local endpoints (each 1/#local) are visible.
 */
function visible(t: TruthService): { ip: string; port: number; probability: number; local: boolean }[] {
  const external = t.nodePort !== null || t.externalIPs.length > 0 || t.loadBalancerIPs.length > 0;
  let list = t.endpoints;
  if (t.internalTrafficPolicy === 'Local' && !external) {
    const local = list.filter((e) => e.local);
    list = local.map((e) => ({ ...e, probability: 1 / local.length }));
  }
  if (t.state === 'no-endpoints' || (t.internalTrafficPolicy === 'Local' && !external && list.length === 0)) list = [];
  return list.map((e) => ({ ip: e.ip, port: e.port, probability: round(e.probability), local: e.local }));
}

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

async function generatedCase(opts: Parameters<typeof generateCluster>[0], nft: NftOptions = {}): Promise<{ truth: TruthService[]; res: Resolution }> {
  const dir = mkdtempSync(join(tmpdir(), 'kpx-nft-'));
  tmp.push(dir);
  writeBundle(generateCluster(opts), 'nftables', dir, { nft });
  const snap = await loadSnapshot([join(dir, 'nft-ruleset.txt'), join(dir, 'ip-route.txt'), join(dir, 'ip-addr.txt')]);
  const truth = (JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')) as { services: TruthService[] }).services;
  return { truth, res: resolveNft(snap) };
}

function compare(truth: TruthService[], res: Resolution, exactIpKinds: boolean, notes: readonly string[] = []): void {
  expect(res.problems).toEqual([]);
  expect(res.services.length).toBe(truth.length);
  // Same order: compareServicePorts sorts like truth.json (namespace, name, portName, protocol).
  res.services.forEach((s, i) => {
    const t = truth[i];
    const got = {
      namespace: s.namespace,
      name: s.name,
      portName: s.portName,
      protocol: s.protocol,
      port: s.port,
      clusterIP: s.clusterIP,
      nodePort: s.nodePort,
      externalTrafficPolicy: s.externalTrafficPolicy,
      internalTrafficPolicy: s.internalTrafficPolicy,
      sessionAffinity: s.sessionAffinity,
      state: s.state,
      loadBalancerSourceRanges: s.loadBalancerSourceRanges,
      endpoints: s.endpoints.map((e) => ({ ip: e.ip, port: e.port, probability: e.probability, local: e.local })),
    };
    const want = {
      namespace: t.namespace,
      name: t.name,
      portName: t.portName,
      protocol: t.protocol,
      port: t.port,
      clusterIP: t.clusterIP,
      nodePort: t.nodePort,
      externalTrafficPolicy: t.externalTrafficPolicy,
      internalTrafficPolicy: t.internalTrafficPolicy,
      sessionAffinity: t.sessionAffinity,
      state: t.state,
      loadBalancerSourceRanges: [...t.loadBalancerSourceRanges].sort(),
      endpoints: visible(t),
    };
    expect(got, `${t.namespace}/${t.name}:${t.portName}/${t.protocol}`).toEqual(want);
    expect(s.mode).toBe('nftables');
    const hasChains = Object.keys(s.chains).length > 0;
    expect(s.identifiedBy).toBe(hasChains ? 'hash' : 'set-comment');
    expect(s.hashVerified).toBe(hasChains ? true : null);
    expect(s.problems.filter((p) => !notes.includes(p.code))).toEqual([]);
    // externalIPs vs loadBalancerIPs: exact when the dump can tell (firewall-ips) or the guess holds.
    const ambiguous = !exactIpKinds && t.nodePort !== null && t.externalIPs.length > 0;
    if (ambiguous) expect([...s.externalIPs, ...s.loadBalancerIPs].sort()).toEqual([...t.externalIPs, ...t.loadBalancerIPs].sort());
    else {
      expect(s.externalIPs).toEqual([...t.externalIPs].sort());
      expect(s.loadBalancerIPs).toEqual([...t.loadBalancerIPs].sort());
    }
  });
}

describe('resolveNft on generated clusters (src/generate nftables mode vs truth.json)', () => {
  it('every catalogue shape, IPv4', async () => {
    const { truth, res } = await generatedCase({ seed: 3, services: SHAPES.length });
    expect(truth.length).toBe(33);
    compare(truth, res, true);
    // A few spot checks against the shapes.
    const byName = (n: string) => res.services.filter((s) => s.name === n);
    expect(byName('affinity-custom-timeout')[0].sessionAffinity).toEqual({ timeoutSeconds: 3600 });
    expect(byName('loadbalancer-source-ranges')[0].loadBalancerSourceRanges).toEqual(['198.51.100.7/32', '203.0.113.0/25']);
    expect(byName('nodeport-local-no-local-endpoints')[0].state).toBe('no-local-endpoints');
  });

  it('every catalogue shape, IPv6', async () => {
    const { truth, res } = await generatedCase({ seed: 5, services: SHAPES.length, family: 6 });
    compare(truth, res, true);
    expect(res.services.every((s) => s.family === 6)).toBe(true);
  });

  it('a random mix of 200 Services', async () => {
    const { truth, res } = await generatedCase({ seed: 11, services: 200 });
    expect(truth.length).toBeGreaterThan(200);
    compare(truth, res, false);
  });
});

describe('resolveNft on every kube-proxy nftables layout since 1.29 (generated, vs truth.json)', () => {
  for (const layout of NFT_LAYOUTS) {
    for (const family of [4, 6] as const) {
      it(`layout ${layout}, every catalogue shape, IPv${family}`, async () => {
        const { truth, res } = await generatedCase({ seed: 3, services: SHAPES.length, family }, { nftLayout: layout });
        expect(truth.length).toBe(33);
        // 1.29 writes no cluster-ips set: for a Service without endpoints but with external addresses, which
        // address is the cluster IP is inferred (said as a note), and only there.
        compare(truth, res, true, layout === '1.29' ? ['nft-cluster-ip-inferred'] : []);
        const inferred = res.services.filter((s) => s.problems.some((p) => p.code === 'nft-cluster-ip-inferred')).map((s) => s.name);
        expect(inferred).toEqual(layout === '1.29' ? ['external-ips-no-endpoints', 'loadbalancer-no-endpoints'] : []);
      });
    }
    it(`layout ${layout}, a random mix of 120 Services with --nodeport-addresses unset`, async () => {
      const { truth, res } = await generatedCase({ seed: 13, services: 120 }, { nftLayout: layout, nodePortAddresses: 'all' });
      expect(truth.length).toBeGreaterThan(120);
      compare(truth, res, false, layout === '1.29' ? ['nft-cluster-ip-inferred'] : []);
    });
  }
});
