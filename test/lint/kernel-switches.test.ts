/**
 * The kernel-switch rules read the switches as the trace does (src/model/switches.ts): a finding
 * and the trace's fate rest on the same sysctl or link line.
 */
import { describe, expect, it } from 'vitest';
import { KIND, lintFiles, of, snapshotOf } from './helpers.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';

const ROUTES = `default via 172.18.0.1 dev eth0
10.244.0.0/24 dev cni0 proto kernel scope link src 10.244.0.1
10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink
172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.2
`;
const ADDR = `2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000
    link/ether 86:46:79:f7:5c:00 brd ff:ff:ff:ff:ff:ff
    inet 172.18.0.2/16 scope global eth0
3: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000
    link/ether ca:59:2f:10:80:ae brd ff:ff:ff:ff:ff:ff
    inet 10.244.0.1/24 scope global cni0
`;
const LINK = (tunnelMtu: number, hairpin: 'on' | 'off') => `2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000
    link/ether 86:46:79:f7:5c:00 brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535
    veth addrgenmode eui64
3: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000
    link/ether ca:59:2f:10:80:ae brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535
    bridge forward_delay 1500 stp_state 0 vlan_filtering 0 nf_call_iptables 0 nf_call_ip6tables 0
4: veth1@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master cni0 state UP mode DEFAULT group default qlen 1000
    link/ether fe:2c:4c:d5:77:c2 brd ff:ff:ff:ff:ff:ff link-netnsid 0 promiscuity 1  allmulti 1 minmtu 68 maxmtu 65535
    veth
    bridge_slave state forwarding priority 32 cost 2 hairpin ${hairpin} guard off learning on flood on
6: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ${tunnelMtu} qdisc noqueue state UNKNOWN mode DEFAULT group default
    link/ether 86:46:79:f7:5c:76 brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535
    vxlan id 1 local 172.18.0.2 dev eth0 srcport 0 0 dstport 8472 nolearning ttl auto ageing 300
`;
const SYSCTL = (fwd: 0 | 1, brnf: 0 | 1 | null, localnet: 0 | 1) =>
  [`net.ipv4.conf.all.route_localnet = ${localnet}`, `net.ipv4.ip_forward = ${fwd}`, ...(brnf === null ? [] : [`net.bridge.bridge-nf-call-iptables = ${brnf}`])].join('\n') + '\n';

