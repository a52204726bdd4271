/**
 * Acceptance: (1) healthy generated dumps (every mode) and the kind sample give no error-level
 * finding; (2) six defects seeded into a generated 1k-Service dump are each found exactly once,
 * naming the right Service.
 */
import { describe, expect, it } from 'vitest';
import {
  generateCluster,
  ipAddr,
  ipRoute,
  ipsetList,
  iptablesSave,
  ipvsadmLn,
  ipvsIpAddr,
  ipvsIptablesSave,
  ipvsState,
  nftListing,
  portProtoHash,
  servicePortName,
  type Cluster,
  type Service,
  type ServicePortRef,
} from '../../src/generate/index.js';
import type { Finding } from '../../src/lint/rule.js';
import { KIND, lintFiles } from './helpers.js';
import { breathe } from '../helpers/breathe.js';

const summaryOf = (fs: readonly Finding[]) => [...new Set(fs.map((f) => `${f.severity}:${f.ruleId}`))].sort();

describe('healthy dumps: no error-level findings', () => {
  it('the kind sample: only the kind-masq-agent MASQUERADE warning', async () => {
    const r = await lintFiles({ 'iptables-save.txt': KIND });
    expect(r.summary).toEqual({ error: 0, warning: 1, info: 0 });
    expect(summaryOf(r.findings)).toEqual(['warning:masquerade-not-random-fully']);
  });

  const families = [4, 6] as const;
  for (const family of families) {
    for (const cni of ['flannel', 'calico'] as const) {
      it(`iptables mode, IPv${family}, ${cni}: only state warnings (Services without (local) endpoints)`, async () => {
        const c = generateCluster({ seed: 40 + family, services: 150, family, cni });
        const r = await lintFiles({ 'iptables-save.txt': iptablesSave(c), 'ip-route.txt': ipRoute(c), 'ip-addr.txt': ipAddr(c) });
        expect(r.summary.error).toBe(0);
        // The generator's catalogue includes Services without endpoints on purpose: those warnings are true.
        expect(summaryOf(r.findings).every((k) => ['warning:service-no-endpoints', 'warning:local-policy-no-local-endpoints'].includes(k))).toBe(true);
        expect(r.findings.filter((f) => f.ruleId === 'service-no-endpoints').map((f) => f.service)).toEqual(
          expect.arrayContaining(['shapes/no-endpoints:http', 'shapes/nodeport-no-endpoints:http', 'shapes/loadbalancer-no-endpoints:http', 'shapes/external-ips-no-endpoints:http']),
        );
      });
    }
    it(`ipvs mode, IPv${family}: only warnings for virtual servers of Services without endpoints (and the generator's plain MASQUERADE)`, async () => {
      const c = generateCluster({ seed: 50 + family, services: 150, family });
      const st = ipvsState(c);
      const ipt = ipvsIptablesSave(c, {}, st);
      const r = await lintFiles({ 'iptables-save.txt': ipt, 'ipvsadm.txt': ipvsadmLn(c, st), 'ipset.txt': ipsetList(c, st, ipt), 'ip-addr.txt': ipvsIpAddr(c, st), 'ip-route.txt': ipRoute(c) });
      expect(r.summary.error).toBe(0);
      expect(summaryOf(r.findings)).toEqual(['warning:ipvs-no-real-servers', 'warning:masquerade-not-random-fully']);
    });
    it(`nftables mode, IPv${family}: only state warnings (Services without (local) endpoints)`, async () => {
      const c = generateCluster({ seed: 60 + family, services: 150, family });
      const r = await lintFiles({ 'nft.txt': nftListing(c), 'ip-route.txt': ipRoute(c), 'ip-addr.txt': ipAddr(c) });
      expect(r.summary.error).toBe(0);
      expect(summaryOf(r.findings)).toEqual(['warning:local-policy-no-local-endpoints', 'warning:service-no-endpoints']);
      expect(r.findings.filter((f) => f.ruleId === 'service-no-endpoints').map((f) => f.service)).toEqual(expect.arrayContaining(['shapes/no-endpoints:http', 'shapes/nodeport-no-endpoints:http']));
    });
  }
});

/** Replace one Service in the model (and its ports in the sync order). */
function withService(c: Cluster, target: Service, repl: Service): Cluster {
  const portMap = new Map(target.ports.map((p, i) => [p, repl.ports[i]]));
  return {
    ...c,
    services: c.services.map((s) => (s === target ? repl : s)),
    syncOrder: c.syncOrder.map((r): ServicePortRef => (r.service === target ? { service: repl, port: portMap.get(r.port)! } : r)),
  };
}

const label = (r: ServicePortRef) => servicePortName(r.service, r.port);
const svcChain = (r: ServicePortRef) => `KUBE-SVC-${portProtoHash(label(r), r.port.protocol)}`;

function removeLine(text: string, pred: (l: string) => boolean): { text: string; removed: string } {
  const lines = text.split('\n');
  const i = lines.findIndex(pred);
  if (i < 0) throw new Error('seed: no such line');
  const [removed] = lines.splice(i, 1);
  return { text: lines.join('\n'), removed };
}

