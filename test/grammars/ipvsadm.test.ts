/**
 * Grammar-level tests for ipvsadm output (grammars/ipvsadm). All inputs are HAND-MADE, built
 * from ipvsadm.c's printf formats (FORMATS.md §3) by test/fixtures/ipvsadm/printf.ts or written
 * inline; IPVS is not in this machine's kernel, so real ipvsadm output cannot be produced here.
 */
import { describe, expect, it } from 'vitest';
import { parseIpvsadmSyntax, type IpvsadmEntry, type LineSyntax } from '../../grammars/ipvsadm/index.js';
import { ipvsadmSniffer } from '../../grammars/ipvsadm/sniff.js';
import { LIST_TITLE, STATS_TITLE, TUN_TITLE, VERSION_LINE, fwmName, largenum, lines, listReal, statsService, svcName, tunReal } from '../fixtures/ipvsadm/printf.js';

const syntaxOf = (entries: readonly IpvsadmEntry[]): LineSyntax[] =>
  entries.flatMap((e) => (e.kind === 'syntax' ? [e.syntax] : []));

describe('ipvsadm grammar: -Ln listing (hand-made)', () => {
  const text = lines(
    VERSION_LINE,
    LIST_TITLE,
    `${svcName('TCP', '10.96.0.1:443')} rr persistent 10800 mask 255.255.255.0 pe sip ops`,
    listReal('172.18.0.5:6443', 'Masq', 1, 3, 0),
    `${svcName('TCP', '1.2.3.4:80')} sh (sh-fallback,sh-port)`,
    `${fwmName(3, true)} wrr`,
    listReal('[2001:db8::1]:0', 'Route', 0, 0, 0, true),
  );
  const r = parseIpvsadmSyntax(text, 'list.txt');

  it('recognises version and titles', () => {
    expect(r.entries[0]).toEqual({ kind: 'version', line: 1, version: '1.2.1', size: 4096 });
    expect(r.entries[1]).toEqual({ kind: 'title', line: 2, view: 'list' });
    expect(r.entries[2]).toEqual({ kind: 'title2', line: 3, tunnelInfo: false });
    expect(r.diagnostics).toEqual([]);
  });

  it('parses every service option with columns', () => {
    const [svc] = syntaxOf(r.entries);
    expect(svc.kind).toBe('service');
    if (svc.kind !== 'service') return;
    expect(svc.protocol).toMatchObject({ text: 'TCP', column: 1, endColumn: 4 });
    expect(svc.target).toMatchObject({ text: '10.96.0.1:443', column: 6, endColumn: 19 });
    expect(svc.scheduler?.text).toBe('rr');
    expect(svc.timeout?.text).toBe('10800');
    expect(svc.mask?.text).toBe('255.255.255.0');
    expect(svc.pe?.text).toBe('sip');
    expect(svc.ops?.text).toBe('ops');
  });

  it('parses scheduler flags, FWM IPv6 and real servers', () => {
    const s = syntaxOf(r.entries);
    const sh = s[2];
    expect(sh.kind === 'service' && sh.schedFlags?.text).toBe('(sh-fallback,sh-port)');
    const fwm = s[3];
    expect(fwm.kind === 'service' && [fwm.target.text, fwm.target.type, fwm.ipv6?.text, fwm.scheduler?.text]).toEqual(['3', 'Integer', 'IPv6', 'wrr']);
    const rs = s[1];
    expect(rs.kind).toBe('real-server');
    if (rs.kind !== 'real-server') return;
    expect(rs.address).toMatchObject({ text: '172.18.0.5:6443', column: 6 });
    expect(rs.forward).toMatchObject({ text: 'Masq', column: 35 });
    expect(rs.numbers.map((n) => [n.text, n.column])).toEqual([
      ['1', 43],
      ['3', 50],
      ['0', 61],
    ]);
  });
});

