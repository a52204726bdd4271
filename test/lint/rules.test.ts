/**
 * Every rule: a dump with the defect (it fires, at the right line, naming the Service) and a dump
 * without it (silent). Fixtures: the kind sample edited in one place, small hand-written dumps, or
 * generated dumps (src/generate) for IPVS and nftables mode.
 */
import { describe, expect, it } from 'vitest';
import {
  generateCluster,
  ipAddr,
  ipRoute,
  ipsetList,
  iptablesSave,
  ipvsadmLn,
  ipvsIpAddr,
  ipvsIptablesSave,
  ipvsState,
  nftListing,
} from '../../src/generate/index.js';
import { KIND, lineOf, lintFiles, of, replaceOnce } from './helpers.js';
import { duplicateVipDump, SECOND_CLAIM } from '../fixtures/duplicate-vip/kind-duplicate-vip.js';

const kindOnly = () => lintFiles({ 'kind.txt': KIND });

describe('dangling-jump', () => {
  it('fires once per undeclared chain, at the jump, naming the Service', async () => {
    const text = replaceOnce(KIND, ':KUBE-SEP-6E7XQMQ4RAYOWTTM - [0:0]\n', '');
    const f = of(await lintFiles({ 'kind.txt': text }, { only: ['dangling-jump'] }), 'dangling-jump');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'error', file: 'kind.txt', line: lineOf(text, '-j KUBE-SEP-6E7XQMQ4RAYOWTTM'), column: 1, service: 'kube-system/kube-dns:dns' });
    expect(f[0].message).toContain('KUBE-SEP-6E7XQMQ4RAYOWTTM');
    expect(f[0].message).toContain('2 rules appended to it');
    expect(f[0].related).toHaveLength(2);
  });
  it('reports rules appended to an undeclared chain nothing jumps to', async () => {
    const text = replaceOnce(KIND, 'COMMIT\n*nat', '-A MY-CHAIN -j ACCEPT\nCOMMIT\n*nat');
    const f = of(await lintFiles({ 'kind.txt': text }), 'dangling-jump');
    expect(f.map((x) => [x.line, x.message])).toEqual([[lineOf(text, '-A MY-CHAIN'), 'rules are appended to MY-CHAIN in table filter, which is not declared (1 rule): iptables-restore would reject this table']]);
  });
  it('is silent on the kind sample', async () => expect(of(await kindOnly(), 'dangling-jump')).toEqual([]));
});

describe('undefined-ipset', () => {
  const rules = '*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\n-A INPUT -m set --match-set KUBE-CLUSTER-IP src -j ACCEPT\nCOMMIT\n';
  const setOf = (name: string) => `Name: ${name}\nType: hash:ip,port\nRevision: 7\nHeader: family inet hashsize 1024 maxelem 65536\nSize in memory: 200\nReferences: 1\nNumber of entries: 0\nMembers:\n`;
  it('fires once per missing set when an ipset dump is given', async () => {
    const f = of(await lintFiles({ 'rules.txt': rules, 'ipset.txt': setOf('KUBE-LOOP-BACK') }), 'undefined-ipset');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'error', file: 'rules.txt', line: 3, message: 'set KUBE-CLUSTER-IP is used by 2 rules but is not in the ipset dump' });
  });
  it('is silent when the set exists, or when no ipset dump was given', async () => {
    expect(of(await lintFiles({ 'rules.txt': rules, 'ipset.txt': setOf('KUBE-CLUSTER-IP') }), 'undefined-ipset')).toEqual([]);
    expect(of(await lintFiles({ 'rules.txt': rules }), 'undefined-ipset')).toEqual([]);
  });
});

describe('orphan-chain', () => {
  it('fires on a per-Service chain nothing jumps to, and on an empty SEP chain', async () => {
    let text = replaceOnce(KIND, '-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:metrics cluster IP" -m tcp --dport 9153 -j KUBE-SVC-JD5MR3NA4I4DYORP\n', '');
    text = replaceOnce(text, '-A KUBE-SEP-QKX4QX54UKWK6JIY -s 172.18.0.3/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ\n', '');
    text = replaceOnce(text, '-A KUBE-SEP-QKX4QX54UKWK6JIY -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination 172.18.0.3:6443\n', '');
    const f = of(await lintFiles({ 'kind.txt': text }), 'orphan-chain');
    expect(f.map((x) => [x.line, x.service, x.message])).toEqual([
      [lineOf(text, ':KUBE-SEP-QKX4QX54UKWK6JIY'), 'default/kubernetes:https', 'KUBE-SEP-QKX4QX54UKWK6JIY (nat) is declared but empty, which kube-proxy never leaves it'],
      [lineOf(text, ':KUBE-SVC-JD5MR3NA4I4DYORP'), 'kube-system/kube-dns:metrics', 'KUBE-SVC-JD5MR3NA4I4DYORP (nat) is not jumped to from anywhere: stale state or a missing dispatch rule'],
    ]);
  });
  it('is silent on the kind sample', async () => expect(of(await kindOnly(), 'orphan-chain')).toEqual([]));
});