describe('seeded defects in a generated 1k-Service dump', () => {
  it('finds each defect exactly once, naming the right Service', async () => {
    let c = generateCluster({ seed: 21, services: 1000, shapes: [], mix: { noEndpoints: 0 } });
    await breathe();
    // Plain ClusterIP Services with one port and ≥3 endpoints, cluster policy, no affinity.
    const plain = c.syncOrder.filter(
      (r) =>
        r.service.type === 'ClusterIP' &&
        r.service.ports.length === 1 &&
        r.service.externalIPs.length === 0 &&
        r.service.internalTrafficPolicy === 'Cluster' &&
        r.service.sessionAffinity === null &&
        r.port.endpoints.length >= 3,
    );
    const ipUsers = new Map<string, number>();
    for (const r of c.syncOrder) for (const e of r.port.endpoints) ipUsers.set(e.ip, (ipUsers.get(e.ip) ?? 0) + 1);
    const [sepVictim, ladderVictim, emptyVictim, orphanVictim] = plain;
    const unroutable = plain.slice(4).find((r) => r.port.endpoints.some((e) => ipUsers.get(e.ip) === 1 && !e.local))!;
    const badIp = unroutable.port.endpoints.find((e) => ipUsers.get(e.ip) === 1 && !e.local)!.ip;
    // Duplicate VIP: a later Service with the same port/protocol as an earlier one takes its cluster IP.
    const taken = new Set([sepVictim, ladderVictim, emptyVictim, orphanVictim, unroutable]);
    const rest = plain.filter((r) => !taken.has(r));
    const dupFirst = rest[0];
    const dupLater = rest.slice(1).find((r) => r.port.port === dupFirst.port.port && r.port.protocol === dupFirst.port.protocol)!;
    expect(dupLater).toBeDefined();

    const baseFiles = { 'iptables-save.txt': iptablesSave(c), 'ip-route.txt': ipRoute(c), 'ip-addr.txt': ipAddr(c) };
    await breathe();

    // Model-level seeds: a Service without endpoints, a duplicate VIP.
    c = withService(c, emptyVictim.service, { ...emptyVictim.service, ports: [{ ...emptyVictim.port, endpoints: [] }] });
    c = withService(c, dupLater.service, { ...dupLater.service, clusterIP: dupFirst.service.clusterIP });
    await breathe();
    let ipt = iptablesSave(c);
    await breathe();
    // Text-level seeds: a removed SEP declaration, a broken probability, an orphaned SVC chain, an unroutable endpoint.
    const firstSep = ipt.split('\n').find((l) => l.startsWith(`-A ${svcChain(sepVictim)} `) && / -j KUBE-SEP-/.test(l))!;
    const sep = / -j (KUBE-SEP-\S+)/.exec(firstSep)![1];
    ipt = removeLine(ipt, (l) => l === `:${sep} - [0:0]`).text;
    const ladderLine = ipt.split('\n').find((l) => l.startsWith(`-A ${svcChain(ladderVictim)} `) && l.includes('--probability'))!;
    ipt = ipt.replace(ladderLine, ladderLine.replace(/--probability \S+/, '--probability 0.90000000000'));
    ipt = removeLine(ipt, (l) => l.startsWith('-A KUBE-SERVICES ') && l.endsWith(`-j ${svcChain(orphanVictim)}`)).text;
    const routes = `${ipRoute(c)}blackhole ${badIp}\n`;

    const base = await lintFiles(baseFiles);
    const seeded = await lintFiles({ 'iptables-save.txt': ipt, 'ip-route.txt': routes, 'ip-addr.txt': ipAddr(c) });
    expect(base.summary.error).toBe(0);
    const key = (f: Finding) => `${f.ruleId}|${f.service ?? ''}|${f.message}`;
    const before = new Set(base.findings.map(key));
    // ruleset-size reports counts, which the seeds change by a few rules: it is in both runs.
    expect(base.findings.filter((f) => f.ruleId === 'ruleset-size')).toHaveLength(1);
    expect(seeded.findings.filter((f) => f.ruleId === 'ruleset-size')).toHaveLength(1);
    const added = seeded.findings.filter((f) => f.ruleId !== 'ruleset-size' && !before.has(key(f)));
    expect(added.map((f) => [f.ruleId, f.service]).sort()).toEqual(
      [
        ['dangling-jump', label(sepVictim)],
        ['probability-ladder', label(ladderVictim)],
        ['service-no-endpoints', label(emptyVictim)],
        ['duplicate-service-vip', label(dupLater)],
        ['orphan-chain', label(orphanVictim)],
        ['endpoint-unroutable', label(unroutable)],
      ].sort(),
    );
    const by = (id: string) => added.find((f) => f.ruleId === id)!;
    expect(by('dangling-jump').message).toContain(sep);
    expect(by('orphan-chain').message).toContain(svcChain(orphanVictim));
    expect(by('endpoint-unroutable').message).toContain(`endpoint ${badIp} `);
    expect(by('duplicate-service-vip').message).toBe(`${dupFirst.service.clusterIP}:${dupFirst.port.port}/${dupFirst.port.protocol} is claimed by ${label(dupLater)} and by ${label(dupFirst)}: only ${label(dupFirst)} receives the traffic`);
    expect(by('probability-ladder').text).toContain('--probability 0.90000000000');
    for (const f of added) expect(f.line).toBeGreaterThan(0);
  });
});
