/**
 * `services`, `trace` and `lint` on the same partial evidence (issue 15) must tell one story, and
 * none may claim what the text does not show: no "rejected" without a REJECT rule, no "passes on
 * unchanged" / NONE when the rules that decide are simply not in the paste, UNKNOWN / unknown where
 * the chain is missing. Each case drives the three through their functions on one snapshot.
 */
import { describe, expect, it } from 'vitest';
import { endpointHash, portProtoHash } from '../../src/kube/hash.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { judgeFlow, judgeNode } from '../../src/judge/index.js';
import type { ServicePort } from '../../src/kube/types.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket, type SourceSpec } from '../../src/trace/trace.js';
import { chalkInit } from '../../src/render/colors.js';
import { renderTraceText } from '../../src/render/trace/index.js';
import { KIND, snapshotOf } from '../lint/helpers.js';
import { readFileSync } from 'node:fs';
import { kubeProxyRestorePayload } from '../../src/generate/index.js';
import { cannotTell, partialRulesNote } from '../../src/render/evidence.js';
import { partialListings } from '../../src/judge/evidence.js';

/** A file of samples/iptables-mode-node (real tools' output: see samples/README.md). */
const NODE = (f: string) => readFileSync(new URL(`../../samples/iptables-mode-node/${f}`, import.meta.url), 'utf8');

async function all(files: Record<string, string>, dest: string, from: SourceSpec = 'pod', nodeIps: string[] = []) {
  const snap = await snapshotOf(files, nodeIps);
  // The three read one judgement (src/judge): judged states, lint over them, the flow's verdict.
  const node = judgeNode(snap, await resolveServices(snap));
  const res = node.resolution;
  const lint = await lintSnapshot(snap, { resolution: res });
  const d = parseDestination(dest) as Destination;
  const t = tracePacket(snap, res, d, d.protocol!, { from, assumptions: { established: false, affinityHit: false } });
  const flow = judgeFlow(node, t);
  const service = (id: string): ServicePort => {
    const s = res.services.find((x) => x.id === id);
    if (!s) throw new Error(`services does not list ${id}: ${res.services.map((x) => x.id).join(', ')}`);
    return s;
  };
  const outcomes = t.outcomes.map((o) => [o.verdict, o.probability, o.verdict === 'DNAT' ? o.destination : (o.unknown?.code ?? null)]);
  const total = Number(t.outcomes.reduce((n, o) => n + o.probability, 0).toFixed(9));
  const findings = lint.findings.filter((f) => f.ruleId !== 'masquerade-not-random-fully').map((f) => `${f.ruleId}: ${f.message}`);
  return { service, outcomes, total, findings, text: Object.values(files).join('\n'), rendered: renderTraceText(t, chalkInit(false), { judgement: flow }), flow, node, services: res.services };
}

/** No claim of a rejection unless a REJECT rule is in the text; no NONE where evidence is missing. */
function honest(r: Awaited<ReturnType<typeof all>>) {
  if (!/-j REJECT|\sreject(\s|$)/m.test(r.text)) expect(r.findings.filter((f) => /reject/i.test(f))).toEqual([]);
  expect(r.total).toBe(1);
}

// `iptables-save | grep KUBE-SVC-TCOU7JCQXEZGVUNU` on a node (as in test/trace/fragments.test.ts): no PREROUTING, no SEP chains.
const GREP_SVC = `-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-YIL6JZP7A3QYXJU2
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.2:53" -j KUBE-SEP-Z6M7ZHWCTBNMPLD7
`;
const SEP_A = `-A KUBE-SEP-YIL6JZP7A3QYXJU2 -s 10.244.0.2/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.2:53
`;
const DNS = 'kube-system/kube-dns:dns/udp';

