/**
 * The real `ipset` in a throw-away network namespace (sets are per netns): create sets of every
 * type kube-proxy and CNIs use, then check that kpx reads `ipset list`, `ipset save`,
 * `ipset list -t` and `ipset list -o xml` back to exactly what was added, and that
 * ipsetMatches() agrees with the kernel's own `ipset test` lookups.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseIp } from '../../src/model/addr.js';
import { ipsetIndex, ipsetMatches, type IpSet, type IpSetDump, type IpSetFlag } from '../../src/model/ipset.js';
import { ipsetListParser, ipsetSaveParser } from '../../src/extract/ipset.js';
import type { ParsedInput } from '../../src/load/format.js';
import { requireKernel, withNetns, type Netns } from '../helpers/netns.js';

const kernel = requireKernel();

/** `ipset restore` input: what we put into the kernel. */
const RESTORE = `
create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 comment
add KUBE-CLUSTER-IP 10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"
add KUBE-CLUSTER-IP 10.96.0.1,tcp:443
add KUBE-CLUSTER-IP 10.96.0.20,sctp:9
create KUBE-6-CLUSTER-IP hash:ip,port family inet6
add KUBE-6-CLUSTER-IP fd00:10:96::a,udp:53
create KUBE-LOOP-BACK hash:ip,port,ip
add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5
add KUBE-LOOP-BACK 10.244.1.6,udp:53,10.244.1.6
create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net
add KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,tcp:80,10.0.0.0/8
create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
add KUBE-NODE-PORT-TCP 30080
add KUBE-NODE-PORT-TCP 30081
create pools hash:net
add pools 192.168.0.0/16
add pools 10.0.0.1
create nm hash:net
add nm 10.0.0.0/8
add nm 10.1.0.0/16 nomatch
create netport hash:net,port
add netport 10.1.0.0/16,tcp:80
add netport 10.2.0.0/16,80
add netport 10.1.0.0/16,icmp:echo-request
create netiface hash:net,iface
add netiface 10.0.0.0/8,eth0
add netiface 10.0.0.0/8,physdev:eth1
create bip bitmap:ip range 10.0.0.0/24
add bip 10.0.0.5
create masked hash:ip netmask 24
add masked 10.1.2.3
create timed hash:ip timeout 300 counters
add timed 1.2.3.4 timeout 99 packets 5 bytes 300
create skb hash:ip skbinfo
add skb 1.1.1.1 skbmark 0x10/0xff skbprio 1:2 skbqueue 3
create lst list:set size 8
add lst pools
add lst KUBE-NODE-PORT-TCP
`;

const SET_COUNT = 14;
const MEMBER_COUNT = 24;

interface Outputs {
  list: ParsedInput<IpSetDump>;
  save: ParsedInput<IpSetDump>;
  terse: ParsedInput<IpSetDump>;
  xml: ParsedInput<IpSetDump>;
  /** `ipset test SET ELEM` → in the set? */
  probes: Map<string, boolean>;
}

