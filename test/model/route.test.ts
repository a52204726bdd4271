import { describe, expect, it } from 'vitest';
import { ipRouteParser } from '../../src/extract/iproute.js';
import { parseIp } from '../../src/model/addr.js';
import { lookupRoute, normalizeTable, protoName, protoNumber, routesInTable } from '../../src/model/route.js';

// A node with a Calico block, a connected network, a default, IPVS VIPs in table local, a second
// default with a worse metric, a TOS route and an `ip route get` answer pasted in the middle.
const DUMP = `
default via 10.0.2.2 dev eth0 proto dhcp metric 100
default via 10.0.2.3 dev eth1 metric 200
10.0.2.0/24 dev eth0 proto kernel scope link src 10.0.2.15
10.244.0.0/16 via 10.0.2.9 dev eth0 proto bird
blackhole 10.244.3.0/26 proto bird
10.244.3.7 dev cali0123456789a scope link
unreachable 10.9.0.0/16
prohibit 10.8.0.0/16
10.7.0.0/16 tos 0x10 via 10.0.2.3 dev eth1
10.6.0.0/16 via 10.0.2.4 dev eth0 metric 50
10.6.0.0/16 via 10.0.2.5 dev eth0 metric 5
throw 10.60.0.0/16 table 100
10.60.0.0/14 via 10.0.2.8 dev eth0 table 100
10.200.0.9 via 10.0.2.99 dev eth0 uid 0
    cache
local 10.96.0.1 dev kube-ipvs0 table local proto kernel scope host src 10.96.0.1
local 10.0.2.15 dev eth0 table local proto kernel scope host src 10.0.2.15
broadcast 10.0.2.255 dev eth0 table local proto kernel scope link src 10.0.2.15
10.96.0.0/12 via 10.0.2.77 dev eth0
fd00:10:244:3::/64 dev eth0 metric 1024 pref medium
blackhole fd00:10:244::/48 dev lo metric 1024 pref medium
local fd00:1::15 dev eth0 table local proto kernel metric 0 pref medium
`;

const routes = ipRouteParser.parse(DUMP, 'n.txt').data.routes;
const look = (ip: string, tables?: string[]) => lookupRoute(routes, parseIp(ip)!, tables ? { tables } : undefined);

describe('lookupRoute', () => {
  it('uses table local before main (a VIP on kube-ipvs0 beats a covering main route)', () => {
    expect(look('10.96.0.1')).toMatchObject({ type: 'local', dev: 'kube-ipvs0', table: 'local' });
    expect(look('10.96.0.2')).toMatchObject({ table: 'main', via: { address: '10.0.2.77' } });
    expect(look('10.0.2.15')?.type).toBe('local');
    expect(look('10.0.2.255')?.type).toBe('broadcast');
    expect(look('fd00:1::15')?.type).toBe('local');
  });

  it('takes the longest prefix', () => {
    expect(look('10.244.3.7')?.dev).toBe('cali0123456789a');
    expect(look('10.244.3.8')?.type).toBe('blackhole');
    expect(look('10.244.9.9')?.via?.address).toBe('10.0.2.9');
    expect(look('10.0.2.77')?.dstText).toBe('10.0.2.0/24');
    expect(look('fd00:10:244:3::5')?.dev).toBe('eth0');
    expect(look('fd00:10:244:4::5')?.type).toBe('blackhole');
  });

  it('then the lowest metric (a missing metric is 0)', () => {
    expect(look('8.8.8.8')).toMatchObject({ dstText: 'default', metric: 100, dev: 'eth0' });
    expect(look('10.6.1.1')?.via?.address).toBe('10.0.2.5');
  });

  it('returns rejecting routes as such', () => {
    expect(look('10.9.0.1')?.type).toBe('unreachable');
    expect(look('10.8.0.1')?.type).toBe('prohibit');
    expect(look('10.60.1.1', ['100'])?.type).toBe('throw');
    expect(look('10.61.1.1', ['100'])?.via?.address).toBe('10.0.2.8');
  });

  it('skips TOS routes, ip route get answers and other families', () => {
    expect(look('10.7.0.1')?.dstText).toBe('default');
    expect(look('10.200.0.9')?.dstText).toBe('default');
    expect(look('2001:db8::1')).toBeUndefined();
  });

  it('honours the tables option and numeric reserved tables', () => {
    expect(look('10.96.0.1', ['main'])?.via?.address).toBe('10.0.2.77');
    expect(look('10.96.0.1', ['255'])?.type).toBe('local');
    expect(normalizeTable('254')).toBe('main');
    expect(routesInTable(routes, 'local')).toHaveLength(4);
  });
});

describe('proto names and numbers', () => {
  it('maps both ways (Debian 12 rt_protos)', () => {
    expect(protoNumber('bird')).toBe(12);
    expect(protoNumber('12')).toBe(12);
    expect(protoNumber('kernel')).toBe(2);
    expect(protoNumber('nonsense')).toBeUndefined();
    expect(protoName('12')).toBe('bird');
    expect(protoName('42')).toBe('babel');
    expect(protoName('250')).toBe('250');
    expect(protoName('static')).toBe('static');
  });
});