describe('service-no-endpoints', () => {
  const reject = '-A KUBE-SERVICES -d 10.96.5.5/32 -p tcp -m comment --comment "default/web:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\n';
  it('fires on the "has no endpoints" REJECT, naming the Service', async () => {
    const text = replaceOnce(KIND, '-A KUBE-FIREWALL ! -s', `${reject}-A KUBE-FIREWALL ! -s`);
    const f = of(await lintFiles({ 'kind.txt': text }), 'service-no-endpoints');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'warning', line: lineOf(text, 'default/web:http has no endpoints'), service: 'default/web:http', message: 'Service default/web:http has no endpoints: connections to 10.96.5.5:80/tcp are rejected' });
  });
  it('is silent on the kind sample', async () => expect(of(await kindOnly(), 'service-no-endpoints')).toEqual([]));
});

describe('local-policy-no-local-endpoints', () => {
  it('fires on generated Local-policy Services without a local endpoint', async () => {
    const c = generateCluster({ seed: 11, services: 30, shapes: ['nodeport-local-no-local-endpoints', 'internal-local-no-local-endpoints', 'nodeport-local'], mix: { externalLocal: 0, internalLocal: 0, noEndpoints: 0 } });
    const f = of(await lintFiles({ 'iptables-save.txt': iptablesSave(c), 'ip-route.txt': ipRoute(c), 'ip-addr.txt': ipAddr(c) }), 'local-policy-no-local-endpoints');
    expect(f.map((x) => x.service).sort()).toEqual(['shapes/internal-local-no-local-endpoints:http', 'shapes/nodeport-local-no-local-endpoints:http']);
    expect(f.every((x) => x.severity === 'warning' && /has no local endpoints/.test(x.text ?? ''))).toBe(true);
  });
  it('is silent on the kind sample', async () => expect(of(await kindOnly(), 'local-policy-no-local-endpoints')).toEqual([]));
});

describe('probability-ladder', () => {
  const first = '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-6E7XQMQ4RAYOWTTM';
  it('fires on an unequal share', async () => {
    const text = replaceOnce(KIND, first, first.replace('0.50000000000', '0.80000000000'));
    const f = of(await lintFiles({ 'kind.txt': text }), 'probability-ladder');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'error', line: lineOf(text, '0.80000000000'), service: 'kube-system/kube-dns:dns' });
    expect(f[0].message).toBe('KUBE-SVC-TCOU7JCQXEZGVUNU: endpoint rule 1 of 2 gets 80.0000% of new connections instead of 50.0000% (and 1 later rule with it)');
  });
  it('fires on an unreachable endpoint rule', async () => {
    const text = replaceOnce(KIND, first, first.replace(' -m statistic --mode random --probability 0.50000000000', ''));
    const f = of(await lintFiles({ 'kind.txt': text }), 'probability-ladder');
    expect(f.map((x) => [x.line, x.message])).toEqual([[lineOf(text, '10.244.0.4:53" -j KUBE-SEP-WXWGHGKZOCNYRYI7'), 'KUBE-SVC-TCOU7JCQXEZGVUNU: endpoint rule 2 of 2 is never reached: an earlier rule without a statistic match takes every packet']]);
  });
  it('is silent on the kind sample and on a generated 7-endpoint ladder', async () => {
    expect(of(await kindOnly(), 'probability-ladder')).toEqual([]);
    const c = generateCluster({ seed: 2, services: 20, shapes: ['seven-endpoints', 'affinity'] });
    expect(of(await lintFiles({ 'iptables-save.txt': iptablesSave(c) }), 'probability-ladder')).toEqual([]);
  });
});

