/**
 * Pure helpers of src/model/ipvs.ts. Virtual servers are HAND-MADE plain objects (and one
 * hand-made listing parsed through the extractor).
 */
import { describe, expect, it } from 'vitest';
import { parseIp } from '../../src/model/addr.js';
import { ipvsadmParser } from '../../src/extract/ipvsadm.js';
import {
  findFwmarkService,
  findVirtualServer,
  realServerKey,
  realServerShares,
  virtualServerKey,
  type IpvsDump,
  type RealServer,
  type VirtualServer,
} from '../../src/model/ipvs.js';

const rs = (address: string, weight: number | undefined, line = 1): RealServer => ({
  address,
  ip: parseIp(address),
  port: 8080,
  forward: 'Masq',
  ...(weight === undefined ? {} : { weight }),
  line,
  column: 6,
});
const vs = (scheduler: string | undefined, realServers: RealServer[]): VirtualServer => ({
  protocol: 'TCP',
  address: '10.96.0.10',
  ip: parseIp('10.96.0.10'),
  port: 80,
  family: 4,
  ...(scheduler ? { scheduler } : {}),
  schedFlags: [],
  ops: false,
  realServers,
  line: 1,
  column: 1,
  file: 'hand-made',
});
const shares = (v: VirtualServer) => realServerShares(v).map((s) => Number(s.share.toFixed(4)));

describe('virtualServerKey / realServerKey', () => {
  it('formats kube-proxy style keys', () => {
    expect(virtualServerKey(vs('rr', []))).toBe('TCP/10.96.0.10:80');
    const v6: VirtualServer = { ...vs('rr', []), address: 'fd20:0:0::a', ip: parseIp('fd20:0:0::a'), family: 6, port: 53, protocol: 'UDP' };
    expect(virtualServerKey(v6)).toBe('UDP/[fd20::a]:53');
    const fwm: VirtualServer = { protocol: 'FWM', fwmark: 3, family: 4, schedFlags: [], ops: false, realServers: [], line: 1, column: 1, file: 'x' };
    expect(virtualServerKey(fwm)).toBe('FWM/3');
    expect(virtualServerKey({ ...fwm, family: 6 })).toBe('FWM/3/IPv6');
    const named: VirtualServer = { ...vs('rr', []), address: 'web.example', ip: undefined, port: undefined, portName: 'my-app' };
    expect(virtualServerKey(named)).toBe('TCP/web.example:my-app');
    expect(realServerKey(rs('10.244.0.2', 1))).toBe('10.244.0.2:8080');
    expect(realServerKey({ address: 'fd00::2', ip: parseIp('fd00::2'), port: 53, line: 1, column: 1 })).toBe('[fd00::2]:53');
  });
});

describe('findVirtualServer / findFwmarkService', () => {
  const text = [
    'TCP  10.96.0.10:53 rr',
    '  -> 10.244.0.2:53                Masq    1      0          0',
    'UDP  10.96.0.10:53 rr',
    'TCP  [fd20::a]:53 rr',
    'FWM  3 wrr',
    'FWM  3 IPv6 wrr',
    '',
  ].join('\n');
  const dump: IpvsDump = ipvsadmParser.parse(text, 'hand-made').data;
  it('matches protocol, address by value, and port', () => {
    expect(findVirtualServer(dump, 'TCP', '10.96.0.10', 53)?.line).toBe(1);
    expect(findVirtualServer(dump, 'udp', '10.96.0.10', 53)?.line).toBe(3);
    expect(findVirtualServer(dump, 'TCP', 'fd20:0::a', 53)?.line).toBe(4);
    expect(findVirtualServer(dump, 'TCP', '[fd20::a]', 53)?.line).toBe(4);
    expect(findVirtualServer(dump, 'TCP', parseIp('10.96.0.10')!, 53)?.realServers).toHaveLength(1);
    expect(findVirtualServer(dump, 'TCP', '10.96.0.10', 54)).toBeUndefined();
    expect(findVirtualServer(dump, 'SCTP', '10.96.0.10', 53)).toBeUndefined();
    expect(findVirtualServer(dump, 'TCP', 'not-an-ip', 53)).toBeUndefined();
    expect(findFwmarkService(dump, 3)?.line).toBe(5);
    expect(findFwmarkService(dump, 3, 6)?.line).toBe(6);
    expect(findFwmarkService(dump, 4)).toBeUndefined();
  });
});

describe('realServerShares', () => {
  it('wrr / wlc / sh and unknown schedulers: weight-proportional among weight > 0', () => {
    const servers = [rs('10.0.0.1', 3), rs('10.0.0.2', 1), rs('10.0.0.3', 0)];
    expect(shares(vs('wrr', servers))).toEqual([0.75, 0.25, 0]);
    expect(shares(vs('wlc', servers))).toEqual([0.75, 0.25, 0]);
    expect(shares(vs('sh', servers))).toEqual([0.75, 0.25, 0]);
    expect(shares(vs('sed', servers))).toEqual([0.75, 0.25, 0]);
    expect(shares(vs('something-new', servers))).toEqual([0.75, 0.25, 0]);
    // no scheduler printed (--stats view): ipvsadm's default wlc
    expect(shares(vs(undefined, servers))).toEqual([0.75, 0.25, 0]);
  });
  it('rr / lc / dh: equal among weight > 0 (weights only exclude 0)', () => {
    const servers = [rs('10.0.0.1', 3), rs('10.0.0.2', 1), rs('10.0.0.3', 0)];
    expect(shares(vs('rr', servers))).toEqual([0.5, 0.5, 0]);
    expect(shares(vs('lc', servers))).toEqual([0.5, 0.5, 0]);
  });
  it('fo / ovf: highest weight only', () => {
    expect(shares(vs('fo', [rs('10.0.0.1', 1), rs('10.0.0.2', 5), rs('10.0.0.3', 5)]))).toEqual([0, 0.5, 0.5]);
  });
  it('kube-proxy services (weight 1) split equally; all weights 0 → no destination', () => {
    expect(shares(vs('rr', [rs('10.0.0.1', 1), rs('10.0.0.2', 1), rs('10.0.0.3', 1)]))).toEqual([0.3333, 0.3333, 0.3333]);
    const drained = vs('rr', [rs('10.0.0.1', 0), rs('10.0.0.2', 0)]);
    expect(shares(drained)).toEqual([0, 0]);
    expect(realServerShares(vs('wrr', []))).toEqual([]);
    // a cut line without a weight is not counted
    expect(shares(vs('rr', [rs('10.0.0.1', 1), rs('10.0.0.2', undefined)]))).toEqual([1, 0]);
  });
  it('returns the real server objects themselves', () => {
    const v = vs('rr', [rs('10.0.0.1', 1)]);
    expect(realServerShares(v)[0].realServer).toBe(v.realServers[0]);
  });
});
