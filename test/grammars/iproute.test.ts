import { describe, expect, it } from 'vitest';
import { parseIpRouteText } from '../../grammars/iproute/index.js';
import { ipRouteJsonSniffer, ipRouteSniffer } from '../../grammars/iproute/sniff.js';
import { ipAddrJsonSniffer, ipAddrSniffer } from '../../grammars/ipaddr/sniff.js';
import { sysctlSniffer } from '../../grammars/sysctl/sniff.js';
import { ipRouteJsonParser, ipRouteParser } from '../../src/extract/iproute.js';

const parse = (text: string) => ipRouteParser.parse(text, 'r.txt');
const nonInfo = (r: ReturnType<typeof parse>) => r.diagnostics.filter((d) => d.severity !== 'info');

describe('ip route text grammar', () => {
  it('tokenises every attribute of a route line with columns', () => {
    const s = parseIpRouteText('blackhole 10.244.3.0/26 tos 0x10 table 100 proto bird scope global metric 5 onlink mtu lock 1400\n');
    const l = s.lines[0];
    expect(l.kind).toBe('node');
    if (l.kind !== 'node' || l.node.kind !== 'route') throw new Error('not a route');
    expect(l.node.type).toEqual({ text: 'blackhole', column: 1, endColumn: 10 });
    expect(l.node.dst).toEqual({ text: '10.244.3.0/26', column: 11, endColumn: 24 });
    expect(l.node.attrs.map((a) => [a.kind, a.key, a.values.map((v) => v.text).join(' '), a.locked ?? false])).toEqual([
      ['value', 'tos', '0x10', false],
      ['value', 'table', '100', false],
      ['value', 'proto', 'bird', false],
      ['value', 'scope', 'global', false],
      ['value', 'metric', '5', false],
      ['flag', 'onlink', '', false],
      ['metric', 'mtu', '1400', true],
    ]);
  });

  it('keywords can be values (table local, dev named like a keyword prefix)', () => {
    const r = parse('local 10.0.2.15 dev devlocal0 table local proto kernel scope host src 10.0.2.15 \n');
    expect(nonInfo(r)).toEqual([]);
    expect(r.data.routes[0]).toMatchObject({ type: 'local', dev: 'devlocal0', table: 'local', scope: 'host' });
  });

  it('reports a truncated line with line, column, expected and found', () => {
    const r = parse('default via 10.0.2.2 dev eth0\n10.1.0.0/16 via\n10.2.0.0/16 dev eth1\n');
    expect(r.data.routes.map((x) => x.dstText)).toEqual(['default', '10.2.0.0/16']);
    const errs = r.diagnostics.filter((d) => d.severity === 'error');
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ code: 'parse/unexpected-token', file: 'r.txt', line: 2, column: 16, found: 'end of line' });
    expect(errs[0].expected).toMatch(/value/);
    expect(r.data.unsupported).toEqual([{ line: 2, text: '10.1.0.0/16 via', reason: 'syntax error' }]);
  });

  it('rejects a destination that is not an address, with its column', () => {
    const r = parse('    x.y.z.0/23 via 10.0.2.2 dev eth0\n');
    expect(r.data.routes).toEqual([]);
    expect(r.diagnostics.filter((d) => d.severity === 'error')[0]).toMatchObject({ code: 'extract/bad-address', line: 1, column: 5, found: 'x.y.z.0/23' });
    // `route -n` output pasted by mistake: `table` needs a value.
    const k = parse('Kernel IP routing table\n');
    expect(k.diagnostics[0]).toMatchObject({ severity: 'error', code: 'parse/unexpected-token', line: 1, column: 24, found: 'end of line' });
  });

  it('warns about unknown attributes and keeps them', () => {
    const r = parse('10.0.0.0/8 via 10.0.2.2 dev eth0 frobnicate\n');
    expect(r.data.routes[0].extra.unknown).toBe('frobnicate');
    expect(nonInfo(r)[0]).toMatchObject({ severity: 'warning', code: 'ip-route/unknown-attribute', column: 34 });
  });

  it('handles CRLF, BOM, indentation, prompts, fences, iproute2 3.x double spaces and stderr', () => {
    const text = [
      '\ufeff```',
      '[root@k8s-ctr ~]# ip route',
      '  default via 10.0.2.2 dev eth0  proto static  metric 100 ',
      '  10.0.2.0/24 dev eth0  proto kernel  scope link  src 10.0.2.15  ',
      'RTNETLINK answers: Operation not permitted',
      '```',
    ].join('\r\n');
    const r = parse(text);
    expect(nonInfo(r).map((d) => d.code)).toEqual(['input/stderr']);
    expect(r.data.routes.map((x) => [x.line, x.dstText, x.dev, x.proto, x.scope, x.src, x.metric])).toEqual([
      [3, 'default', 'eth0', 'static', undefined, undefined, 100],
      [4, '10.0.2.0/24', 'eth0', 'kernel', 'link', '10.0.2.15', undefined],
    ]);
    expect(r.data.unsupported.map((u) => [u.line, u.reason])).toEqual([
      [1, 'noise (fence)'],
      [2, 'noise (prompt)'],
      [5, 'stderr message'],
      [6, 'noise (fence)'],
    ]);
  });

  it('old multipath with tabs and double spaces; nexthop flags and inet6 hops', () => {
    const r = parse('default  proto static  metric 10\n\tnexthop via 10.0.0.1  dev eth0 weight 1 dead linkdown\n\tnexthop via inet6 fd00::2  dev eth1 weight 3\n');
    expect(nonInfo(r)).toEqual([]);
    const mp = r.data.routes[0];
    expect(mp.family).toBe(4);
    expect(mp.nexthops?.map((h) => [h.via?.family, h.via?.address, h.dev, h.weight, h.flags, h.line])).toEqual([
      [4, '10.0.0.1', 'eth0', 1, ['dead', 'linkdown'], 2],
      [6, 'fd00::2', 'eth1', 3, [], 3],
    ]);
  });

  it('a nexthop line without a route is an error', () => {
    const r = parse('\tnexthop via 10.0.0.1 dev eth0 weight 1\n');
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', code: 'ip-route/orphan-nexthop', line: 1, column: 2 });
  });

  it('recognises ip route get answers and cache lines (kept, flagged)', () => {
    const r = parse('10.5.1.1 via 10.0.2.2 dev va src 10.0.2.15 uid 0 \n    cache mtu lock 1400 rtt 10ms \nlocal 10.0.2.15 dev lo src 10.0.2.15 uid 0 \n    cache <local> \nfd00:1::2 from :: dev va proto kernel src fd00:1::15 metric 256 pref medium\n');
    expect(nonInfo(r)).toEqual([]);
    expect(r.data.routes.map((x) => [x.dstText, x.origin, x.extra.uid, x.extra.cache])).toEqual([
      ['10.5.1.1', 'get', '0', 'mtu lock 1400 rtt 10ms'],
      ['10.0.2.15', 'get', '0', '<local>'],
      ['fd00:1::2', 'get', undefined, undefined],
    ]);
    expect(r.diagnostics.filter((d) => d.code === 'ip-route/not-a-table-entry').map((d) => d.line)).toEqual([1, 3]);
    // A cache entry without uid (old `ip route show cache`).
    const c = parse('10.9.9.9 via 10.0.2.2 dev eth0  src 10.0.2.15 \n    cache  ipid 0x1234 rtt 12ms\n');
    expect(c.data.routes[0]).toMatchObject({ origin: 'cache', extra: { cache: 'ipid 0x1234 rtt 12ms' } });
  });

  it('keeps nhid, encap, expires, pref, realms, error, from and metric_N', () => {
    const r = parse(
      [
        '10.90.0.0/16 nhid 1 via 10.0.2.2 dev eth0 ',
        '10.91.0.0/16 encap mpls 100/200 via 10.0.2.2 dev eth0 ',
        'unreachable 2001:db8:9::/48 dev lo metric 1024 error -113 pref medium',
        '2001:db8::/64 from 2001:db8:1::/64 via fe80::1 dev eth0 metric 1024 expires 5sec pref high',
        '10.92.0.0/16 via 10.0.2.2 dev eth0 metric_17 5 realms 3',
      ].join('\n'),
    );
    expect(nonInfo(r)).toEqual([]);
    const [a, b, c, d, e] = r.data.routes;
    expect(a.nhid).toBe(1);
    expect(b.extra.encap).toBe('mpls 100/200');
    expect(b.via?.address).toBe('10.0.2.2');
    expect(c).toMatchObject({ type: 'unreachable', family: 6, extra: { error: '-113', pref: 'medium' } });
    expect(d.origin).toBeUndefined();
    expect(d).toMatchObject({ extra: { from: '2001:db8:1::/64', expires: '5sec', pref: 'high' } });
    expect(e).toMatchObject({ metrics: { metric_17: '5' }, extra: { realms: '3' } });
  });

  it('guesses the family of `default` without a next hop from pref or neighbours', () => {
    const r = parse('fd00::/64 dev eth0 metric 256 pref medium\ndefault dev ppp0 metric 1024 pref medium\ndefault dev wg0 scope link \n');
    expect(r.data.routes.map((x) => [x.family, x.dst.family, x.dst.prefix])).toEqual([
      [6, 6, 64],
      [6, 6, 0],
      [6, 6, 0],
    ]);
    expect(parse('default dev wg0 scope link \n').data.routes[0].family).toBe(4);
  });

  it('flags a bad number with its column', () => {
    const r = parse('10.0.0.0/8 dev eth0 metric abc\n');
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', code: 'extract/bad-number', line: 1, column: 28, found: 'abc' });
  });
});

