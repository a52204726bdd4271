/**
 * resolveIpvs over the hand-made ipvs-mode fixtures (test/fixtures/ipvs-mode/README.md) and over
 * dumps written by the cluster generator (src/generate), compared with its ground truth.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { parseServicePortComment, resolveIpvs } from '../../src/kube/resolve-ipvs.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import { generateCluster } from '../../src/generate/cluster.js';
import { writeBundle } from '../../src/generate/bundle.js';
import type { TruthService } from '../../src/generate/truth.js';
import { problemText } from '../../src/render/problems.js';
import { chainOwner } from '../../src/kube/owner.js';
const texts = (ps: readonly Parameters<typeof problemText>[0][]) => ps.map(problemText);
const messages = <E,>(ps: readonly { problem: Parameters<typeof problemText>[0]; evidence: readonly E[] }[]) => ps.map((p) => ({ message: problemText(p.problem), evidence: p.evidence }));

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ipvs-mode/${name}`, import.meta.url));

/** 1-based line of the first line of `file` that contains `text`. */
function lineOf(file: string, text: string): number {
  const i = readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`${text} not in ${file}`);
  return i + 1;
}

const byId = (r: Resolution, id: string): ServicePort => {
  const s = r.services.find((x) => x.id === id);
  if (!s) throw new Error(`no service ${id}; have ${r.services.map((x) => x.id).join(', ')}`);
  return s;
};
const eps = (s: ServicePort) => s.endpoints.map((e) => `${e.ip}:${e.port} p=${e.probability!.toFixed(3)} local=${e.local}`);