/** Element probes: [set, element, packet, flags]. The kernel answers via `ipset test`. */
const PROBES: [string, string, { src: string; dst: string; proto: string; sport?: number; dport?: number }, IpSetFlag[]][] = [
  ['KUBE-CLUSTER-IP', '10.96.0.10,udp:53', { src: '10.244.0.9', dst: '10.96.0.10', proto: 'udp', dport: 53 }, ['dst', 'dst']],
  ['KUBE-CLUSTER-IP', '10.96.0.10,tcp:53', { src: '10.244.0.9', dst: '10.96.0.10', proto: 'tcp', dport: 53 }, ['dst', 'dst']],
  ['KUBE-CLUSTER-IP', '10.96.0.1,tcp:443', { src: '10.244.0.9', dst: '10.96.0.1', proto: 'tcp', dport: 443 }, ['dst', 'dst']],
  ['KUBE-CLUSTER-IP', '10.96.0.1,tcp:444', { src: '10.244.0.9', dst: '10.96.0.1', proto: 'tcp', dport: 444 }, ['dst', 'dst']],
  ['KUBE-CLUSTER-IP', '10.96.0.20,sctp:9', { src: '10.244.0.9', dst: '10.96.0.20', proto: 'sctp', dport: 9 }, ['dst', 'dst']],
  ['KUBE-6-CLUSTER-IP', 'fd00:10:96::a,udp:53', { src: 'fd00::9', dst: 'fd00:10:96::a', proto: 'udp', dport: 53 }, ['dst', 'dst']],
  ['KUBE-6-CLUSTER-IP', 'fd00:10:96::b,udp:53', { src: 'fd00::9', dst: 'fd00:10:96::b', proto: 'udp', dport: 53 }, ['dst', 'dst']],
  ['KUBE-LOOP-BACK', '10.244.1.5,tcp:8080,10.244.1.5', { src: '10.244.1.5', dst: '10.244.1.5', proto: 'tcp', dport: 8080 }, ['dst', 'dst', 'src']],
  ['KUBE-LOOP-BACK', '10.244.1.5,tcp:8080,10.244.1.7', { src: '10.244.1.7', dst: '10.244.1.5', proto: 'tcp', dport: 8080 }, ['dst', 'dst', 'src']],
  ['KUBE-LOOP-BACK', '10.244.1.6,udp:53,10.244.1.6', { src: '10.244.1.6', dst: '10.244.1.6', proto: 'udp', dport: 53 }, ['dst', 'dst', 'src']],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', '1.2.3.4,tcp:80,10.9.8.7', { src: '10.9.8.7', dst: '1.2.3.4', proto: 'tcp', dport: 80 }, ['dst', 'dst', 'src']],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', '1.2.3.4,tcp:80,11.9.8.7', { src: '11.9.8.7', dst: '1.2.3.4', proto: 'tcp', dport: 80 }, ['dst', 'dst', 'src']],
  ['KUBE-NODE-PORT-TCP', '30080', { src: '1.1.1.1', dst: '10.0.0.1', proto: 'tcp', dport: 30080 }, ['dst']],
  ['KUBE-NODE-PORT-TCP', '30082', { src: '1.1.1.1', dst: '10.0.0.1', proto: 'tcp', dport: 30082 }, ['dst']],
  ['pools', '192.168.77.1', { src: '1.1.1.1', dst: '192.168.77.1', proto: 'tcp', dport: 1 }, ['dst']],
  ['pools', '10.0.0.1', { src: '1.1.1.1', dst: '10.0.0.1', proto: 'tcp', dport: 1 }, ['dst']],
  ['pools', '10.0.0.2', { src: '1.1.1.1', dst: '10.0.0.2', proto: 'tcp', dport: 1 }, ['dst']],
  ['nm', '10.1.2.3', { src: '1.1.1.1', dst: '10.1.2.3', proto: 'tcp', dport: 1 }, ['dst']],
  ['nm', '10.2.2.3', { src: '1.1.1.1', dst: '10.2.2.3', proto: 'tcp', dport: 1 }, ['dst']],
  ['nm', '11.2.2.3', { src: '1.1.1.1', dst: '11.2.2.3', proto: 'tcp', dport: 1 }, ['dst']],
  ['netport', '10.1.5.5,tcp:80', { src: '1.1.1.1', dst: '10.1.5.5', proto: 'tcp', dport: 80 }, ['dst', 'dst']],
  ['netport', '10.2.5.5,udp:80', { src: '1.1.1.1', dst: '10.2.5.5', proto: 'udp', dport: 80 }, ['dst', 'dst']],
  ['netport', '10.3.5.5,tcp:80', { src: '1.1.1.1', dst: '10.3.5.5', proto: 'tcp', dport: 80 }, ['dst', 'dst']],
  ['bip', '10.0.0.5', { src: '1.1.1.1', dst: '10.0.0.5', proto: 'tcp', dport: 1 }, ['dst']],
  ['bip', '10.0.0.6', { src: '1.1.1.1', dst: '10.0.0.6', proto: 'tcp', dport: 1 }, ['dst']],
  ['masked', '10.1.2.200', { src: '1.1.1.1', dst: '10.1.2.200', proto: 'tcp', dport: 1 }, ['dst']],
  ['masked', '10.1.3.1', { src: '1.1.1.1', dst: '10.1.3.1', proto: 'tcp', dport: 1 }, ['dst']],
  ['timed', '1.2.3.4', { src: '1.1.1.1', dst: '1.2.3.4', proto: 'tcp', dport: 1 }, ['dst']],
  ['timed', '1.2.3.5', { src: '1.1.1.1', dst: '1.2.3.5', proto: 'tcp', dport: 1 }, ['dst']],
];

function errorsAndWarnings(p: ParsedInput<IpSetDump>) {
  return p.diagnostics.filter((d) => d.severity !== 'info');
}

function byName(p: ParsedInput<IpSetDump>, name: string): IpSet {
  const s = p.data.sets.find((x) => x.name === name);
  if (!s) throw new Error(`set ${name} missing`);
  return s;
}