describe('services, trace and lint agree on partial evidence', () => {
  it('a grep of KUBE-SERVICES + one Service chain, without PREROUTING: endpoints from comments, chains missing → partial / UNKNOWN / no finding', async () => {
    const r = await all({ 'grep.txt': GREP_SVC }, '10.96.0.10:53/udp');
    expect(r.service(DNS)).toMatchObject({ state: 'partial' });
    expect(r.service(DNS).problems.map((p) => p.code)).toEqual(['endpoint-chain-absent', 'endpoint-chain-absent']);
    expect(r.outcomes).toEqual([
      ['UNKNOWN', 0.5, 'chain-missing'],
      ['UNKNOWN', 0.5, 'chain-missing'],
    ]);
    expect(r.findings).toEqual([]);
    honest(r);
    // Older comments without "-> IP:port": nothing says where the endpoints are → unknown, still UNKNOWN, still no finding.
    const old = await all({ 'grep.txt': GREP_SVC.replace(/ -> [0-9.]+:\d+"/g, '"') }, '10.96.0.10:53/udp');
    expect(old.service(DNS)).toMatchObject({ state: 'unknown', endpoints: [] });
    expect(old.outcomes.map((o) => o[0])).toEqual(['UNKNOWN', 'UNKNOWN']);
    expect(old.findings).toEqual([]);
    honest(old);
  });

  it('one SEP chain cut out of the paste: the pasted endpoint DNATs, the missing one is UNKNOWN; never no-endpoints', async () => {
    const r = await all({ 'grep.txt': GREP_SVC + SEP_A }, '10.96.0.10:53/udp');
    expect(r.service(DNS).state).toBe('partial');
    expect(r.service(DNS).problems).toEqual([{ code: 'endpoint-chain-absent', chain: 'KUBE-SEP-Z6M7ZHWCTBNMPLD7', from: 'KUBE-SVC-TCOU7JCQXEZGVUNU' }]);
    expect(r.outcomes).toEqual([
      ['DNAT', 0.5, '10.244.0.2:53'],
      ['UNKNOWN', 0.5, 'chain-missing'],
    ]);
    expect(r.findings).toEqual([]);
    honest(r);
  });

  it('a "has no local endpoints" rule to KUBE-MARK-DROP: no-local-endpoints / DROP / the local-policy finding, not "rejected"', async () => {
    const hash = portProtoHash('default/web:http', 'tcp');
    const text = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-NODEPORTS - [0:0]',
      ':KUBE-MARK-DROP - [0:0]',
      `:KUBE-XLB-${hash} - [0:0]`,
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000',
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
      `-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j KUBE-XLB-${hash}`,
      `-A KUBE-XLB-${hash} -m comment --comment "default/web:http has no local endpoints" -j KUBE-MARK-DROP`,
      'COMMIT',
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':KUBE-FIREWALL - [0:0]',
      '-A INPUT -j KUBE-FIREWALL',
      '-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP',
      'COMMIT',
      '',
    ].join('\n');
    const r = await all({ 'xlb.txt': text }, '192.168.0.5:30080/tcp', 'external', ['192.168.0.5']);
    expect(r.service('default/web:http/tcp')).toMatchObject({ state: 'no-local-endpoints', externalTrafficPolicy: 'Local', nodePort: 30080 });
    expect(r.outcomes).toEqual([['DROP', 1, null]]);
    expect(r.findings).toEqual([
      'local-policy-no-local-endpoints: Service default/web:http has a Local traffic policy and no endpoint on this node: external traffic (NodePort, external and load-balancer IPs) to it is dropped here',
    ]);
    honest(r);
  });

  it('chain names hashed over the old `ns/name:` form: a verified, healthy Service that DNATs, no hash finding', async () => {
    const spn = 'default/web:';
    const svc = `KUBE-SVC-${portProtoHash(spn, 'tcp')}`;
    const sep = `KUBE-SEP-${endpointHash(spn, 'tcp', '10.244.1.5:8080')}`;
    const text = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':KUBE-SERVICES - [0:0]',
      `:${svc} - [0:0]`,
      `:${sep} - [0:0]`,
      '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      `-A KUBE-SERVICES -d 10.96.7.7/32 -p tcp -m comment --comment "default/web: cluster IP" -m tcp --dport 80 -j ${svc}`,
      `-A ${svc} -m comment --comment "default/web:" -j ${sep}`,
      `-A ${sep} -p tcp -m comment --comment "default/web:" -m tcp -j DNAT --to-destination 10.244.1.5:8080`,
      'COMMIT',
      '',
    ].join('\n');
    const r = await all({ 'old.txt': text }, '10.96.7.7:80/tcp');
    expect(r.service('default/web/tcp')).toMatchObject({ state: 'healthy', hashVerified: true, problems: [] });
    expect(r.outcomes).toEqual([['DNAT', 1, '10.244.1.5:8080']]);
    expect(r.findings).toEqual([]);
    honest(r);
  });

  it('ipvsadm -Ln alone (with or without --node-ip): the virtual server is listed, traced to its real servers, and lint is quiet', async () => {
    const IPVS = [
      'IP Virtual Server version 1.2.1 (size=4096)',
      'Prot LocalAddress:Port Scheduler Flags',
      '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
      'TCP  10.96.0.1:443 rr',
      '  -> 172.18.0.2:6443              Masq    1      0          0',
      'UDP  10.96.0.10:53 rr',
      '  -> 10.244.0.2:53                Masq    1      0          0',
      '  -> 10.244.0.3:53                Masq    1      0          0',
      '',
    ].join('\n');
    for (const nodeIps of [[], ['172.18.0.3']]) {
      const r = await all({ 'ipvsadm.txt': IPVS }, '10.96.0.10:53/udp', 'pod', nodeIps);
      expect(r.service('10.96.0.10:53/udp').state).toBe('healthy');
      expect(r.service('10.96.0.10:53/udp').endpoints.map((e) => `${e.ip}:${e.port} ${e.probability}`)).toEqual(['10.244.0.2:53 0.5', '10.244.0.3:53 0.5']);
      expect(r.outcomes).toEqual([
        ['DNAT', 0.5, '10.244.0.2:53'],
        ['DNAT', 0.5, '10.244.0.3:53'],
      ]);
      expect(r.findings).toEqual([]);
      honest(r);
    }
  });

  it('a Service chain pasted twice: read once — two endpoints at 50%, DNAT 50/50, and no ladder error for rules the paste repeated', async () => {
    const svcRules = KIND.split('\n').filter((l) => l.startsWith('-A KUBE-SVC-TCOU7JCQXEZGVUNU'));
    const twice = KIND.replace(svcRules.join('\n'), [...svcRules, ...svcRules].join('\n'));
    expect(twice).not.toBe(KIND);
    const r = await all({ 'iptables-save.txt': twice }, '10.96.0.10:53/udp');
    const dns = r.service(DNS);
    expect(dns.endpoints.map((e) => `${e.ip}:${e.port} ${e.probability}`)).toEqual(['10.244.0.3:53 0.5', '10.244.0.4:53 0.5']);
    expect(dns.problems.map((p) => p.code)).toEqual(['repeated-rules']);
    expect(r.outcomes).toEqual([
      ['DNAT', 0.5, '10.244.0.3:53'],
      ['DNAT', 0.5, '10.244.0.4:53'],
    ]);
    expect(r.findings).toEqual([]);
    honest(r);
  });

  it('a table cut before COMMIT (before the Service chains\' rules): unknown / UNKNOWN (chain-truncated), not NONE; lint invents nothing', async () => {
    const cut = KIND.slice(0, KIND.indexOf('-A KUBE-SVC-'));
    const r = await all({ 'iptables-save.txt': cut }, '10.96.0.10:53/udp');
    expect(r.service(DNS)).toMatchObject({ state: 'unknown', endpoints: [] });
    expect(r.service(DNS).problems.map((p) => p.code)).toEqual(['table-truncated']);
    expect(r.outcomes).toEqual([['UNKNOWN', 1, 'chain-truncated']]);
    // The renderer folds long lines at 120 columns: read the text with its line breaks as spaces.
    expect(r.rendered.replace(/\s+/g, ' ')).toMatch(/UNKNOWN: table nat was cut before COMMIT \(last line read: \d+\): rules of chain KUBE-SVC-TCOU7JCQXEZGVUNU past the cut are not in the evidence/);
    expect(r.rendered).not.toMatch(/passes on unchanged|no rule claimed/);
    expect(r.findings).toEqual([]);
    honest(r);
  });

  // `nft list ruleset` of samples/iptables-mode-node: the iptables-nft tables kube-proxy's iptables mode
  // wrote, as nft 1.0.6 prints them (no comments, `xt match recent`/`sctp` residue, native `meta random`).
  it('the nft view of an iptables-nft node alone: the same Services, endpoints, shares, policies and DNATs as its iptables-save; names unknown, affinity timeout unknown', async () => {
    const base = { 'ip-addr.txt': NODE('ip-addr.txt'), 'ip-route.txt': NODE('ip-route.txt') };
    const viaSave = await resolveServices(await snapshotOf({ 'iptables-save.txt': NODE('iptables-save.txt'), ...base }));
    const viaNft = await resolveServices(await snapshotOf({ 'nft-ruleset.txt': NODE('nft-ruleset.txt'), ...base }));
    const key = (s: ServicePort) => `${s.clusterIP ?? '-'}:${s.port}/${s.protocol}`;
    const withVip = viaSave.services.filter((s) => s.clusterIP !== null);
    expect(withVip.length).toBeGreaterThan(20);
    for (const want of withVip) {
      const got = viaNft.services.find((s) => key(s) === key(want));
      expect(got, key(want)).toBeDefined();
      expect(got!.name).toBeNull(); // nft does not print kube-proxy's comments: no name is invented
      expect(got!.identifiedBy).toBe('address');
      const eps = (s: ServicePort, shares: boolean) => s.endpoints.map((e) => `${e.ip}:${e.port}${shares ? ` ${e.probability}` : ''} ${e.local}`).sort();
      // A Service port without endpoints has no chains: its REJECT rules, without their comments, do not
      // say that the cluster IP and the node port are one Service — the node port is listed on its own.
      const split = want.endpoints.length === 0 && want.nodePort !== null && got!.nodePort === null;
      if (split) expect(viaNft.services.find((s) => s.id === `nodeport-${want.nodePort}/${want.protocol}`)?.state, key(want)).toBe(want.state);
      expect({ state: got!.state, nodePort: split ? want.nodePort : got!.nodePort, etp: got!.externalTrafficPolicy, itp: got!.internalTrafficPolicy, eps: eps(got!, true) }, key(want)).toEqual({
        state: want.state,
        nodePort: want.nodePort,
        etp: want.externalTrafficPolicy,
        itp: want.internalTrafficPolicy,
        eps: eps(want, true),
      });
      // Affinity is seen (`xt match recent`), its timeout is not: unknown, not kube-proxy's default.
      expect(got!.sessionAffinity, key(want)).toEqual(want.sessionAffinity ? { timeoutSeconds: null } : null);
      if (want.sessionAffinity) expect(got!.problems.map((p) => p.code)).toContain('affinity-hidden');
    }
    // The trace walks the same rules to the same DNATs.
    for (const dest of ['10.96.0.10:53/udp', '10.110.189.65:80/tcp', '10.98.104.67:80/tcp']) {
      const a = await all({ 'iptables-save.txt': NODE('iptables-save.txt'), ...base }, dest);
      const b = await all({ 'nft-ruleset.txt': NODE('nft-ruleset.txt'), ...base }, dest);
      expect(b.outcomes, dest).toEqual(a.outcomes);
      expect(b.rendered).not.toMatch(/cannot tell|no rule claimed/);
    }
    // The SCTP endpoints' DNAT rules carry `-m sctp`, printed as `xt match sctp`: the trace does not
    // pretend to know it matches — it forks on it, naming the match and its line.
    const sctp = await all({ 'nft-ruleset.txt': NODE('nft-ruleset.txt'), ...base }, '10.111.158.50:3868/sctp');
    expect(sctp.outcomes).toContainEqual(['DNAT', 0.5, '10.244.0.16:3868']);
    expect(sctp.rendered).toMatch(/if `xt match sctp` does not match \(nft-ruleset\.txt:\d+\)/);
    // Lint finds what iptables-save's lint finds (Services without endpoints), and nothing the view created.
    const lintSave = await all({ 'iptables-save.txt': NODE('iptables-save.txt'), ...base }, '10.96.0.10:53/udp');
    const lintNft = await all({ 'nft-ruleset.txt': NODE('nft-ruleset.txt'), ...base }, '10.96.0.10:53/udp');
    const ids = (f: string[]) => [...new Set(f.map((x) => x.split(':')[0]))].sort();
    expect(ids(lintNft.findings)).toEqual(ids(lintSave.findings));
    expect(lintNft.findings.filter((f) => /are rejected/.test(f)).length).toBeGreaterThan(0);
  });

  it('the nft view where `-m statistic` is only `xt match statistic`: shares unknown in services, trace forks on that match, lint invents no ladder error', async () => {
    // The same listing as an iptables-nft without a native translation of `-m statistic` prints it.
    const text = NODE('nft-ruleset.txt').replace(/meta random & 2147483647 < \d+/g, 'xt match statistic');
    expect(text).toContain('xt match statistic');
    const r = await all({ 'nft-ruleset.txt': text, 'ip-addr.txt': NODE('ip-addr.txt'), 'ip-route.txt': NODE('ip-route.txt') }, '10.96.0.10:53/udp');
    const dns = r.service('10.96.0.10:53/udp');
    expect(dns.state).toBe('healthy');
    expect(dns.endpoints.map((e) => [e.ip, e.probability])).toEqual([
      ['10.244.0.2', null],
      ['10.244.1.2', null],
    ]);
    expect(dns.problems).toEqual([{ code: 'share-hidden', chain: 'KUBE-SVC-TCOU7JCQXEZGVUNU', match: 'xt match statistic' }]);
    // Two scenarios, one per way the hidden match goes, each naming it and its line; never an invented 50/50.
    expect(r.outcomes.map((o) => o[0])).toEqual(['DNAT', 'DNAT']);
    expect(r.outcomes.map((o) => o[2]).sort()).toEqual(['10.244.0.2:53', '10.244.1.2:53']);
    expect(r.rendered).toMatch(/if `xt match statistic` matches \(nft-ruleset\.txt:\d+\)/);
    expect(r.rendered).toMatch(/if `xt match statistic` does not match \(nft-ruleset\.txt:\d+\)/);
    expect(r.rendered).not.toMatch(/50(\.0+)?%/);
    expect(r.findings.filter((f) => f.startsWith('probability-ladder'))).toEqual([]);
    expect(r.total).toBe(2); // each of the two scenarios' outcomes sums to 1
  });

  // `iptables-save | grep QATUYZLPU4I4HE4S` of the kind node in kubernetes/kubernetes#114470
  // (https://github.com/kubernetes/kubernetes/pull/114470): the NodePort rule and the KUBE-EXT chain, no
  // KUBE-SVC chain and no cluster IP.
  const EXT_ONLY = `-A KUBE-EXT-QATUYZLPU4I4HE4S -s 10.244.0.0/16 -m comment --comment "pod traffic for default/nodeport-service external destinations" -j KUBE-SVC-QATUYZLPU4I4HE4S
-A KUBE-EXT-QATUYZLPU4I4HE4S -m comment --comment "masquerade LOCAL traffic for default/nodeport-service external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
-A KUBE-EXT-QATUYZLPU4I4HE4S -m comment --comment "route LOCAL traffic for default/nodeport-service external destinations" -m addrtype --src-type LOCAL -j KUBE-SVC-QATUYZLPU4I4HE4S
-A KUBE-NODEPORTS -p tcp -m comment --comment "default/nodeport-service" -m tcp --dport 31964 -j KUBE-EXT-QATUYZLPU4I4HE4S
`;
  it('a Service known only by its KUBE-EXT chain: named from the chain\'s comments (hash verified); without them, by its node port — never KUBE-EXT-…/?', async () => {
    const r = await all({ 'grep.txt': EXT_ONLY }, '192.168.8.2:31964/tcp', 'pod', ['192.168.8.2']);
    const s = r.service('default/nodeport-service/tcp');
    expect(s).toMatchObject({ name: 'nodeport-service', nodePort: 31964, state: 'unknown', hashVerified: true });
    expect(s.problems.map((p) => p.code)).toEqual(['service-chain-absent']);
    expect(r.outcomes.every((o) => o[0] === 'UNKNOWN' && o[2] === 'chain-missing')).toBe(true);
    expect(r.findings).toEqual([]);
    // The same rules without their comments (as the nft view of iptables-nft prints them).
    const bare = EXT_ONLY.replace(/ -m comment --comment "[^"]*"/g, '');
    const b = await all({ 'grep.txt': bare }, '192.168.8.2:31964/tcp', 'pod', ['192.168.8.2']);
    expect(b.service('nodeport-31964/tcp')).toMatchObject({ name: null, nodePort: 31964, protocol: 'tcp', state: 'unknown' });
    expect(b.outcomes.every((o) => o[0] === 'UNKNOWN' && o[2] === 'chain-missing')).toBe(true);
    expect(b.findings).toEqual([]);
  });

  // ---- issue 30: kubectl's text and iptables listings, alone and beside dumps ----
  const PASTE = (f: string) => readFileSync(new URL(`../fixtures/pastes/${f}`, import.meta.url), 'utf8');
  const SVC_KUBE_DNS = PASTE('iptables-list/tool/nat-L-svc-kube-dns.txt');

  it('a `kubectl get svc` table alone: no rules, so "cannot tell" — never "no endpoints" nor any api- finding', async () => {
    const snap = await snapshotOf({ 'svc.txt': PASTE('kubectl/jupyterhub-291-get-pod-svc.txt') });
    expect(snap.api?.services).toHaveLength(4);
    expect(cannotTell(snap, 'which Services this node implements')).toMatch(/^kpx: cannot tell which Services/);
    const r = await all({ 'svc.txt': PASTE('kubectl/jupyterhub-291-get-pod-svc.txt') }, '10.111.237.213:80/tcp');
    expect(r.findings).toEqual([]);
  });

  it('`iptables -t nat -L KUBE-SVC-… -n` alone: the trace to the VIP it shows is UNKNOWN (PREROUTING not listed), never NONE or "no Service matches"', async () => {
    for (const text of [SVC_KUBE_DNS, `# iptables -t nat -L KUBE-SVC-TCOU7JCQXEZGVUNU -n\n${SVC_KUBE_DNS}`]) {
      const r = await all({ 'listing.txt': text }, '10.96.0.10:53/udp');
      expect(r.outcomes.map((o) => o[0])).toEqual(['UNKNOWN']);
      expect(r.outcomes[0][2]).toBe('chain-not-listed');
      expect(r.rendered).not.toMatch(/no Service on this node matches|NONE/);
      expect(r.rendered).toMatch(/no Service found in this evidence|no Service resolved \(the evidence is partial\)/);
      // services: the Service and its two endpoints from the comments, their chains not in the listing: partial.
      const dns = r.service(DNS);
      expect(dns.state).toBe('partial');
      expect(dns.endpoints.map((e) => `${e.ip}:${e.port}`)).toEqual(['10.244.0.2:53', '10.244.1.2:53']);
      expect(r.findings).toEqual([]);
      honest(r);
    }
  });

  it('a whole nat listing (`iptables -t nat -L -n -v --line-numbers`): the same Services and the same trace as iptables-save of that table', async () => {
    const base = { 'ip-addr.txt': NODE('ip-addr.txt'), 'ip-route.txt': NODE('ip-route.txt') };
    const natOnly = NODE('iptables-save.txt').slice(NODE('iptables-save.txt').indexOf('*nat'));
    const viaSave = await resolveServices(await snapshotOf({ 'save.txt': natOnly.slice(0, natOnly.indexOf('COMMIT') + 7), ...base }));
    const viaList = await resolveServices(await snapshotOf({ 'list.txt': PASTE('iptables-list/tool/nat-L-n-v-line-numbers.txt'), ...base }));
    const key = (x: ServicePort) => `${x.id} ${x.clusterIP} ${x.nodePort} ${x.state} ${x.endpoints.map((e) => `${e.ip}:${e.port}@${e.probability}`).join(',')}`;
    expect(viaSave.services.length).toBeGreaterThan(20);
    expect(viaList.services.map(key)).toEqual(viaSave.services.map(key));
    for (const dest of ['10.96.0.10:53/udp', '10.97.53.126:80/tcp']) {
      const a = await all({ 'save.txt': natOnly.slice(0, natOnly.indexOf('COMMIT') + 7), ...base }, dest);
      const b = await all({ 'list.txt': PASTE('iptables-list/tool/nat-L-n-v-line-numbers.txt'), ...base }, dest);
      expect(b.outcomes, dest).toEqual(a.outcomes);
    }
  });

  it('`iptables -S -t nat | grep KUBE-SERVICES`: a grep shows no chain whole — no "no endpoints", services exit "cannot tell"-free but partial', async () => {
    const r = await all({ 'grep.txt': PASTE('iptables-list/kubernetes-130484-S-grep.txt') }, '10.96.0.1:443/tcp');
    expect(r.service('default/kubernetes:https/tcp').state).toBe('unknown');
    expect(r.outcomes.every((o) => o[0] === 'UNKNOWN')).toBe(true);
    expect(r.findings).toEqual([]);
    const snap = await snapshotOf({ 'grep.txt': PASTE('iptables-list/kubernetes-130484-S-grep.txt') });
    expect(partialRulesNote(partialListings(snap))).toMatch(/`iptables -S` shown in part \(table nat\)/);
  });

  it('a nat listing cut by its author (k3s#7096: KUBE-SERVICES only jumped to): no Service resolved is "cannot tell", not "none"', async () => {
    const snap = await snapshotOf({ 'k3s.txt': PASTE('iptables-list/k3s-7096-nat-nvL.txt') });
    expect((await resolveServices(snap)).services).toEqual([]);
    expect(partialRulesNote(partialListings(snap))).toMatch(/a listing of 7 chains \(table nat, guessed\)/);
    const r = await all({ 'k3s.txt': PASTE('iptables-list/k3s-7096-nat-nvL.txt') }, '10.43.0.10:53/udp');
    expect(r.outcomes.map((o) => [o[0], o[2]])).toEqual([['UNKNOWN', 'chain-missing']]);
    expect(r.findings).toEqual([]);
  });

  // A whole dump beside kubectl text: the api- rules conclude only from what the text shows.
  const DUMP = { 'iptables-save.txt': NODE('iptables-save.txt'), 'ip-addr.txt': NODE('ip-addr.txt'), 'ip-route.txt': NODE('ip-route.txt') };
  const apiFindings = (r: Awaited<ReturnType<typeof all>>) => r.findings.filter((f) => f.startsWith('api-'));

  it('`kubectl get svc -A` (one Service the dump lacks) + a whole dump: no api-service-not-programmed (labels unknown), no stale claim for namespaces not listed', async () => {
    // Constructed table (a unit test, not a paste): kubectl's columns over this node's Services, plus one the node lacks.
    const table = [
      '$ kubectl get svc -n kube-system',
      'NAME       TYPE        CLUSTER-IP    EXTERNAL-IP   PORT(S)                  AGE',
      'kube-dns   ClusterIP   10.96.0.10    <none>        53/UDP,53/TCP,9153/TCP   3d',
      'ghost      ClusterIP   10.96.99.99   <none>        80/TCP                   1h',
      '',
    ].join('\n');
    const r = await all({ ...DUMP, 'svc.txt': table }, '10.96.0.10:53/udp');
    // kube-system is listed whole: a Service the node programs there that the table lacks would be stale; none is.
    // `ghost` is missing from the node, but whether kube-proxy should program it (its labels) is not shown.
    expect(apiFindings(r)).toEqual([]);
    expect(r.service(DNS).state).toBe('healthy');
  });

  it('`kubectl describe svc` + `describe ep` (whole) beside a dump: an endpoint the API no longer lists IS reported (the gating is not blanket)', async () => {
    // Constructed describe text (unit test) in describe.go's layout for kube-dns, its Endpoints object listing only 10.244.0.2.
    const describe = [
      'Name:              kube-dns',
      'Namespace:         kube-system',
      'Labels:            k8s-app=kube-dns',
      'Annotations:       <none>',
      'Selector:          k8s-app=kube-dns',
      'Type:              ClusterIP',
      'IP Family Policy:  SingleStack',
      'IP Families:       IPv4',
      'IP:                10.96.0.10',
      'IPs:               10.96.0.10',
      'Port:              dns  53/UDP',
      'TargetPort:        53/UDP',
      'Endpoints:         10.244.0.2:53',
      'Session Affinity:  None',
      'Internal Traffic Policy:  Cluster',
      'Events:            <none>',
      '',
      'Name:         kube-dns',
      'Namespace:    kube-system',
      'Labels:       k8s-app=kube-dns',
      'Annotations:  <none>',
      'Subsets:',
      '  Addresses:          10.244.0.2',
      '  NotReadyAddresses:  <none>',
      '  Ports:',
      '    Name  Port  Protocol',
      '    ----  ----  --------',
      '    dns   53    UDP',
      '',
      'Events:  <none>',
      '',
    ].join('\n');
    const r = await all({ ...DUMP, 'describe.txt': describe }, '10.96.0.10:53/udp');
    expect(apiFindings(r)).toEqual([expect.stringMatching(/^api-endpoint-stale: Service kube-system\/kube-dns:dns: this node sends traffic to 10\.244\.1\.2:53, which the API no longer lists/)]);
    // The same with only the Service's describe (its Endpoints line shows ready endpoints only): not whole — nothing said.
    const svcOnly = await all({ ...DUMP, 'describe.txt': describe.slice(0, describe.indexOf('\n\nName:')) }, '10.96.0.10:53/udp');
    expect(apiFindings(svcOnly)).toEqual([]);
  });

  it('a paste of `kubectl get svc` and a listing of one Service chain: the api- rules claim nothing, the trace stays UNKNOWN', async () => {
    const paste = [
      '$ kubectl get svc -n kube-system',
      'NAME       TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)                  AGE',
      'kube-dns   ClusterIP   10.96.0.10   <none>        53/UDP,53/TCP,9153/TCP   3d',
      '',
      '# iptables -t nat -L KUBE-SVC-TCOU7JCQXEZGVUNU -n',
      SVC_KUBE_DNS,
    ].join('\n');
    const snap = await snapshotOf({ 'paste.txt': paste });
    expect(snap.files[0]).toMatchObject({ format: 'paste', variant: 'kubectl tables + iptables-list listing' });
    const r = await all({ 'paste.txt': paste }, '10.96.0.10:53/udp');
    expect(r.outcomes.map((o) => o[0])).toEqual(['UNKNOWN']);
    expect(r.findings, r.findings.join('\n')).toEqual([]);
  });
});


/**
 * The class, not the sample: every collected paste (test/fixtures/pastes/**, each with its .source),
 * alone, through services, lint and a trace to each Service address it shows. Whatever the form, a
 * paste never yields: an api- finding (no whole dump beside it), "no endpoints" without the rule
 * text saying so, "rejected" without a REJECT rule, NONE / "no Service on this node matches" for an
 * address the paste shows as a Service's, or probabilities that do not add up to 1.
 */
describe('every collected paste, alone: no claim it cannot carry', async () => {
  const { readdirSync, statSync } = await import('node:fs');
  const root = new URL('../fixtures/pastes/', import.meta.url);
  const files: string[] = [];
  const walk = (dir: URL, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const url = new URL(name, dir);
      if (statSync(url).isDirectory()) walk(new URL(`${name}/`, dir), `${rel}${name}/`);
      else if (!name.endsWith('.source') && !name.endsWith('.rules')) files.push(`${rel}${name}`);
    }
  };
  walk(root, '');
  it.each(files)('%s', async (f) => {
    const text = readFileSync(new URL(f, root), 'utf8');
    const snap = await snapshotOf({ [f.split('/').pop()!]: text });
    const res = await resolveServices(snap);
    const lint = await lintSnapshot(snap, { resolution: res });
    expect(lint.findings.filter((x) => x.ruleId.startsWith('api-')).map((x) => x.message)).toEqual([]);
    if (!/-j REJECT|\sREJECT\s|reject-with/.test(text)) expect(lint.findings.filter((x) => /reject/i.test(x.message)).map((x) => x.message)).toEqual([]);
    if (!/has no endpoints/.test(text)) expect(res.services.filter((s) => s.state === 'no-endpoints').map((s) => s.id)).toEqual([]);
    // Destinations: each Service address the paste shows (the API's text, or the rules'), three at most.
    const shown = [
      ...(snap.api?.services ?? []).flatMap((s) => (s.clusterIP && s.clusterIP !== 'None' && s.ports[0] ? [`${s.clusterIP}:${s.ports[0].port}/${s.ports[0].protocol}`] : [])),
      ...res.services.flatMap((s) => (s.clusterIP && s.port ? [`${s.clusterIP}:${s.port}/${s.protocol}`] : [])),
    ];
    const dests = [...new Set(shown)].filter((d) => /^[\d.]+:\d+\/(tcp|udp|sctp)$/.test(d)).slice(0, 3);
    // As the commands do: a paste with no rules (kubectl text, a log) is answered "cannot tell" before any trace.
    if (cannotTell(snap, 'where it goes', 4)) return;
    for (const dest of dests) {
      const d = parseDestination(dest) as Destination;
      const t = tracePacket(snap, res, d, d.protocol!, { from: 'pod', assumptions: { established: false, affinityHit: false } });
      // Each scenario's shares add up to 1 (a trace with no undecided match is one scenario of every outcome).
      const scenarios = t.scenarios.length ? t.scenarios : [{ outcomes: t.outcomes.map((_, i) => i) }];
      for (const sc of scenarios) expect(Number(sc.outcomes.reduce((n, i) => n + t.outcomes[i].probability, 0).toFixed(9)), dest).toBe(1);
      expect(t.outcomes.filter((o) => o.verdict === 'NONE').map((o) => o.verdict), dest).toEqual([]);
      expect(renderTraceText(t, chalkInit(false)), dest).not.toMatch(/no Service on this node matches/);
    }
  });
});