describe('resolveIpvs: every Service shape (fixtures/ipvs-mode/shapes, hand-made)', () => {
  let r: Resolution;
  const dir = fixture('shapes');
  const ipvsFile = join(dir, 'ipvsadm-Ln.txt');
  const ipsetFile = join(dir, 'ipset-list.txt');
  beforeAll(async () => {
    const snap = await loadSnapshot([dir]);
    for (const f of snap.files) expect(f.diagnostics, f.path).toEqual([]);
    r = resolveIpvs(snap);
  });

  it('lists one Service port per ClusterIP virtual server, sorted, named by set comments', () => {
    expect(r.services.map((s) => s.id)).toEqual([
      'default/kubernetes:https/tcp',
      'default/secure:https/tcp',
      'default/web:http/tcp',
      'kube-system/kube-dns:dns/udp',
      'kube-system/kube-dns:dns-tcp/tcp',
      '10.96.100.5:3868/sctp',
      '10.96.100.3:80/tcp',
      '10.96.100.6:80/tcp',
      '10.96.100.7:80/tcp',
      '10.96.100.8:80/tcp',
      '10.96.100.2:443/tcp',
    ]);
    expect(r.services.every((s) => s.mode === 'ipvs' && s.family === 4 && s.hashVerified === null)).toBe(true);
    expect(r.problems).toEqual([]);
    const dns = byId(r, 'kube-system/kube-dns:dns/udp');
    expect(dns).toMatchObject({ namespace: 'kube-system', name: 'kube-dns', portName: 'dns', protocol: 'udp', port: 53, clusterIP: '10.96.0.10', identifiedBy: 'set-comment' });
    const anon = byId(r, '10.96.100.6:80/tcp');
    expect(anon).toMatchObject({ namespace: null, name: null, portName: null, identifiedBy: 'address', clusterIP: '10.96.100.6', port: 80 });
  });

  it('endpoints: IPVS shares and locality from routes, node addresses and KUBE-LOOP-BACK', () => {
    const dns = byId(r, 'kube-system/kube-dns:dns/udp');
    expect(eps(dns)).toEqual(['10.244.1.2:53 p=0.500 local=true', '10.244.2.3:53 p=0.500 local=false']);
    expect(dns.state).toBe('healthy');
    expect(dns.problems).toEqual([]);
    expect(dns.endpoints[0]).toMatchObject({ weight: 1, via: 'UDP/10.96.0.10:53 -> 10.244.1.2:53' });
    // The real-server line and the KUBE-LOOP-BACK member are the evidence of the local endpoint.
    const udpLine = lineOf(ipvsFile, 'UDP  10.96.0.10:53');
    expect(dns.endpoints[0].evidence).toEqual([
      { file: ipvsFile, line: udpLine + 1, text: expect.stringContaining('-> 10.244.1.2:53'), where: 'UDP/10.96.0.10:53' },
      { file: ipsetFile, line: lineOf(ipsetFile, '10.244.1.2,udp:53,10.244.1.2'), text: '10.244.1.2,udp:53,10.244.1.2', where: 'KUBE-LOOP-BACK' },
    ]);
    // Service evidence: the virtual server, the set member, the kube-ipvs0 address.
    expect(dns.evidence).toEqual([
      { file: ipvsFile, line: udpLine, text: 'UDP  10.96.0.10:53 rr', where: 'UDP/10.96.0.10:53' },
      { file: ipsetFile, line: lineOf(ipsetFile, '10.96.0.10,udp:53'), text: '10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"', where: 'KUBE-CLUSTER-IP' },
      { file: join(dir, 'ip-addr.txt'), line: lineOf(join(dir, 'ip-addr.txt'), 'inet 10.96.0.10/32'), text: 'inet 10.96.0.10/32 scope global kube-ipvs0', where: 'kube-ipvs0' },
    ]);
    expect(dns.chains).toEqual({ 'cluster-ip': 'UDP/10.96.0.10:53' });
    // Host-network endpoint on the node's own address.
    expect(eps(byId(r, 'default/kubernetes:https/tcp'))).toEqual(['192.168.1.10:6443 p=1.000 local=true']);
  });

  it('session affinity from `persistent N`', () => {
    expect(byId(r, 'default/kubernetes:https/tcp').sessionAffinity).toEqual({ timeoutSeconds: 10800 });
    expect(byId(r, '10.96.100.2:443/tcp').sessionAffinity).toEqual({ timeoutSeconds: 60 });
    expect(byId(r, 'default/web:http/tcp').sessionAffinity).toBeNull();
  });

  it('NodePort virtual servers on every node address join their ClusterIP by identical real servers', () => {
    const web = byId(r, 'default/web:http/tcp');
    expect(web).toMatchObject({ clusterIP: '10.96.100.1', port: 80, nodePort: 30080, externalTrafficPolicy: 'Cluster', state: 'healthy', problems: [] });
    expect(eps(web)).toEqual(['10.244.1.5:8080 p=0.500 local=true', '10.244.2.7:8080 p=0.500 local=false']);
    expect(web.chains).toEqual({ 'cluster-ip': 'TCP/10.96.100.1:80', 'node-port/10.244.1.1': 'TCP/10.244.1.1:30080', 'node-port/192.168.1.10': 'TCP/192.168.1.10:30080' });
    expect(web.evidence.map((e) => e.line)).toEqual(
      expect.arrayContaining([lineOf(ipvsFile, 'TCP  10.96.100.1:80'), lineOf(ipvsFile, 'TCP  192.168.1.10:30080'), lineOf(ipvsFile, 'TCP  10.244.1.1:30080')]),
    );
    expect(web.evidence).toContainEqual({ file: ipsetFile, line: lineOf(ipsetFile, '30080'), text: '30080', where: 'KUBE-NODE-PORT-TCP' });
    // Every real-server line of the three virtual servers is evidence for the endpoint.
    expect(web.endpoints[0].evidence).toHaveLength(3);
  });

  it('LoadBalancer with KUBE-LOAD-BALANCER-FW and source ranges, plus its NodePort', () => {
    const lb = byId(r, '10.96.100.2:443/tcp');
    expect(lb).toMatchObject({
      clusterIP: '10.96.100.2',
      port: 443,
      nodePort: 30443,
      loadBalancerIPs: ['203.0.113.10'],
      externalIPs: [],
      loadBalancerSourceRanges: ['198.51.100.0/24', '192.0.2.7/32'],
      externalTrafficPolicy: 'Cluster',
      state: 'healthy',
    });
    expect(lb.evidence.filter((e) => e.where?.startsWith('KUBE-LOAD-BALANCER')).map((e) => `${e.where} ${e.text}`)).toEqual([
      'KUBE-LOAD-BALANCER 203.0.113.10,tcp:443',
      'KUBE-LOAD-BALANCER-FW 203.0.113.10,tcp:443',
      'KUBE-LOAD-BALANCER-SOURCE-CIDR 203.0.113.10,tcp:443,198.51.100.0/24',
      'KUBE-LOAD-BALANCER-SOURCE-CIDR 203.0.113.10,tcp:443,192.0.2.7',
    ]);
  });

  it('externalIP with externalTrafficPolicy Local joins the ClusterIP whose real servers include its local ones', () => {
    const ext = byId(r, '10.96.100.3:80/tcp');
    expect(ext).toMatchObject({ externalIPs: ['192.0.2.50'], externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Cluster', state: 'healthy', problems: [] });
    expect(eps(ext)).toEqual(['10.244.1.6:80 p=0.500 local=true', '10.244.3.9:80 p=0.500 local=false']);
    expect(ext.evidence).toContainEqual(expect.objectContaining({ where: 'KUBE-EXTERNAL-IP-LOCAL', text: '192.0.2.50,tcp:80' }));
  });

  it('NodePort Local without a local real server → no-local-endpoints (grouped by set comment)', () => {
    const sec = byId(r, 'default/secure:https/tcp');
    expect(sec).toMatchObject({ nodePort: 31443, externalTrafficPolicy: 'Local', state: 'no-local-endpoints', identifiedBy: 'set-comment' });
    expect(eps(sec)).toEqual(['10.244.2.8:8443 p=1.000 local=false']);
    expect(texts(sec.problems)).toEqual(['externalTrafficPolicy Local and no local real server behind TCP/10.244.1.1:31443, TCP/192.168.1.10:31443']);
  });

  it('SCTP NodePort from KUBE-NODE-PORT-SCTP-HASH', () => {
    const sctp = byId(r, '10.96.100.5:3868/sctp');
    expect(sctp).toMatchObject({ protocol: 'sctp', port: 3868, nodePort: 32000, state: 'healthy' });
    expect(sctp.evidence).toContainEqual(expect.objectContaining({ where: 'KUBE-NODE-PORT-SCTP-HASH', text: '192.168.1.10,sctp:32000' }));
  });

  it('no real servers → no-endpoints; all weights 0 → partial (draining); some weights 0 → probability 0', () => {
    expect(byId(r, '10.96.100.6:80/tcp')).toMatchObject({ state: 'no-endpoints', endpoints: [] });
    const drain = byId(r, '10.96.100.7:80/tcp');
    expect(drain.state).toBe('partial');
    expect(texts(drain.problems)).toEqual(['all real servers have weight 0 (draining)']);
    expect(drain.endpoints.map((e) => [e.weight, e.probability])).toEqual([
      [0, 0],
      [0, 0],
    ]);
    const some = byId(r, '10.96.100.8:80/tcp');
    expect(some.state).toBe('healthy');
    expect(eps(some)).toEqual(['10.244.1.10:80 p=0.000 local=true', '10.244.2.10:80 p=1.000 local=false']);
    expect(texts(some.problems)).toEqual(['1 of 2 real servers have weight 0 (draining: no new connections)']);
  });

  it('others: ipsets and chains with their owners; iptables-mode KUBE-SVC chains and built-ins are not listed', () => {
    const o = r.others.map((x) => `${x.kind} ${x.table ?? '-'} ${x.name} ${x.owner}`);
    expect(o).toContain('ipset - KUBE-CLUSTER-IP kube-proxy');
    expect(o).toContain('ipset - cali40all-ipam-pools calico');
    expect(o.filter((x) => x.startsWith('chain'))).toEqual([
      'chain filter CILIUM_INPUT cilium',
      'chain filter DOCKER docker',
      'chain filter KUBE-FORWARD kube-proxy',
      'chain filter KUBE-NODE-PORT kube-proxy',
      'chain filter cali-INPUT calico',
      'chain filter my-firewall unknown',
      'chain nat FLANNEL-POSTRTG flannel',
      'chain nat KIND-MASQ-AGENT kind',
      'chain nat KUBE-MARK-MASQ kube-proxy',
      'chain nat KUBE-NODE-PORT kube-proxy',
      'chain nat KUBE-POSTROUTING kube-proxy',
      'chain nat KUBE-SERVICES kube-proxy',
    ]);
    expect(r.others.filter((x) => x.kind === 'ipset')).toHaveLength(16);
    const chain = r.others.find((x) => x.name === 'DOCKER')!;
    expect(chain.line).toBe(lineOf(join(dir, 'iptables-save.txt'), ':DOCKER'));
  });
});

describe('resolveIpvs: consistency problems (fixtures/ipvs-mode/problems, hand-made)', () => {
  let r: Resolution;
  const dir = fixture('problems');
  const ipvsFile = join(dir, 'ipvsadm-Ln.txt');
  const ipsetFile = join(dir, 'ipset-list.txt');
  beforeAll(async () => {
    r = resolveIpvs(await loadSnapshot([dir]));
  });

  it('a virtual server in no ipset and not on kube-ipvs0', () => {
    const stale = byId(r, '10.96.200.1:80/tcp');
    expect(texts(stale.problems)).toEqual([
      'virtual server TCP/10.96.200.1:80 has no entry in KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP or KUBE-LOAD-BALANCER: kube-proxy did not create it or has since forgotten it (stale)',
      'VIP 10.96.200.1 of virtual server TCP/10.96.200.1:80 is not bound on kube-ipvs0: packets to it are not delivered locally, so IPVS never sees them',
    ]);
    const line = lineOf(ipvsFile, 'TCP  10.96.200.1:80');
    for (const m of texts(stale.problems)) {
      expect(messages(r.problems)).toContainEqual({ message: m, evidence: [{ file: ipvsFile, line, text: 'TCP  10.96.200.1:80 rr', where: 'TCP/10.96.200.1:80' }] });
    }
  });

  it('set entries and kube-ipvs0 addresses without a virtual server, fwmark services', () => {
    const msgs = messages(r.problems).map((p) => p.message);
    expect(msgs).toContain('KUBE-CLUSTER-IP entry 10.96.200.2,tcp:80 has no virtual server: traffic to it is accepted by iptables but not load-balanced');
    expect(msgs).toContain('KUBE-NODE-PORT-TCP holds NodePort 30999 but no TCP virtual server listens on port 30999');
    expect(msgs).toContain('kube-ipvs0 holds 10.96.200.3 but no virtual server uses it: the node accepts packets for it and answers nothing (or a host process does)');
    expect(msgs).toContain('firewall-mark virtual server FWM/7 is not a kube-proxy Service (kube-proxy creates no fwmark services); not resolved');
    expect(msgs).toHaveLength(6);
    expect(messages(r.problems).find((p) => p.message.includes('10.96.200.2'))!.evidence).toEqual([
      { file: ipsetFile, line: lineOf(ipsetFile, '10.96.200.2,tcp:80'), text: '10.96.200.2,tcp:80', where: 'KUBE-CLUSTER-IP' },
    ]);
    expect(messages(r.problems).find((p) => p.message.includes('30999'))!.evidence[0]).toMatchObject({ line: lineOf(ipsetFile, '30999'), where: 'KUBE-NODE-PORT-TCP' });
    expect(messages(r.problems).find((p) => p.message.includes('10.96.200.3'))!.evidence[0]).toMatchObject({ text: 'inet 10.96.200.3/32 scope global kube-ipvs0', where: 'kube-ipvs0' });
    expect(r.others).toContainEqual({ kind: 'virtual-server', name: 'FWM/7', owner: 'unknown', file: ipvsFile, line: lineOf(ipvsFile, 'FWM  7') });
    expect(r.services.some((s) => s.id.includes('FWM'))).toBe(false);
  });

  it('a NodePort whose real servers match two ClusterIPs stays on its own, with the candidates', () => {
    const np = byId(r, '*:30555/tcp');
    expect(np).toMatchObject({ clusterIP: null, nodePort: 30555, port: 0, identifiedBy: 'address', state: 'healthy' });
    expect(texts(np.problems)[0]).toBe('NodePort 30555/tcp could belong to 2 ClusterIP virtual servers with the same real servers (TCP/10.96.201.1:80, TCP/10.96.201.2:80); shown on its own');
    expect(byId(r, '10.96.201.1:80/tcp').nodePort).toBeNull();
    expect(byId(r, '10.96.201.2:80/tcp').nodePort).toBeNull();
  });

  it('IPv6: KUBE-6-CLUSTER-IP, bracketed ids', () => {
    const v6 = byId(r, '[fd00:10:96::a]:53/tcp');
    expect(v6).toMatchObject({ family: 6, clusterIP: 'fd00:10:96::a', port: 53, problems: [] });
    expect(eps(v6)).toEqual(['fd00:10:244:1::5:53 p=1.000 local=null']);
    expect(v6.evidence).toContainEqual(expect.objectContaining({ where: 'KUBE-6-CLUSTER-IP', text: 'fd00:10:96::a,tcp:53' }));
  });
});

describe('resolveIpvs: without ipsets or ip addr (fixtures/ipvs-mode/inferred, hand-made)', () => {
  let r: Resolution;
  beforeAll(async () => {
    r = resolveIpvs(await loadSnapshot([fixture('inferred')]));
  });

  it('NodePorts by the default range; internal and external Local policies inferred from real-server subsets', () => {
    expect(r.services.map((s) => s.id)).toEqual(['10.96.50.1:80/tcp', '10.96.50.2:80/tcp']);
    const a = byId(r, '10.96.50.1:80/tcp');
    expect(a).toMatchObject({ nodePort: 30001, internalTrafficPolicy: 'Local', externalTrafficPolicy: 'Cluster', state: 'healthy' });
    // Cluster-policy endpoints come from the NodePort (the ClusterIP only has the local one).
    expect(eps(a)).toEqual(['10.244.1.5:80 p=0.500 local=null', '10.244.2.5:80 p=0.500 local=null']);
    expect(texts(a.problems)).toEqual(['internalTrafficPolicy Local inferred: TCP/10.96.50.1:80 has fewer real servers than TCP/192.168.1.10:30001']);
    const b = byId(r, '10.96.50.2:80/tcp');
    expect(b).toMatchObject({ nodePort: 30002, internalTrafficPolicy: 'Cluster', externalTrafficPolicy: 'Local', state: 'healthy' });
    expect(eps(b)).toEqual(['10.244.1.6:80 p=0.500 local=null', '10.244.2.6:80 p=0.500 local=null']);
    expect(texts(b.problems)).toEqual(['externalTrafficPolicy Local inferred: the external virtual servers have only some of the ClusterIP real servers (no -LOCAL ipset in the dumps)']);
    expect(r.problems).toEqual([]);
  });
});

describe('helpers', () => {
  it('parseServicePortComment', () => {
    expect(parseServicePortComment('kube-system/kube-dns:dns')).toEqual({ namespace: 'kube-system', name: 'kube-dns', portName: 'dns' });
    expect(parseServicePortComment('default/web')).toEqual({ namespace: 'default', name: 'web', portName: null });
    expect(parseServicePortComment('Kubernetes service cluster ip + port for masquerade purpose')).toBeUndefined();
    expect(parseServicePortComment(undefined)).toBeUndefined();
  });
  it('chainOwner (the one ownership module) names ipsets and chains of every agent', () => {
    expect(['KUBE-LOOP-BACK', 'cali-FORWARD', 'CILIUM_FORWARD', 'DOCKER-USER', 'KIND-MASQ-AGENT', 'FLANNEL-FWD', 'kube-router-service-ips', 'f2b-sshd'].map(chainOwner)).toEqual([
      'kube-proxy',
      'calico',
      'cilium',
      'docker',
      'kind',
      'flannel',
      'kube-router',
      'fail2ban',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Generated clusters (src/generate) against their ground truth

const hp = (ip: string, port: number, proto: string) => `${ip.includes(':') ? `[${ip}]` : ip}:${port}/${proto}`;
const epKeys = (list: readonly { ip: string; port: number | null }[]) => list.map((e) => hp(e.ip, e.port ?? 0, '')).sort();

describe.each([
  { family: 4 as const, cni: 'flannel' as const, seed: 11 },
  { family: 6 as const, cni: 'calico' as const, seed: 12 },
])('resolveIpvs on a generated IPVS-mode node (IPv$family, $cni)', ({ family, cni, seed }) => {
  let dir: string;
  let r: Resolution;
  let truth: TruthService[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kpx-ipvs-'));
    const cluster = generateCluster({ seed, services: 60, nodes: 3, family, cni });
    writeBundle(cluster, 'ipvs', dir);
    truth = JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')).services;
    const snap = await loadSnapshot([dir]);
    r = resolveIpvs(snap);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Which truth Service ports the dumps can pin down: in IPVS mode nothing names a Service, so an
   * external virtual server (NodePort, externalIP, LB) can only be tied to its ClusterIP through
   * the real servers. That works when this Service port's endpoints are not shared with another
   * Service port of the same protocol, and when its ClusterIP virtual server shows the endpoints
   * (internalTrafficPolicy Local hides the remote ones), and when the external virtual servers are not
   * empty.
   */
  function determinable(t: TruthService): boolean {
    if (t.endpoints.length === 0) return false;
    if (t.internalTrafficPolicy === 'Local') return false;
    const external = t.nodePort !== null || t.externalIPs.length > 0 || t.loadBalancerIPs.length > 0;
    // Local policy and no local endpoint: the external virtual servers are empty, like those of any Service without endpoints.
    if (external && t.externalTrafficPolicy === 'Local' && !t.endpoints.some((e) => e.local)) return false;
    const mine = new Set(epKeys(t.endpoints));
    return !truth.some((u) => u !== t && u.protocol === t.protocol && epKeys(u.endpoints).some((k) => mine.has(k)));
  }

  it('writes consistent dumps: no resolution problems, every ClusterIP resolved once', () => {
    expect(r.problems).toEqual([]);
    const ids = r.services.filter((s) => s.clusterIP).map((s) => hp(s.clusterIP!, s.port, s.protocol!));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(truth.map((t) => hp(t.clusterIP, t.port, t.protocol)).sort());
    expect(r.services.every((s) => s.family === family && s.mode === 'ipvs')).toBe(true);
  });

  it('matches the truth exactly on every determinable Service port', () => {
    const mine = new Map(r.services.filter((s) => s.clusterIP).map((s) => [hp(s.clusterIP!, s.port, s.protocol!), s]));
    const pick = (x: TruthService | ServicePort) => ({
      protocol: x.protocol,
      port: x.port,
      nodePort: x.nodePort,
      externalIPs: [...x.externalIPs].sort(),
      loadBalancerIPs: [...x.loadBalancerIPs].sort(),
      loadBalancerSourceRanges: x.loadBalancerSourceRanges,
      externalTrafficPolicy: x.externalTrafficPolicy,
      internalTrafficPolicy: x.internalTrafficPolicy,
      sessionAffinity: x.sessionAffinity,
      state: x.state,
      endpoints: x.endpoints.map((e) => `${hp(e.ip, e.port ?? 0, '')} ${e.probability!.toFixed(6)} ${e.local}`).sort(),
    });
    const checked = truth.filter(determinable);
    expect(checked.length).toBeGreaterThan(truth.length / 2);
    for (const t of checked) expect(pick(mine.get(hp(t.clusterIP, t.port, t.protocol))!), `${t.namespace}/${t.name}:${t.portName}`).toEqual(pick(t));
  });

  it('never attaches an external address to the wrong Service; the others are shown on their own with the reason', () => {
    const mine = new Map(r.services.filter((s) => s.clusterIP).map((s) => [hp(s.clusterIP!, s.port, s.protocol!), s]));
    for (const t of truth) {
      const s = mine.get(hp(t.clusterIP, t.port, t.protocol))!;
      // What is attached is right…
      if (s.nodePort !== null) expect(s.nodePort).toBe(t.nodePort);
      for (const ip of s.externalIPs) expect(t.externalIPs).toContain(ip);
      for (const ip of s.loadBalancerIPs) expect(t.loadBalancerIPs).toContain(ip);
      // …and what is not attached is reported as a Service port of its own, with the reason.
      const standalone = (pred: (x: ServicePort) => boolean) => r.services.filter((x) => x.clusterIP === null && x.protocol === t.protocol && pred(x));
      if (t.nodePort !== null && s.nodePort === null) {
        const alone = standalone((x) => x.nodePort === t.nodePort);
        expect(alone, `NodePort ${t.nodePort}`).toHaveLength(1);
        expect(texts(alone[0].problems)[0]).toMatch(/^NodePort \d+\/\w+ (could belong to \d+ ClusterIP virtual servers|: no ClusterIP)/);
      }
      for (const ip of t.externalIPs.filter((x) => !s.externalIPs.includes(x))) {
        expect(standalone((x) => x.externalIPs.includes(ip) && x.port === t.port), `externalIP ${ip}`).toHaveLength(1);
      }
      for (const ip of t.loadBalancerIPs.filter((x) => !s.loadBalancerIPs.includes(x))) {
        expect(standalone((x) => x.loadBalancerIPs.includes(ip) && x.port === t.port), `LB ${ip}`).toHaveLength(1);
      }
    }
  });

  it('internalTrafficPolicy Local without external access: the ClusterIP shows exactly the local endpoints', () => {
    const mine = new Map(r.services.filter((s) => s.clusterIP).map((s) => [hp(s.clusterIP!, s.port, s.protocol!), s]));
    const internal = truth.filter((t) => t.internalTrafficPolicy === 'Local' && t.nodePort === null && t.externalIPs.length === 0 && t.loadBalancerIPs.length === 0);
    expect(internal.length).toBeGreaterThan(0);
    for (const t of internal) {
      const s = mine.get(hp(t.clusterIP, t.port, t.protocol))!;
      const local = t.endpoints.filter((e) => e.local);
      expect(epKeys(s.endpoints)).toEqual(epKeys(local));
      expect(s.endpoints.every((e) => e.local === true && Math.abs(e.probability! - 1 / local.length) < 1e-9)).toBe(true);
      expect(s.state).toBe(local.length ? 'healthy' : 'no-endpoints');
    }
  });
});
