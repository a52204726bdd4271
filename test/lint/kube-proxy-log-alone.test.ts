/**
 * Findings from a kube-proxy log alone (issue 30): lint runs the rules that judge a log on their own
 * when no ruleset is given, on real pastes (test/fixtures/kube-proxy-pastes); healthy logs give none.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RULES } from '../../src/lint/index.js';
import { lintFiles } from './helpers.js';

const DIR = join(import.meta.dirname, '..', 'fixtures');
const read = (f: string) => readFileSync(join(DIR, f), 'utf8');
const STANDALONE = RULES.filter((r) => r.meta.standalone);
const alone = async (f: string) => (await lintFiles({ [f]: read(f) }, { rules: STANDALONE })).findings.map((x) => `${x.ruleId}@${x.line}`);

describe('a kube-proxy log alone', () => {
  const cases: Record<string, string[]> = {
    'kube-proxy-pastes/cri-nftables-sync-failed.log': ['kube-proxy-sync-failing@2'],
    'kube-proxy-pastes/k3s-interleaved-chain-jumps.log': ['kube-proxy-sync-failing@4'],
    'kube-proxy-pastes/cri-ensure-chain-modprobe.log': ['kube-proxy-sync-failing@1'],
    'kube-proxy-pastes/rkt-journald-node-not-found.log': ['kube-proxy-node-not-found@1'],
    'kube-proxy-pastes/journald-node-ip-fallback.log': ['kube-proxy-node-not-found@2'],
    'kube-proxy-pastes/klog-node-not-found-kops.log': ['kube-proxy-node-not-found@4'],
    'kube-proxy-pastes/klog-ipvs-fallback-rke.log': ['kube-proxy-mode-fallback@1', 'kube-proxy-node-not-found@3'],
    'kube-proxy-pastes/klog-ipvs-refused-ipset.log': ['kube-proxy-exited@3'],
    'kube-proxy-pastes/klog-fatal-node-ip.log': ['kube-proxy-node-not-found@1', 'kube-proxy-exited@6'],
    'kube-proxy-pastes/systemctl-status-fatal.log': ['kube-proxy-exited@8'],
    'kube-proxy-pastes/journald-zh-locale-cut.log': ['kube-proxy-api-unreachable@2'],
    'kube-proxy-pastes/kubectl-logs-api-timeout.log': ['kube-proxy-api-unreachable@3', 'kube-proxy-node-not-found@6'],
    'kube-proxy-pastes/kubectl-logs-unknown-mode-api-refused.log': ['kube-proxy-api-unreachable@2'],
    'kube-proxy-pastes/klog-br-netfilter-node-lookup.log': ['kube-proxy-node-not-found@3', 'kube-proxy-host-prerequisite@5'],
    'kube-proxy-pastes/journald-snap-conntrack-missing.log': ['kube-proxy-host-prerequisite@1'],
    'kube-proxy-pastes/klog-conntrack-missing-structured.log': ['kube-proxy-host-prerequisite@1'],
    // What a healthy or merely noisy log shows is no finding.
    'kube-proxy-pastes/tui-frame-ipvs-dualstack.log': [],
    'kube-proxy-pastes/journald-cut-at-width.log': [],
    'kube-proxy-pastes/k3s-logrus-interleaved.log': [],
    'kube-proxy/klog-iptables-healthy.log': [],
    'kube-proxy/klog-ipvs-healthy.log': [],
    'kube-proxy/docker-json.log': [],
  };
  for (const [f, want] of Object.entries(cases)) {
    it(f, async () => {
      expect((await alone(f)).sort()).toEqual(want.sort());
    });
  }

  it('the finding words what the log shows: the nft failure of IPv6, the Node name, the exit reason', async () => {
    const r = await lintFiles({ 'n.log': read('kube-proxy-pastes/cri-nftables-sync-failed.log'), 'k.log': read('kube-proxy-pastes/klog-node-not-found-kops.log'), 'x.log': read('kube-proxy-pastes/klog-ipvs-refused-ipset.log') }, { rules: STANDALONE });
    const msg = (id: string) => r.findings.find((f) => f.ruleId === id)?.message ?? '';
    expect(msg('kube-proxy-sync-failing')).toMatch(/^kube-proxy's nft \(IPv6\) failed once, at 2026-07-25T11:35:58\.172751052Z/);
    expect(msg('kube-proxy-node-not-found')).toMatch(/^kube-proxy found no Node named "ip-172-20-78-251" and took 127\.0\.0\.1 as its node IP: /);
    expect(msg('kube-proxy-exited')).toContain("can't use the IPVS proxier: error getting ipset version");
  });
});

describe("kube-proxy's configuration alone", () => {
  const read2 = (f: string) => readFileSync(join(DIR, f), 'utf8');
  it('a real fragment sets only ipvs.strictARP: nothing else is assumed (no "runs in iptables mode" from an unset mode)', async () => {
    const r = await lintFiles({ 'f.yaml': read2('kube-proxy-config-pastes/fragment-ipvs-strictarp.yaml') }, { rules: STANDALONE });
    expect(r.findings).toEqual([]);
    const all = await lintFiles({ 'f.yaml': read2('kube-proxy-config-pastes/fragment-ipvs-strictarp.yaml') });
    expect(all.findings.filter((f) => f.ruleId.startsWith('kube-proxy-'))).toEqual([]);
  });
  it('the real kubeadm-embedded configuration: conntrack.max is no longer read (info)', async () => {
    const r = await lintFiles({ 'k.yaml': read2('kube-proxy-config-pastes/kubeadm-v1alpha3-embedded.yaml') }, { rules: STANDALONE });
    expect(r.findings.map((f) => [f.ruleId, f.severity, f.line])).toEqual([['kube-proxy-config-not-read', 'info', 38]]);
  });
  it('the real bare file echoed by kube-proxy (jhunt/k8s-boshrelease#58): conntrack.max, resourceContainer and the userspace fields, no longer read', async () => {
    const r = await lintFiles({ 'c.yaml': read2('kube-proxy/config-bare.yaml') }, { rules: STANDALONE });
    expect(r.findings.map((f) => f.message)).toEqual([
      '`conntrack.max` is a field current kube-proxy no longer has (replaced by conntrack.maxPerCore and conntrack.min): ignored',
      "`portRange` is a field current kube-proxy no longer has (the userspace proxier's, removed with it): ignored",
      "`resourceContainer` is a field current kube-proxy no longer has (kube-proxy's old cgroup option, removed): ignored",
      '`udpIdleTimeout` is a field current kube-proxy no longer has (the userspace proxier\'s, removed with it): ignored',
    ]);
  });
});