describe('shadowed-rule', () => {
  const filter = (rules: string) => `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\n${rules}COMMIT\n`;
  it('reports a rule under a wider terminal rule, naming the shadowing rule', async () => {
    const text = filter('-A FORWARD -s 10.0.0.0/8 -m comment --comment "allow pods" -j ACCEPT\n-A FORWARD -s 10.1.2.3/32 -p tcp -m tcp --dport 22 -j DROP\n-A FORWARD -s 192.168.0.0/16 -j DROP\n');
    const f = of(await lintFiles({ 'f.txt': text }), 'shadowed-rule');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ line: 7, message: 'this rule never matches: the earlier rule at line 6 in FORWARD catches every packet it would (ACCEPT)' });
    expect(f[0].related).toEqual([{ file: 'f.txt', line: 6, column: 1, text: '-A FORWARD -s 10.0.0.0/8 -m comment --comment "allow pods" -j ACCEPT' }]);
  });
  it('reports a rule appended twice (same jump), and a rule after a catch-all', async () => {
    const text = filter('-A INPUT -i eth0 -j X\n-A INPUT -i eth0 -j X\n-A OUTPUT -j ACCEPT\n-A OUTPUT -p udp -j DROP\n');
    const f = of(await lintFiles({ 'f.txt': text }), 'shadowed-rule');
    expect(f.map((x) => [x.line, x.message.split(':')[0]])).toEqual([
      [7, 'this rule is redundant'],
      [9, 'this rule never matches'],
    ]);
  });
  it('never takes statistic/recent/unknown matches as shadowing, and is silent on kind and generated dumps', async () => {
    const text = filter('-A INPUT -m statistic --mode random --probability 0.5 -j DROP\n-A INPUT -j DROP\n-A OUTPUT -m limit --limit 3/min -j ACCEPT\n-A OUTPUT -j DROP\n');
    expect(of(await lintFiles({ 'f.txt': text }), 'shadowed-rule')).toEqual([]);
    expect(of(await kindOnly(), 'shadowed-rule')).toEqual([]);
    const c = generateCluster({ seed: 3, services: 40 });
    expect(of(await lintFiles({ 'iptables-save.txt': iptablesSave(c) }), 'shadowed-rule')).toEqual([]);
  });
});

describe('nodeports-not-last', () => {
  it('fires when a rule follows the KUBE-NODEPORTS jump', async () => {
    const np = '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n';
    const text = replaceOnce(KIND, np, `${np}-A KUBE-SERVICES -d 10.96.9.9/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ\n`);
    const f = of(await lintFiles({ 'kind.txt': text }), 'nodeports-not-last');
    expect(f.map((x) => [x.line, x.message])).toEqual([[lineOf(text, '-j KUBE-NODEPORTS\n'.trim()) + 0, 'the KUBE-NODEPORTS jump is rule 5 of 6 in nat KUBE-SERVICES; kube-proxy keeps it last']].map(([, m]) => [lineOf(text, 'NOTE: this must be the last rule'), m]));
  });
  it('is silent on the kind sample', async () => expect(of(await kindOnly(), 'nodeports-not-last')).toEqual([]));
});

describe('duplicate-service-vip', () => {
  it('names the Service whose rule comes later and the one that gets the traffic', async () => {
    const dup = '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/other:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-AAAAAAAAAAAAAAAA\n';
    let text = replaceOnce(KIND, '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports', `${dup}-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports`);
    text = replaceOnce(text, ':KUBE-SVC-ERIFXISQEP7F7OF4 - [0:0]\n', ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]\n:KUBE-SVC-ERIFXISQEP7F7OF4 - [0:0]\n');
    text = text.replace(/COMMIT\n$/, '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "default/other:https -> 172.18.0.9:6443" -j KUBE-SEP-QKX4QX54UKWK6JIY\nCOMMIT\n');
    const f = of(await lintFiles({ 'kind.txt': text }), 'duplicate-service-vip');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'error', service: 'default/other:https', line: lineOf(text, 'default/other:https cluster IP'), message: '10.96.0.1:443/tcp is claimed by default/other:https and by default/kubernetes:https: only default/kubernetes:https receives the traffic' });
  });
  it('finds a second dispatch rule for a VIP sent to another Service\'s existing chain (kept as a claim, not dropped)', async () => {
    const text = duplicateVipDump();
    const r = await lintFiles({ 'kind.txt': text });
    const f = of(r, 'duplicate-service-vip');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({
      service: 'kube-system/kube-dns:metrics',
      line: lineOf(text, SECOND_CLAIM),
      message: '10.96.0.1:443/tcp is claimed by kube-system/kube-dns:metrics and by default/kubernetes:https: only default/kubernetes:https receives the traffic',
      related: [expect.objectContaining({ line: lineOf(text, '"default/kubernetes:https cluster IP"') })],
    });
  });
  it('is silent on the kind sample and a generated dump', async () => {
    expect(of(await kindOnly(), 'duplicate-service-vip')).toEqual([]);
    const c = generateCluster({ seed: 3, services: 40 });
    expect(of(await lintFiles({ 'iptables-save.txt': iptablesSave(c) }), 'duplicate-service-vip')).toEqual([]);
  });
});

