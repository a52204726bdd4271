import { describe, expect, it } from 'vitest';
import { sysctlParser } from '../../src/extract/sysctl.js';
import { checkKubeProxySysctls, effectiveConf, kubeProxySysctls } from '../../src/model/sysctl.js';

const DUMP = `net.bridge.bridge-nf-call-ip6tables = 1
net.bridge.bridge-nf-call-iptables = 1
net.ipv4.conf.all.arp_announce = 2
net.ipv4.conf.all.arp_ignore = 1
net.ipv4.conf.all.rp_filter = 0
net.ipv4.conf.all.route_localnet = 1
net.ipv4.conf.default.rp_filter = 1
net.ipv4.conf.eth0.rp_filter = 2
net.ipv4.conf.flannel/1.rp_filter = 1
net.ipv4.conf.kube-ipvs0.arp_ignore = 0
net.ipv4.ip_forward = 1
net.ipv4.vs.conn_reuse_mode = 0
net.ipv4.vs.conntrack = 1
net.ipv4.vs.expire_nodest_conn = 0
net.ipv4.vs.expire_quiescent_template = 1
net.ipv6.conf.all.forwarding = 1
`;

describe('kube-proxy sysctls', () => {
  const dump = sysctlParser.parse(DUMP, 's.txt').data;
  it('gives a typed view', () => {
    expect(kubeProxySysctls(dump)).toEqual({
      ipvsConntrack: 1,
      connReuseMode: 0,
      expireNodestConn: 0,
      expireQuiescentTemplate: 1,
      ipForward: 1,
      ipv6Forwarding: 1,
      bridgeNfCallIptables: 1,
      bridgeNfCallIp6tables: 1,
      arpIgnore: { all: 1, perInterface: { 'kube-ipvs0': 0 } },
      arpAnnounce: { all: 2, perInterface: {} },
      rpFilter: { all: 0, default: 1, perInterface: { eth0: 2, 'flannel.1': 1 } },
      routeLocalnet: { all: 1, perInterface: {} },
    });
  });
  it('computes effective per-interface values like the kernel (max / or)', () => {
    const v = kubeProxySysctls(dump);
    expect(effectiveConf(v.rpFilter, 'rp_filter', 'eth0')).toBe(2);
    expect(effectiveConf(v.rpFilter, 'rp_filter', 'cni0')).toBe(0);
    expect(effectiveConf(v.arpIgnore, 'arp_ignore', 'kube-ipvs0')).toBe(1);
    expect(effectiveConf(v.routeLocalnet, 'route_localnet', 'eth0')).toBe(1);
    expect(effectiveConf({ perInterface: {} }, 'rp_filter', 'eth0')).toBeUndefined();
  });
  it('reports what kube-proxy would not like', () => {
    expect(checkKubeProxySysctls(dump, 'iptables')).toEqual([]);
    const ipvs = checkKubeProxySysctls(dump, 'ipvs');
    expect(ipvs.map((f) => [f.key, f.actual, f.expected])).toEqual([
      ['net.ipv4.vs.expire_nodest_conn', '0', '1'],
      ['net.ipv4.vs.conn_reuse_mode', '0', '1'],
    ]);
    const empty = sysctlParser.parse('kernel.hostname = n1\n', 'e.txt').data;
    expect(checkKubeProxySysctls(empty, 'iptables')).toEqual([]);
    // ip_forward and bridge-nf-call-iptables are read per interface by src/model/switches.ts (lint kernel-*), not here.
    expect(checkKubeProxySysctls(empty, 'iptables', true)).toEqual([]);
    expect(checkKubeProxySysctls(empty, 'ipvs', true).map((f) => f.key)).toContain('net.ipv4.vs.conntrack');
  });
});
