import { describe, expect, it } from 'vitest';
import { parseSysctlText, sysctlKeyFromPath } from '../../grammars/sysctl/index.js';
import { sysctlParser } from '../../src/extract/sysctl.js';

describe('sysctl text', () => {
  it('reads `key = value`, `key=value`, /proc/sys paths, comments, stderr and noise', () => {
    const text = [
      'root@node1:~# sysctl -a 2>&1 | grep -E "vs|forward|rp_filter"',
      'net.ipv4.ip_forward = 1',
      'net.ipv4.conf.flannel/1.rp_filter = 0',
      'net.ipv4.tcp_rmem = 4096\t131072\t6291456',
      'net.ipv4.vs.conn_reuse_mode=0',
      '# from /etc/sysctl.d/99-k8s.conf',
      '-net.bridge.bridge-nf-call-iptables = 1',
      '/proc/sys/net/ipv4/conf/cali123/route_localnet:1',
      'sysctl: permission denied on key \'net.ipv4.vs.am_droprate\'',
      'kernel.domainname = ',
      'garbage line here',
    ].join('\r\n');
    const r = sysctlParser.parse(text, 's.txt');
    expect(r.data.entries.map((e) => [e.key, e.value, e.line])).toEqual([
      ['net.ipv4.ip_forward', '1', 2],
      ['net.ipv4.conf.flannel/1.rp_filter', '0', 3],
      ['net.ipv4.tcp_rmem', '4096\t131072\t6291456', 4],
      ['net.ipv4.vs.conn_reuse_mode', '0', 5],
      ['net.bridge.bridge-nf-call-iptables', '1', 7],
      ['net.ipv4.conf.cali123.route_localnet', '1', 8],
      ['kernel.domainname', '', 10],
    ]);
    expect(r.counts).toEqual({ entries: 7 });
    expect(r.data.values.get('net.ipv4.ip_forward')).toBe('1');
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line, d.column])).toEqual([
      ['info', 'input/noise', 1, 1],
      ['info', 'input/comment', 6, 1],
      ['warning', 'input/stderr', 9, 1],
      ['error', 'parse/unexpected-token', 11, 1],
    ]);
    expect(r.data.unsupported.map((u) => u.line)).toEqual([1, 6, 9, 11]);
  });

  it('gives columns of keys and values', () => {
    const [l] = parseSysctlText('   net.ipv4.ip_forward   =   1  \n').lines;
    expect(l).toMatchObject({ kind: 'entry', key: 'net.ipv4.ip_forward', keyColumn: 4, value: '1', valueColumn: 30, form: 'sysctl' });
    const [c] = parseSysctlText('-net.ipv4.ip_forward=1\n').lines;
    expect(c).toMatchObject({ kind: 'entry', keyColumn: 2, valueColumn: 22, form: 'conf', ignoreErrors: true });
  });

  it('converts /proc/sys paths as sysctl does (dots in interface names become slashes)', () => {
    expect(sysctlKeyFromPath('/proc/sys/net/ipv4/conf/flannel.1/rp_filter')).toBe('net.ipv4.conf.flannel/1.rp_filter');
    expect(sysctlKeyFromPath('/proc/sys/net/ipv4/vs/conntrack')).toBe('net.ipv4.vs.conntrack');
  });
});