describe('ipvsadm grammar: other views', () => {
  it('--stats lines carry scaled numbers as tokens', () => {
    const r = parseIpvsadmSyntax(lines(VERSION_LINE, STATS_TITLE, statsService(svcName('TCP', '10.3.0.42:80'), [14209, 125426789n, 13034567890n, 1, 2])), 's');
    const [svc] = syntaxOf(r.entries);
    expect(svc.kind === 'service' && svc.numbers.map((n) => [n.text, n.type])).toEqual([
      ['14209', 'Integer'],
      ['125426K', 'ScaledNumber'],
      ['13034M', 'ScaledNumber'],
      ['1', 'Integer'],
      ['2', 'Integer'],
    ]);
    expect(largenum(125426789n)).toBe('  125426K');
  });

  it('--tun-info real servers keep the TunnelInfo column', () => {
    const r = parseIpvsadmSyntax(lines(VERSION_LINE, TUN_TITLE, `${svcName('UDP', '10.0.0.1:53')} rr`, tunReal('10.1.0.1:53', 'Tunnel', 'gue:6080:-c', 2, 0, 0)), 't');
    const rs = syntaxOf(r.entries)[1];
    expect(rs.kind === 'real-server' && [rs.forward?.text, rs.tunnelInfo?.text, rs.numbers.map((n) => n.text)]).toEqual(['Tunnel', 'gue:6080:-c', ['2', '0', '0']]);
  });

  it('--save rules: command, service option, target and options', () => {
    const r = parseIpvsadmSyntax('-A -f 3 -6 -s wrr -p 300 -M 64 --pe sip -o -b flag-1,flag-2\n-a -t [fd00::1]:443 -r [fd00::2]:6443 -m -w 1\n', 's');
    const [a, b] = syntaxOf(r.entries);
    expect(a.kind === 'save' && [a.command.text, a.serviceOption.text, a.target?.text, a.options.map((o) => [o.name.text, o.value?.text])]).toEqual([
      '-A',
      '-f',
      '3',
      [
        ['-6', undefined],
        ['-s', 'wrr'],
        ['-p', '300'],
        ['-M', '64'],
        ['--pe', 'sip'],
        ['-o', undefined],
        ['-b', 'flag-1,flag-2'],
      ],
    ]);
    expect(b.kind === 'save' && [b.command.text, b.target?.text, b.options.map((o) => o.name.text)]).toEqual(['-a', '[fd00::1]:443', ['-r', '-m', '-w']]);
  });
});

