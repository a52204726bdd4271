/**
 * `kpx services` resolution in iptables mode, checked exactly against the generator's ground
 * truth (every shape: ClusterIP, NodePort, LoadBalancer ± source ranges, externalIPs, Local
 * policies, affinity, no endpoints, UDP/SCTP, multi-port, >1000 endpoints without comments),
 * and against the seed kind sample.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolveIptables, ladderShares } from '../../src/kube/resolve-iptables.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { generatedNode, SCHEMA_FIELDS, type GeneratedNode } from '../helpers/generated.js';

const nodes: GeneratedNode[] = [];
afterAll(() => nodes.forEach((n) => n.cleanup()));

/**
 * The node's own view of a truth entry. Ground truth lists every endpoint of the Service; a node
 * can know only what its dataplane holds:
 * - internalTrafficPolicy Local with no external path: only the local endpoints are written (KUBE-SVL),
 *   each with an equal share of this node's traffic;
 * - a REJECT/DROP for an external address is the same for externalIPs and LoadBalancer IPs, so a
 *   Service without endpoints is compared on the union of the two;
 * - a Service without endpoints has only those REJECT rules: its session affinity, source ranges and
 *   traffic policies are not written anywhere, so the node sees the defaults.
 */
function nodeView(t: GeneratedNode['truth']['services'][number]) {
  if (t.state === 'no-endpoints') {
    return { ...t, sessionAffinity: null, loadBalancerSourceRanges: [], externalTrafficPolicy: 'Cluster' as const, internalTrafficPolicy: 'Cluster' as const };
  }
  const internalOnly = t.internalTrafficPolicy === 'Local' && t.nodePort === null && t.externalIPs.length === 0 && t.loadBalancerIPs.length === 0;
  if (!internalOnly) return t;
  const local = t.endpoints.filter((e) => e.local);
  return { ...t, endpoints: local.map((e) => ({ ...e, probability: 1 / local.length })) };
}

function compareWithTruth(node: GeneratedNode) {
  const res = resolveIptables(node.snapshot);
  const mismatches: string[] = [];
  const got = res.services.filter((s) => s.family === 4 || s.family === 6);
  if (got.length !== node.truth.services.length) mismatches.push(`count: got ${got.length}, truth ${node.truth.services.length}`);
  const key = (s: { namespace: string | null; name: string | null; portName: string | null; protocol: string | null }) => `${s.namespace}/${s.name}:${s.portName}/${s.protocol}`;
  const byKey = new Map(got.map((s) => [key(s), s]));
  for (const truth of node.truth.services) {
    const t = nodeView(truth);
    const s = byKey.get(key(t));
    if (!s) {
      mismatches.push(`missing ${key(t)}`);
      continue;
    }
    for (const f of SCHEMA_FIELDS) {
      if ((f === 'externalIPs' || f === 'loadBalancerIPs') && s.state === 'no-endpoints') {
        const union = (x: { externalIPs: readonly string[]; loadBalancerIPs: readonly string[] }) => JSON.stringify([...x.externalIPs, ...x.loadBalancerIPs].sort());
        if (union(s) !== union(t)) mismatches.push(`${key(t)} external addresses: got ${union(s)}, truth ${union(t)}`);
        continue;
      }
      if (JSON.stringify(s[f]) !== JSON.stringify(t[f])) mismatches.push(`${key(t)} ${f}: got ${JSON.stringify(s[f])}, truth ${JSON.stringify(t[f])}`);
    }
    const ep = (e: { ip: string; port: number | null; local: boolean | null }) => `${e.ip}:${e.port}:${e.local}`;
    const gotEps = s.endpoints.map(ep).sort();
    const wantEps = t.endpoints.map(ep).sort();
    if (JSON.stringify(gotEps) !== JSON.stringify(wantEps)) mismatches.push(`${key(t)} endpoints: got ${gotEps.join(' ')}, truth ${wantEps.join(' ')}`);
    for (const e of s.endpoints) {
      const want = t.endpoints.find((x) => x.ip === e.ip && x.port === e.port);
      if (want && Math.abs(want.probability - e.probability!) > 1e-6) mismatches.push(`${key(t)} ${e.ip} probability ${e.probability} vs ${want.probability}`);
    }
    if (s.hashVerified === false) mismatches.push(`${key(t)} hash not verified: ${s.problems.join('; ')}`);
  }
  return { res, mismatches };
}

