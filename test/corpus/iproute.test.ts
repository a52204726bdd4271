/**
 * Every route sample of the shared corpus parses without errors, with concrete values checked
 * against the samples' .source notes and generated/README.md.
 */
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ipRouteJsonSniffer, ipRouteSniffer } from '../../grammars/iproute/sniff.js';
import { ipAddrSniffer } from '../../grammars/ipaddr/sniff.js';
import { sysctlSniffer } from '../../grammars/sysctl/sniff.js';
import { splitInput } from '../../grammars/common/text.js';
import { ipRouteJsonParser, ipRouteParser } from '../../src/extract/iproute.js';
import { parseIp } from '../../src/model/addr.js';
import { lookupRoute, type Route } from '../../src/model/route.js';
import { corpusFiles, readCorpus } from '../helpers/corpus.js';

const textFiles = corpusFiles(/^(route\/.*\.route|generated\/route.*\.txt)$/);
const jsonFiles = corpusFiles(/(^|\/)route[^/]*\.json$/);

function parse(path: string) {
  const json = path.endsWith('.json');
  const r = (json ? ipRouteJsonParser : ipRouteParser).parse(readCorpus(path), basename(path));
  return r;
}

const one = (routes: readonly Route[], dst: string, table = 'main') => {
  const r = routes.filter((x) => x.dstText === dst && x.table === table);
  expect(r, `${dst} table ${table}`).toHaveLength(1);
  return r[0];
};