describe('ipvsadm grammar: errors and noise', () => {
  it('reports a bad real-server line with line, column, expected and found', () => {
    const r = parseIpvsadmSyntax(lines(LIST_TITLE, 'TCP  10.0.0.1:80 rr', '  -> 10.0.0.2:80 Masq one 0 0', 'TCP  10.0.0.3:80 rr'), 'bad.txt');
    const errs = r.diagnostics.filter((d) => d.severity === 'error');
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ code: 'parse/unexpected-token', file: 'bad.txt', line: 4, column: 23, expected: 'end of line', found: 'one' });
    // parsing continued with the next line
    expect(syntaxOf(r.entries).map((s) => s.kind)).toEqual(['service', 'service']);
    expect(r.entries.find((e) => e.kind === 'skipped')).toMatchObject({ line: 4, reason: 'malformed real server line' });
  });

  it('reports text that is not ipvsadm output at its first word', () => {
    const r = parseIpvsadmSyntax('TCP  10.0.0.1:80 rr\n   Chain KUBE-SERVICES (2 references)\n', 'x');
    expect(r.diagnostics).toEqual([
      expect.objectContaining({ severity: 'error', code: 'parse/unexpected-token', line: 2, column: 4, found: 'Chain' }),
    ]);
  });

  it('reports a service line missing its address at end of line', () => {
    const r = parseIpvsadmSyntax('TCP\nUDP  10.0.0.1:53 rr\n', 'x');
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', line: 1, column: 4, found: 'end of line' });
  });

  it('downgrades a parse failure on a cut last line (no final newline) to a warning', () => {
    const r = parseIpvsadmSyntax('TCP  10.0.0.1:80 rr\nTCP', 'x');
    expect(r.diagnostics[0]).toMatchObject({ severity: 'warning', code: 'parse/truncated-line', line: 2 });
  });

  it('keeps prompts, fences and comments as noise with info diagnostics', () => {
    const r = parseIpvsadmSyntax('$ sudo ipvsadm -Ln\n```\n# node-1\nTCP  10.0.0.1:80 rr\n```\n', 'x');
    expect(r.entries.filter((e) => e.kind === 'skipped').map((e) => e.kind === 'skipped' && [e.line, e.reason, e.noise])).toEqual([
      [1, 'noise: prompt', true],
      [2, 'noise: fence', true],
      [3, 'noise: comment', true],
      [5, 'noise: fence', true],
    ]);
    expect(r.diagnostics.every((d) => d.severity === 'info' && d.code === 'input/noise')).toBe(true);
  });

  it('uses the connection rule after the -Lnc banner', () => {
    const r = parseIpvsadmSyntax('IPVS connection entries\npro expire state       source             virtual            destination\nTCP 14:59  ESTABLISHED 10.0.0.9:5555      10.96.0.1:443      172.18.0.5:6443\n', 'c');
    const [c] = syntaxOf(r.entries);
    expect(c.kind === 'connection' && c.fields.map((f) => f.text)).toEqual(['TCP', '14:59', 'ESTABLISHED', '10.0.0.9:5555', '10.96.0.1:443', '172.18.0.5:6443']);
  });
});

describe('ipvsadmSniffer', () => {
  it('is certain about headers', () => {
    expect(ipvsadmSniffer.id).toBe('ipvsadm');
    expect(ipvsadmSniffer.sniff([VERSION_LINE])).toBe(1);
    expect(ipvsadmSniffer.sniff(['$ ipvsadm -Ln', ...LIST_TITLE])).toBe(1);
    expect(ipvsadmSniffer.sniff(['IPVS connection entries'])).toBe(1);
  });
  it('recognises header-less listings and save rules', () => {
    expect(ipvsadmSniffer.sniff(['TCP  10.96.0.1:443 rr', listReal('172.18.0.5:6443', 'Masq', 1, 0, 0)])).toBeGreaterThanOrEqual(0.8);
    expect(ipvsadmSniffer.sniff(['-A -t 10.96.0.1:443 -s rr', '-a -t 10.96.0.1:443 -r 172.18.0.5:6443 -m -w 1'])).toBeGreaterThanOrEqual(0.9);
  });
  it('returns 0 for other formats', () => {
    expect(ipvsadmSniffer.sniff(['*nat', ':KUBE-SERVICES - [0:0]', '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -j KUBE-SVC-X', 'COMMIT'])).toBe(0);
    expect(ipvsadmSniffer.sniff(['default via 10.0.0.1 dev eth0 proto dhcp', '10.244.0.0/24 dev cni0 proto kernel scope link src 10.244.0.1'])).toBe(0);
    expect(ipvsadmSniffer.sniff(['Name: KUBE-CLUSTER-IP', 'Type: hash:ip,port', 'Members:', '10.96.0.1,tcp:443'])).toBe(0);
    expect(ipvsadmSniffer.sniff(['table ip kube-proxy {', '\tchain services {'])).toBe(0);
    expect(ipvsadmSniffer.sniff([])).toBe(0);
  });
});

describe('ipvsadm grammar: persistence timeout (hand-made)', () => {
  it('requires a number after persistent', () => {
    const r = parseIpvsadmSyntax('TCP  10.0.0.1:80 rr persistent x\nTCP  10.0.0.1:81 rr\n', 'p');
    expect(r.diagnostics).toEqual([expect.objectContaining({ severity: 'error', line: 1, column: 32, expected: 'number', found: 'x' })]);
  });
});
