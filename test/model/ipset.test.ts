/**
 * ipsetMatches(): the `-m set --match-set NAME flags` membership test, positive and negative,
 * on the kube-proxy IPVS-mode sets and the CNI set types. (test/kernel/ipset-tools.test.ts
 * checks the same function against the kernel's `ipset test`.)
 */
import { describe, expect, it } from 'vitest';
import { ipsetSaveParser } from '../../src/extract/ipset.js';
import { parseIp } from '../../src/model/addr.js';
import { ipsetDimensions, ipsetIndex, ipsetMatches, type IpSet, type IpSetFlag, type IpSetPacket } from '../../src/model/ipset.js';

const SAVE = `
create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 comment
add KUBE-CLUSTER-IP 10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"
add KUBE-CLUSTER-IP 10.96.0.1,tcp:443
create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536
add KUBE-6-CLUSTER-IP fd00:10:96::a,udp:53
create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536
add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5
create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
add KUBE-NODE-PORT-TCP 30080
create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536
add KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,tcp:80,10.0.0.0/8
create nm hash:net family inet
add nm 10.0.0.0/8
add nm 10.1.0.0/16 nomatch
add nm 10.1.2.0/24
create outer-nomatch hash:net family inet
add outer-nomatch 10.0.0.0/8 nomatch
add outer-nomatch 10.1.0.0/16
create netport hash:net,port family inet
add netport 10.1.0.0/16,tcp:80
add netport 10.1.0.0/16,icmp:echo-request
create netiface hash:net,iface family inet
add netiface 10.0.0.0/8,eth0
create masked hash:ip family inet netmask 24
add masked 10.1.2.0
create redacted hash:ip family inet
add redacted XXX.XXX.174.108
add redacted 10.0.0.9
create empty hash:ip family inet
create lst list:set size 8
add lst KUBE-NODE-PORT-TCP
add lst netiface
create lst-missing list:set size 8
add lst-missing no-such-set
add lst-missing KUBE-NODE-PORT-TCP
create loop-a list:set size 8
create loop-b list:set size 8
add loop-a loop-b
add loop-b loop-a
`;

const sets = ipsetSaveParser.parse(SAVE, 'sets.save').data.sets;
const index = ipsetIndex(sets);
const S = (name: string): IpSet => index.get(name)!;

function pkt(src: string, dst: string, proto: string, dport?: number, sport?: number): IpSetPacket {
  return { src: parseIp(src)!, dst: parseIp(dst)!, proto, dport, sport };
}

const DD: IpSetFlag[] = ['dst', 'dst'];
const DDS: IpSetFlag[] = ['dst', 'dst', 'src'];

