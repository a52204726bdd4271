/**
 * Kernel state as pasted (issue 30): sysctl values and `ip -d link` among prompts, other commands'
 * output, grep prefixes, machine prefixes, sysctl's own errors and the author's words — real pastes under
 * test/fixtures/kernel-pastes (each with its .source). A pasted bridge-nf-call-iptables = 0 (or its key
 * missing) gives the bridge finding, a VXLAN link that leaves no room on its underlay the MTU finding —
 * from those pastes alone.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseInput } from '../../src/load/index.js';
import { RULES } from '../../src/lint/index.js';
import { lintFiles, replaceOnce } from './helpers.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'kernel-pastes');
const read = (f: string) => readFileSync(join(DIR, f), 'utf8');
const STANDALONE = RULES.filter((r) => r.meta.standalone);
const parse = (f: string, text = read(f)) => parseInput({ path: f, text, bytes: text.length });
const alone = async (files: Record<string, string>) => (await lintFiles(files, { rules: STANDALONE })).findings;

describe('kernel pastes: recognised by content, read with no line lost', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.txt'));
  it('has samples with sources', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const f of files) expect(readdirSync(DIR)).toContain(f.replace(/\.txt$/, '.source'));
  });
  for (const f of files) {
    it(f, async () => {
      const p = await parse(f);
      expect(p.format).toBe(f.startsWith('sysctl') ? 'sysctl' : 'ip-addr');
      expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    });
  }
});

describe('sysctl as pasted', () => {
  it('prompts, the output of modprobe between two sysctl runs, then bridge-nf-call-iptables = 0: the bridge finding', async () => {
    const p = await parse('sysctl-bridge-after-modprobe.txt');
    expect(p.diagnostics.map((d) => [d.line, d.message.split(':')[0]])).toEqual([
      [1, 'skipped prompt line'],
      [3, 'skipped prompt line'],
      [4, "skipped another command's output (after its prompt)"],
      [5, "skipped another command's output (after its prompt)"],
      [6, "skipped another command's output (after its prompt)"],
      [7, "skipped another command's output (after its prompt)"],
      [9, 'skipped prompt line'],
    ]);
    const f = await alone({ 's.txt': read('sysctl-bridge-after-modprobe.txt') });
    expect(f.map((x) => [x.ruleId, x.line, x.text])).toEqual([['kernel-bridge-nf-off', 12, 'net.bridge.bridge-nf-call-iptables = 0']]);
  });
  it("a chat transcript: the author's line and words around two values", async () => {
    const p = await parse('sysctl-slack-transcript.txt');
    expect(p.diagnostics.map((d) => [d.line, d.code])).toEqual([
      [1, 'input/noise'],
      [2, 'input/noise'],
      [5, 'input/noise'],
    ]);
    expect((await alone({ 's.txt': read('sysctl-slack-transcript.txt') })).map((x) => [x.ruleId, x.line])).toEqual([['kernel-bridge-nf-off', 3]]);
  });
  it('vagrant\'s machine prefix; "cannot stat" means the key does not exist: br_netfilter is not loaded', async () => {
    const p = await parse('sysctl-vagrant-cannot-stat.txt');
    expect((p.parsed?.data as { entries: { key: string; line: number }[] }).entries.map((e) => [e.key, e.line])).toEqual([['net.ipv4.ip_forward', 2]]);
    const [f] = await alone({ 's.txt': read('sysctl-vagrant-cannot-stat.txt') });
    expect(f).toMatchObject({ ruleId: 'kernel-bridge-nf-off', line: 4 });
    expect(f.message).toMatch(/^br_netfilter is not loaded \(sysctl says the key does not exist\)/);
  });
  it('`sysctl --system` failing to set the key: the same finding', async () => {
    const f = await alone({ 's.txt': read('sysctl-system-setting-key.txt') });
    expect(f.map((x) => [x.ruleId, x.line])).toEqual([['kernel-bridge-nf-off', 3]]);
  });
  it('all on (a BOSH prompt with a slash in its host): no finding', async () => {
    expect(await alone({ 's.txt': read('sysctl-grep-nf-call-healthy.txt') })).toEqual([]);
  });
  it('grep prefixes (constructed: no public paste found): FILE:, FILE:NN:, NN: and the `--` separator', async () => {
    const text = ['$ grep -rn bridge /etc/sysctl.d/ /etc/sysctl.conf', '/etc/sysctl.d/k8s.conf:1:net.bridge.bridge-nf-call-iptables = 0  # set by the image', '--', '/etc/sysctl.conf:12:net.ipv4.ip_forward=1', '7:net.bridge.bridge-nf-call-ip6tables = 0', ''].join('\n');
    const p = await parse('g.txt', text);
    expect(p.format).toBe('sysctl');
    expect((p.parsed?.data as { entries: { key: string; value: string; line: number }[] }).entries.map((e) => [e.key, e.value, e.line])).toEqual([
      ['net.bridge.bridge-nf-call-iptables', '0', 2],
      ['net.ipv4.ip_forward', '1', 4],
      ['net.bridge.bridge-nf-call-ip6tables', '0', 5],
    ]);
    expect(p.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  });
});

describe('ip -d link as pasted', () => {
  it('a VXLAN link at 1500 over a 9001 underlay, with prompts (real): no MTU finding', async () => {
    const p = await parse('ip-d-link-flannel-aws.txt');
    expect(p.diagnostics.map((d) => [d.line, d.code])).toEqual([
      [1, 'input/noise'],
      [5, 'input/noise'],
      [8, 'input/noise'],
    ]);
    expect(await alone({ 'l.txt': read('ip-d-link-flannel-aws.txt') })).toEqual([]);
  });
  it('the same paste with the underlay at 1500 (constructed from the real one): the MTU finding', async () => {
    const text = replaceOnce(read('ip-d-link-flannel-aws.txt'), 'mtu 9001', 'mtu 1500');
    const f = await alone({ 'l.txt': text });
    expect(f.map((x) => [x.ruleId, x.line])).toEqual([['tunnel-mtu', 4]]);
    expect(f[0].message).toMatch(/^flannel\.1 \(vxlan\) has MTU 1500: with 50 bytes of encapsulation that is 1550, more than eth0's 1500/);
  });
  it('elisions and a cut line inside the listing are kept as text, the links still read (constructed)', async () => {
    const lines = read('ip-d-link-flannel-aws.txt').split('\n');
    const text = [...lines.slice(0, 3), '    ...', lines[3].slice(0, 60), ...lines.slice(4)].join('\n');
    const p = await parse('l.txt', replaceOnce(text, 'mtu 9001', 'mtu 1500'));
    expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect((await alone({ 'l.txt': replaceOnce(text, 'mtu 9001', 'mtu 1500') })).map((x) => x.ruleId)).toEqual(['tunnel-mtu']);
  });
});
