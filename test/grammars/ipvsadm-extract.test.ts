/**
 * ipvsadm text → IpvsDump (src/extract/ipvsadm.ts). Every input here is HAND-MADE, written
 * from ipvsadm.c's printf formats as documented in FORMATS.md §3 (see
 * test/fixtures/ipvsadm/printf.ts and README.md there); IPVS is not in this machine's kernel,
 * so real ipvsadm output cannot be produced here. Real samples are covered by
 * test/corpus/ipvsadm.test.ts.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/source/index.js';
import { formatIp } from '../../src/model/addr.js';
import { ipvsadmParser, parseIpvsEndpoint } from '../../src/extract/ipvsadm.js';
import { virtualServerKey, type IpvsDump } from '../../src/model/ipvs.js';
import {
  CONN_PE_TITLE,
  CONN_TITLE,
  LIST_TITLE,
  PCONN_TITLE,
  RATE_TITLE,
  STATS_TITLE,
  THRESHOLDS_TITLE,
  TUN_TITLE,
  VERSION_LINE,
  connLine,
  connPeLine,
  fwmName,
  lines,
  listReal,
  pconnReal,
  rateReal,
  statsReal,
  statsService,
  svcName,
  thresholdsReal,
  tunReal,
} from '../fixtures/ipvsadm/printf.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'ipvsadm');
const parse = (text: string, file = 'hand-made.txt') => ipvsadmParser.parse(text, file);
const errors = (r: { diagnostics: readonly Diagnostic[] }) => r.diagnostics.filter((d) => d.severity === 'error');
const keys = (d: IpvsDump) => d.virtualServers.map(virtualServerKey);

describe('-Ln (hand-made)', () => {
  const text = lines(
    VERSION_LINE,
    LIST_TITLE,
    `${svcName('TCP', '10.96.0.1:443')} rr persistent 10800`,
    listReal('172.18.0.5:6443', 'Masq', 1, 3, 0),
    `${svcName('TCP', '10.96.0.10:53')} wrr`,
    listReal('10.244.0.2:53', 'Masq', 3, 0, 12),
    listReal('10.244.0.4:53', 'Masq', 0, 1, 4),
    `${svcName('UDP', '10.96.0.10:53')} rr`,
    `${svcName('SCTP', '10.0.2.15:31514')} rr`,
    listReal('20.20.195.135:1000', 'Masq', 1, 0, 0),
    `${svcName('TCP', '[fd20::1]:443', true)} wlc persistent 300 mask 64`,
    listReal('[2001:db8:0:f101::2]:6443', 'Local', 1, 5, 0, true),
    `${svcName('TCP', '192.168.1.10:80')} sh (sh-fallback,sh-port) persistent 60 mask 255.255.255.0 pe sip ops`,
    listReal('192.168.1.11:80', 'Route', 2, 0, 0),
    listReal('192.168.1.12:80', 'Tunnel', 1, 0, 0),
    `${svcName('UDP', '192.168.1.10:5060')} mh (mh-port) ops`,
    `${fwmName(3)} wrr`,
    listReal('10.0.88.214:0', 'Route', 1, 0, 0),
    `${fwmName(7, true)} rr (flag-1,flag-3)`,
    listReal('[fd00::5]:0', 'Tunnel', 1, 0, 0, true),
  );
  const r = parse(text);
  const d = r.data;

  it('parses with no warnings or errors and counts', () => {
    expect(r.diagnostics).toEqual([]);
    expect(r.format).toBe('ipvsadm');
    expect(r.counts).toEqual({ virtualServers: 9, realServers: 9 });
    expect(d).toMatchObject({ version: '1.2.1', tableSize: 4096, view: 'list', unsupported: [], noise: [] });
  });

  it('keys services like kube-proxy (proto/ip:port, FWM/mark)', () => {
    expect(keys(d)).toEqual([
      'TCP/10.96.0.1:443',
      'TCP/10.96.0.10:53',
      'UDP/10.96.0.10:53',
      'SCTP/10.0.2.15:31514',
      'TCP/[fd20::1]:443',
      'TCP/192.168.1.10:80',
      'UDP/192.168.1.10:5060',
      'FWM/3',
      'FWM/7/IPv6',
    ]);
  });

  it('extracts persistence, scheduler flags, mask, pe, ops', () => {
    const [api, dns, udp, sctp, v6, sh, mh, fwm, fwm6] = d.virtualServers;
    expect(api).toMatchObject({ protocol: 'TCP', address: '10.96.0.1', port: 443, family: 4, scheduler: 'rr', persistent: 10800, schedFlags: [], ops: false, line: 4, column: 1, file: 'hand-made.txt' });
    expect(formatIp(api.ip!)).toBe('10.96.0.1');
    expect(dns.scheduler).toBe('wrr');
    expect(udp.realServers).toEqual([]); // a service without real servers
    expect(sctp).toMatchObject({ protocol: 'SCTP', address: '10.0.2.15', port: 31514 });
    expect(v6).toMatchObject({ address: 'fd20::1', family: 6, port: 443, scheduler: 'wlc', persistent: 300, netmask: '64' });
    expect(sh).toMatchObject({ scheduler: 'sh', schedFlags: ['sh-fallback', 'sh-port'], persistent: 60, netmask: '255.255.255.0', pe: 'sip', ops: true });
    expect(mh).toMatchObject({ scheduler: 'mh', schedFlags: ['mh-port'], ops: true });
    expect(mh.persistent).toBeUndefined();
    expect(fwm).toMatchObject({ protocol: 'FWM', fwmark: 3, family: 4, scheduler: 'wrr' });
    expect(fwm.address).toBeUndefined();
    expect(fwm6).toMatchObject({ protocol: 'FWM', fwmark: 7, family: 6, schedFlags: ['flag-1', 'flag-3'] });
  });

  it('extracts real servers with forward method, weight and connection counts', () => {
    const dns = d.virtualServers[1];
    expect(dns.realServers).toEqual([
      expect.objectContaining({ address: '10.244.0.2', port: 53, forward: 'Masq', weight: 3, activeConn: 0, inactiveConn: 12, line: 7, column: 6 }),
      expect.objectContaining({ address: '10.244.0.4', port: 53, forward: 'Masq', weight: 0, activeConn: 1, inactiveConn: 4, line: 8 }),
    ]);
    expect(d.virtualServers[4].realServers[0]).toMatchObject({ address: '2001:db8:0:f101::2', port: 6443, forward: 'Local', activeConn: 5 });
    expect(d.virtualServers[5].realServers.map((x) => x.forward)).toEqual(['Route', 'Tunnel']);
    expect(d.virtualServers[8].realServers[0]).toMatchObject({ address: 'fd00::5', port: 0, forward: 'Tunnel' });
  });
});

describe('-L without -n: names (hand-made)', () => {
  const text = lines(
    LIST_TITLE,
    `${svcName('TCP', '192.168.100.1:http')} lc`,
    listReal('web1.example.com:http', 'Route', 0, 0, 0),
    `${svcName('TCP', 'db.example.com:postgresql')} rr`,
    listReal('pg-1:postgresql', 'Masq', 1, 2, 3),
    // ipvsadm cuts IPv4 service names at 33 characters: the port is lost
    `${svcName('TCP', 'kubernetes.default.svc.cluster.local:https')} rr`,
    `${svcName('TCP', '10.0.0.1:my-app')} rr`,
  );
  const r = parse(text);
  it('keeps names, maps well-known port names, warns about cut names', () => {
    expect(errors(r)).toEqual([]);
    const [http, pg, cut, custom] = r.data.virtualServers;
    expect(http).toMatchObject({ address: '192.168.100.1', port: 80, portName: 'http', scheduler: 'lc' });
    expect(http.realServers[0]).toMatchObject({ address: 'web1.example.com', port: 80, portName: 'http', forward: 'Route', weight: 0 });
    expect(http.realServers[0].ip).toBeUndefined();
    expect(pg).toMatchObject({ address: 'db.example.com', port: 5432, portName: 'postgresql', family: 4 });
    expect(pg.ip).toBeUndefined();
    expect(cut).toMatchObject({ address: 'kubernetes.default.svc.clust', scheduler: 'rr' });
    expect(cut.port).toBeUndefined();
    expect(custom).toMatchObject({ portName: 'my-app' });
    expect(custom.port).toBeUndefined();
    expect(r.diagnostics.filter((x) => x.code === 'ipvsadm/missing-port')).toEqual([expect.objectContaining({ severity: 'warning', line: 7, column: 6 })]);
    expect(r.diagnostics.some((x) => x.code === 'extract/unresolved-address' && x.line === 4 && x.severity === 'info')).toBe(true);
  });
});

describe('--stats / --rate / --exact (hand-made)', () => {
  it('--stats: counters, K/M/G/T scaling', () => {
    const text = lines(
      VERSION_LINE,
      STATS_TITLE,
      statsService(svcName('TCP', '10.3.0.42:80'), [14209, 125426789n, 13034567890n, 12345678901234n, 1234567890123456n]),
      statsReal('10.2.1.22:80', [2, 12, 8, 774, 894]),
      statsService(fwmName(3), [1, 2, 3, 4, 5]),
    );
    const r = parse(text);
    expect(r.diagnostics).toEqual([]);
    expect(r.data.view).toBe('stats');
    const [vs, fwm] = r.data.virtualServers;
    expect(vs.scheduler).toBeUndefined();
    expect(vs.stats).toEqual({ conns: 14209, inPkts: 125426000, outPkts: 13034000000, inBytes: 12345000000000, outBytes: 1234000000000000 });
    expect(vs.realServers[0]).toMatchObject({ address: '10.2.1.22', port: 80, stats: { conns: 2, inPkts: 12, outPkts: 8, inBytes: 774, outBytes: 894 } });
    expect(vs.realServers[0].weight).toBeUndefined();
    expect(fwm).toMatchObject({ protocol: 'FWM', fwmark: 3, stats: { conns: 1, outBytes: 5 } });
  });

  it('--rate: CPS/PPS plain, BPS scaled', () => {
    const text = lines(VERSION_LINE, RATE_TITLE, statsService(svcName('UDP', '10.96.0.10:53'), [12, 340, 330, 987654321n, 45]), rateReal('10.244.0.2:53', 6, 170, 165, 493827160n, 22));
    const r = parse(text);
    expect(r.diagnostics).toEqual([]);
    expect(r.data.view).toBe('rate');
    const vs = r.data.virtualServers[0];
    expect(vs.rate).toEqual({ cps: 12, inPPS: 340, outPPS: 330, inBPS: 987654000, outBPS: 45 });
    expect(vs.stats).toBeUndefined();
    expect(vs.realServers[0].rate).toEqual({ cps: 6, inPPS: 170, outPPS: 165, inBPS: 493827000, outBPS: 22 });
  });

  it('--exact: no scaling, numbers wider than the columns', () => {
    const text = lines(VERSION_LINE, STATS_TITLE, statsService(svcName('TCP', '10.3.0.42:80'), [14209, 125426789n, 13034567890n, 123456789012345n, 1234567890123456n], true), statsReal('10.2.1.22:80', [123456789n, 1, 2, 3, 4], true));
    expect(text).toContain(`${'TCP  10.3.0.42:80'.padEnd(33)}    14209 125426789 13034567890 123456789012345 1234567890123456\n`);
    const r = parse(text);
    expect(r.diagnostics).toEqual([]);
    expect(r.data.virtualServers[0].stats).toEqual({ conns: 14209, inPkts: 125426789, outPkts: 13034567890, inBytes: 123456789012345, outBytes: 1234567890123456 });
    expect(r.data.virtualServers[0].realServers[0].stats?.conns).toBe(123456789);
  });

  it('merges a --stats listing pasted after -Ln of the same node', () => {
    const text = lines(
      VERSION_LINE,
      LIST_TITLE,
      `${svcName('TCP', '10.96.0.1:443')} rr`,
      listReal('172.18.0.5:6443', 'Masq', 1, 3, 0),
      VERSION_LINE,
      STATS_TITLE,
      statsService(svcName('TCP', '10.96.0.1:443'), [10, 20, 30, 40, 50]),
      statsReal('172.18.0.5:6443', [10, 20, 30, 40, 50]),
    );
    const r = parse(text);
    expect(errors(r)).toEqual([]);
    expect(r.counts).toEqual({ virtualServers: 1, realServers: 1 });
    expect(r.data.view).toBe('list');
    expect(r.data.virtualServers[0]).toMatchObject({ scheduler: 'rr', stats: { conns: 10 }, line: 4 });
    expect(r.data.virtualServers[0].realServers[0]).toMatchObject({ weight: 1, activeConn: 3, stats: { outBytes: 50 }, line: 5 });
    expect(r.diagnostics).toEqual([
      expect.objectContaining({ severity: 'info', code: 'ipvsadm/merged-listing', line: 9, message: 'TCP/10.96.0.1:443 was already listed at line 4; merged the values of this --stats listing into it' }),
    ]);
  });

  it('keeps repeated listings of the same view apart, with a warning', () => {
    const one = [VERSION_LINE, ...STATS_TITLE, statsService(svcName('TCP', '10.3.0.1:443'), [0, 0, 0, 0, 0])];
    const r = parse(lines(one, one));
    expect(r.counts.virtualServers).toBe(2);
    expect(r.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'ipvsadm/duplicate-virtual-server', line: 8 })]);
  });
});

describe('--thresholds, --persistent-conn, --tun-info (hand-made)', () => {
  it('--thresholds', () => {
    const r = parse(lines(VERSION_LINE, THRESHOLDS_TITLE, `${svcName('TCP', '10.0.0.1:80')} wlc`, thresholdsReal('10.0.1.1:80', 100, 50, 7, 9)));
    expect(r.diagnostics).toEqual([]);
    expect(r.data.view).toBe('thresholds');
    expect(r.data.virtualServers[0].scheduler).toBe('wlc');
    expect(r.data.virtualServers[0].realServers[0]).toMatchObject({ uThreshold: 100, lThreshold: 50, activeConn: 7, inactiveConn: 9 });
  });
  it('--persistent-conn', () => {
    const r = parse(lines(VERSION_LINE, PCONN_TITLE, `${svcName('TCP', '10.96.0.1:443')} rr persistent 10800`, pconnReal('172.18.0.5:6443', 1, 4, 2, 1)));
    expect(r.diagnostics).toEqual([]);
    expect(r.data.view).toBe('persistent-conn');
    expect(r.data.virtualServers[0]).toMatchObject({ persistent: 10800 });
    expect(r.data.virtualServers[0].realServers[0]).toMatchObject({ weight: 1, persistConn: 4, activeConn: 2, inactiveConn: 1 });
  });
  it('--tun-info', () => {
    const r = parse(lines(VERSION_LINE, TUN_TITLE, `${svcName('TCP', '10.0.0.1:80')} rr`, tunReal('10.0.1.1:80', 'Tunnel', 'gue:6080:-c', 2, 1, 0), tunReal('10.0.1.2:80', 'Masq', 'n/a', 1, 0, 0)));
    expect(r.diagnostics).toEqual([]);
    expect(r.data.view).toBe('list');
    expect(r.data.virtualServers[0].realServers.map((x) => [x.forward, x.tunnelInfo, x.weight, x.activeConn])).toEqual([
      ['Tunnel', 'gue:6080:-c', 2, 1],
      ['Masq', 'n/a', 1, 0],
    ]);
  });
});

describe('-S -n / --save (hand-made)', () => {
  const text = lines(
    '-A -t 10.96.0.1:443 -s rr -p 10800',
    '-a -t 10.96.0.1:443 -r 172.18.0.5:6443 -m -w 1',
    '-A -u 10.96.0.10:53 -s rr',
    '-a -u 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1',
    '-a -u 10.96.0.10:53 -r 10.244.0.4:53 -m -w 0',
    '-A --sctp-service 10.0.2.15:31514 -s rr',
    '-A -f 3 -s wrr',
    '-a -f 3 -r 10.0.88.214:0 -g -w 1',
    '-A -f 4 -6 -s sh -p 300 -M 64 --pe sip -o -b sh-fallback,sh-port',
    '-a -f 4 -6 -r [fd00::2]:0 -i -w 2 --tun-type gue --tun-port 6080 --tun-nocsum',
    '-A -t [fd20::1]:443 -s wlc -p 60 -M 255.255.255.0',
    '-a -t [fd20::1]:443 -r [fd20::7041]:6443 -m -w 1',
    '-A -t 10.0.0.9:80 -s lc pe sip ops',
  );
  const r = parse(text);
  const d = r.data;
  it('reads services and real servers', () => {
    expect(r.diagnostics).toEqual([]);
    expect(d.view).toBe('save');
    expect(r.counts).toEqual({ virtualServers: 7, realServers: 6 });
    expect(keys(d)).toEqual(['TCP/10.96.0.1:443', 'UDP/10.96.0.10:53', 'SCTP/10.0.2.15:31514', 'FWM/3', 'FWM/4/IPv6', 'TCP/[fd20::1]:443', 'TCP/10.0.0.9:80']);
    const [api, dns, , fwm, fwm6, v6, old] = d.virtualServers;
    expect(api).toMatchObject({ scheduler: 'rr', persistent: 10800, line: 1, column: 1 });
    expect(api.realServers[0]).toMatchObject({ address: '172.18.0.5', port: 6443, forward: 'Masq', weight: 1, line: 2, column: 24 });
    expect(dns.realServers.map((x) => x.weight)).toEqual([1, 0]);
    expect(fwm.realServers[0]).toMatchObject({ forward: 'Route', port: 0 });
    expect(fwm6).toMatchObject({ family: 6, scheduler: 'sh', persistent: 300, netmask: '64', pe: 'sip', ops: true, schedFlags: ['sh-fallback', 'sh-port'] });
    expect(fwm6.realServers[0]).toMatchObject({ address: 'fd00::2', forward: 'Tunnel', weight: 2, tunnelInfo: 'gue:6080:-c' });
    expect(v6).toMatchObject({ family: 6, netmask: '255.255.255.0' });
    expect(v6.realServers[0].address).toBe('fd20::7041');
    expect(old).toMatchObject({ scheduler: 'lc', pe: 'sip', ops: true });
  });
  it('reports a real server for a service that was never added', () => {
    const bad = parse('-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.2:80 -r 10.1.0.1:80 -m -w 1\n-a -t 10.0.0.1:80 -m -w 1\n');
    expect(errors(bad)).toEqual([
      expect.objectContaining({ code: 'ipvsadm/orphan-real-server', line: 2, column: 4 }),
      expect.objectContaining({ code: 'ipvsadm/missing-real-server', line: 3 }),
    ]);
    expect(bad.data.unsupported.map((u) => u.line)).toEqual([2, 3]);
    expect(bad.counts).toEqual({ virtualServers: 1, realServers: 0 });
  });
});

describe('-Lnc connection entries (hand-made)', () => {
  it('reads entries, with and without persistence-engine columns', () => {
    const r = parse(
      lines(
        CONN_TITLE,
        connLine('TCP', 899, 'ESTABLISHED', '10.0.0.9:51234', '10.96.0.1:443', '172.18.0.5:6443'),
        connLine('UDP', 4, 'UDP', '10.244.0.7:40000', '10.96.0.10:53', '10.244.0.2:53'),
        connLine('IP', 10799, 'NONE', '10.0.0.9:0', '10.96.0.1:443', '172.18.0.5:6443'),
      ),
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.data.view).toBe('connections');
    expect(r.counts).toEqual({ virtualServers: 0, realServers: 0, connections: 3 });
    const [c1, , tmpl] = r.data.connections!;
    expect(c1).toMatchObject({ protocol: 'TCP', expire: 899, state: 'ESTABLISHED', source: { address: '10.0.0.9', port: 51234 }, virtual: { address: '10.96.0.1', port: 443 }, destination: { address: '172.18.0.5', port: 6443 }, line: 3, column: 1 });
    expect(tmpl).toMatchObject({ protocol: 'IP', expire: 10799, state: 'NONE' });
    const pe = parse(lines(CONN_PE_TITLE, connPeLine('UDP', 60, 'UDP', '10.0.0.9:5060', '10.96.0.50:5060', '10.244.0.9:5060', 'sip', 'abc123')));
    expect(pe.diagnostics).toEqual([]);
    expect(pe.data.connections![0]).toMatchObject({ peName: 'sip', peData: 'abc123' });
  });
});

describe('messy input (hand-made)', () => {
  it('BOM, CRLF, prompts, fences, indentation, re-flowed columns, stderr, cut lines', () => {
    const r = parse(readFileSync(join(fixtures, 'messy-crlf-bom.txt'), 'utf8'), 'messy-crlf-bom.txt');
    expect(errors(r)).toEqual([]);
    expect(keys(r.data)).toEqual(['TCP/10.96.0.1:443', 'TCP/10.96.0.10:53', 'UDP/10.96.0.10:53', 'TCP/10.96.0.20:80']);
    const [api, tcpDns, udpDns, cut] = r.data.virtualServers;
    expect(api).toMatchObject({ persistent: 10800, line: 6, column: 5 });
    expect(api.realServers[0]).toMatchObject({ address: '172.18.0.5', forward: 'Masq', weight: 1, activeConn: 3, inactiveConn: 0, line: 7 });
    expect(tcpDns.realServers).toEqual([]);
    expect(udpDns.realServers[1]).toMatchObject({ address: '10.244.0.4', weight: 1 });
    expect(udpDns.realServers[1].activeConn).toBeUndefined();
    expect(cut.realServers[0]).toMatchObject({ address: 'fd00:3000:2::2', port: 5001, line: 17 });
    expect(cut.realServers[0].weight).toBeUndefined();
    const warn = r.diagnostics.filter((x) => x.severity === 'warning').map((x) => [x.code, x.line]);
    expect(warn).toEqual([
      ['input/stderr', 8],
      ['ipvsadm/truncated-line', 12],
      ['ipvsadm/unsupported-output', 15],
      ['ipvsadm/truncated-line', 17],
    ]);
    expect(r.data.noise.map((n) => n.line)).toEqual([1, 2, 13, 14]);
    expect(r.data.unsupported.map((u) => [u.line, u.reason])).toEqual([
      [8, 'error message (stderr)'],
      [15, 'ipvsadm --timeout output'],
    ]);
  });

  it('header-less grep output with trailing spaces stripped or added', () => {
    const r = parse('TCP  10.96.0.1:443 rr  \n  -> 172.18.0.5:6443 Masq 1 0 0\nUDP  10.96.0.10:53 rr\n');
    expect(r.diagnostics.filter((x) => x.severity !== 'info')).toEqual([]);
    expect(r.data.view).toBe('list');
    expect(r.data.version).toBeUndefined();
    expect(r.counts).toEqual({ virtualServers: 2, realServers: 1 });
  });

  // Its speed is measured by `npm run bench` (IPVS mode reads ipvsadm -Ln), never asserted here:
  // a wall-clock bound fails on a loaded machine and proves nothing on a fast one.
  it('a large dump (20,000 lines) parses whole', () => {
    const out: string[] = [VERSION_LINE, ...LIST_TITLE];
    for (let i = 0; i < 5000; i++) {
      out.push(`${svcName('TCP', `10.96.${i >> 8}.${i & 255}:443`)} rr`);
      for (let j = 0; j < 3; j++) out.push(listReal(`10.244.${j}.${i & 255}:8443`, 'Masq', 1, 0, 0));
    }
    const r = parse(lines(out));
    expect(r.counts).toEqual({ virtualServers: 5000, realServers: 15000 });
    expect(r.diagnostics).toEqual([]);
    expect(r.data.virtualServers.at(-1)?.realServers.map((x) => `${x.address}:${x.port}`)).toEqual(['10.244.0.135:8443', '10.244.1.135:8443', '10.244.2.135:8443']);
  });
});

describe('errors with line and column (hand-made)', () => {
  it('bad address, orphan real server, extra columns, bad fwmark', () => {
    const text = lines(
      '  -> 10.0.0.5:80                 Masq    1      0          0',
      'TCP  10.96.0:80 rr',
      'TCP  10.0.0.1:99999 rr',
      'TCP  10.0.0.1:80 rr',
      '  -> 10.0.0.2:80                 Masq    1      0          0          7',
      'FWM  x rr',
    );
    const r = parse(text, 'bad.txt');
    expect(errors(r).map((x) => [x.code, x.line, x.column, x.found])).toEqual([
      ['ipvsadm/orphan-real-server', 1, 3, "'->'"],
      ['extract/bad-address', 2, 6, '10.96.0:80'],
      ['extract/bad-address', 3, 6, '10.0.0.1:99999'],
      ['ipvsadm/extra-field', 5, 71, '7'],
      ['extract/bad-fwmark', 6, 6, 'x'],
    ]);
    expect(r.data.unsupported.map((u) => u.line)).toEqual([1, 2, 3, 6]);
    // the real server with an extra column is kept (its counters are not trusted)
    expect(r.counts).toEqual({ virtualServers: 1, realServers: 1 });
    expect(r.data.virtualServers[0].realServers[0]).toMatchObject({ address: '10.0.0.2', forward: 'Masq' });
    expect(r.data.virtualServers[0].realServers[0].weight).toBeUndefined();
    expect(errors(r)[1].message).toContain('bad IPv4 address');
  });

  it('never throws on garbage', () => {
    const r = parse('\u0000\u0001 (((\n-> \n-A -t\nTCP [::1\n');
    expect(r.format).toBe('ipvsadm');
    expect(errors(r).length).toBeGreaterThan(0);
    expect(errors(r).every((x) => !/[\u0000-\u0008]/.test(x.message))).toBe(true);
  });
});

describe('parseIpvsEndpoint', () => {
  it('splits addresses as ipvsadm prints them', () => {
    expect(parseIpvsEndpoint('[fd20::a]:53')).toMatchObject({ address: 'fd20::a', port: 53, family: 6 });
    expect(parseIpvsEndpoint('10.0.0.1:http')).toMatchObject({ address: '10.0.0.1', port: 80, portName: 'http', family: 4 });
    expect(parseIpvsEndpoint('host.example')).toMatchObject({ address: 'host.example', family: 4 });
    expect(parseIpvsEndpoint('[fd00:3000:2::2')).toMatchObject({ problem: 'missing closing bracket' });
  });
});
