/**
 * Constructed variations of the pasted forms (unit tests: shapes from the tools' print code and
 * from how pastes get mangled, not collected): watch refreshes, wrapped rows, the old ip6tables
 * `opt` blank, K/M counters, per-port describe endpoints, ep cells listing an address per port.
 */
import { describe, expect, it } from 'vitest';
import { extractIptablesList } from '../../src/extract/iptables-list.js';
import { extractKubectl } from '../../src/extract/kubectl.js';
import { detectFormat } from '../../src/load/index.js';

const nat = (text: string) => extractIptablesList(text, 'paste.txt');
const chainOf = (text: string, name: string) => nat(text).data.flatMap((r) => r.tables).flatMap((t) => t.chains).find((c) => c.name === name)!;

const SVC_ROWS = [
  'Chain KUBE-SVC-ERIFXISQEP7F7OF4 (1 references)',
  ' pkts bytes target     prot opt in     out     source               destination',
  ' 1234  96K KUBE-MARK-MASQ  tcp  --  *      *      !10.244.0.0/16        10.96.0.10           /* kube-system/kube-dns:dns-tcp cluster IP */ tcp dpt:53',
  '  12M 1500M KUBE-SEP-A  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns-tcp -> 10.244.0.2:53 */ statistic mode random probability 0.50000000000',
  '   3K   2M KUBE-SEP-B  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* kube-system/kube-dns:dns-tcp -> 10.244.1.2:53 */',
];

describe('iptables -L variations', () => {
  it('`watch` refreshes: the header names the command (table nat from -t), the last copy is read, K/M counters kept as printed', () => {
    const header = (t: string) => `Every 2.0s: iptables -t nat -L KUBE-SVC-ERIFXISQEP7F7OF4 -n -v                 node1: Tue Mar  5 10:00:0${t} 2024`;
    const text = [header('1'), '', ...SVC_ROWS, '', header('3'), '', ...SVC_ROWS.map((l) => l.replace(' 1234 ', ' 1300 ')), ''].join('\n');
    expect(detectFormat(text)).toBe('iptables-list');
    const r = nat(text);
    const t = r.data[0].tables[0];
    expect(t.coverage).toMatchObject({ tableFrom: 'command', allChains: false, interfacesHidden: false });
    const c = t.chains[0];
    expect(c.rules.map((x) => x.counters)).toEqual([
      { packets: '1300', bytes: '96K' },
      { packets: '12M', bytes: '1500M' },
      { packets: '3K', bytes: '2M' },
    ]);
    expect(c.rules[0].line).toBe(13);
    expect(r.diagnostics.find((d) => d.code === 'iptables-list/listed-again')).toMatchObject({ line: 11 });
  });

  it('`date` lines between copies start a new copy too', () => {
    const text = ['Tue Mar  5 10:00:01 UTC 2024', ...SVC_ROWS, 'Tue Mar  5 10:00:03 UTC 2024', ...SVC_ROWS].join('\n');
    expect(chainOf(text, 'KUBE-SVC-ERIFXISQEP7F7OF4').rules[0].line).toBe(10);
  });

  it('a row the paste wrapped onto the next line is one rule (the port match kept, a comment across the break joined); its unknown text cited on its own line', () => {
    const text = [
      'Chain KUBE-SERVICES (2 references)',
      'target     prot opt source               destination',
      'KUBE-SVC-NPX46M4PTMTKRN6Y  tcp  --  0.0.0.0/0            10.96.0.1            /* default/kubernetes:https cluster IP */',
      ' tcp dpt:443 frobnicate 7',
      'KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  0.0.0.0/0            10.96.0.10           /* kube-system/kube-dns:dns',
      'cluster IP */ udp dpt:53',
      '',
      'tcp dpt:80',
    ].join('\n');
    const r = nat(text);
    const [https, dns] = chainOf(text, 'KUBE-SERVICES').rules;
    expect(https.matches.find((m) => m.kind === 'port')).toMatchObject({ ranges: [{ from: 443, to: 443 }] });
    expect(r.diagnostics.find((d) => d.code === 'iptables-list/unknown-text')).toMatchObject({ line: 4, column: 14 });
    expect(dns.comment).toBe('kube-system/kube-dns:dns cluster IP');
    expect(dns.matches.find((m) => m.kind === 'port')).toMatchObject({ ranges: [{ from: 53, to: 53 }] });
    // After a blank line nothing continues a row: author text.
    expect(chainOf(text, 'KUBE-SERVICES').rules).toHaveLength(2);
    expect(r.diagnostics.find((d) => d.line === 8)).toMatchObject({ code: 'input/noise' });
  });

  it('ip6tables before 1.8.9 (blank `opt` cells) and IPv6 addresses: an IPv6 nat table', () => {
    const text = [
      '$ sudo ip6tables -t nat -L KUBE-SERVICES -n',
      'Chain KUBE-SERVICES (2 references)',
      'target     prot opt source               destination',
      'KUBE-SVC-NPX46M4PTMTKRN6Y  tcp      ::/0                 fd00:10:96::1        /* default/kubernetes:https cluster IP */ tcp dpt:443',
      'KUBE-NODEPORTS  all      ::/0                 ::/0                 /* kubernetes service nodeports; NOTE: this must be the last rule in this chain */ ADDRTYPE match dst-type LOCAL',
    ].join('\n');
    const r = nat(text);
    expect(r.data.map((x) => x.family)).toEqual([6]);
    const rules = r.data[0].tables[0].chains[0].rules;
    expect(rules.map((x) => x.target)).toEqual([
      { kind: 'jump', chain: 'KUBE-SVC-NPX46M4PTMTKRN6Y' },
      { kind: 'jump', chain: 'KUBE-NODEPORTS' },
    ]);
    expect(rules[0].matches[0]).toMatchObject({ kind: 'address', dir: 'dst', text: 'fd00:10:96::1' });
  });

  it('a numbered listing with an elision: the chain is not shown whole', () => {
    const text = [
      'root@node1:~# iptables -t nat -L KUBE-SERVICES -n --line-numbers',
      'Chain KUBE-SERVICES (2 references)',
      'num target prot opt source destination',
      '1 KUBE-SVC-NPX46M4PTMTKRN6Y tcp -- 0.0.0.0/0 10.96.0.1 /* default/kubernetes:https cluster IP */ tcp dpt:443',
      '...',
      '9 KUBE-NODEPORTS all -- 0.0.0.0/0 0.0.0.0/0 /* kubernetes service nodeports; NOTE: this must be the last rule in this chain */ ADDRTYPE match dst-type LOCAL',
    ].join('\n');
    const t = nat(text).data[0].tables[0];
    expect(t.chains[0].rules).toHaveLength(2);
    expect(t.coverage!.elided.has('KUBE-SERVICES')).toBe(true);
  });
});

