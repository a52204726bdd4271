import { describe, expect, it } from 'vitest';
import { ipAddrJsonParser, ipAddrParser } from '../../src/extract/ipaddr.js';

const parse = (t: string) => ipAddrParser.parse(t, 'a.txt');
const nonInfo = (r: ReturnType<typeof parse>) => r.diagnostics.filter((d) => d.severity !== 'info');

// A Calico/flannel node as `ip addr` prints it, pasted with a prompt, CRLF and markdown indentation.
const NODE = [
  '$ ip addr',
  '  1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000',
  '      link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00',
  '      inet 127.0.0.1/8 scope host lo',
  '         valid_lft forever preferred_lft forever',
  '  2: ens5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP group default qlen 1000',
  '      link/ether 02:4a:9c:1d:2e:3f brd ff:ff:ff:ff:ff:ff',
  '      altname enp0s5',
  '      inet 172.31.5.196/20 metric 100 brd 172.31.15.255 scope global dynamic ens5',
  '         valid_lft 3010sec preferred_lft 3010sec',
  '      inet6 fe80::4a:9cff:fe1d:2e3f/64 scope link ',
  '         valid_lft forever preferred_lft forever',
  '  5: cali5ce32826680@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1440 qdisc noqueue state UP group default ',
  '      link/ether ee:ee:ee:ee:ee:ee brd ff:ff:ff:ff:ff:ff link-netns cni-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab',
  '  6: tunl0@NONE: <NOARP,UP,LOWER_UP> mtu 1480 qdisc noqueue state UNKNOWN group default qlen 1000',
  '      link/ipip 0.0.0.0 brd 0.0.0.0',
  '      inet 172.27.198.192/32 scope global tunl0',
  '         valid_lft forever preferred_lft forever',
  '  7: kube-ipvs0: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default ',
  '      link/ether 7a:1b:2c:3d:4e:5f brd ff:ff:ff:ff:ff:ff',
  '      inet 10.96.0.1/32 scope global kube-ipvs0',
  '         valid_lft forever preferred_lft forever',
  '      inet 10.96.0.10/32 scope global kube-ipvs0',
  '         valid_lft forever preferred_lft forever',
  '  8: veth1a2b@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue master cni0 state UP group default ',
  '      link/ether 0a:0b:0c:0d:0e:0f brd ff:ff:ff:ff:ff:ff link-netnsid 0',
].join('\r\n');