describe('ipsetMatches — kube-proxy IPVS-mode sets', () => {
  it.each([
    ['VIP + port + proto', pkt('10.244.0.9', '10.96.0.10', 'udp', 53), true],
    ['wrong protocol', pkt('10.244.0.9', '10.96.0.10', 'tcp', 53), false],
    ['wrong port', pkt('10.244.0.9', '10.96.0.10', 'udp', 54), false],
    ['wrong address', pkt('10.244.0.9', '10.96.0.11', 'udp', 53), false],
    ['source is the VIP, not the destination', pkt('10.96.0.1', '10.244.0.9', 'tcp', 443), false],
    ['IPv6 packet against an inet set', pkt('fd00::9', 'fd00:10:96::a', 'udp', 53), false],
    ['no destination port known', pkt('10.244.0.9', '10.96.0.1', 'tcp'), 'unknown'],
  ] as const)('KUBE-CLUSTER-IP dst,dst: %s', (_, p, want) => {
    expect(ipsetMatches(S('KUBE-CLUSTER-IP'), p, DD)).toBe(want);
  });

  it('KUBE-CLUSTER-IP src,dst reads the address from the source', () => {
    expect(ipsetMatches(S('KUBE-CLUSTER-IP'), pkt('10.96.0.1', '10.244.0.9', 'tcp', 443), ['src', 'dst'])).toBe(true);
    expect(ipsetMatches(S('KUBE-CLUSTER-IP'), pkt('10.96.0.1', '10.244.0.9', 'tcp', undefined, 443), ['src', 'src'])).toBe(true);
  });

  it('fewer flags than dimensions never match; extra flags are ignored', () => {
    const p = pkt('10.244.0.9', '10.96.0.1', 'tcp', 443);
    expect(ipsetMatches(S('KUBE-CLUSTER-IP'), p, ['dst'])).toBe(false);
    expect(ipsetMatches(S('KUBE-CLUSTER-IP'), p, ['dst', 'dst', 'src'])).toBe(true);
  });

  it('KUBE-6-CLUSTER-IP matches IPv6 only', () => {
    expect(ipsetMatches(S('KUBE-6-CLUSTER-IP'), pkt('fd00::9', 'fd00:10:96::a', 'udp', 53), DD)).toBe(true);
    expect(ipsetMatches(S('KUBE-6-CLUSTER-IP'), pkt('10.0.0.1', '10.96.0.10', 'udp', 53), DD)).toBe(false);
  });

  it('KUBE-LOOP-BACK dst,dst,src: hairpin from the endpoint to itself', () => {
    expect(ipsetMatches(S('KUBE-LOOP-BACK'), pkt('10.244.1.5', '10.244.1.5', 'tcp', 8080), DDS)).toBe(true);
    expect(ipsetMatches(S('KUBE-LOOP-BACK'), pkt('10.244.1.6', '10.244.1.5', 'tcp', 8080), DDS)).toBe(false);
    expect(ipsetMatches(S('KUBE-LOOP-BACK'), pkt('10.244.1.5', '10.244.1.5', 'udp', 8080), DDS)).toBe(false);
  });

  it('KUBE-NODE-PORT-TCP dst: the port only (bitmap:port ignores the protocol)', () => {
    expect(ipsetMatches(S('KUBE-NODE-PORT-TCP'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30080), ['dst'])).toBe(true);
    expect(ipsetMatches(S('KUBE-NODE-PORT-TCP'), pkt('1.1.1.1', '172.18.0.2', 'udp', 30080), ['dst'])).toBe(true);
    expect(ipsetMatches(S('KUBE-NODE-PORT-TCP'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30081), ['dst'])).toBe(false);
    expect(ipsetMatches(S('KUBE-NODE-PORT-TCP'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 1, 30080), ['src'])).toBe(true);
    expect(ipsetMatches(S('KUBE-NODE-PORT-TCP'), pkt('1.1.1.1', '172.18.0.2', 'icmp'), ['dst'])).toBe(false);
    expect(ipsetMatches(S('KUBE-NODE-PORT-TCP'), pkt('1.1.1.1', '172.18.0.2', 'tcp'), ['dst'])).toBe('unknown');
  });

  it('KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src: source inside / outside the allowed CIDR', () => {
    expect(ipsetMatches(S('KUBE-LOAD-BALANCER-SOURCE-CIDR'), pkt('10.200.3.4', '1.2.3.4', 'tcp', 80), DDS)).toBe(true);
    expect(ipsetMatches(S('KUBE-LOAD-BALANCER-SOURCE-CIDR'), pkt('11.0.0.1', '1.2.3.4', 'tcp', 80), DDS)).toBe(false);
    expect(ipsetMatches(S('KUBE-LOAD-BALANCER-SOURCE-CIDR'), pkt('10.200.3.4', '1.2.3.5', 'tcp', 80), DDS)).toBe(false);
  });
});