/** A comparable view of a set: everything that both list and save print. */
function shape(s: IpSet) {
  const { family, type, name } = s;
  const header = Object.fromEntries(Object.entries(s.header).filter(([k]) => k !== 'family'));
  const members = s.members
    .map((m) => JSON.stringify({ text: m.text, parts: m.parts, comment: m.comment, nomatch: m.nomatch, packets: m.packets, bytes: m.bytes, skbmark: m.skbmark, skbprio: m.skbprio, skbqueue: m.skbqueue }, (_, v) => (typeof v === 'bigint' ? v.toString() : v)))
    .sort();
  return { name, type, family, header, members };
}

async function collect(ns: Netns): Promise<Outputs> {
  ns.exec('ipset', ['restore'], RESTORE.trimStart());
  const list = ipsetListParser.parse(ns.exec('ipset', ['list']), 'ipset-list');
  const save = ipsetSaveParser.parse(ns.exec('ipset', ['save']), 'ipset-save');
  const terse = ipsetListParser.parse(ns.exec('ipset', ['list', '-t']), 'ipset-list-t');
  const xml = ipsetListParser.parse(ns.exec('ipset', ['list', '-o', 'xml']), 'ipset-list-xml');
  const probes = new Map<string, boolean>();
  for (const [set, elem] of PROBES) probes.set(`${set} ${elem}`, ns.run('ipset', ['test', set, elem]).status === 0);
  return { list, save, terse, xml, probes };
}