describe('ip addr text', () => {
  it('reads blocks: header, link, altname, inet/inet6, lifetimes, @peer, master, link-netns', () => {
    const r = parse(NODE);
    expect(nonInfo(r)).toEqual([]);
    expect(r.counts).toEqual({ interfaces: 6, addresses: 6 });
    const [lo, ens5, cali, tunl, ipvs, veth] = r.data.interfaces;
    expect(lo).toMatchObject({ index: 1, name: 'lo', linkType: 'loopback', state: 'UNKNOWN', mtu: 65536, line: 2, file: 'a.txt' });
    expect(ens5).toMatchObject({ index: 2, name: 'ens5', mtu: 9001, qdisc: 'mq', mac: '02:4a:9c:1d:2e:3f', altnames: ['enp0s5'], flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'] });
    expect(ens5.addresses[0]).toMatchObject({ family: 4, address: '172.31.5.196', prefix: 20, brd: '172.31.15.255', scope: 'global', flags: ['dynamic'], label: 'ens5', validLft: '3010sec', line: 9 });
    expect(ens5.addresses[0].cidr.prefix).toBe(20);
    expect(ens5.addresses[1]).toMatchObject({ family: 6, address: 'fe80::4a:9cff:fe1d:2e3f', prefix: 64, scope: 'link', line: 11 });
    expect(ens5.addresses[1].label).toBeUndefined();
    expect(cali).toMatchObject({ name: 'cali5ce32826680', link: 'if3', linkNetns: 'cni-1b2c3d4e-aaaa-bbbb-cccc-0123456789ab', mtu: 1440 });
    expect(tunl).toMatchObject({ name: 'tunl0', link: 'NONE', linkType: 'ipip', extra: { linkAddress: '0.0.0.0', linkBrd: '0.0.0.0' } });
    expect(tunl.mac).toBeUndefined();
    expect(ipvs.addresses.map((a) => a.address)).toEqual(['10.96.0.1', '10.96.0.10']);
    expect(veth).toMatchObject({ master: 'cni0', linkNetnsId: 0, link: 'if2' });
    expect(r.data.unsupported.map((u) => [u.line, u.reason])).toEqual([[1, 'noise (prompt)']]);
  });

  it('reads ip -o addr with backslash joins, grouping lines by interface', () => {
    const r = parse(
      '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n' +
        '2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\\       valid_lft forever preferred_lft forever\n' +
        '2: eth0    inet 10.0.0.6/24 scope global secondary eth0:1\\       valid_lft forever preferred_lft forever\n' +
        '2: eth0    inet6 fd00::5/64 scope global nodad \\       valid_lft 100sec preferred_lft 50sec\n',
    );
    expect(nonInfo(r)).toEqual([]);
    expect(r.data.interfaces.map((i) => [i.index, i.name, i.addresses.length])).toEqual([
      [1, 'lo', 1],
      [2, 'eth0', 3],
    ]);
    expect(r.data.interfaces[1].addresses.map((a) => [a.address, a.label, a.flags, a.validLft, a.line])).toEqual([
      ['10.0.0.5', 'eth0', [], 'forever', 2],
      ['10.0.0.6', 'eth0:1', ['secondary'], 'forever', 3],
      ['fd00::5', undefined, ['nodad'], '100sec', 4],
    ]);
  });

  it('reads ip -o link records and ip -br addr rows', () => {
    const o = parse('1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n');
    expect(nonInfo(o)).toEqual([]);
    expect(o.data.interfaces[0]).toMatchObject({ name: 'lo', linkType: 'loopback', extra: { mode: 'DEFAULT' } });
    const br = parse('lo               UNKNOWN        127.0.0.1/8 ::1/128 \neth0@if9         UP             10.244.1.7/24 fe80::1/64 \nveth1@va         LOWERLAYERDOWN 10.1.1.1 peer 10.1.1.2/32 \ncni0             DOWN           \n');
    expect(nonInfo(br)).toEqual([]);
    expect(br.data.interfaces.map((i) => [i.name, i.link, i.state, i.addresses.map((a) => `${a.address}/${a.prefix}${a.peer ? ` peer ${a.peer}` : ''}`)])).toEqual([
      ['lo', undefined, 'UNKNOWN', ['127.0.0.1/8', '::1/128']],
      ['eth0', 'if9', 'UP', ['10.244.1.7/24', 'fe80::1/64']],
      ['veth1', 'va', 'LOWERLAYERDOWN', ['10.1.1.1/32 peer 10.1.1.2']],
      ['cni0', undefined, 'DOWN', []],
    ]);
  });

  it('reports errors with line and column and keeps going', () => {
    const r = parse('2: eth0: <UP> mtu 1500\n    inet 10.0.0.300/24 scope global eth0\n    inet 10.0.0.5/24 scope global eth0\n    inet\n');
    expect(r.data.interfaces[0].addresses.map((a) => a.address)).toEqual(['10.0.0.5']);
    expect(r.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.code, d.line, d.column])).toEqual([
      ['extract/bad-address', 2, 10],
      ['parse/unexpected-token', 4, 9],
    ]);
    const orphan = parse('    inet 10.0.0.5/24 scope global eth0\n');
    expect(orphan.diagnostics[0]).toMatchObject({ severity: 'error', code: 'ip-addr/no-interface', line: 1, column: 5 });
  });
});

describe('ip -j addr', () => {
  it('reads interfaces, addresses (peer, flags, lifetimes) and maps objects to lines', () => {
    const text = `[ {
        "ifindex": 3, "link": "vb", "ifname": "va", "flags": [ "BROADCAST","UP" ], "mtu": 1500, "qdisc": "noqueue",
        "operstate": "UP", "group": "default", "txqlen": 1000, "link_type": "ether", "address": "12:f0:37:2c:bb:78",
        "broadcast": "ff:ff:ff:ff:ff:ff", "altnames": [ "ens5x" ],
        "addr_info": [ { "family": "inet", "local": "10.1.1.1", "address": "10.1.1.2", "prefixlen": 32, "scope": "global", "label": "va",
                         "valid_life_time": 4294967295, "preferred_life_time": 4294967295 },
                       { "family": "inet6", "local": "2001:db8::5", "prefixlen": 64, "scope": "global", "nodad": true, "dynamic": true,
                         "valid_life_time": 100, "preferred_life_time": 50 } ]
    },{
        "ifindex": 4, "ifname": "vb", "link_index": 3, "link_netnsid": 0, "flags": [], "addr_info": [] } ]`;
    const r = ipAddrJsonParser.parse(text, 'a.json');
    expect(r.diagnostics).toEqual([]);
    expect(r.counts).toEqual({ interfaces: 2, addresses: 2 });
    const [va, vb] = r.data.interfaces;
    expect(va).toMatchObject({ index: 3, name: 'va', link: 'vb', state: 'UP', mtu: 1500, qlen: 1000, mac: '12:f0:37:2c:bb:78', altnames: ['ens5x'], line: 1 });
    expect(va.addresses[0]).toMatchObject({ address: '10.1.1.1', peer: '10.1.1.2', prefix: 32, validLft: 'forever', label: 'va' });
    expect(va.addresses[1]).toMatchObject({ address: '2001:db8::5', flags: ['nodad', 'dynamic'], validLft: '100sec', preferredLft: '50sec' });
    expect(vb).toMatchObject({ link: 'if3', linkNetnsId: 0, line: 9 });
  });
});