describe('ipsetMatches — net types, nomatch, and undecidable cases', () => {
  it.each([
    ['covered by 10.0.0.0/8 only', '10.2.0.1', true],
    ['inside the nomatch 10.1.0.0/16', '10.1.9.9', false],
    ['inside 10.1.2.0/24, more specific than the nomatch entry', '10.1.2.3', true],
    ['outside every entry', '11.0.0.1', false],
  ] as const)('hash:net with nomatch: %s', (_, dst, want) => {
    expect(ipsetMatches(S('nm'), pkt('1.1.1.1', dst, 'tcp', 80), ['dst'])).toBe(want);
  });

  it('a less specific nomatch entry does not hide a more specific match', () => {
    expect(ipsetMatches(S('outer-nomatch'), pkt('1.1.1.1', '10.1.0.1', 'tcp', 80), ['dst'])).toBe(true);
    expect(ipsetMatches(S('outer-nomatch'), pkt('1.1.1.1', '10.2.0.1', 'tcp', 80), ['dst'])).toBe(false);
  });

  it('hash:net,port: CIDR containment and protocol; ICMP entries never match TCP', () => {
    expect(ipsetMatches(S('netport'), pkt('1.1.1.1', '10.1.200.1', 'tcp', 80), DD)).toBe(true);
    expect(ipsetMatches(S('netport'), pkt('1.1.1.1', '10.1.200.1', 'tcp', 81), DD)).toBe(false);
    expect(ipsetMatches(S('netport'), pkt('1.1.1.1', '10.1.200.1', 'icmp'), DD)).toBe('unknown');
  });

  it('hash:net,iface is undecidable when the net matches, false when it does not', () => {
    expect(ipsetMatches(S('netiface'), pkt('1.1.1.1', '10.3.3.3', 'tcp', 80), ['dst', 'dst'])).toBe('unknown');
    expect(ipsetMatches(S('netiface'), pkt('1.1.1.1', '11.3.3.3', 'tcp', 80), ['dst', 'dst'])).toBe(false);
  });

  it('hash:ip with netmask 24 matches the whole /24', () => {
    expect(ipsetMatches(S('masked'), pkt('1.1.1.1', '10.1.2.77', 'tcp', 80), ['dst'])).toBe(true);
    expect(ipsetMatches(S('masked'), pkt('1.1.1.1', '10.1.3.77', 'tcp', 80), ['dst'])).toBe(false);
  });

  it('a redacted (raw) member makes a non-match undecidable, but a real match still wins', () => {
    expect(ipsetMatches(S('redacted'), pkt('1.1.1.1', '10.0.0.9', 'tcp', 80), ['dst'])).toBe(true);
    expect(ipsetMatches(S('redacted'), pkt('1.1.1.1', '10.0.0.8', 'tcp', 80), ['dst'])).toBe('unknown');
  });

  it('an empty set never matches', () => {
    expect(ipsetMatches(S('empty'), pkt('1.1.1.1', '10.0.0.9', 'tcp', 80), ['dst'])).toBe(false);
  });

  it('a terse set (members not listed) is undecidable unless it declares 0 entries', () => {
    const terse: IpSet = { ...S('KUBE-CLUSTER-IP'), members: [], terse: true, declaredEntries: 2 };
    expect(ipsetMatches(terse, pkt('1.1.1.1', '10.96.0.1', 'tcp', 443), DD)).toBe('unknown');
    expect(ipsetMatches({ ...terse, declaredEntries: 0 }, pkt('1.1.1.1', '10.96.0.1', 'tcp', 443), DD)).toBe(false);
  });
});

describe('ipsetMatches — list:set', () => {
  it('matches when any member set matches, with the same flags', () => {
    expect(ipsetMatches(S('lst'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30080), ['dst', 'dst'], index)).toBe(true);
    expect(ipsetMatches(S('lst'), pkt('1.1.1.1', '11.0.0.1', 'tcp', 30081), ['dst', 'dst'], index)).toBe(false);
    // netiface is undecidable for 10.x destinations
    expect(ipsetMatches(S('lst'), pkt('1.1.1.1', '10.0.0.1', 'tcp', 30081), ['dst', 'dst'], index)).toBe('unknown');
  });

  it('accepts the sets as an array too', () => {
    expect(ipsetMatches(S('lst'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30080), ['dst'], sets)).toBe(true);
  });

  it('is undecidable without the member sets, unless another member matches', () => {
    expect(ipsetMatches(S('lst'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30080), ['dst'])).toBe('unknown');
    expect(ipsetMatches(S('lst-missing'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30080), ['dst'], index)).toBe(true);
    expect(ipsetMatches(S('lst-missing'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30081), ['dst'], index)).toBe('unknown');
  });

  it('does not loop on sets that contain each other', () => {
    expect(ipsetMatches(S('loop-a'), pkt('1.1.1.1', '172.18.0.2', 'tcp', 30080), ['dst'], index)).toBe(false);
  });
});

describe('helpers', () => {
  it('ipsetDimensions', () => {
    expect(ipsetDimensions('hash:ip,port,net')).toEqual(['ip', 'port', 'net']);
    expect(ipsetDimensions('bitmap:port')).toEqual(['port']);
    expect(ipsetDimensions('list:set')).toEqual(['set']);
    expect(ipsetDimensions('hash:foo')).toEqual(['unknown']);
    expect(ipsetDimensions('')).toEqual([]);
  });

  it('ipsetIndex keys by name and keeps the first of duplicates', () => {
    const a = { ...S('empty'), line: 1 };
    const b = { ...S('empty'), line: 2 };
    const m = ipsetIndex([a, b, S('nm')]);
    expect([...m.keys()]).toEqual(['empty', 'nm']);
    expect(m.get('empty')?.line).toBe(1);
  });
});
