/** The kube-proxy-* lint rules: kube-proxy's logs and configuration against the dumps. */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KIND, lintFiles, of, replaceOnce } from './helpers.js';
import { kubeProxyLogOf, natPayloadWithBadRule } from '../helpers/kube-proxy-payload.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FIX = join(ROOT, 'test', 'fixtures', 'kube-proxy');
const fixture = (n: string) => readFileSync(join(FIX, n), 'utf8');

/** Every dump of a bundled sample, by name. */
function sample(mode: 'iptables' | 'ipvs' | 'nftables'): Record<string, string> {
  const dir = join(ROOT, 'samples', `${mode}-mode-node`);
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)) if (statSync(join(dir, f)).isFile() && f.endsWith('.txt') && f !== 'NOTE.txt') out[f] = readFileSync(join(dir, f), 'utf8');
  return out;
}

const config = (mode: string, extra = '') =>
  ['apiVersion: kubeproxy.config.k8s.io/v1alpha1', 'kind: KubeProxyConfiguration', `mode: "${mode}"`, 'clusterCIDR: 10.244.0.0/16', 'iptables:', '  masqueradeBit: 14', extra].join('\n') + '\n';

const KP_RULES = [
  'kube-proxy-sync-failing',
  'kube-proxy-mode-fallback',
  'kube-proxy-mode-mismatch',
  'kube-proxy-cluster-cidr-mismatch',
  'kube-proxy-masquerade-bit-mismatch',
  'kube-proxy-nodeport-addresses',
  'kube-proxy-strict-arp',
  'kube-firewall-drop-without-mark',
  'kube-proxy-node-not-found',
  'kube-proxy-exited',
  'kube-proxy-api-unreachable',
  'kube-proxy-host-prerequisite',
];
const kpFindings = (r: Awaited<ReturnType<typeof lintFiles>>) => r.findings.filter((f) => KP_RULES.includes(f.ruleId));

describe('negative: configurations that agree with the bundled samples, healthy logs', () => {
  for (const mode of ['iptables', 'ipvs', 'nftables'] as const) {
    it(`${mode}-mode-node with its own configuration (ConfigMap form) and a healthy start-up log: no kube-proxy finding`, async () => {
      const cm = ['apiVersion: v1', 'kind: ConfigMap', 'data:', '  config.conf: |-', ...config(mode, mode === 'ipvs' ? 'ipvs:\n  strictARP: false' : '').trimEnd().split('\n').map((l) => `    ${l}`)].join('\n') + '\n';
      // Real healthy start-ups for iptables (kube-proxy 1.28) and IPVS (1.11); nftables has no public paste here.
      const healthy =
        mode === 'ipvs' ? fixture('klog-ipvs-healthy.log') : mode === 'iptables' ? fixture('klog-iptables-healthy.log') : `I0312 14:02:10.981000       1 server_linux.go:169] "Using ${mode} Proxier" ipFamily="IPv4"\n`;
      const r = await lintFiles({ ...sample(mode), 'kube-proxy-cm.yaml': cm, 'kube-proxy.log': healthy });
      expect(kpFindings(r)).toEqual([]);
      expect(r.rules).toEqual(expect.arrayContaining(['kube-proxy-sync-failing', 'kube-proxy-cluster-cidr-mismatch']));
    });
  }
  it('a healthy real docker json-file log (module warnings, no fallback) with the iptables sample: no finding', async () => {
    const r = await lintFiles({ ...sample('iptables'), 'kube-proxy-json.log': fixture('docker-json.log') });
    expect(kpFindings(r)).toEqual([]);
  });
  it('the flags form, empty mode (iptables) on the iptables sample: no finding', async () => {
    const r = await lintFiles({ ...sample('iptables'), 'flags.txt': 'kube-proxy --cluster-cidr=10.244.0.0/16 --masquerade-bit=14 --proxy-mode=\n' });
    expect(kpFindings(r)).toEqual([]);
  });
});

