/**
 * A kube-proxy log alone (issue 30): lint reports what the log shows (exit 1 at --fail-on, said
 * first that the Service rules are not checked; exit 3 when the log shows nothing wrong), while
 * services and trace still cannot tell (exit 3) but say in one line what the log shows.
 */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { cli } from '../helpers/cli.js';

const fx = (f: string) => fileURLToPath(new URL(`../fixtures/${f}`, import.meta.url));
const NFT = fx('kube-proxy-pastes/cri-nftables-sync-failed.log');
const HEALTHY = fx('kube-proxy/klog-iptables-healthy.log');

describe('a kube-proxy log alone on the command line', () => {
  it('lint: the findings of the log, exit 1; the first line says the rules are not checked', async () => {
    const r = await cli(['lint', '-i', NFT]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(/^kpx: no iptables-save, ip6tables-save, nft or ipvsadm dump was read: lint checks only what kube-proxy's log .*cri-nftables-sync-failed\.log shows on its own; whether the Service rules are right cannot be told/);
    expect(r.stdout).toContain("kube-proxy's nft (IPv6) failed once");
    expect(r.stdout).toContain('[kube-proxy-sync-failing]');
  });
  it('lint --fail-on never: the findings, exit 3 (nothing failed the threshold, and the dataplane is unchecked)', async () => {
    const r = await cli(['lint', '-i', NFT, '--fail-on', 'never']);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('[kube-proxy-sync-failing]');
  });
  it('lint on a healthy log: no findings is no clean bill, exit 3', async () => {
    const r = await cli(['lint', '-i', HEALTHY]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/no findings/);
  });
  it('services: cannot tell (exit 3), then what the log shows', async () => {
    const r = await cli(['services', '-i', NFT]);
    expect(r.code).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^kpx: cannot tell which Services this node implements/);
    expect(lines[1]).toMatch(/^kpx: kube-proxy's log .*cri-nftables-sync-failed\.log \(3 entries\) shows: nft \(IPv6\) sync failing once, 2026-07-25T11:35:58\.172751052Z$/);
  });
  it('trace: cannot tell (exit 3), then what the log shows', async () => {
    const r = await cli(['trace', '10.96.0.10:53/udp', '-i', HEALTHY]);
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')[1]).toMatch(/^kpx: kube-proxy's log .*klog-iptables-healthy\.log \(21 entries\) shows: the iptables proxier, nothing failing in it$/);
  });
});
