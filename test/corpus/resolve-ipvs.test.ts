/**
 * resolveIpvs over the real IPVS-mode samples in ../shared/corpus (read in place).
 * kind-ipvs-coredns.ipvs and kind-ipvs-kube-sets-elided.ipset come from the same kind node
 * (see their .source files): 4 ClusterIP virtual servers, KUBE-CLUSTER-IP with the same 4
 * entries, KUBE-LOOP-BACK entries for the two CoreDNS pods (both on this node).
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { corpusDir, corpusFiles } from '../helpers/corpus.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveIpvs } from '../../src/kube/resolve-ipvs.js';
import { virtualServerKey } from '../../src/model/ipvs.js';
import type { Resolution, ServicePort } from '../../src/kube/types.js';
import { problemText } from '../../src/render/problems.js';

const texts = (s: Pick<ServicePort, 'problems'>) => s.problems.map(problemText);

const ipvsFile = (name: string) => join(corpusDir(), 'ipvs', `${name}.ipvs`);
const ipsetFile = (name: string) => join(corpusDir(), 'ipset', `${name}.ipset`);
const lineOf = (file: string, text: string) => readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;
const eps = (s: ServicePort) => s.endpoints.map((e) => `${e.ip}:${e.port} p=${e.probability!.toFixed(3)} local=${e.local}`);
const summary = (s: ServicePort) => ({
  id: s.id,
  clusterIP: s.clusterIP,
  port: s.port,
  protocol: s.protocol,
  nodePort: s.nodePort,
  state: s.state,
  sessionAffinity: s.sessionAffinity,
  endpoints: eps(s),
});

describe('kind IPVS node: ipvsadm -ln + ipset list (same cluster)', () => {
  let r: Resolution;
  const ipvs = ipvsFile('kind-ipvs-coredns');
  const ipset = ipsetFile('kind-ipvs-kube-sets-elided');
  beforeAll(async () => {
    r = resolveIpvs(await loadSnapshot([ipvs, ipset]));
  });

  it('resolves the four Service ports with their endpoints', () => {
    expect(r.services.map(summary)).toEqual([
      { id: '10.96.0.10:53/tcp', clusterIP: '10.96.0.10', port: 53, protocol: 'tcp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['10.244.0.2:53 p=0.500 local=true', '10.244.0.4:53 p=0.500 local=true'] },
      { id: '10.96.0.1:443/tcp', clusterIP: '10.96.0.1', port: 443, protocol: 'tcp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['172.18.0.5:6443 p=1.000 local=null'] },
      { id: '10.96.0.10:9153/tcp', clusterIP: '10.96.0.10', port: 9153, protocol: 'tcp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['10.244.0.2:9153 p=0.500 local=true', '10.244.0.4:9153 p=0.500 local=true'] },
      { id: '10.96.0.10:53/udp', clusterIP: '10.96.0.10', port: 53, protocol: 'udp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['10.244.0.2:53 p=0.500 local=true', '10.244.0.4:53 p=0.500 local=true'] },
    ]);
    expect(r.services.every((s) => s.identifiedBy === 'address' && s.namespace === null && s.mode === 'ipvs' && s.problems.length === 0)).toBe(true);
    // Every KUBE-CLUSTER-IP entry has its virtual server, so nothing is inconsistent.
    expect(r.problems).toEqual([]);
  });

  it('cites the virtual server, the KUBE-CLUSTER-IP member and the KUBE-LOOP-BACK member', () => {
    const dnsUdp = r.services.find((s) => s.id === '10.96.0.10:53/udp')!;
    expect(dnsUdp.evidence).toEqual([
      { file: ipvs, line: lineOf(ipvs, 'UDP  10.96.0.10:53'), text: 'UDP  10.96.0.10:53 rr', where: 'UDP/10.96.0.10:53' },
      { file: ipset, line: lineOf(ipset, '10.96.0.10,udp:53'), text: '10.96.0.10,udp:53', where: 'KUBE-CLUSTER-IP' },
    ]);
    expect(dnsUdp.endpoints[1].evidence).toEqual([
      { file: ipvs, line: lineOf(ipvs, 'UDP  10.96.0.10:53') + 2, text: expect.stringMatching(/^ {2}-> 10\.244\.0\.4:53 +Masq 1 0 0$/), where: 'UDP/10.96.0.10:53' },
      { file: ipset, line: lineOf(ipset, '10.244.0.4,udp:53,10.244.0.4'), text: '10.244.0.4,udp:53,10.244.0.4', where: 'KUBE-LOOP-BACK' },
    ]);
    expect(dnsUdp.endpoints[1]).toMatchObject({ weight: 1, via: 'UDP/10.96.0.10:53 -> 10.244.0.4:53' });
  });

  it('lists the dumped sets as kube-proxy infrastructure', () => {
    expect(r.others).toEqual(
      ['KUBE-LOOP-BACK', 'KUBE-LOAD-BALANCER', 'KUBE-NODE-PORT-LOCAL-SCTP-HASH', 'KUBE-CLUSTER-IP'].map((name) => ({ kind: 'ipset', name, owner: 'kube-proxy', file: ipset, line: lineOf(ipset, `Name: ${name}`) })),
    );
  });
});

describe('other IPVS samples (ipvsadm only)', () => {
  it('opsnull: persistent 10800 → sessionAffinity; NodePorts recognised on the flannel/cni addresses', async () => {
    const r = resolveIpvs(await loadSnapshot([ipvsFile('opsnull-251-persistent-10800')]));
    const api = r.services.find((s) => s.clusterIP === '10.254.0.1')!;
    expect(summary(api)).toEqual({
      id: '10.254.0.1:443/tcp',
      clusterIP: '10.254.0.1',
      port: 443,
      protocol: 'tcp',
      nodePort: null,
      state: 'healthy',
      sessionAffinity: { timeoutSeconds: 10800 },
      endpoints: ['172.16.16.81:6443 p=0.500 local=null', '172.16.16.82:6443 p=0.500 local=null'],
    });
    // NodePort 32767 on 10.253.102.0 and .1 has the real servers of 10.254.9.36:443 only.
    const dash = r.services.find((s) => s.clusterIP === '10.254.9.36')!;
    expect(dash.nodePort).toBe(32767);
    expect(dash.chains).toEqual({ 'cluster-ip': 'TCP/10.254.9.36:443', 'node-port/10.253.102.0': 'TCP/10.253.102.0:32767', 'node-port/10.253.102.1': 'TCP/10.253.102.1:32767' });
    // NodePort 32429's ClusterIP virtual server is not in this fragment.
    const orphan = r.services.find((s) => s.id === '*:32429/tcp')!;
    expect(orphan).toMatchObject({ clusterIP: null, nodePort: 32429, port: 0 });
    expect(texts(orphan)[0]).toBe('NodePort 32429/tcp: no ClusterIP virtual server with matching real servers; shown on its own');
    expect(r.services.map((s) => s.id)).toEqual(['*:32429/tcp', '10.254.20.57:1/tcp', '10.254.0.2:53/tcp', '10.254.0.1:443/tcp', '10.254.9.36:443/tcp']);
  });

  it('centos: a NodePort on four addresses whose real servers match two ClusterIPs stays on its own', async () => {
    const r = resolveIpvs(await loadSnapshot([ipvsFile('centos-nodeport-multiaddr')]));
    const np = r.services.find((s) => s.nodePort === 32470)!;
    expect(np.clusterIP).toBeNull();
    expect(Object.keys(np.chains)).toEqual(['node-port/172.17.0.1', 'node-port/172.18.0.1', 'node-port/172.19.0.1', 'node-port/192.168.5.100']);
    expect(texts(np)[0]).toBe('NodePort 32470/tcp could belong to 2 ClusterIP virtual servers with the same real servers (TCP/10.104.59.61:80, TCP/10.105.243.201:80); shown on its own');
    expect(eps(np)).toEqual(['172.17.0.3:80 p=0.500 local=null', '172.17.0.4:80 p=0.500 local=null']);
    expect(r.services.filter((s) => s.clusterIP !== null).map((s) => s.id).sort()).toEqual(
      ['10.104.59.61:80/tcp', '10.105.243.201:80/tcp', '10.96.0.1:443/tcp', '10.96.0.10:53/tcp', '10.96.0.10:53/udp', '10.96.0.10:9153/tcp'].sort(),
    );
  });

  it('k8s-81477: SCTP NodePort 31514 joins SCTP 10.103.164.9:1000 (the fragment cut one real server of the ClusterIP)', async () => {
    const r = resolveIpvs(await loadSnapshot([ipvsFile('k8s-81477-sctp-nodeport')]));
    const sctp = r.services.find((s) => s.protocol === 'sctp')!;
    expect(sctp).toMatchObject({ clusterIP: '10.103.164.9', port: 1000, nodePort: 31514, internalTrafficPolicy: 'Local' });
    expect(eps(sctp)).toEqual(['20.20.195.135:1000 p=0.333 local=null', '20.20.195.136:1000 p=0.333 local=null', '20.20.195.137:1000 p=0.333 local=null']);
    expect(texts(sctp)).toEqual(['internalTrafficPolicy Local inferred: SCTP/10.103.164.9:1000 has fewer real servers than SCTP/10.0.2.15:31514']);
    expect(r.services).toHaveLength(6);
  });

  it('k8s-87604: IPv6 virtual servers', async () => {
    const r = resolveIpvs(await loadSnapshot([ipvsFile('k8s-87604-ipv6-only-brackets')]));
    expect(r.services.map(summary)).toEqual([
      { id: '[fd20::a]:53/tcp', clusterIP: 'fd20::a', port: 53, protocol: 'tcp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['fd20::7041:53 p=0.500 local=null', 'fd20::7042:53 p=0.500 local=null'] },
      { id: '[fd20::1]:443/tcp', clusterIP: 'fd20::1', port: 443, protocol: 'tcp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['2001:db8:0:f101::2:6443 p=1.000 local=null'] },
      { id: '[fd20::a]:9153/tcp', clusterIP: 'fd20::a', port: 9153, protocol: 'tcp', nodePort: null, state: 'healthy', sessionAffinity: null, endpoints: ['fd20::7041:9153 p=1.000 local=null'] },
    ]);
    expect(r.services.every((s) => s.family === 6)).toBe(true);
  });

  it('kube-router --stats listing (no weights printed): equal shares', async () => {
    const r = resolveIpvs(await loadSnapshot([ipvsFile('kube-router-160-stats')]));
    const big = r.services.find((s) => s.clusterIP === '10.3.0.42')!;
    expect(big.endpoints).toHaveLength(8);
    expect(big.endpoints.every((e) => e.probability === 0.125 && e.weight === undefined)).toBe(true);
    expect(big.state).toBe('healthy');
  });

  it('keepalived: a quiesced (weight 0) real server gets no new connections', async () => {
    const r = resolveIpvs(await loadSnapshot([ipvsFile('keepalived-605-named-ports-route')]));
    expect(r.services).toHaveLength(1);
    expect(eps(r.services[0])).toEqual(['192.168.2.2:80 p=0.000 local=null', '192.168.2.254:80 p=1.000 local=null']);
    expect(texts(r.services[0])).toEqual(['1 of 2 real servers have weight 0 (draining: no new connections)']);
  });

  it('kube-router ipsets are attributed to kube-router', async () => {
    const r = resolveIpvs(await loadSnapshot([ipsetFile('kube-router-618-timeout0-redacted')]));
    expect(r.services).toEqual([]);
    expect(r.others.map((o) => `${o.name} ${o.owner}`)).toEqual(['kube-router-local-ips kube-router', 'kube-router-service-ips kube-router', 'kube-router-ipvs-services kube-router']);
  });

  it.each(corpusFiles(/^ipvs\/.*\.ipvs$/))('%s: every virtual server is accounted for, shares sum to 1', async (file) => {
    const snap = await loadSnapshot([file]);
    const r = resolveIpvs(snap);
    const used = new Set([...r.services.flatMap((s) => Object.values(s.chains)), ...r.others.filter((o) => o.kind === 'virtual-server').map((o) => o.name)]);
    for (const vs of snap.ipvs.flatMap((d) => d.virtualServers)) expect(used, virtualServerKey(vs)).toContain(virtualServerKey(vs));
    for (const s of r.services) {
      const sum = s.endpoints.reduce((a, e) => a + e.probability!, 0);
      if (s.state === 'healthy') expect(sum).toBeCloseTo(1, 9);
      for (const e of s.endpoints) expect(e.evidence.length).toBeGreaterThan(0);
      expect(s.evidence.length).toBeGreaterThan(0);
    }
  });
});