describe('kube-proxy-sync-failing', () => {
  it('real klog paste: five failures, first and last time, the lines named, no payload to resolve', async () => {
    const r = await lintFiles({ 'kube-proxy.log': fixture('klog-sync-failed.log') });
    const [f, more] = of(r, 'kube-proxy-sync-failing');
    expect(more).toBeUndefined();
    expect(f.message).toContain('5 times, from 0809 05:37:21.484590 to 0809 07:32:42.616867');
    expect(f.message).toContain('payload lines 51, 53, 52 (the payload is not in the log');
    expect(f).toMatchObject({ file: 'kube-proxy.log', line: 1, severity: 'error' });
  });
  it('a logged payload: the rejected line, its Service through the resolver, the ports closed', async () => {
    const save = readFileSync(join(ROOT, 'samples', 'iptables-mode-node', 'iptables-save.txt'), 'utf8');
    const p = natPayloadWithBadRule(save, 'KUBE-MARK-DROP', 'kube-system/kube-dns:dns');
    const log = kubeProxyLogOf(p.lines, `iptables-restore: line ${p.badLine} failed`, 1);
    const [f] = of(await lintFiles({ 'kube-proxy.log': log }), 'kube-proxy-sync-failing');
    expect(f.service).toBe('kube-system/kube-dns:dns');
    expect(f.message).toContain(`the tool named payload line ${p.badLine}: \`${p.lines[p.badLine - 1]}\` (Service kube-system/kube-dns:dns)`);
    expect(f.message).toContain('1 NodePort socket closed (30080)');
    expect(f.related?.[0]).toMatchObject({ line: 2 + p.badLine, text: p.lines[p.badLine - 1] });
  });
  it('an nft failure names the chain and its Service from the chain name', async () => {
    const cmd = 'add rule ip kube-proxy service-ULMVA6XW-kube-system/kube-dns/udp/dns fib daddr type local goto x';
    const from = cmd.indexOf('fib') + 1;
    const log = [
      'E0312 14:02:11.118202       1 proxier.go:1800] "nftables sync failed" err=<',
      `\t/dev/stdin:12:${from}-${from + 13}: Error: Could not process rule: No such file or directory`,
      `\t${cmd}`,
      `\t${' '.repeat(from - 1)}^^^^^^^^^^^^^^`,
      ' >',
    ].join('\n');
    const [f] = of(await lintFiles({ 'kube-proxy.log': log }), 'kube-proxy-sync-failing');
    expect(f.service).toBe('kube-system/kube-dns:dns');
    expect(f.message).toContain('nft rejected transaction line 12 in chain service-ULMVA6XW-kube-system/kube-dns/udp/dns at `fib daddr type`');
  });
});

describe('kube-proxy-mode-fallback', () => {
  it('real paste: asked for IPVS, runs iptables', async () => {
    const [f] = of(await lintFiles({ 'kube-proxy.log': fixture('klog-ipvs-fallback.log') }), 'kube-proxy-mode-fallback');
    expect(f.message).toMatch(/^kube-proxy was asked for ipvs and runs iptables instead: the log gives no reason/);
    expect(f.related?.at(-1)?.line).toBe(6);
  });
  it('with the structured reason of newer versions', async () => {
    const log = [
      'E0312 14:02:10.1       1 server_others.go:200] "Failed to load kernel module with modprobe, you can ignore this message when kube-proxy is running inside container without mounting /lib/modules" moduleName="ip_vs_sh"',
      'E0312 14:02:10.2       1 server_others.go:203] "Can\'t use the IPVS proxier" err="IPVS proxier will not be used because the following required kernel modules are not loaded: [ip_vs_sh]"',
      'I0312 14:02:10.3       1 server_others.go:206] "Using iptables Proxier"',
    ].join('\n');
    const [f] = of(await lintFiles({ 'kube-proxy.log': log }), 'kube-proxy-mode-fallback');
    expect(f.message).toContain('runs iptables instead: IPVS proxier will not be used because the following required kernel modules are not loaded: [ip_vs_sh]');
  });
});