describe('endpoint-unroutable', () => {
  const routes = 'default via 172.18.0.1 dev eth0\n10.244.0.0/24 dev cni0 proto kernel scope link src 10.244.0.1\n172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.2\n';
  it('fires on a blackhole route, once per Service and endpoint', async () => {
    const r = await lintFiles({ 'kind.txt': KIND, 'route.txt': routes + 'blackhole 10.244.0.3\n' });
    const f = of(r, 'endpoint-unroutable');
    expect(f.map((x) => x.service).sort()).toEqual(['kube-system/kube-dns:dns', 'kube-system/kube-dns:dns-tcp', 'kube-system/kube-dns:metrics']);
    expect(f[0].message).toMatch(/^endpoint 10\.244\.0\.3 of kube-system\/kube-dns:\S+ matches a blackhole route \(blackhole 10\.244\.0\.3\): connections sent to it fail$/);
    expect(f[0].text).toContain('DNAT --to-destination 10.244.0.3:');
    expect(f[0].related?.[0]).toMatchObject({ file: 'route.txt', line: 4 });
  });
  it('fires on a route over an interface that is down, and on no route', async () => {
    const addr = '1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n    inet 127.0.0.1/8 scope host lo\n       valid_lft forever preferred_lft forever\n2: cni0: <BROADCAST,MULTICAST> mtu 1500 qdisc noqueue state DOWN group default qlen 1000\n    link/ether 9a:1b:2c:3d:4e:5f brd ff:ff:ff:ff:ff:ff\n    inet 10.244.0.1/24 brd 10.244.0.255 scope global cni0\n       valid_lft forever preferred_lft forever\n';
    const r = await lintFiles({ 'kind.txt': KIND, 'route.txt': '10.244.0.0/24 dev cni0 proto kernel scope link src 10.244.0.1\n', 'addr.txt': addr });
    const f = of(r, 'endpoint-unroutable');
    expect(f.filter((x) => /cni0, which is down/.test(x.message))).toHaveLength(6); // 10.244.0.3 and .4, each in the dns, dns-tcp and metrics Services
    expect(f.filter((x) => /172\.18\.0\.3 of default\/kubernetes:https has no route/.test(x.message))).toHaveLength(1);
  });
  it('is silent with healthy routes, and without an ip route dump', async () => {
    expect(of(await lintFiles({ 'kind.txt': KIND, 'route.txt': routes }), 'endpoint-unroutable')).toEqual([]);
    expect(of(await kindOnly(), 'endpoint-unroutable')).toEqual([]);
  });
});

describe('mixed-iptables-backends', () => {
  it('fires on the legacy-tables warning and on [unsupported revision]', async () => {
    const text = `# Generated by iptables-save v1.8.9 (nf_tables) on Thu Jan 15 12:00:00 2026\n${KIND.replace('-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP', '-A KUBE-FORWARD -m conntrack [unsupported revision] -j DROP')}# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n`;
    const f = of(await lintFiles({ 'kind.txt': text }), 'mixed-iptables-backends');
    expect(f.map((x) => x.line).sort((a, b) => a - b)).toEqual([lineOf(text, '[unsupported revision]'), lineOf(text, '# Warning: iptables-legacy')]);
    expect(f.every((x) => x.severity === 'warning')).toBe(true);
  });
  it('is silent on the kind sample', async () => expect(of(await kindOnly(), 'mixed-iptables-backends')).toEqual([]));
});

