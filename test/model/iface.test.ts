import { describe, expect, it } from 'vitest';
import { ipAddrParser } from '../../src/extract/ipaddr.js';
import { formatIp, parseIp } from '../../src/model/addr.js';
import { interfaceRole, interfaceWithAddress, isUp, localAddresses } from '../../src/model/iface.js';

describe('interfaceRole', () => {
  it.each([
    ['cali5ce32826680', 'pod-veth'],
    ['veth1a2b3c4d', 'pod-veth'],
    ['lxc8f2a1b3c4d5e', 'pod-veth'],
    ['lxc_health', 'other'],
    ['cni0', 'bridge'],
    ['docker0', 'bridge'],
    ['cbr0', 'bridge'],
    ['tunl0', 'tunnel'],
    ['flannel.1', 'tunnel'],
    ['vxlan.calico', 'tunnel'],
    ['cilium_vxlan', 'tunnel'],
    ['cilium_host', 'tunnel'],
    ['kube-ipvs0', 'ipvs-dummy'],
    ['lo', 'loopback'],
    ['eth0', 'physical'],
    ['ens5', 'physical'],
    ['enp0s3', 'physical'],
    ['bond0', 'physical'],
    ['wg0', 'other'],
  ])('%s → %s', (name, role) => {
    expect(interfaceRole(name)).toBe(role);
  });
});

describe('isUp / localAddresses / interfaceWithAddress', () => {
  const text = `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000
    inet 127.0.0.1/8 scope host lo
2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000
    inet 10.0.2.15/24 brd 10.0.2.255 scope global eth0
    inet6 fd00:1::15/64 scope global
3: kube-ipvs0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default
    inet 10.96.0.1/32 scope global kube-ipvs0
`;
  const ifs = ipAddrParser.parse(text, 'a.txt').data.interfaces;
  it('reads the UP flag (kube-ipvs0 is DOWN but its VIPs are still local)', () => {
    expect(ifs.map((i) => [i.name, isUp(i)])).toEqual([
      ['lo', true],
      ['eth0', true],
      ['kube-ipvs0', false],
    ]);
    expect(localAddresses(ifs).map(formatIp)).toEqual(['127.0.0.1', '10.0.2.15', 'fd00:1::15', '10.96.0.1']);
    expect(interfaceWithAddress(ifs, parseIp('10.96.0.1')!)?.name).toBe('kube-ipvs0');
    expect(interfaceWithAddress(ifs, parseIp('10.96.0.2')!)).toBeUndefined();
  });
  it('-br rows have no flags: state decides', () => {
    const br = ipAddrParser.parse('eth0 UP 10.0.0.1/24\nlo UNKNOWN 127.0.0.1/8\neth1 DOWN\n', 'b.txt').data.interfaces;
    expect(br.map(isUp)).toEqual([true, true, false]);
  });
});