describe('iptables-mode resolution against generated ground truth', () => {
  it('a random mix of 1000 Services: every Service port is exactly the truth', async () => {
    const node = await generatedNode('iptables', { seed: 21, services: 1000 });
    nodes.push(node);
    expect(compareWithTruth(node).mismatches).toEqual([]);
  });

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: every Service port, endpoint and share is exactly the truth`, async () => {
      const node = await generatedNode('iptables', { seed, services: 60 });
      nodes.push(node);
      const { res, mismatches } = compareWithTruth(node);
      expect(mismatches).toEqual([]);
      expect(res.services.some((s) => s.state === 'no-endpoints')).toBe(true);
      expect(res.services.some((s) => s.externalTrafficPolicy === 'Local')).toBe(true);
      expect(res.services.some((s) => s.sessionAffinity !== null)).toBe(true);
      expect(res.services.some((s) => s.loadBalancerSourceRanges.length > 0)).toBe(true);
      expect(res.services.some((s) => s.protocol === 'sctp')).toBe(true);
    });
  }

  it('resolves Services with more than 1000 endpoints, whose endpoint rules carry no comments', async () => {
    const node = await generatedNode('iptables', { seed: 9, services: 10, bigService: 1100 });
    nodes.push(node);
    const { res, mismatches } = compareWithTruth(node);
    expect(mismatches).toEqual([]);
    expect(res.services.some((s) => s.endpoints.length === 1100)).toBe(true);
  });

  it('resolves IPv6 dumps', async () => {
    const node = await generatedNode('iptables', { seed: 4, services: 30, family: 6 });
    nodes.push(node);
    expect(compareWithTruth(node).mismatches).toEqual([]);
  });
});

describe('the seed kind sample', () => {
  it('finds exactly the four kube-proxy Service ports, with their endpoints and shares', async () => {
    const snap = await loadSnapshot([new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url).pathname]);
    const res = resolveIptables(snap);
    expect(res.services.map((s) => [s.id, s.clusterIP, s.port, s.state, s.endpoints.map((e) => `${e.ip}:${e.port}@${e.probability}`).join(' ')])).toEqual([
      ['default/kubernetes:https/tcp', '10.96.0.1', 443, 'healthy', '172.18.0.3:6443@1'],
      ['kube-system/kube-dns:dns/udp', '10.96.0.10', 53, 'healthy', '10.244.0.3:53@0.5 10.244.0.4:53@0.5'],
      ['kube-system/kube-dns:dns-tcp/tcp', '10.96.0.10', 53, 'healthy', '10.244.0.3:53@0.5 10.244.0.4:53@0.5'],
      ['kube-system/kube-dns:metrics/tcp', '10.96.0.10', 9153, 'healthy', '10.244.0.3:9153@0.5 10.244.0.4:9153@0.5'],
    ]);
    expect(res.services.every((s) => s.hashVerified === true)).toBe(true);
    const owners = new Map(res.others.map((o) => [`${o.table}/${o.name}`, o.owner]));
    expect(owners.get('nat/KIND-MASQ-AGENT')).toBe('kind');
    expect(owners.get('nat/DOCKER_OUTPUT')).toBe('docker');
    expect(owners.get('nat/KUBE-SERVICES')).toBe('kube-proxy');
  });

  it('reports a hand-edited chain name as a hash mismatch', async () => {
    const text = readFileSync(new URL('../../samples/iptables-mode-kind/iptables-save.txt', import.meta.url), 'utf8').replaceAll('KUBE-SVC-TCOU7JCQXEZGVUNU', 'KUBE-SVC-AAAAAAAAAAAAAAAA');
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/kpx-edit-');
    writeFileSync(`${dir}/iptables-save.txt`, text);
    const res = resolveIptables(await loadSnapshot([dir]));
    rmSync(dir, { recursive: true });
    const dns = res.services.find((s) => s.id === 'kube-system/kube-dns:dns/udp')!;
    expect(dns.hashVerified).toBe(false);
    expect(dns.state).toBe('partial');
  });
});

describe('probability ladders', () => {
  it('gives each endpoint its share and reports what is left over', () => {
    expect(ladderShares([0.33333333349, 0.5, undefined]).shares.map((x) => x.toFixed(6))).toEqual(['0.333333', '0.333333', '0.333333']);
    expect(ladderShares([0.5, 0.5]).leftover).toBeCloseTo(0.25);
    expect(ladderShares([undefined, undefined]).unreachableFrom).toBe(1);
  });
});