describe('stale-proxy-mode', () => {
  const ipvs = 'IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\nTCP  10.96.0.1:443 rr\n  -> 172.18.0.3:6443              Masq    1      0          0\n';
  it('fires on KUBE-SVC chains beside IPVS virtual servers', async () => {
    const f = of(await lintFiles({ 'kind.txt': KIND, 'ipvs.txt': ipvs }), 'stale-proxy-mode');
    expect(f).toHaveLength(1);
    expect(f[0].message).toBe('iptables-mode chains (11 KUBE-SVC/SEP/… chains) beside 1 IPVS virtual servers: the old KUBE-SVC/SEP rules DNAT packets before IPVS sees them');
    expect(f[0].related?.[0]).toMatchObject({ file: 'ipvs.txt', line: 4 });
  });
  it('fires on kube-ipvs0 addresses without virtual servers', async () => {
    const c = generateCluster({ seed: 4, services: 20 });
    const st = ipvsState(c);
    const addr = ipvsIpAddr(c, st).replace('    inet 10.96.0.1/32 scope global kube-ipvs0\n', '    inet 10.96.0.1/32 scope global kube-ipvs0\n       valid_lft forever preferred_lft forever\n    inet 10.99.99.99/32 scope global kube-ipvs0\n');
    const f = of(await lintFiles({ 'ipvsadm.txt': ipvsadmLn(c, st), 'addr.txt': addr }), 'stale-proxy-mode');
    expect(f.map((x) => x.message)).toEqual(['kube-ipvs0 holds 10.99.99.99 but no IPVS virtual server uses it: the node accepts packets for it and nothing answers']);
  });
  it('is silent on the kind sample and on a generated IPVS node', async () => {
    expect(of(await kindOnly(), 'stale-proxy-mode')).toEqual([]);
    expect(of(await lintFiles(ipvsNode(4)), 'stale-proxy-mode')).toEqual([]);
  });
});

function ipvsNode(seed: number, edit: (files: Record<string, string>) => void = () => {}): Record<string, string> {
  const c = generateCluster({ seed, services: 25 });
  const st = ipvsState(c);
  const ipt = ipvsIptablesSave(c, {}, st);
  const files = { 'iptables-save.txt': ipt, 'ipvsadm.txt': ipvsadmLn(c, st), 'ipset.txt': ipsetList(c, st, ipt), 'addr.txt': ipvsIpAddr(c, st), 'route.txt': ipRoute(c) };
  edit(files);
  return files;
}

describe('ipvs rules on generated IPVS nodes', () => {
  it('ipvs-no-real-servers fires on virtual servers of Services without endpoints, and not on others', async () => {
    const files = ipvsNode(5);
    const f = of(await lintFiles(files), 'ipvs-no-real-servers');
    expect(f.length).toBeGreaterThan(0);
    const lines = files['ipvsadm.txt'].split('\n');
    for (const x of f) {
      expect(lines[x.line - 1]).toMatch(/^(TCP|UDP|SCTP)\s/);
      expect(lines[x.line] ?? '').not.toMatch(/^\s+->/); // the next line is not a real server
    }
    const noEmpty = files['ipvsadm.txt'].split('\n').filter((l, i, all) => !(/^(TCP|UDP|SCTP)\s/.test(l) && !/^\s+->/.test(all[i + 1] ?? ''))).join('\n');
    expect(of(await lintFiles({ ...files, 'ipvsadm.txt': noEmpty }), 'ipvs-no-real-servers')).toEqual([]);
  });
  it('ipvs-all-weights-zero fires when every real server has weight 0', async () => {
    const files = ipvsNode(5);
    const lines = files['ipvsadm.txt'].split('\n');
    const vsAt = lines.findIndex((l, i) => /^TCP\s+10\./.test(l) && /^\s+->.*Masq\s+1\s/.test(lines[i + 1] ?? '') && /^(TCP|UDP|SCTP)\s/.test(lines[i + 2] ?? ''));
    lines[vsAt + 1] = lines[vsAt + 1].replace(/Masq(\s+)1(\s)/, 'Masq$10$2');
    const f = of(await lintFiles({ ...files, 'ipvsadm.txt': lines.join('\n') }), 'ipvs-all-weights-zero');
    expect(f.map((x) => [x.line, x.severity])).toEqual([[vsAt + 1, 'error']]);
    expect(of(await lintFiles(files), 'ipvs-all-weights-zero')).toEqual([]);
  });
  it('ipvs-vip-not-bound fires when a VIP is missing from kube-ipvs0', async () => {
    const files = ipvsNode(5);
    const m = /^    inet (10\.\d+\.\d+\.\d+)\/32 scope global kube-ipvs0\n       valid_lft forever preferred_lft forever\n/m.exec(files['addr.txt'])!;
    const addr = files['addr.txt'].replace(m[0], '');
    const f = of(await lintFiles({ ...files, 'addr.txt': addr }), 'ipvs-vip-not-bound');
    expect(f.length).toBeGreaterThan(0);
    expect(f.every((x) => x.message.includes(`${m[1]}:`) && x.severity === 'error')).toBe(true);
    expect(of(await lintFiles(files), 'ipvs-vip-not-bound')).toEqual([]);
  });
  it('ipvs-ipset-mismatch fires both ways', async () => {
    const files = ipvsNode(5);
    const set = files['ipset.txt'];
    const start = set.indexOf('Name: KUBE-CLUSTER-IP\n');
    const members = set.indexOf('Members:\n', start) + 'Members:\n'.length;
    const firstEnd = set.indexOf('\n', members);
    const removed = set.slice(members, firstEnd);
    const edited = set.slice(0, members) + '10.99.99.99,tcp:80\n' + set.slice(firstEnd + 1);
    const f = of(await lintFiles({ ...files, 'ipset.txt': edited }), 'ipvs-ipset-mismatch');
    const [ip, port] = [removed.split(',')[0], removed.split(':')[1]];
    expect(f.map((x) => x.message).sort()).toEqual([
      `KUBE-CLUSTER-IP entry 10.99.99.99,tcp:80 has no IPVS virtual server: traffic to it is accepted by iptables but not load-balanced`,
      expect.stringMatching(new RegExp(`^virtual server TCP/${ip.replace(/\./g, '\\.')}:${port} \\(a kube-ipvs0 VIP\\) has no entry in KUBE-CLUSTER-IP`)),
    ].sort());
    expect(of(await lintFiles(files), 'ipvs-ipset-mismatch')).toEqual([]);
  });
});

