/**
 * ipvsadm samples from the wild (../shared/corpus/ipvs/*.ipvs, read in place; each has a
 * .source file telling where it comes from and how complete it is).
 */
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ipvsadmParser } from '../../src/extract/ipvsadm.js';
import { ipvsadmSniffer } from '../../grammars/ipvsadm/sniff.js';
import { realServerShares, virtualServerKey, type IpvsDump, type VirtualServer } from '../../src/model/ipvs.js';
import { splitInput } from '../../grammars/common/text.js';
import { corpusFiles, readCorpus } from '../helpers/corpus.js';

const files = corpusFiles(/^ipvs\/.*\.ipvs$/);
const parsed = new Map(files.map((f) => [basename(f), ipvsadmParser.parse(readCorpus(f), f)]));
const dump = (name: string): IpvsDump => {
  const r = parsed.get(name);
  if (!r) throw new Error(`corpus sample ${name} missing`);
  return r.data;
};
const byKey = (d: IpvsDump, key: string): VirtualServer => {
  const vs = d.virtualServers.find((v) => virtualServerKey(v) === key);
  if (!vs) throw new Error(`no ${key}`);
  return vs;
};
const rsList = (vs: VirtualServer) => vs.realServers.map((r) => `${r.address}:${r.port} ${r.forward} w${r.weight} ${r.activeConn}/${r.inactiveConn}`);