describe('kernel switch rules', () => {
  it('kernel-forwarding-off: at the ip_forward line, the same line the trace drops the packet on', async () => {
    const files = { 'kind.txt': KIND, 'ip-route.txt': ROUTES, 'ip-addr.txt': ADDR, 'sysctl.txt': SYSCTL(0, 1, 1) };
    const f = of(await lintFiles(files), 'kernel-forwarding-off');
    expect(f.map((x) => [x.file.split('/').pop(), x.line, x.severity])).toEqual([['sysctl.txt', 2, 'error']]);
    expect(f[0].message).toMatch(/forwarding is off for traffic arriving on any interface \(net\.ipv4\.ip_forward = 0\)/);
    const snap = await snapshotOf(files);
    const t = tracePacket(snap, await resolveServices(snap), parseDestination('10.96.0.10:53/udp') as Destination, 'udp', { from: { ip: '172.18.0.9' }, assumptions: { established: false, affinityHit: false } });
    expect(t.outcomes.map((o) => [o.verdict, o.fate?.code, o.fate?.evidence.at(-1)?.line])).toEqual([['DROP', 'dropped-forwarding-off', 2]]);
    expect(of(await lintFiles({ ...files, 'sysctl.txt': SYSCTL(1, 1, 1) }), 'kernel-forwarding-off')).toEqual([]);
  });

  it('kernel-bridge-nf-off: bridge-nf-call-iptables = 0 with a bridge; silent at 1 and without a bridge', async () => {
    const files = { 'kind.txt': KIND, 'ip-addr.txt': ADDR, 'sysctl.txt': SYSCTL(1, 0, 1) };
    const f = of(await lintFiles(files), 'kernel-bridge-nf-off');
    expect(f.map((x) => [x.line, x.severity])).toEqual([[3, 'error']]);
    expect(f[0].message).toMatch(/bridge cni0/);
    expect(of(await lintFiles({ ...files, 'sysctl.txt': SYSCTL(1, 1, 1) }), 'kernel-bridge-nf-off')).toEqual([]);
    expect(of(await lintFiles({ ...files, 'ip-addr.txt': ADDR.split('3: cni0')[0] }), 'kernel-bridge-nf-off')).toEqual([]);
  });

  it('kernel-bridge-nf-off: a whole sysctl -a without net.bridge.* means br_netfilter is not loaded', async () => {
    const full = Array.from({ length: 60 }, (_, i) => `net.ipv4.conf.veth${i}.rp_filter = 0`).join('\n') + '\nnet.ipv4.ip_forward = 1\n';
    const f = of(await lintFiles({ 'kind.txt': KIND, 'ip-addr.txt': ADDR, 'sysctl.txt': full }), 'kernel-bridge-nf-off');
    expect(f).toHaveLength(1);
    expect(f[0].message).toMatch(/^br_netfilter is not loaded/);
  });

  it('kernel-hairpin-off and tunnel-mtu read ip -d link: the port with hairpin off, the tunnel with no room (numbers)', async () => {
    const files = { 'kind.txt': KIND, 'ip-addr.txt': ADDR, 'ip-link.txt': LINK(1500, 'off'), 'sysctl.txt': SYSCTL(1, 1, 1) };
    const r = await lintFiles(files);
    expect(of(r, 'kernel-hairpin-off').map((x) => [x.line, x.message])).toEqual([[10, 'hairpin is off on 1 of 1 ports of cni0 while bridged frames traverse iptables: pods behind them cannot reach themselves through their Service']]);
    expect(of(r, 'tunnel-mtu').map((x) => [x.line, x.message])).toEqual([[13, "flannel.1 (vxlan) has MTU 1500: with 50 bytes of encapsulation that is 1550, more than eth0's 1500; packets over 1450 bytes are fragmented or dropped"]]);
    const ok = await lintFiles({ ...files, 'ip-link.txt': LINK(1450, 'on') });
    expect([...of(ok, 'kernel-hairpin-off'), ...of(ok, 'tunnel-mtu')]).toEqual([]);
  });

  it('kernel-route-localnet-off: an iptables node with NodePorts and route_localnet = 0', async () => {
    const rules = `*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-EXT-WEBWEBWEBWEBWEBW - [0:0]
:KUBE-SVC-WEBWEBWEBWEBWEBW - [0:0]
:KUBE-SEP-WEBWEBWEBWEBWEBW - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A OUTPUT -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-WEBWEBWEBWEBWEBW
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j KUBE-EXT-WEBWEBWEBWEBWEBW
-A KUBE-EXT-WEBWEBWEBWEBWEBW -j KUBE-SVC-WEBWEBWEBWEBWEBW
-A KUBE-SVC-WEBWEBWEBWEBWEBW -m comment --comment "default/web:http -> 10.244.0.3:80" -j KUBE-SEP-WEBWEBWEBWEBWEBW
-A KUBE-SEP-WEBWEBWEBWEBWEBW -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.0.3:80
COMMIT
`;
    const files = { 'rules.txt': rules, 'sysctl.txt': SYSCTL(1, 1, 0) };
    const f = of(await lintFiles(files), 'kernel-route-localnet-off');
    expect(f.map((x) => [x.line, x.message])).toEqual([[1, 'route_localnet is off (net.ipv4.conf.all.route_localnet = 0) and this node has 1 NodePort(s): connections to 127.0.0.1:NODEPORT are refused']]);
    expect(of(await lintFiles({ ...files, 'sysctl.txt': SYSCTL(1, 1, 1) }), 'kernel-route-localnet-off')).toEqual([]);
  });
});