describe('masquerade-not-random-fully', () => {
  it('fires on MASQUERADE without --random-fully (kind-masq-agent)', async () => {
    const f = of(await kindOnly(), 'masquerade-not-random-fully');
    expect(f.map((x) => [x.line, x.message])).toEqual([[lineOf(KIND, 'must be last in chain'), 'MASQUERADE without --random-fully in nat/KIND-MASQ-AGENT: concurrent connections can collide on a source port (5 s DNS delays)']]);
  });
  it('fires on nft masquerade without fully-random, and is silent on kube-proxy\'s own rules', async () => {
    const nft = 'table ip nat {\n\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n\t\toifname "eth0" masquerade\n\t}\n}\n';
    expect(of(await lintFiles({ 'nft.txt': nft }), 'masquerade-not-random-fully').map((x) => x.line)).toEqual([4]);
    const c = generateCluster({ seed: 3, services: 20 });
    expect(of(await lintFiles({ 'ipt.txt': iptablesSave(c), 'nft.txt': nftListing(c) }), 'masquerade-not-random-fully')).toEqual([]);
  });
});

describe('ipvs-sysctl', () => {
  const ipvsFiles = () => ipvsNode(6);
  it('reports IPVS values as warnings at the sysctl line; ip_forward=0 is kernel-forwarding-off\'s (an error)', async () => {
    const sysctl = 'net.ipv4.ip_forward = 0\nnet.bridge.bridge-nf-call-iptables = 1\nnet.ipv4.vs.conntrack = 1\nnet.ipv4.vs.conn_reuse_mode = 0\nnet.ipv4.vs.expire_nodest_conn = 1\nnet.ipv4.vs.expire_quiescent_template = 1\nnet.ipv4.conf.all.arp_ignore = 1\nnet.ipv4.conf.all.arp_announce = 2\n';
    const all = await lintFiles({ ...ipvsFiles(), 'sysctl.txt': sysctl });
    expect(of(all, 'ipvs-sysctl').map((x) => [x.line, x.severity])).toEqual([[4, 'warning']]);
    expect(of(all, 'kernel-forwarding-off').map((x) => [x.line, x.severity, x.text])).toEqual([[1, 'error', 'net.ipv4.ip_forward = 0']]);
  });
  it('is silent with kube-proxy\'s values, and without a sysctl dump', async () => {
    const sysctl = 'net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\nnet.ipv4.vs.conntrack = 1\nnet.ipv4.vs.conn_reuse_mode = 1\nnet.ipv4.vs.expire_nodest_conn = 1\nnet.ipv4.vs.expire_quiescent_template = 1\nnet.ipv4.conf.all.arp_ignore = 1\nnet.ipv4.conf.all.arp_announce = 2\n';
    expect(of(await lintFiles({ ...ipvsFiles(), 'sysctl.txt': sysctl }), 'ipvs-sysctl')).toEqual([]);
    expect(of(await lintFiles(ipvsFiles()), 'ipvs-sysctl')).toEqual([]);
  });
});

