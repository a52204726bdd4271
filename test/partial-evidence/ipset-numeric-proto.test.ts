/**
 * ipset members printed with a numeric protocol (`10.96.0.10,17:53`, as ipset prints them where
 * /etc/protocols is missing, e.g. in a minimal container) are udp/tcp/sctp members (issue 15).
 * The kernel (`ipset test` in a throw-away namespace) is the oracle.
 */
import { describe, expect, it } from 'vitest';
import { ipsetSaveParser } from '../../src/extract/ipset.js';
import { parseIp } from '../../src/model/addr.js';
import { canonicalProto, ipsetIndex, ipsetMatches, type IpSetFlag } from '../../src/model/ipset.js';
import { requireKernel, withNetns } from '../helpers/netns.js';

const kernel = requireKernel();

/** kube-proxy IPVS-mode sets as an ipset without /etc/protocols saves them. */
const NUMERIC = `create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
add KUBE-CLUSTER-IP 10.96.0.10,17:53
add KUBE-CLUSTER-IP 10.96.0.10,6:53
add KUBE-CLUSTER-IP 10.96.0.1,6:443
add KUBE-CLUSTER-IP 10.96.0.20,132:9000
create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536
add KUBE-LOOP-BACK 10.244.1.5,17:53,10.244.1.5
create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536
add KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,6:80,10.0.0.0/8
`;

/** [set, packet (src, dst, proto, dport), flags, kernel element for `ipset test`]. */
const PROBES: readonly [string, string, string, string, number, IpSetFlag[], string][] = [
  ['KUBE-CLUSTER-IP', '10.244.1.9', '10.96.0.10', 'udp', 53, ['dst', 'dst'], '10.96.0.10,udp:53'],
  ['KUBE-CLUSTER-IP', '10.244.1.9', '10.96.0.10', 'tcp', 53, ['dst', 'dst'], '10.96.0.10,tcp:53'],
  ['KUBE-CLUSTER-IP', '10.244.1.9', '10.96.0.1', 'tcp', 443, ['dst', 'dst'], '10.96.0.1,tcp:443'],
  ['KUBE-CLUSTER-IP', '10.244.1.9', '10.96.0.1', 'udp', 443, ['dst', 'dst'], '10.96.0.1,udp:443'],
  ['KUBE-CLUSTER-IP', '10.244.1.9', '10.96.0.20', 'sctp', 9000, ['dst', 'dst'], '10.96.0.20,sctp:9000'],
  ['KUBE-CLUSTER-IP', '10.244.1.9', '10.96.0.20', 'tcp', 9000, ['dst', 'dst'], '10.96.0.20,tcp:9000'],
  ['KUBE-LOOP-BACK', '10.244.1.5', '10.244.1.5', 'udp', 53, ['dst', 'dst', 'src'], '10.244.1.5,udp:53,10.244.1.5'],
  ['KUBE-LOOP-BACK', '10.244.1.5', '10.244.1.5', 'tcp', 53, ['dst', 'dst', 'src'], '10.244.1.5,tcp:53,10.244.1.5'],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', '10.3.4.5', '1.2.3.4', 'tcp', 80, ['dst', 'dst', 'src'], '1.2.3.4,tcp:80,10.3.4.5'],
  ['KUBE-LOAD-BALANCER-SOURCE-CIDR', '10.3.4.5', '1.2.3.4', 'udp', 80, ['dst', 'dst', 'src'], '1.2.3.4,udp:80,10.3.4.5'],
];

const sets = ipsetIndex(ipsetSaveParser.parse(NUMERIC, 'sets.save').data.sets);
const kpx = (p: (typeof PROBES)[number]) =>
  ipsetMatches(sets.get(p[0])!, { src: parseIp(p[1])!, dst: parseIp(p[2])!, proto: p[3], dport: p[4] }, p[5], sets);

describe('ipset members with a numeric protocol', () => {
  it('match packets of that protocol, and only those', () => {
    expect(PROBES.map((p) => [p[6], kpx(p)])).toEqual([
      ['10.96.0.10,udp:53', true],
      ['10.96.0.10,tcp:53', true],
      ['10.96.0.1,tcp:443', true],
      ['10.96.0.1,udp:443', false],
      ['10.96.0.20,sctp:9000', true],
      ['10.96.0.20,tcp:9000', false],
      ['10.244.1.5,udp:53,10.244.1.5', true],
      ['10.244.1.5,tcp:53,10.244.1.5', false],
      ['1.2.3.4,tcp:80,10.3.4.5', true],
      ['1.2.3.4,udp:80,10.3.4.5', false],
    ]);
  });

  it('names protocols once: numbers with a name get it, others stay numbers', () => {
    expect(['17', '6', '132', '136', '1', '58', 'TCP', 'ipv6-icmp', '253', '0253'].map(canonicalProto)).toEqual(['udp', 'tcp', 'sctp', 'udplite', 'icmp', 'icmpv6', 'tcp', 'icmpv6', '253', '253']);
    const other = ipsetIndex(ipsetSaveParser.parse('create X hash:ip,port family inet\nadd X 10.0.0.1,253:0\n', 'x.save').data.sets).get('X')!;
    const p = (proto: string) => ipsetMatches(other, { src: parseIp('10.0.0.2')!, dst: parseIp('10.0.0.1')!, proto, dport: 0 }, ['dst', 'dst']);
    expect([p('253'), p('tcp')]).toEqual([true, false]);
  });

  it.runIf(kernel)('agrees with the kernel (`ipset test`) on sets restored from the numeric form', async () => {
    const answers = await withNetns('ipnum', (ns) => {
      ns.exec('ipset', ['restore'], NUMERIC);
      return PROBES.map((p) => ns.run('ipset', ['test', p[0], p[6]]).status === 0);
    });
    expect(PROBES.map(kpx)).toEqual(answers);
  });
});