describe.runIf(kernel)('real ipset in a network namespace', () => {
  let out: Outputs;
  beforeAll(async () => {
    out = await withNetns('ipset', collect);
  });

  it('reads `ipset list` without problems and with every set and member', async () => {
    expect(errorsAndWarnings(out.list)).toEqual([]);
    expect(out.list.counts).toEqual({ sets: SET_COUNT, members: MEMBER_COUNT });
    for (const s of out.list.data.sets) {
      expect(s.terse).toBe(false);
      expect(s.declaredEntries).toBe(s.members.length);
      expect(s.revision).toBeGreaterThan(0);
      expect(s.sizeInMemory).toBeGreaterThan(0);
    }
    expect(out.list.data.unsupported).toEqual([]);
  });

  it('extracts hash:ip,port members with protocol, port and comment', async () => {
    const s = byName(out.list, 'KUBE-CLUSTER-IP');
    expect(s.type).toBe('hash:ip,port');
    expect(s.family).toBe('inet');
    expect(s.header).toMatchObject({ family: 'inet', hashsize: '1024', maxelem: '65536', comment: true });
    const dns = s.members.find((m) => m.text === '10.96.0.10,udp:53');
    expect(dns?.comment).toBe('kube-system/kube-dns:dns');
    expect(dns?.parts).toEqual([{ kind: 'ip', cidr: { family: 4, prefix: 32, network: parseIp('10.96.0.10')!.value } }, { kind: 'port', proto: 'udp', port: 53 }]);
    expect(s.members.map((m) => m.text).sort()).toEqual(['10.96.0.1,tcp:443', '10.96.0.10,udp:53', '10.96.0.20,sctp:9']);
    const v6 = byName(out.list, 'KUBE-6-CLUSTER-IP');
    expect(v6.family).toBe('inet6');
    expect(v6.members[0].parts).toEqual([{ kind: 'ip', cidr: { family: 6, prefix: 128, network: parseIp('fd00:10:96::a')!.value } }, { kind: 'port', proto: 'udp', port: 53 }]);
  });

  it('extracts the other types: ip,port,ip / ip,port,net / bitmap:port / net / net,port / net,iface / bitmap:ip / list:set', async () => {
    expect(byName(out.list, 'KUBE-LOOP-BACK').members.map((m) => m.parts.map((p) => p.kind))).toEqual([
      ['ip', 'port', 'ip'],
      ['ip', 'port', 'ip'],
    ]);
    expect(byName(out.list, 'KUBE-LOAD-BALANCER-SOURCE-CIDR').members[0].parts[2]).toEqual({ kind: 'ip', cidr: { family: 4, prefix: 8, network: parseIp('10.0.0.0')!.value } });
    const np = byName(out.list, 'KUBE-NODE-PORT-TCP');
    expect(np.header).toEqual({ range: '0-65535' });
    expect(np.members.map((m) => m.parts[0]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { kind: 'port', proto: 'any', port: 30080 },
      { kind: 'port', proto: 'any', port: 30081 },
    ]);
    const pools = byName(out.list, 'pools');
    expect(pools.members.map((m) => m.text).sort()).toEqual(['10.0.0.1', '192.168.0.0/16']);
    const nm = byName(out.list, 'nm');
    expect(nm.members.find((m) => m.text === '10.1.0.0/16')?.nomatch).toBe(true);
    expect(nm.members.find((m) => m.text === '10.0.0.0/8')?.nomatch).toBe(false);
    const netport = byName(out.list, 'netport');
    // `10.2.0.0/16,80` was added without a protocol: the kernel stores and prints tcp.
    expect(netport.members.map((m) => m.text).sort()).toEqual(['10.1.0.0/16,icmp:echo-request', '10.1.0.0/16,tcp:80', '10.2.0.0/16,tcp:80']);
    expect(netport.members.find((m) => m.text.endsWith('icmp:echo-request'))?.parts[1]).toEqual({ kind: 'raw', text: 'icmp:echo-request' });
    const ni = byName(out.list, 'netiface');
    expect(ni.members.map((m) => m.parts[1]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { kind: 'iface', name: 'eth0', physdev: false },
      { kind: 'iface', name: 'eth1', physdev: true },
    ]);
    expect(byName(out.list, 'bip').header).toEqual({ range: '10.0.0.0-10.0.0.255' });
    expect(byName(out.list, 'masked').members.map((m) => m.text)).toEqual(['10.1.2.0']);
    expect(byName(out.list, 'masked').header.netmask).toBe('24');
    expect(byName(out.list, 'lst').members.map((m) => m.parts[0])).toEqual([
      { kind: 'setname', name: 'pools' },
      { kind: 'setname', name: 'KUBE-NODE-PORT-TCP' },
    ]);
  });

  it('extracts member extensions: timeout, counters, skbinfo', async () => {
    const timed = byName(out.list, 'timed').members[0];
    expect(timed.text).toBe('1.2.3.4');
    expect(timed.timeout).toBeGreaterThan(80);
    expect(timed.timeout).toBeLessThanOrEqual(99);
    expect(timed).toMatchObject({ packets: 5, bytes: 300 });
    expect(byName(out.list, 'timed').header).toMatchObject({ timeout: '300', counters: true });
    expect(byName(out.list, 'skb').members[0]).toMatchObject({ text: '1.1.1.1', skbmark: '0x10/0xff', skbprio: '1:2', skbqueue: 3 });
  });

  it('reads `ipset save` to the same sets and members as `ipset list`', async () => {
    expect(errorsAndWarnings(out.save)).toEqual([]);
    expect(out.save.counts).toEqual(out.list.counts);
    expect(out.save.data.sets.map((s) => s.name)).toEqual(out.list.data.sets.map((s) => s.name));
    for (const s of out.save.data.sets) {
      expect(shape(s)).toEqual(shape(byName(out.list, s.name)));
      expect(s.declaredEntries).toBeUndefined();
    }
    // save always spells out the family of hash types
    expect(byName(out.save, 'KUBE-LOOP-BACK').header.family).toBe('inet');
  });

  it('reads `ipset list -t` (terse) and `ipset list -o xml` consistently', async () => {
    expect(errorsAndWarnings(out.terse)).toEqual([]);
    expect(out.terse.counts).toEqual({ sets: SET_COUNT, members: 0 });
    for (const s of out.terse.data.sets) {
      expect(s.terse).toBe(true);
      expect(s.declaredEntries).toBe(byName(out.list, s.name).members.length);
    }
    expect(errorsAndWarnings(out.xml)).toEqual([]);
    expect(out.xml.counts).toEqual(out.list.counts);
    for (const s of out.xml.data.sets) {
      const l = byName(out.list, s.name);
      expect({ ...shape(s), revision: s.revision, references: s.references, entries: s.declaredEntries }).toEqual({
        ...shape(l),
        revision: l.revision,
        references: l.references,
        entries: l.declaredEntries,
      });
    }
  });

  it('ipsetMatches agrees with the kernel (`ipset test`) on every probe', async () => {
    const index = ipsetIndex(out.list.data.sets);
    const rows = PROBES.map(([set, elem, p, flags]) => {
      const pkt = { src: parseIp(p.src)!, dst: parseIp(p.dst)!, proto: p.proto, sport: p.sport, dport: p.dport };
      return { probe: `${set} ${elem}`, kernel: out.probes.get(`${set} ${elem}`), kpx: ipsetMatches(index.get(set)!, pkt, flags, index) };
    });
    expect(rows.map((r) => ({ probe: r.probe, kpx: r.kpx }))).toEqual(rows.map((r) => ({ probe: r.probe, kpx: r.kernel })));
    // Both answers occur (the probes are not all positive or all negative).
    expect(new Set(rows.map((r) => r.kernel))).toEqual(new Set([true, false]));
  });
});