describe('ruleset-size', () => {
  it('fires above 1000 KUBE-SERVICES rules and is silent below', async () => {
    const big = generateCluster({ seed: 9, services: 1100, shapes: [] });
    const f = of(await lintFiles({ 'ipt.txt': iptablesSave(big) }, { only: ['ruleset-size'] }), 'ruleset-size');
    expect(f).toHaveLength(1);
    expect(f[0].message).toMatch(/^KUBE-SERVICES has \d{4} rules \(\d+ rules in \d+ chains in all\): a new connection to a Service walks \d+ rules on average/);
    expect(of(await kindOnly(), 'ruleset-size')).toEqual([]);
  });
});

describe('foreign-rule-before-kube', () => {
  it('fires on an ACCEPT before KUBE-SERVICES in nat PREROUTING, traced from a pod', async () => {
    const pre = '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n';
    const text = replaceOnce(KIND, pre, `-A PREROUTING -d 10.96.0.0/12 -j ACCEPT\n${pre}`);
    const f = of(await lintFiles({ 'kind.txt': text }), 'foreign-rule-before-kube');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ line: lineOf(text, '-A PREROUTING -d 10.96.0.0/12 -j ACCEPT'), severity: 'warning' });
    expect(f[0].message).toMatch(/^a non-kube-proxy rule in nat\/PREROUTING accepts Service traffic before kube-proxy's rules: traced a packet from a pod to \S+ \(10\.96\.0\.\d+:\d+\/(tcp|udp)\) that ends here/);
  });
  it('fires on a DROP in filter FORWARD before KUBE-FORWARD', async () => {
    const fwd = '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL\n';
    const text = replaceOnce(KIND, fwd, `-A FORWARD -d 10.244.0.0/16 -j DROP\n${fwd}`);
    const f = of(await lintFiles({ 'kind.txt': text }), 'foreign-rule-before-kube');
    expect(f.map((x) => [x.line, x.message.slice(0, 61)])).toEqual([[lineOf(text, '-A FORWARD -d 10.244.0.0/16 -j DROP'), 'a non-kube-proxy rule in filter/FORWARD drops Service traffic']]);
  });
  it('does not count a path that holds only under an undecided match (its `assumed` step)', async () => {
    // Whether `-m limit` matches is not in the evidence: the ACCEPT decides only in one scenario.
    const pre = '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n';
    const text = replaceOnce(KIND, pre, `-A PREROUTING -d 10.96.0.0/12 -m limit --limit 3/min -j ACCEPT\n${pre}`);
    expect(of(await lintFiles({ 'kind.txt': text }), 'foreign-rule-before-kube')).toEqual([]);
  });
  it('is silent when the foreign rule does not touch Service traffic, and on the kind sample', async () => {
    const pre = '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n';
    const text = replaceOnce(KIND, pre, `-A PREROUTING -d 192.0.2.1/32 -j ACCEPT\n${pre}`);
    expect(of(await lintFiles({ 'kind.txt': text }), 'foreign-rule-before-kube')).toEqual([]);
    expect(of(await kindOnly(), 'foreign-rule-before-kube')).toEqual([]);
  });
});

describe('nft-undefined-reference', () => {
  it('fires on @set, jump and vmap verdicts to undefined names', async () => {
    const nft = [
      'table ip t {',
      '\tset allowed {',
      '\t\ttype ipv4_addr',
      '\t}',
      '\tchain input {',
      '\t\ttype filter hook input priority filter; policy accept;',
      '\t\tip saddr @allowed accept',
      '\t\tip saddr @missing drop',
      '\t\tjump nowhere',
      '\t\tip daddr vmap { 10.0.0.1 : jump gone, 10.0.0.2 : accept }',
      '\t}',
      '}',
      '',
    ].join('\n');
    const f = of(await lintFiles({ 'nft.txt': nft }), 'nft-undefined-reference');
    expect(f.map((x) => [x.line, x.message])).toEqual([
      [8, 'set or map @missing is not defined in table ip t (1 reference)'],
      [9, 'chain nowhere is not defined in table ip t (1 reference)'],
      [10, 'chain gone is not defined in table ip t (1 reference)'],
    ]);
  });
  it('is silent on a generated kube-proxy nftables listing', async () => {
    const c = generateCluster({ seed: 3, services: 40 });
    const r = await lintFiles({ 'nft.txt': nftListing(c) });
    expect(r.summary.error).toBe(0);
    expect(of(r, 'nft-undefined-reference')).toEqual([]);
  });
});