describe('configuration against the dumps', () => {
  it('kube-proxy-mode-mismatch: mode ipvs, the node holds KUBE-SVC chains only', async () => {
    const [f] = of(await lintFiles({ ...sample('iptables'), 'kp.yaml': config('ipvs') }), 'kube-proxy-mode-mismatch');
    expect(f.message).toBe('kube-proxy is configured for ipvs mode, but the dumps show iptables mode (IPVS virtual servers, KUBE-CLUSTER-IP ipsets or kube-ipvs0 not found)');
    expect(f).toMatchObject({ file: 'kp.yaml', line: 3, text: 'mode: "ipvs"' });
    // The configured mode is the finding's own line: not repeated as related evidence.
    expect(f.related ?? []).toEqual([]);
  });
  it('kube-proxy-mode-mismatch: the real edited EKS ConfigMap (mode ipvs under `config: |-`) on the iptables sample', async () => {
    const [f] = of(await lintFiles({ ...sample('iptables'), 'kube-proxy-config.yaml': fixture('configmap-eks-edited.yaml') }), 'kube-proxy-mode-mismatch');
    expect(f).toMatchObject({ file: 'kube-proxy-config.yaml', line: 35, text: '    mode: "ipvs" # <-- modified from "iptables"' });
  });
  it('kube-proxy-mode-mismatch: the log says ipvs, the dumps show nftables', async () => {
    const [f] = of(await lintFiles({ ...sample('nftables'), 'kp.log': fixture('klog-ipvs-healthy.log') }), 'kube-proxy-mode-mismatch');
    expect(f).toMatchObject({ file: 'kp.log', line: 5 });
  });
  it('kube-proxy-cluster-cidr-mismatch', async () => {
    const [f] = of(await lintFiles({ ...sample('iptables'), 'kp.yaml': config('iptables').replace('10.244.0.0/16', '10.42.0.0/16') }), 'kube-proxy-cluster-cidr-mismatch');
    expect(f.message).toBe('kube-proxy is configured with clusterCIDR 10.42.0.0/16, but its rules masquerade traffic not from 10.244.0.0/16');
    expect(f.text).toContain('! -s 10.244.0.0/16');
  });
  it('kube-proxy-masquerade-bit-mismatch (also with the real bare config: bit 14 agrees)', async () => {
    const [f] = of(await lintFiles({ ...sample('ipvs'), 'kp.yaml': config('ipvs').replace('masqueradeBit: 14', 'masqueradeBit: 15') }), 'kube-proxy-masquerade-bit-mismatch');
    expect(f.message).toBe('kube-proxy is configured with masqueradeBit 15 (mark 0x8000), but KUBE-MARK-MASQ sets 0x4000 (bit 14)');
    expect(of(await lintFiles({ ...sample('iptables'), 'kp.yaml': fixture('config-bare.yaml') }), 'kube-proxy-masquerade-bit-mismatch')).toEqual([]);
  });
  it('kube-proxy-nodeport-addresses: restricted in the config, every local address in the rules', async () => {
    const [f] = of(await lintFiles({ ...sample('iptables'), 'kp.yaml': config('iptables', 'nodePortAddresses: ["192.168.0.0/16"]') }), 'kube-proxy-nodeport-addresses');
    expect(f.message).toBe('kube-proxy is configured to serve NodePorts only on 192.168.0.0/16, but KUBE-SERVICES sends every local address to KUBE-NODEPORTS');
  });
  it('kube-proxy-nodeport-addresses: rules restricted to an address outside the configured CIDR', async () => {
    const s = sample('iptables');
    const rule = '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS';
    s['iptables-save.txt'] = replaceOnce(s['iptables-save.txt'], rule, '-A KUBE-SERVICES -d 172.18.0.3/32 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -j KUBE-NODEPORTS');
    const [f] = of(await lintFiles({ ...s, 'kp.yaml': config('iptables', 'nodePortAddresses: ["192.168.0.0/16"]') }), 'kube-proxy-nodeport-addresses');
    expect(f.message).toBe('KUBE-SERVICES serves NodePorts on 172.18.0.3/32, which is not in the configured nodePortAddresses (192.168.0.0/16)');
    expect(of(await lintFiles({ ...s, 'kp.yaml': config('iptables', 'nodePortAddresses: ["172.18.0.0/16"]') }), 'kube-proxy-nodeport-addresses')).toEqual([]);
  });
  it('kube-proxy-strict-arp: configured, not applied (the real rke2 flags on the IPVS sample)', async () => {
    const r = await lintFiles({ ...sample('ipvs'), 'flags.txt': fixture('flags-rke2.txt') });
    expect(of(r, 'kube-proxy-strict-arp').map((f) => f.message)).toEqual([
      'kube-proxy is configured with strictARP, but net.ipv4.conf.all.arp_ignore = 0 (kube-proxy sets 1): the node still answers ARP for kube-ipvs0 addresses',
      'kube-proxy is configured with strictARP, but net.ipv4.conf.all.arp_announce = 0 (kube-proxy sets 2): the node still answers ARP for kube-ipvs0 addresses',
    ]);
    // The same flags name 10.42.0.0/16, not the sample's pod network: that is found too.
    expect(of(r, 'kube-proxy-cluster-cidr-mismatch')).toHaveLength(1);
  });
});

describe('kube-firewall-drop-without-mark (the iptables 1.8.7/1.8.8 trap)', () => {
  const good = '-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP';
  // The kind sample: kubelet 1.2x still wrote KUBE-FIREWALL's mark rule there.
  const s = KIND;
  it('the re-saved rule without its mark match is an error, with the jumps to it', async () => {
    const broken = replaceOnce(s, good, '-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -j DROP');
    const [f] = of(await lintFiles({ 'iptables-save.txt': broken }), 'kube-firewall-drop-without-mark');
    expect(f.message).toBe('KUBE-FIREWALL drops "marked packets" without testing a mark: every packet that reaches it is dropped (jumped to from INPUT, OUTPUT)');
    expect(f.related?.map((x) => x.text)).toEqual(['-A INPUT -j KUBE-FIREWALL', '-A OUTPUT -j KUBE-FIREWALL']);
  });
  it('the intact rule is not', async () => {
    expect(of(await lintFiles({ 'iptables-save.txt': s }), 'kube-firewall-drop-without-mark')).toEqual([]);
  });
});
