/**
 * The kernel's switches without a kernel: the readers of `ip -d link`, `bridge -d link`, sysfs
 * hairpin listings and `uname`, and the trace's readings on hand-written dumps (the texts below
 * are what iproute2 6.1 printed in a test namespace here, trimmed; not a real node's).
 * Kernel-backed agreement is test/kernel/switches.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/load/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket, type SourceSpec } from '../../src/trace/trace.js';
import { assumptionText, kernelFateText, renderTraceText, stepText } from '../../src/render/trace/index.js';
import { chalkInit } from '../../src/render/colors.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { bridgeNfSwitch, forwardingSwitch, rpFilterSwitch } from '../../src/model/switches.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-switches-unit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const IP_D_LINK = `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000
    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00 promiscuity 0  allmulti 0 minmtu 0 maxmtu 0 addrgenmode eui64 numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535
2: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000
    link/ether ca:59:2f:10:80:ae brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535
    bridge forward_delay 1500 hello_time 200 max_age 2000 ageing_time 30000 stp_state 0 priority 32768 vlan_filtering 0 hello_timer    0.00 nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 addrgenmode eui64 numtxqueues 1
4: va@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master cni0 state UP mode DEFAULT group default qlen 1000
    link/ether fe:2c:4c:d5:77:c2 brd ff:ff:ff:ff:ff:ff link-netns kpxt-a promiscuity 1  allmulti 1 minmtu 68 maxmtu 65535
    veth
    bridge_slave state forwarding priority 32 cost 2 hairpin off guard off root_block off fastleave off learning on flood on port_id 0x8001 hold_timer    0.00 addrgenmode eui64
5: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000
    link/ether 86:46:79:f7:5c:00 brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535
    veth addrgenmode eui64 numtxqueues 1
6: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UNKNOWN mode DEFAULT group default
    link/ether 86:46:79:f7:5c:76 brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 65535
    vxlan id 1 local 172.18.0.3 srcport 0 0 dstport 8472 nolearning ttl auto ageing 300 udpcsum noudp6zerocsumtx noudp6zerocsumrx addrgenmode eui64
`;

const IP_ADDR = `2: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000
    link/ether ca:59:2f:10:80:ae brd ff:ff:ff:ff:ff:ff
    inet 10.244.0.1/24 scope global cni0
       valid_lft forever preferred_lft forever
5: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000
    link/ether 86:46:79:f7:5c:00 brd ff:ff:ff:ff:ff:ff
    inet 172.18.0.3/16 scope global eth0
       valid_lft forever preferred_lft forever
6: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UNKNOWN group default
    link/ether 86:46:79:f7:5c:76 brd ff:ff:ff:ff:ff:ff
    inet 10.244.0.0/32 scope global flannel.1
       valid_lft forever preferred_lft forever
`;

const ROUTES = `default via 172.18.0.1 dev eth0
10.244.0.0/24 dev cni0 proto kernel scope link src 10.244.0.1
10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink
172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.3
`;

const BRIDGE_LINK = `4: va@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master cni0 state forwarding priority 32 cost 2
    hairpin off guard off root_block off fastleave off learning on flood on mcast_flood on bcast_flood on mcast_router 1 mcast_to_unicast off neigh_suppress off vlan_tunnel off isolated off locked off
`;

const RULES = `*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-WEB - [0:0]
:KUBE-SEP-A - [0:0]
:KUBE-SEP-REMOTE - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A OUTPUT -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-WEB
-A KUBE-SERVICES -d 10.96.0.12/32 -p tcp -m comment --comment "default/far:http cluster IP" -m tcp --dport 80 -j KUBE-SEP-REMOTE
-A KUBE-SVC-WEB -m comment --comment "default/web:http -> 10.244.0.3:80" -j KUBE-SEP-A
-A KUBE-SEP-A -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.0.3:80
-A KUBE-SEP-REMOTE -p tcp -m comment --comment "default/far:http" -m tcp -j DNAT --to-destination 10.244.1.5:80
COMMIT
`;

const SYSCTL_OFF = `net.bridge.bridge-nf-call-iptables = 0
net.ipv4.conf.all.forwarding = 0
net.ipv4.conf.all.rp_filter = 0
net.ipv4.conf.eth0.forwarding = 0
net.ipv4.conf.eth0.rp_filter = 0
net.ipv4.ip_forward = 0
`;

async function snapshotOf(files: Record<string, string>): Promise<NodeSnapshot> {
  const dir = mkdtempSync(join(tmp, 'b-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return loadSnapshot([dir]);
}

async function traceOf(snap: NodeSnapshot, dest: string, from: SourceSpec) {
  const d = parseDestination(dest) as Destination;
  return tracePacket(snap, await resolveServices(snap), d, 'tcp', { from, assumptions: { established: false, affinityHit: false } });
}

describe('readers', () => {
  it('ip -d link: kinds, tunnel endpoints, the bridge nf_call_* switches and the port settings, with their lines', async () => {
    expect(detectFormat(IP_D_LINK)).toBe('ip-addr');
    const snap = await snapshotOf({ 'ip-link.txt': IP_D_LINK, 'ip-addr.txt': IP_ADDR });
    const by = (n: string) => snap.interfaces.find((i) => i.name === n)!;
    expect(by('flannel.1').linkInfo).toMatchObject({ kind: 'vxlan', tunnel: { id: 1, local: '172.18.0.3', dstport: 8472 }, line: 15 });
    expect(by('cni0').linkInfo).toMatchObject({ kind: 'bridge', bridge: { nfCallIptables: false, nfCallIp6tables: false, vlanFiltering: false } });
    expect(by('va').linkInfo).toMatchObject({ kind: 'veth', bridgePort: { state: 'forwarding', hairpin: false, learning: true, bridge: 'cni0', line: 9 } });
    expect(by('va').linkNetns).toBe('kpxt-a');
    // ip addr and ip -d link are one interface each: addresses from one, details from the other.
    expect(snap.interfaces.filter((i) => i.name === 'eth0')).toHaveLength(1);
    expect(by('eth0').addresses.map((a) => a.address)).toEqual(['172.18.0.3']);
    expect(by('eth0').linkInfo?.kind).toBe('veth');
    expect(snap.bridgePorts).toMatchObject([{ port: 'va', bridge: 'cni0', hairpin: false, line: 9 }]);
  });

  it('ip -d -j link: linkinfo info_kind/info_data and info_slave_data', async () => {
    const json = JSON.stringify([
      { ifindex: 6, ifname: 'flannel.1', flags: ['UP'], mtu: 1450, linkinfo: { info_kind: 'vxlan', info_data: { id: 1, local: '172.18.0.3', link: 'eth0', port: 8472 } } },
      { ifindex: 4, ifname: 'va', flags: ['UP'], mtu: 1500, master: 'cni0', linkinfo: { info_kind: 'veth', info_slave_kind: 'bridge', info_slave_data: { state: 'forwarding', hairpin: true, learning: true } } },
    ]);
    const snap = await snapshotOf({ 'ip-link.json': json });
    expect(snap.interfaces.find((i) => i.name === 'flannel.1')?.linkInfo).toMatchObject({ kind: 'vxlan', tunnel: { id: 1, local: '172.18.0.3', dev: 'eth0', dstport: 8472 } });
    expect(snap.bridgePorts).toMatchObject([{ port: 'va', bridge: 'cni0', hairpin: true, state: 'forwarding' }]);
  });

  it('bridge -d link, sysfs hairpin_mode listings and uname are told apart by content; bad values have line:column', async () => {
    expect(detectFormat(BRIDGE_LINK)).toBe('bridge-link');
    // Without -d every line is an \`ip link\`-shaped header: still bridge link, by its STP state and priority/cost.
    expect(detectFormat(BRIDGE_LINK.split('\n')[0] + '\n5: vb@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master cni0 state disabled priority 32 cost 2\n')).toBe('bridge-link');
    expect(detectFormat('/sys/class/net/cni0/brif/va/hairpin_mode:1\n/sys/class/net/cni0/brif/vb/hairpin_mode:0\n')).toBe('sysfs-net');
    expect(detectFormat('Linux node-1 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux\n')).toBe('uname');
    expect(detectFormat('6.1.0-27-cloud-amd64\n')).toBe('uname');
    const snap = await snapshotOf({
      'bridge-link.txt': BRIDGE_LINK,
      'hairpin.txt': '/sys/class/net/cni0/brif/vb/hairpin_mode:1\n/sys/class/net/cni0/brif/vc/hairpin_mode:yes\n',
      'uname.txt': 'Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) (x86_64-linux-gnu-gcc-13) #45-Ubuntu SMP\n',
    });
    expect(snap.bridgePorts).toMatchObject([
      { port: 'va', bridge: 'cni0', state: 'forwarding', hairpin: false, learning: true, line: 2 },
      { port: 'vb', bridge: 'cni0', hairpin: true, line: 1 },
    ]);
    expect(snap.kernel).toMatchObject({ release: '6.8.0-45-generic', line: 1 });
    const bad = snap.files.find((f) => f.path.endsWith('hairpin.txt'))!.diagnostics.find((d) => d.severity === 'error');
    expect(bad).toMatchObject({ line: 2, column: 42, expected: '0 or 1', found: 'yes' });
  });
});

describe('the switches as the trace reads them', () => {
  it('forwarding off: the Service DNAT happens, then the routing decision drops the packet; the fate says so with the sysctl line', async () => {
    const snap = await snapshotOf({ 'iptables-save.txt': RULES, 'ip-route.txt': ROUTES, 'ip-addr.txt': IP_ADDR, 'sysctl.txt': SYSCTL_OFF });
    const t = await traceOf(snap, '10.96.0.10:80', { ip: '172.18.0.9' });
    expect(t.outcomes).toHaveLength(1);
    const o = t.outcomes[0];
    expect(o).toMatchObject({ verdict: 'DROP', delivery: 'stopped', fate: { code: 'dropped-forwarding-off', iface: 'eth0', evidence: [{ key: 'net.ipv4.conf.eth0.forwarding', value: '0', line: 4 }] } });
    expect(kernelFateText(o.fate!)).toBe('dropped by forwarding off on eth0 at the routing decision (sysctl.txt:4 net.ipv4.conf.eth0.forwarding = 0)');
    const text = renderTraceText(t, chalkInit(false));
    expect(text).toContain('DROP: dropped by forwarding off on eth0');
    expect(text.split('\n').findIndex((l) => l.includes('DROP'))).toBeLessThan(text.split('\n').findIndex((l) => l.includes('kernel/routing')));
  });

  it('without sysctl, link or bridge dumps the trace says which switches it assumed', async () => {
    const snap = await snapshotOf({ 'iptables-save.txt': RULES, 'ip-route.txt': ROUTES, 'ip-addr.txt': IP_ADDR });
    const t = await traceOf(snap, '10.96.0.10:80', { ip: '10.244.0.2' });
    const assumed = t.assumptions.filter((a) => a.code === 'switch-assumed');
    expect(assumed.map((a) => a.code === 'switch-assumed' && a.switch).sort()).toEqual(['bridge-nf-call-iptables', 'forwarding', 'rp_filter']);
    expect(assumed.map(assumptionText)).toContainEqual(expect.stringMatching(/^forwarding is not in the dumps: assumed on/));
    expect(t.outcomes[0]).toMatchObject({ verdict: 'DNAT' });
    expect(t.outcomes[0].fate).toBeUndefined();
    // A route out through a tunnel without ip -d link: the MTU is not checked, and the trace says so.
    const far = await traceOf(snap, '10.96.0.12:80', { ip: '10.244.0.2' });
    expect(far.assumptions).toContainEqual({ code: 'switch-assumed', switch: 'mtu', assumed: expect.stringMatching(/^not checked/), iface: 'flannel.1' });
  });

  it('a pod calling a Service on its own bridge with br_netfilter off: delivered, but the reply skips reverse NAT', async () => {
    const snap = await snapshotOf({ 'iptables-save.txt': RULES, 'ip-route.txt': ROUTES, 'ip-addr.txt': IP_ADDR, 'ip-link.txt': IP_D_LINK, 'sysctl.txt': SYSCTL_OFF.replace(/forwarding = 0/g, 'forwarding = 1').replace('ip_forward = 0', 'ip_forward = 1') });
    const o = (await traceOf(snap, '10.96.0.10:80', { ip: '10.244.0.2' })).outcomes[0];
    expect(o).toMatchObject({ verdict: 'DNAT', destination: '10.244.0.3:80', fate: { code: 'reply-bypasses-nat', iface: 'cni0' } });
    expect(o.steps.filter((s) => s.code === 'kernel-switch').map(stepText)).toContainEqual(expect.stringMatching(/^bridge-nf-call-iptables off: the endpoint's reply crosses cni0 without conntrack's reverse NAT/));
  });

  it('the MTU of a VXLAN tunnel that leaves no room on its 1500-byte underlay is flagged with the numbers', async () => {
    const snap = await snapshotOf({ 'iptables-save.txt': RULES, 'ip-route.txt': ROUTES, 'ip-addr.txt': IP_ADDR, 'ip-link.txt': IP_D_LINK });
    const o = (await traceOf(snap, '10.96.0.12:80', { ip: '10.244.0.2' })).outcomes[0];
    const mtu = o.steps.find((s) => s.code === 'mtu');
    expect(mtu).toMatchObject({ largest: 1450, shortfall: { tunnel: 'flannel.1', tunnelMtu: 1500, overhead: 50, underlay: 'eth0', underlayMtu: 1500 } });
    // Without ip addr the underlay (the interface holding the tunnel's local address) is unknown: no largest packet is claimed.
    const bare = await snapshotOf({ 'iptables-save.txt': RULES, 'ip-route.txt': ROUTES, 'ip-link.txt': IP_D_LINK });
    const unknown = (await traceOf(bare, '10.96.0.12:80', { ip: '10.244.0.2' })).outcomes[0].steps.find((s) => s.code === 'mtu');
    expect(unknown).toMatchObject({ underlayUnknown: 'flannel.1' });
    expect(unknown).not.toHaveProperty('largest');
    expect(stepText(mtu!)).toContain('flannel.1 (vxlan) has MTU 1500: with 50 bytes of encapsulation that is 1550, more than eth0\'s 1500; packets over 1450 bytes');
  });

  it('readings: per-interface forwarding wins over ip_forward; rp_filter is max(all, iface); br_netfilter absent from a whole sysctl -a is off', () => {
    const at = (pairs: Record<string, string>) => new Map(Object.entries(pairs).map(([k, v], i) => [k, { value: v, file: 's', line: i + 1 }]));
    expect(forwardingSwitch(at({ 'net.ipv4.ip_forward': '0', 'net.ipv4.conf.eth0.forwarding': '1' }), 4, 'eth0')).toMatchObject({ effect: 'pass', iface: 'eth0' });
    expect(forwardingSwitch(at({ 'net.ipv4.ip_forward': '0' }), 4, 'eth0')).toMatchObject({ effect: 'drop', evidence: [{ key: 'net.ipv4.ip_forward' }] });
    expect(forwardingSwitch(at({ 'net.ipv6.conf.all.forwarding': '0', 'net.ipv6.conf.eth0.force_forwarding': '1' }), 6, 'eth0')).toMatchObject({ effect: 'pass' });
    expect(forwardingSwitch(at({}), 4, 'eth0')).toMatchObject({ known: false });
    expect(rpFilterSwitch(at({ 'net.ipv4.conf.all.rp_filter': '1', 'net.ipv4.conf.eth0.rp_filter': '0' }), 'eth0', ['eth1'])).toMatchObject({ effect: 'drop', value: 1 });
    expect(rpFilterSwitch(at({ 'net.ipv4.conf.all.rp_filter': '1', 'net.ipv4.conf.eth0.rp_filter': '2' }), 'eth0', ['eth1'])).toMatchObject({ effect: 'pass', value: 2 });
    expect(rpFilterSwitch(at({ 'net.ipv4.conf.all.rp_filter': '2', 'net.ipv4.conf.eth0.rp_filter': '0' }), 'eth0', undefined)).toMatchObject({ effect: 'drop', value: 2 });
    const full = at(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`net.ipv4.conf.if${i}.rp_filter`, '0'])));
    expect(bridgeNfSwitch(full, 4, undefined)).toMatchObject({ known: true, effect: 'off', moduleLoaded: false });
    expect(bridgeNfSwitch(at({ 'net.ipv4.ip_forward': '1' }), 4, undefined)).toMatchObject({ known: false });
  });
});