// Issue 28's classes: services, trace and lint read one judgement, and none claims an absence the evidence does not show.
describe('services, trace and lint agree on the classes of issue 28', () => {
  const REAL = (f: string) => readFileSync(new URL(`../fixtures/judge/${f}`, import.meta.url), 'utf8');
  const KUBE_DNS_SVC = 'KUBE-SVC-TCOU7JCQXEZGVUNU';

  it('a headerless grep (kubernetes-sigs/kubespray#1258): read as nat, every Service unknown, the trace UNKNOWN (cannot tell), lint quiet', async () => {
    const r = await all({ 'grep.txt': REAL('kubespray-1258-grep.iptables') }, '10.233.0.2:53/udp');
    expect(r.services.map((s) => [s.id, s.state])).toEqual([
      ['default/nginx-service/tcp', 'unknown'],
      ['kube-system/dnsmasq:dns/udp', 'unknown'],
      ['kube-system/dnsmasq:dns-tcp/tcp', 'unknown'],
      ['kube-system/kubedns:dns/udp', 'unknown'],
    ]);
    expect(r.outcomes.map((o) => o[0])).toEqual(['UNKNOWN']);
    expect(r.flow).toMatchObject({ verdict: 'UNKNOWN', cannotTell: true });
    expect(r.findings).toEqual([]);
    honest(r);
  });

  it('an affinity grep (the --rcheck lines, not the ladder): endpoints with unknown addresses, unknown, UNKNOWN, no "no endpoint rules"', async () => {
    const node = NODE('iptables-save.txt').split('\n');
    const hash = 'KUBE-SVC-KCWTEMXYPRVDIDEM'; // shapes/affinity:http
    const grep = node.filter((l) => l.includes(hash) && (l.includes('cluster IP') || l.includes('--rcheck'))).map((l) => l.replace(/ -> [0-9.:]+"/, '"'));
    expect(grep.filter((l) => l.includes('--rcheck')).length).toBe(3);
    const vip = /-d ([0-9.]+)\/32/.exec(grep.find((l) => l.startsWith('-A KUBE-SERVICES'))!)![1];
    const r = await all({ 'grep.txt': grep.join('\n') + '\n' }, `${vip}:80/tcp`);
    const s = r.service('shapes/affinity:http/tcp');
    expect(s.state).toBe('unknown');
    expect(s.unresolvedEndpoints?.map((u) => u.via)).toHaveLength(3);
    expect(r.node.judgementOf(s).unknown?.reasons.map((x) => x.code)).toContain('endpoint-address-unknown');
    expect(r.outcomes.every((o) => o[0] === 'UNKNOWN')).toBe(true);
    expect(r.findings).toEqual([]);
    honest(r);
  });

  it('leftover iptables-mode chains on an IPVS node: the IPVS Services only, the leftovers said once, the trace goes to IPVS', async () => {
    const ipvsDir = (f: string) => readFileSync(new URL(`../../samples/ipvs-mode-node/${f}`, import.meta.url), 'utf8');
    const old = NODE('iptables-save.txt').split('\n');
    const save = ipvsDir('iptables-save.txt').split('\n');
    const nat = save.indexOf('*nat');
    const commit = save.indexOf('COMMIT', nat);
    const withOld = [...save.slice(0, nat + 1), ...old.filter((l) => /^:KUBE-(SVC|SEP)-/.test(l)), ...save.slice(nat + 1, commit), ...old.filter((l) => /^-A KUBE-(SVC|SEP)-/.test(l)), ...save.slice(commit)].join('\n');
    const files = { 'iptables-save.txt': withOld, 'ipvsadm-Ln.txt': ipvsDir('ipvsadm-Ln.txt'), 'ipset-list.txt': ipvsDir('ipset-list.txt'), 'ip-addr.txt': ipvsDir('ip-addr.txt'), 'ip-route.txt': ipvsDir('ip-route.txt') };
    const r = await all(files, '10.96.0.10:53/udp');
    const plain = await all({ ...files, 'iptables-save.txt': ipvsDir('iptables-save.txt') }, '10.96.0.10:53/udp');
    expect(r.services.map((s) => [s.id, s.state])).toEqual(plain.services.map((s) => [s.id, s.state]));
    expect(r.services.every((s) => s.mode === 'ipvs')).toBe(true);
    expect(r.node.leftovers).toHaveLength(1);
    expect(r.outcomes).toEqual(plain.outcomes);
    expect(r.rendered).not.toContain(KUBE_DNS_SVC);
    expect(r.findings.filter((f) => f.startsWith('stale-proxy-mode'))).toEqual([expect.stringMatching(/no hook reaches them, so they act on no packet/)]);
    expect(r.findings.filter((f) => !f.startsWith('stale-proxy-mode'))).toEqual(plain.findings);
  });

  it('a listing row among save lines naming the target: no Service resolved, UNKNOWN with that line (constructed unit case)', async () => {
    const mix = [
      '-A KUBE-SERVICES -d 10.32.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
      '    0     0 KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  *      *       0.0.0.0/0            10.32.0.10           /* kube-system/kube-dns:dns cluster IP */ udp dpt:53',
      '',
    ].join('\n');
    const r = await all({ 'paste.txt': mix }, '10.32.0.10:53/udp');
    expect(r.flow).toMatchObject({ verdict: 'UNKNOWN', cannotTell: true, noService: { evidence: 'partial', mentions: [{ line: 2 }] } });
    expect(r.rendered).not.toMatch(/no Service on this node matches/);
    expect(r.services.map((s) => [s.id, s.state])).toEqual([['default/kubernetes:https/tcp', 'unknown']]);
    expect(r.findings).toEqual([]);
    honest(r);
  });

  it("two views (iptables-save and kube-proxy's restore input of it): the answers of iptables-save alone, nothing counted twice", async () => {
    const base = { 'iptables-save.txt': NODE('iptables-save.txt'), 'ip-addr.txt': NODE('ip-addr.txt'), 'ip-route.txt': NODE('ip-route.txt') };
    const one = await all(base, '10.96.0.10:53/udp');
    const two = await all({ ...base, 'restore-input.txt': kubeProxyRestorePayload(NODE('iptables-save.txt')) }, '10.96.0.10:53/udp');
    expect(two.services.map((s) => [s.id, s.state, s.endpoints.length])).toEqual(one.services.map((s) => [s.id, s.state, s.endpoints.length]));
    expect(two.outcomes).toEqual(one.outcomes);
    expect(two.findings).toEqual(one.findings);
    expect(two.rendered.split('\n')[0]).toBe(one.rendered.split('\n')[0]);
    expect(two.node.secondViews.map((v) => [v.kind, v.differingCount])).toEqual([['iptables-restore-input', 0]]);
  });
});