describe('ip -j route JSON', () => {
  it('maps each route object to its line and reads every key', () => {
    const text = '$ ip -j -p route\n[ {\n  "dst": "default", "gateway": "10.0.2.2", "dev": "eth0", "protocol": "dhcp", "prefsrc": "10.0.2.15", "metric": 100, "flags": [ ]\n},{\n  "dst": "10.70.0.0/16", "via": {"family": "inet6", "host": "fd00:1::2"}, "dev": "eth0", "flags": ["onlink"], "metrics": [{"mtu": 1450}], "flow": {"from": "1", "to": "2"}\n} ]\n';
    const r = ipRouteJsonParser.parse(text, 'r.json');
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([['info', 'input/noise', 1]]);
    expect(r.data.routes.map((x) => [x.line, x.dstText, x.via?.family, x.via?.address, x.flags, x.metrics, x.extra])).toEqual([
      [2, 'default', 4, '10.0.2.2', [], undefined, {}],
      [4, '10.70.0.0/16', 6, 'fd00:1::2', ['onlink'], { mtu: '1450' }, { realms: '1/2' }],
    ]);
    expect(r.counts).toEqual({ routes: 2 });
  });

  it('reports broken JSON with a position and never throws', () => {
    const r = ipRouteJsonParser.parse('[{"dst":"default",\n "dev" "eth0"}]', 'r.json');
    expect(r.data.routes).toEqual([]);
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', code: 'parse/bad-json', line: 2, column: 8 });
    const e = ipRouteJsonParser.parse('not json at all', 'r.json');
    expect(e.diagnostics.some((d) => d.severity === 'error' && d.code === 'parse/bad-json')).toBe(true);
    const bad = ipRouteJsonParser.parse('[{"dst":"x.y.z.0/23","flags":[]}, 5, {"type":"local"}]', 'r.json');
    expect(bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['extract/bad-address', 'ip-route-json/not-an-object', 'ip-route-json/missing-dst']);
    expect(bad.data.unsupported).toHaveLength(3);
  });
});