describe('indexed lookupRoute (used by endpoint-unroutable on every endpoint)', () => {
  it('answers as a plain scan of the routes does', async () => {
    const { lookupRoute, normalizeTable } = await import('../../src/model/route.js');
    const { cidrContains } = await import('../../src/model/addr.js');
    // Reference: the kernel's rule as a straightforward scan (local, main, default; longest prefix, lowest metric, first printed).
    const scan = (routes: typeof snap.routes, ip: NonNullable<ReturnType<typeof parseIp>>) => {
      for (const table of ['local', 'main', 'default']) {
        let best: (typeof routes)[number] | undefined;
        for (const r of routes) {
          if (r.origin !== undefined || r.family !== ip.family || r.tos !== undefined || normalizeTable(r.table) !== table || !cidrContains(r.dst, ip)) continue;
          if (!best || r.dst.prefix > best.dst.prefix || (r.dst.prefix === best.dst.prefix && (r.metric ?? 0) < (best.metric ?? 0))) best = r;
        }
        if (best) return best;
      }
      return undefined;
    };
    const { parseIp } = await import('../../src/model/addr.js');
    const { snapshotOf } = await import('./helpers.js');
    const text = [
      'default via 192.168.1.1 dev eth0 proto dhcp metric 100',
      'default via 192.168.1.254 dev eth1 metric 50',
      '10.0.0.0/8 via 192.168.1.2 dev eth0',
      '10.0.0.0/8 via 192.168.1.3 dev eth0',
      'unreachable 10.1.0.0/16',
      'local 127.0.0.0/8 dev lo table local proto kernel scope host src 127.0.0.1',
      'local 10.0.0.1 dev eth0 table local proto kernel scope host src 10.0.0.1',
      '10.5.0.0/16 dev eth0 tos 0x10',
      'fd00::/64 dev eth0 proto kernel metric 256',
      '',
    ].join('\n');
    const c = generateCluster({ seed: 8, services: 50 });
    const snap = await snapshotOf({ 'routes.txt': text + ipRoute(c) + 'blackhole 10.244.1.7\n10.244.1.0/24 dev eth9 metric 5\n' });
    const ips = ['10.244.1.7', '10.244.1.8', '10.244.2.3', '172.18.0.9', '8.8.8.8', '127.0.0.1', '192.168.1.1', '10.0.0.1', 'fd00::1', '2001:db8::5'];
    for (let i = 0; i < 200; i++) ips.push(`10.${i % 256}.${(i * 7) % 256}.${(i * 13) % 256}`);
    let found = 0;
    for (const t of ips) {
      const ip = parseIp(t)!;
      const want = scan(snap.routes, ip);
      expect(lookupRoute(snap.routes, ip), t).toBe(want);
      if (want) found++;
    }
    expect(found).toBeGreaterThan(100);
  });
});

describe('rules that read the resolution apply to nftables mode too', () => {
  it('service-no-endpoints and local-policy-no-local-endpoints fire on a generated nftables node, naming the Services', async () => {
    const c = generateCluster({ seed: 3, services: 40 });
    const r = await lintFiles({ 'nft.txt': nftListing(c) });
    const none = of(r, 'service-no-endpoints').map((f) => f.service);
    expect(none).toContain('shapes/no-endpoints:http');
    expect(of(r, 'local-policy-no-local-endpoints').map((f) => f.service)).toContain('shapes/nodeport-local-no-local-endpoints:http');
  });
  it('orphan-chain reports an nftables chain nothing reaches', async () => {
    const c = generateCluster({ seed: 3, services: 40 });
    // A stale per-Service chain left in kube-proxy's table (hand-written addition to the generated listing).
    const listing = nftListing(c).replace(/\n}\n?$/, '\n\n\tchain service-AAAAAAAA-shapes/stale/tcp/http {\n\t\tgoto endpoint-BBBBBBBB-shapes/stale/tcp/http__10.244.9.9/80\n\t}\n}\n');
    const f = of(await lintFiles({ 'nft.txt': listing }), 'orphan-chain');
    expect(f.map((x) => x.message)).toEqual([expect.stringMatching(/^nftables chain service-AAAAAAAA-shapes\/stale\/tcp\/http is not reached/)]);
  });
});