describe('kubectl text variations', () => {
  const kubectl = (lines: string[]) => extractKubectl(lines.join('\n'), 'paste.txt');

  it('an ep cell lists an address once per port: one endpoint per address, every port on the slice, `+ N more` hidden', () => {
    const r = kubectl(['$ kubectl get ep -n shop', 'NAME   ENDPOINTS                                                 AGE', 'web    10.244.1.5:443,10.244.2.9:443,10.244.1.5:80 + 1 more...   2d']);
    const s = r.data.slices[0];
    expect(s.endpoints.map((e) => e.addresses[0])).toEqual(['10.244.1.5', '10.244.2.9']);
    expect(s.ports.map((p) => p.port)).toEqual([443, 80]);
    expect(s.text).toMatchObject({ hidden: 1, wholeService: false });
  });

  it('describe service: a slice per port, an address on one port\'s line not said to serve the other', () => {
    const r = kubectl([
      '$ kubectl describe svc web -n shop',
      'Name:                     web',
      'Namespace:                shop',
      'Selector:                 app=web',
      'Type:                     ClusterIP',
      'IP:                       10.96.45.12',
      'Port:                     http  80/TCP',
      'TargetPort:               8080/TCP',
      'Endpoints:                10.244.1.5:8080,10.244.2.9:8080',
      'Port:                     https  443/TCP',
      'TargetPort:               https/TCP',
      'Endpoints:                ',
      'Session Affinity:         None',
      'Events:                   <none>',
    ]);
    expect(r.data.slices.map((s) => [s.ports[0].name, s.endpoints.map((e) => e.addresses[0]), s.text?.wholeService])).toEqual([
      ['http', ['10.244.1.5', '10.244.2.9'], false],
      ['https', [], false],
    ]);
  });
});