describe('sniffers do not confuse formats', () => {
  const samples: Record<string, string> = {
    route: 'default via 10.0.2.2 dev eth0 proto dhcp metric 100 \n10.0.2.0/24 dev eth0 proto kernel scope link src 10.0.2.15 \nblackhole 10.244.3.0/26 proto bird \n',
    routeJson: '[{"dst":"default","gateway":"10.0.2.2","dev":"eth0","flags":[]}]\n',
    addr: '1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n    inet 127.0.0.1/8 scope host lo\n       valid_lft forever preferred_lft forever\n',
    addrO: '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n',
    addrJson: '[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK"],"addr_info":[]}]\n',
    iptables: '# Generated by iptables-save v1.8.9\n*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n',
    ipvsadm: 'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  10.96.0.1:443 rr\n  -> 192.168.0.10:6443            Masq    1      0          0\n',
    ipset: 'Name: KUBE-CLUSTER-IP\nType: hash:ip,port\nMembers:\n10.96.0.1,tcp:443\n',
    sysctl: 'net.ipv4.ip_forward = 1\nnet.ipv4.vs.conntrack = 1\n',
    nftJson: '{"nftables": [{"metainfo": {"version": "1.0.6"}}]}\n',
  };
  const sniffers = { route: ipRouteSniffer, routeJson: ipRouteJsonSniffer, addr: ipAddrSniffer, addrJson: ipAddrJsonSniffer, sysctl: sysctlSniffer };
  const expectedOwner: Record<string, keyof typeof sniffers | undefined> = {
    route: 'route',
    routeJson: 'routeJson',
    addr: 'addr',
    addrO: 'addr',
    addrJson: 'addrJson',
    iptables: undefined,
    ipvsadm: undefined,
    ipset: undefined,
    sysctl: 'sysctl',
    nftJson: undefined,
  };
  for (const [name, text] of Object.entries(samples)) {
    it(`${name}`, () => {
      const lines = text.split('\n');
      for (const [sname, s] of Object.entries(sniffers)) {
        const score = s.sniff(lines);
        if (expectedOwner[name] === sname) expect(score, `${sname} on ${name}`).toBeGreaterThan(0.7);
        else expect(score, `${sname} on ${name}`).toBe(0);
      }
    });
  }
});