describe('ipvs corpus', () => {
  it('has the expected samples', () => {
    expect(files.length).toBeGreaterThanOrEqual(7);
  });

  it.each(files.map((f) => [basename(f), f]))('%s: sniffed, parsed without errors or warnings', (name, f) => {
    const r = parsed.get(name)!;
    expect(ipvsadmSniffer.sniff(splitInput(readCorpus(f)).lines.slice(0, 200))).toBe(1);
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(r.data.unsupported).toEqual([]);
    expect(r.data.version).toBe('1.2.1');
    expect(r.data.tableSize).toBe(4096);
  });

  it('kind-ipvs-coredns: kubernetes API and CoreDNS', () => {
    const d = dump('kind-ipvs-coredns.ipvs');
    expect(d.virtualServers.map(virtualServerKey)).toEqual(['TCP/10.96.0.1:443', 'TCP/10.96.0.10:53', 'TCP/10.96.0.10:9153', 'UDP/10.96.0.10:53']);
    expect(rsList(byKey(d, 'TCP/10.96.0.1:443'))).toEqual(['172.18.0.5:6443 Masq w1 3/0']);
    expect(rsList(byKey(d, 'UDP/10.96.0.10:53'))).toEqual(['10.244.0.2:53 Masq w1 0/0', '10.244.0.4:53 Masq w1 0/0']);
    expect(d.virtualServers.every((v) => v.scheduler === 'rr' && v.persistent === undefined)).toBe(true);
    expect(realServerShares(byKey(d, 'TCP/10.96.0.10:53')).map((s) => s.share)).toEqual([0.5, 0.5]);
  });

  it('centos-nodeport-multiaddr: NodePort on every local address, trailing fence as noise', () => {
    const r = parsed.get('centos-nodeport-multiaddr.ipvs')!;
    expect(r.counts).toEqual({ virtualServers: 10, realServers: 16 });
    const nodePorts = r.data.virtualServers.filter((v) => v.port === 32470).map((v) => v.address);
    expect(nodePorts).toEqual(['172.17.0.1', '172.18.0.1', '172.19.0.1', '192.168.5.100']);
    expect(rsList(byKey(r.data, 'TCP/192.168.5.100:32470'))).toEqual(['172.17.0.3:80 Masq w1 0/0', '172.17.0.4:80 Masq w1 0/0']);
    expect(rsList(byKey(r.data, 'TCP/10.96.0.1:443'))).toEqual(['192.168.5.100:8443 Masq w1 0/0']);
    expect(r.data.noise).toEqual([{ line: 30, text: '```', reason: 'noise: fence' }]);
  });

  it('k8s-81477-sctp-nodeport: SCTP services (one space after SCTP), trailing spaces', () => {
    const d = dump('k8s-81477-sctp-nodeport.ipvs');
    const sctp = d.virtualServers.filter((v) => v.protocol === 'SCTP');
    expect(sctp.map(virtualServerKey)).toEqual(['SCTP/10.0.2.15:31514', 'SCTP/10.103.164.9:1000']);
    expect(sctp[0]).toMatchObject({ scheduler: 'rr', line: 17, column: 1 });
    expect(sctp[0].realServers.map((r) => r.address)).toEqual(['20.20.195.135', '20.20.195.136', '20.20.195.137']);
    expect(sctp[1].realServers).toHaveLength(2);
    expect(rsList(byKey(d, 'TCP/10.96.232.136:6666'))).toEqual(['192.168.56.105:6666 Masq w1 5/0']);
  });

  it('k8s-87604-ipv6-only-brackets: IPv6 services and real servers', () => {
    const d = dump('k8s-87604-ipv6-only-brackets.ipvs');
    expect(d.virtualServers.map(virtualServerKey)).toEqual(['TCP/[fd20::1]:443', 'TCP/[fd20::a]:53', 'TCP/[fd20::a]:9153']);
    expect(d.virtualServers.every((v) => v.family === 6 && v.ip?.family === 6)).toBe(true);
    expect(d.virtualServers[0]).toMatchObject({ address: 'fd20::1', port: 443 });
    expect(d.virtualServers[0].realServers[0]).toMatchObject({ address: '2001:db8:0:f101::2', port: 6443, forward: 'Masq', weight: 1, activeConn: 5, inactiveConn: 0 });
    expect(d.virtualServers[1].realServers.map((r) => r.address)).toEqual(['fd20::7041', 'fd20::7042']);
  });

  it('keepalived-605-named-ports-route: -L names, Route, weight 0', () => {
    const d = dump('keepalived-605-named-ports-route.ipvs');
    expect(d.virtualServers).toHaveLength(1);
    const [vs] = d.virtualServers;
    expect(vs).toMatchObject({ protocol: 'TCP', address: '192.168.100.1', portName: 'http', port: 80, scheduler: 'lc' });
    expect(vs.realServers).toEqual([
      expect.objectContaining({ address: '192.168.2.2', portName: 'http', forward: 'Route', weight: 0, activeConn: 0, inactiveConn: 0 }),
      expect.objectContaining({ address: '192.168.2.254', portName: 'http', forward: 'Masq', weight: 1 }),
    ]);
    // the quiesced (weight 0) server gets no new connections
    expect(realServerShares(vs).map((s) => s.share)).toEqual([0, 1]);
  });

  it('kube-router-160-stats: --stats counters, no scheduler', () => {
    const d = dump('kube-router-160-stats.ipvs');
    expect(d.view).toBe('stats');
    const web = byKey(d, 'TCP/10.3.0.42:80');
    expect(web.scheduler).toBeUndefined();
    expect(web.stats).toEqual({ conns: 14209, inPkts: 111769, outPkts: 74613, inBytes: 7207174, outBytes: 8334358 });
    expect(web.realServers).toHaveLength(8);
    expect(web.realServers[0]).toMatchObject({ address: '10.2.1.22', port: 80, stats: { conns: 2, inPkts: 12, outPkts: 8, inBytes: 774, outBytes: 894 } });
    expect(web.realServers[7]).toMatchObject({ address: '10.2.1.29', stats: { conns: 3, outBytes: 1341 } });
    expect(byKey(d, 'TCP/10.3.0.1:443').stats).toEqual({ conns: 0, inPkts: 0, outPkts: 0, inBytes: 0, outBytes: 0 });
  });

  it('opsnull-251-persistent-10800: persistent kubernetes API service', () => {
    const d = dump('opsnull-251-persistent-10800.ipvs');
    const api = byKey(d, 'TCP/10.254.0.1:443');
    expect(api).toMatchObject({ scheduler: 'rr', persistent: 10800, line: 13 });
    expect(rsList(api)).toEqual(['172.16.16.81:6443 Masq w1 0/0', '172.16.16.82:6443 Masq w1 0/0']);
    expect(d.virtualServers.filter((v) => v.persistent !== undefined)).toHaveLength(1);
    expect(byKey(d, 'TCP/10.254.20.57:1').realServers.map((r) => r.port)).toEqual([1, 1]);
    expect(parsed.get('opsnull-251-persistent-10800.ipvs')!.counts).toEqual({ virtualServers: 7, realServers: 13 });
  });
});