describe('corpus: ip route', () => {
  it('finds the route files', () => {
    expect(textFiles.length).toBeGreaterThanOrEqual(7);
    expect(jsonFiles.length).toBeGreaterThanOrEqual(2);
  });

  for (const f of [...textFiles, ...jsonFiles]) {
    it(`${basename(f)} parses without errors or warnings and is sniffed as its format`, () => {
      const r = parse(f);
      expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
      expect(r.data.unsupported).toEqual([]);
      expect(r.counts.routes).toBeGreaterThan(0);
      const lines = splitInput(readCorpus(f)).lines;
      const isJson = f.endsWith('.json');
      expect((isJson ? ipRouteJsonSniffer : ipRouteSniffer).sniff(lines)).toBeGreaterThan(0.8);
      expect((isJson ? ipRouteSniffer : ipRouteJsonSniffer).sniff(lines)).toBe(0);
      expect(ipAddrSniffer.sniff(lines)).toBe(0);
      expect(sysctlSniffer.sniff(lines)).toBe(0);
    });
  }

  it('calico #9010 (indented, IPIP tunl0, bird, blackhole block, /32 pod routes)', () => {
    const f = textFiles.find((x) => x.includes('calico-9010'))!;
    const { data } = parse(f);
    expect(data.routes).toHaveLength(24);
    expect(one(data.routes, '172.27.174.0/26')).toMatchObject({ type: 'unicast', dev: 'tunl0', proto: 'bird', flags: ['onlink'], via: { family: 4, address: '10.77.20.196' }, line: 1 });
    expect(one(data.routes, '172.27.198.192/26')).toMatchObject({ type: 'blackhole', proto: 'bird', line: 5 });
    expect(one(data.routes, '172.27.198.195')).toMatchObject({ dev: 'cali5ce32826680', scope: 'link' });
    // Longest prefix: a pod IP in the node's own block goes to its veth, an unused one hits the blackhole,
    // a borrowed /32 goes through the tunnel.
    expect(lookupRoute(data.routes, parseIp('172.27.198.195')!)?.dev).toBe('cali5ce32826680');
    expect(lookupRoute(data.routes, parseIp('172.27.198.200')!)?.type).toBe('blackhole');
    expect(lookupRoute(data.routes, parseIp('172.27.198.225')!)).toMatchObject({ dev: 'tunl0', via: { address: '10.77.20.145' } });
    expect(lookupRoute(data.routes, parseIp('172.27.175.70')!)?.via?.address).toBe('10.77.7.159');
    expect(lookupRoute(data.routes, parseIp('8.8.8.8')!)).toBeUndefined();
  });

  it('hard-way AWS (trailing spaces, dhcp default, static pod CIDR routes)', () => {
    const f = textFiles.find((x) => x.includes('hardway-aws'))!;
    const { data } = parse(f);
    expect(data.routes).toHaveLength(6);
    expect(one(data.routes, 'default')).toMatchObject({ via: { address: '172.31.0.1' }, dev: 'ens5', proto: 'dhcp', src: '172.31.5.196', metric: 100, family: 4 });
    expect(one(data.routes, '10.200.1.0/24')).toMatchObject({ via: { address: '172.31.15.209' }, dev: 'ens5' });
    expect(lookupRoute(data.routes, parseIp('10.200.1.7')!)?.via?.address).toBe('172.31.15.209');
    expect(lookupRoute(data.routes, parseIp('1.1.1.1')!)?.dstText).toBe('default');
    expect(lookupRoute(data.routes, parseIp('172.31.0.2')!)).toMatchObject({ dstText: '172.31.0.2', scope: 'link' });
  });

  it('generated route-all.txt: every type, tables, multipath, via inet6, metrics, realms, tos', () => {
    const { data } = parse(textFiles.find((x) => x.endsWith('route-all.txt'))!);
    const rs = data.routes;
    expect(rs).toHaveLength(52);
    expect(one(rs, 'default', '100').via?.address).toBe('10.0.2.1');
    expect(one(rs, '10.60.0.0/16', '100').type).toBe('throw');
    expect(one(rs, '10.61.0.0/16', '200')).toMatchObject({ scope: 'link', dev: 'eth0' });
    expect(one(rs, '10.8.0.0/16').type).toBe('prohibit');
    expect(one(rs, '10.9.0.0/16').type).toBe('unreachable');
    const mp = one(rs, '10.50.0.0/16');
    expect(mp).toMatchObject({ proto: 'static', metric: 10, line: 8 });
    expect(mp.nexthops).toEqual([
      { via: { family: 4, address: '10.0.2.2', ip: parseIp('10.0.2.2') }, dev: 'eth0', weight: 1, flags: [], line: 9 },
      { via: { family: 4, address: '10.0.2.3', ip: parseIp('10.0.2.3') }, dev: 'eth0', weight: 2, flags: [], line: 10 },
    ]);
    expect(one(rs, '10.51.0.0/16')).toMatchObject({ proto: 'babel', metrics: { mtu: '1450', advmss: '1400' } });
    expect(one(rs, '10.62.0.1').flags).toEqual(['linkdown']);
    expect(one(rs, '10.70.0.0/16').via).toMatchObject({ family: 6, address: 'fd00:1::2' });
    expect(one(rs, '10.73.0.0/16').extra.realms).toBe('1/2');
    expect(one(rs, '10.75.0.0/16')).toMatchObject({ proto: '250', metrics: { initcwnd: '10' } });
    expect(one(rs, '10.77.0.0/16')).toMatchObject({ proto: 'zebra', metric: 20 });
    expect(one(rs, '10.80.0.0/16').tos).toBe('0x10');
    expect(one(rs, '10.81.0.1')).toMatchObject({ scope: 'host', proto: 'kernel' });
    expect(one(rs, '10.244.1.0/24')).toMatchObject({ dev: 'flannel.1', flags: ['onlink'] });
    expect(one(rs, '10.244.3.0/26')).toMatchObject({ type: 'blackhole', proto: 'bird' });
    expect(one(rs, '10.0.2.15', 'local')).toMatchObject({ type: 'local', scope: 'host', src: '10.0.2.15' });
    expect(one(rs, '10.0.2.255', 'local').type).toBe('broadcast');
    const v6mp = one(rs, '2001:db8::/64');
    expect(v6mp.family).toBe(6);
    expect(v6mp.nexthops?.map((h) => [h.via?.address, h.weight])).toEqual([
      ['fd00:1::2', 1],
      ['fd00:1::3', 1],
    ]);
    expect(one(rs, '2001:db8:1::/64').extra).toEqual({ expires: '99sec', pref: 'medium' });
    expect(one(rs, 'fd00:10:244:3::/64')).toMatchObject({ type: 'blackhole', dev: 'lo', metric: 1024 });
    const defaults = rs.filter((r) => r.dstText === 'default' && r.table === 'main');
    expect(defaults.map((r) => [r.family, r.via?.address, r.dst.prefix])).toEqual([
      [4, '10.0.2.2', 0],
      [6, 'fd00:1::1', 0],
    ]);
    expect(rs.filter((r) => r.type === 'multicast' && r.family === 6)).toHaveLength(5);
    // Lookups: local first, throw in table 100, TOS routes are not used for TOS 0.
    expect(lookupRoute(rs, parseIp('10.0.2.15')!)?.type).toBe('local');
    expect(lookupRoute(rs, parseIp('10.60.1.1')!, { tables: ['100'] })?.type).toBe('throw');
    expect(lookupRoute(rs, parseIp('10.80.1.1')!)?.dstText).toBe('default');
    expect(lookupRoute(rs, parseIp('10.244.3.9')!)?.type).toBe('blackhole');
    expect(lookupRoute(rs, parseIp('fd00:10:244:3::9')!)?.type).toBe('blackhole');
    expect(lookupRoute(rs, parseIp('2001:db8::1')!)?.nexthops).toHaveLength(2);
  });

  it('generated -d outputs print unicast and proto boot explicitly; same routes as without -d', () => {
    const d = parse(textFiles.find((x) => x.endsWith('/route-d.txt'))!).data.routes;
    const plain = parse(textFiles.find((x) => x.endsWith('/route.txt'))!).data.routes;
    expect(d.map((r) => [r.type, r.dstText, r.via?.address, r.dev])).toEqual(plain.map((r) => [r.type, r.dstText, r.via?.address, r.dev]));
    expect(one(d, '10.70.0.0/16')).toMatchObject({ proto: 'boot', scope: 'global' });
    expect(one(d, '10.8.0.0/16')).toMatchObject({ type: 'prohibit', proto: 'boot' });
    const d6 = parse(textFiles.find((x) => x.endsWith('/route6-d.txt'))!).data.routes;
    const p6 = parse(textFiles.find((x) => x.endsWith('/route6.txt'))!).data.routes;
    expect(d6.map((r) => [r.type, r.dstText, r.metric])).toEqual(p6.map((r) => [r.type, r.dstText, r.metric]));
    expect(p6.every((r) => r.family === 6)).toBe(true);
  });

  it('JSON and text views of the same host agree', () => {
    const strip = (r: Route) => ({ ...r, line: 0, file: '', nexthops: r.nexthops?.map((h) => ({ ...h, line: 0 })) });
    const text = parse(textFiles.find((x) => x.endsWith('route-all.txt'))!).data.routes;
    const json = parse(jsonFiles.find((x) => x.endsWith('/route.json'))!).data.routes;
    expect(json.map(strip)).toEqual(text.map(strip));
    const plain = parse(textFiles.find((x) => x.endsWith('/route.txt'))!).data.routes;
    const pretty = parse(jsonFiles.find((x) => x.endsWith('route-pretty.json'))!);
    expect(pretty.data.routes.map(strip)).toEqual(plain.map(strip));
    // Pretty JSON: each route object is mapped to the line where it starts.
    expect(pretty.data.routes[0].line).toBe(1);
    expect(pretty.data.routes[1].line).toBe(9);
    expect(one(pretty.data.routes, '10.50.0.0/16').nexthops).toHaveLength(2);
  });
});
