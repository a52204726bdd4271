/**
 * `kpx trace` text, answer first (issue 16): the verdict and every outcome's fate before the road,
 * the road every outcome shares printed once, each outcome's own steps under a first line that
 * states its fate, outcomes by share then address, 120 columns, `-v` for everything.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, type KpxResult } from '../helpers/cli.js';

const SAMPLE = (name: string) => new URL(`../../samples/${name}`, import.meta.url).pathname;
const NODE = SAMPLE('iptables-mode-node');
const count = (text: string, line: string) => text.split('\n').filter((l) => l === line).length;
const ipKey = (hostPort: string) => hostPort.split(/[.:]/).map((x) => x.padStart(5, '0')).join('.');

describe('kpx trace text: the answer first', () => {
  let seven: KpxResult;
  let lines: string[];
  beforeAll(async () => {
    seven = await cli(['trace', '10.110.189.65:80', '-i', NODE]);
    lines = seven.stdout.split('\n');
  });

  it('starts with the Service, then the verdict: distribution, where the endpoints are, masquerade', () => {
    expect(seven.code).toBe(0);
    expect(lines[0]).toBe('shapes/seven-endpoints:http  10.110.189.65:80/tcp');
    expect(lines[1]).toBe('  verdict  DNAT 100% to 7 endpoints: 5 on other nodes (71.43%), 2 on this node (28.57%); no masquerade');
    expect(lines[2]).toBe('  packet   pod 10.244.1.18:40000 → 10.110.189.65:80/tcp in on cni0');
  });

  it('lists every endpoint with its share and where it goes, by share then address, before any assumption or step', () => {
    const summary = lines.slice(4, lines.indexOf('', 4));
    expect(summary).toHaveLength(7);
    const dests = summary.map((l) => /DNAT → (\S+)/.exec(l)?.[1] ?? '');
    expect(dests).toEqual([...dests].sort((a, b) => (ipKey(a) < ipKey(b) ? -1 : 1)));
    expect(summary).toContain(' 14.29%  DNAT → 10.244.1.5:8080  to a pod on this node via bridge cni0');
    expect(summary).toContain(' 14.29%  DNAT → 10.244.2.5:8080  to another node via tunnel flannel.1, next hop 10.244.2.0');
    expect(lines.findIndex((l) => l.startsWith('  assume'))).toBeGreaterThan(4 + 7);
  });

  it('prints the shared road once (was 7 times: 147 lines), then each outcome under a line stating its fate', () => {
    expect(count(seven.stdout, '    nat/PREROUTING:188  jump KUBE-SERVICES')).toBe(1);
    expect(count(seven.stdout, '    filter/FORWARD:31  jump KUBE-PROXY-FIREWALL')).toBe(1);
    expect(lines.length).toBeLessThan(90);
    // Each endpoint's own block: its fate line, then its own DNAT step, before the next block.
    for (const ep of ['10.244.0.4:8080', '10.244.1.5:8080', '10.244.2.8:8080']) {
      const heads = lines.map((l, i) => (l.startsWith(' 14.29%  DNAT → ' + ep + '  ') ? i : -1)).filter((i) => i >= 0);
      expect(heads, ep).toHaveLength(2); // in the summary and over its own steps
      const block = lines.slice(heads[1] + 1, lines.indexOf('', heads[1]) < 0 ? undefined : lines.indexOf('', heads[1]));
      expect(block.some((l) => l.endsWith(`DNAT to ${ep}`)), ep).toBe(true);
      expect(block.some((l) => / DNAT to (?!10\.244\.0\.4|10\.244\.1\.5|10\.244\.2\.8)/.test(l))).toBe(false);
    }
  });

  it('folds a statistic ladder without -v; -v shows every step and every rule text', async () => {
    expect(seven.stdout).toContain('    nat/KUBE-SVC-D3OXOFYHVTC53GLE:456-461  statistic: 6 rules not taken');
    const v = (await cli(['trace', '10.110.189.65:80', '-i', NODE, '-v'])).stdout;
    expect(v).not.toContain('rules not taken');
    expect(v).toContain('nat/KUBE-SVC-D3OXOFYHVTC53GLE:456  statistic: not taken (85.71%)');
    expect(v).toMatch(/^ {8}-A KUBE-SEP-PHK44TTDZGXR6CTD -p tcp .*-j DNAT$/m);
  });

  it('a stopped packet names the rule that stopped it, on its first line', async () => {
    const r = (await cli(['trace', '10.110.29.240:80', '-i', NODE])).stdout.split('\n');
    expect(r[1]).toBe('  verdict  REJECT 100%');
    expect(r[4]).toBe('   100%  REJECT  rejected by filter/KUBE-SERVICES:56 (icmp-port-unreachable)');
  });

  it('masquerade per outcome and in the verdict (IPVS, from outside)', async () => {
    const r = (await cli(['trace', '10.104.44.153:80', '-i', SAMPLE('ipvs-mode-node'), '--from', 'external'])).stdout;
    expect(r.split('\n')[1]).toMatch(/^ {2}verdict {2}DNAT 100% to 3 endpoints: .*; masqueraded \(source NAT\)$/);
    expect(r).toContain(' 33.33%  DNAT → 10.244.1.9:8080  to a pod on this node via bridge cni0 · masquerade to 10.244.1.1');
  });

  it('undecided matches: each scenario with its conditions and fates in the summary; shared steps once', async () => {
    const r = (await cli(['trace', '10.96.0.1:443/tcp', '-i', SAMPLE('iptables-mode-kind/iptables-save.txt')])).stdout;
    const l = r.split('\n');
    expect(l[1]).toBe('  verdict  DNAT 100% to 1 endpoint in each of 2 scenarios: matches the evidence cannot decide (below); masquerade');
    expect(l[2]).toBe('           depends on the scenario');
    const firstAssume = l.findIndex((x) => x.startsWith('  assume'));
    const s1 = l.indexOf('  scenario 1 of 2');
    const s2 = l.indexOf('  scenario 2 of 2');
    expect(s1).toBeGreaterThan(0);
    expect(s2).toBeLessThan(firstAssume);
    expect(l[s2 + 1]).toBe('    if 172.18.0.3 is not one of this node\'s addresses');
    expect(l.slice(s2, firstAssume).some((x) => / {5}100% {2}DNAT → 172\.18\.0\.3:6443 .*· masquerade$/.test(x))).toBe(true);
    expect(count(r, '    nat/KUBE-SEP-QKX4QX54UKWK6JIY:89  DNAT to 172.18.0.3:6443')).toBe(1);
    expect(count(r, '      nat/KIND-MASQ-AGENT:78  MASQUERADE')).toBe(1);
  });

  it('fits 120 columns on every sample, with and without -v (nft chain names included)', async () => {
    for (const [sample, target] of [
      ['nftables-mode-node', '10.110.189.65'],
      ['iptables-mode-node', 'shapes/loadbalancer-source-ranges'],
      ['ipvs-mode-node', 'nodeport:31493'],
      ['iptables-mode-kind/iptables-save.txt', '10.96.0.10'],
    ]) {
      for (const v of [[], ['-v']]) {
        const out = await cli(['trace', target, '-i', SAMPLE(sample), ...v]);
        expect(out.code, `${sample} ${target}`).toBe(0);
        const wide = out.stdout.split('\n').filter((l) => l.length > 120);
        expect(wide, `${sample} ${target} ${v}`).toEqual([]);
        expect(out.stdout.split('\n').length).toBeGreaterThan(10);
      }
    }
  });
});
