/**
 * kube-proxy logs as people paste them (issue 30): real public pastes under
 * test/fixtures/kube-proxy-pastes, each with its .source. What is read (records, wrappers, noise,
 * cut and wrapped lines) and the events typed from it.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { extractKubeProxyLog } from '../../src/extract/kube-proxy-log.js';
import { parseKubeProxyLog } from '../../grammars/kube-proxy-log/index.js';
import { headLines } from '../../src/load/index.js';
import { sniff } from '../../src/load/registry.js';
import type { KubeProxyEvent } from '../../src/model/kube-proxy.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'kube-proxy-pastes');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const logs = readdirSync(DIR).filter((f) => f.endsWith('.log'));
const kinds = (events: readonly KubeProxyEvent[]) => events.map((e) => `${e.kind}@${e.at.line}`);
const ofKind = <K extends KubeProxyEvent['kind']>(events: readonly KubeProxyEvent[], kind: K) => events.filter((e): e is Extract<KubeProxyEvent, { kind: K }> => e.kind === kind);
const log = (name: string) => extractKubeProxyLog(read(name), name);

describe('kube-proxy logs as pasted: every sample recognised by content, read without error', () => {
  it('has samples, each with its .source', () => {
    expect(logs.length).toBeGreaterThanOrEqual(20);
    for (const f of logs) expect(readdirSync(DIR), f).toContain(f.replace(/\.log$/, '.source'));
  });
  for (const f of logs) {
    it(f, () => {
      expect(sniff(headLines(read(f)))?.id).toBe('kube-proxy-log');
      const parsed = log(f);
      expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
      // Every line of the file is a record's, or reported (noise, another program's, before the first entry).
      const syntax = parseKubeProxyLog(read(f));
      const covered = new Set<number>();
      for (const r of syntax.records) for (let l = r.line; l <= r.endLine; l++) covered.add(l);
      for (const o of syntax.other) covered.add(o.line);
      const lines = read(f).split('\n').slice(0, -1);
      const missing = lines.map((t, i) => [i + 1, t] as const).filter(([n, t]) => !covered.has(n) && t.trim() !== '');
      expect(missing).toEqual([]);
    });
  }
});

describe('wrappers and pasted forms', () => {
  it('CRI log file, nftables mode: the err=< block closed by ` > ipFamily="IPv6"` is the nft failure of IPv6, then the retry', () => {
    const p = log('cri-nftables-sync-failed.log');
    expect(kinds(p.data.events)).toEqual(['sync-failed@2', 'sync-retry@5']);
    const [f] = ofKind(p.data.events, 'sync-failed');
    expect(f).toMatchObject({ tool: 'nft', family: 6, step: 'restore', at: { line: 2, endLine: 4, wallTime: '2026-07-25T11:35:58.172751052Z' } });
    expect(f.output).toBe("nft: netlink_linearize.c:804: netlink_gen_expr: Assertion `dreg < ctx->reg_low' failed.");
    const rec = parseKubeProxyLog(read('cri-nftables-sync-failed.log')).records[1];
    expect(rec.pairs.map((x) => [x.key, x.value])).toEqual([
      ['err', "nft: netlink_linearize.c:804: netlink_gen_expr: Assertion `dreg < ctx->reg_low' failed."],
      ['ipFamily', 'IPv6'],
    ]);
    expect(rec.envelope.kinds).toEqual(['cri']);
  });

  it('a markdown quote around CRI lines: the quote and the CRI prefix peeled off, the block closed by its pairs', () => {
    const p = log('cri-quoted-nft-list-failed.log');
    const [e] = ofKind(p.data.events, 'tool-failed');
    expect(e).toMatchObject({ tool: 'nft', what: 'list elements', family: 4, output: 'failed to run nft: JSON support not compiled-in', at: { line: 2, endLine: 4 } });
    const rec = parseKubeProxyLog(read('cri-quoted-nft-list-failed.log')).records[1];
    expect(rec.envelope.kinds).toEqual(['quote', 'cri']);
    expect(rec.pairs.map((x) => x.key)).toEqual(['err', 'ipFamily', 'containerName', 'containerType']);
  });

  it('k3s: kube-proxy\'s ensure-jump failure (ip6tables, IPv6) is a failed sync; the controller-manager\'s lines are another component\'s', () => {
    const p = log('k3s-interleaved-chain-jumps.log');
    expect(kinds(p.data.events)).toEqual(['sync-retry@3', 'sync-failed@4', 'sync-retry@9']);
    expect(ofKind(p.data.events, 'sync-failed')[0]).toMatchObject({
      tool: 'ip6tables',
      family: 6,
      exitStatus: 2,
      step: 'ensure-jump',
      chains: { table: 'filter', from: 'INPUT', to: 'KUBE-EXTERNAL-SERVICES' },
      at: { line: 4, endLine: 8 },
    });
    expect(p.data.otherComponents).toBe(7);
    expect(p.diagnostics.filter((d) => d.code === 'input/other-component').map((d) => d.line)).toEqual([10, 11, 13, 14, 15, 17, 18]);
    // The paste starts inside the previous failure's block: its last two lines come before any entry.
    expect(p.diagnostics.filter((d) => d.code === 'input/before-first-entry').map((d) => d.line)).toEqual([1, 2]);
  });

  it("k3s' own logrus terminal lines (INFO[0010]) are another component's", () => {
    const p = log('k3s-logrus-interleaved.log');
    expect(kinds(p.data.events)).toEqual(['sync-retry@3']);
    expect(p.diagnostics.filter((d) => d.code === 'input/other-component').map((d) => d.line)).toEqual([4, 5, 6, 8, 9]);
  });

  it('journald under rkt: the identifier is rkt[1264]; node not found and the 127.0.0.1 fallback', () => {
    const syntax = parseKubeProxyLog(read('rkt-journald-node-not-found.log'));
    expect(syntax.records.map((r) => [r.envelope.ident, r.envelope.pid, r.envelope.host])).toEqual([
      ['rkt', 1264, 'kubernikus-m21-small-rczz6.novalocal'],
      ['rkt', 1264, 'kubernikus-m21-small-rczz6.novalocal'],
    ]);
    const p = log('rkt-journald-node-not-found.log');
    expect(p.data.events).toMatchObject([
      { kind: 'node-lookup-failed', node: 'kubernikus-m21-small-rczz6.novalocal', notFound: true },
      { kind: 'node-ip-fallback', ip: '127.0.0.1' },
    ]);
  });

  it('journald in the zh_CN locale (`9月 06`), every line cut by journalctl at the terminal width', () => {
    const p = log('journald-zh-locale-cut.log');
    const api = ofKind(p.data.events, 'api-unreachable');
    expect(api.map((e) => [e.resource, e.at.line, e.at.wallTime])).toEqual([
      ['Service', 2, '9月 06 14:15:54'],
      ['Endpoints', 3, '9月 06 14:15:54'],
      ['Service', 4, '9月 06 14:15:55'],
      ['Endpoints', 5, '9月 06 14:15:55'],
      ['Service', 6, '9月 06 14:15:56'],
    ]);
    expect(api.every((e) => e.at.cutAt === read('journald-zh-locale-cut.log').split('\n')[1].length)).toBe(true);
    expect(p.diagnostics.filter((d) => d.code === 'input/cut-line')).toHaveLength(5);
    expect(p.diagnostics.filter((d) => d.code === 'input/noise').map((d) => d.line)).toEqual([1]);
  });

  it('journalctl lines cut at one column: marked cut, the journal marker and the prompt are noise', () => {
    const syntax = parseKubeProxyLog(read('journald-cut-at-width.log'));
    expect(syntax.records.map((r) => r.cutAt)).toEqual([163, 163, 163, 163, 163, 163]);
    expect(syntax.other.map((o) => [o.kind, o.line])).toEqual([
      ['noise', 1],
      ['noise', 2],
    ]);
  });

  it('a terminal that wrapped lines: the remainders are put back without a line break', () => {
    const syntax = parseKubeProxyLog(read('terminal-wrapped-more.log'));
    expect(syntax.records.map((r) => [r.line, r.endLine, r.wrappedAt])).toEqual([
      [2, 3, 202],
      [4, 7, 202],
      [8, 9, 202],
    ]);
    expect(syntax.records[0].continuation).toEqual([{ line: 3, column: 1, text: 'eping)', wrapped: true }]);
    // After the wrapped remainder, the old multi-line message goes on on its own line.
    expect(syntax.records[1].continuation.map((c) => [c.text, c.wrapped ?? false])).toEqual([
      ['y', true],
      ["Try `iptables -h' or 'iptables --help' for more information.", false],
    ]);
  });

  it('a terminal UI frame (k9s): the right border alone on the first line, both borders after (the last line lost its right one)', () => {
    const syntax = parseKubeProxyLog(read('tui-frame-ipvs-dualstack.log'));
    expect(syntax.records).toHaveLength(6);
    expect(syntax.records.map((r) => r.envelope.kinds.includes('frame'))).toEqual([true, true, true, true, true, true]);
    expect(syntax.records[0].msg).toBe('Successfully retrieved node IP: 172.24.17.16');
    const p = log('tui-frame-ipvs-dualstack.log');
    expect(ofKind(p.data.events, 'proxier').map((e) => [e.mode, e.families])).toEqual([
      ['ipvs', []],
      ['ipvs', [4, 6]],
    ]);
  });

  it('a frame around structured lines: the strict-decoding warning names the field; a key with a space is read', () => {
    const p = log('tui-frame-lenient-decoding.log');
    expect(ofKind(p.data.events, 'config-warning').map((e) => e.field)).toEqual(['udpIdleTimeout']);
    const rec = parseKubeProxyLog(read('tui-frame-lenient-decoding.log')).records[2];
    expect(rec.pairs).toEqual([{ key: 'primary ipFamily', value: 'IPv4' }]);
  });

  it('`systemctl status`: the unit header is noise; kube-proxy\'s fatal line and systemd\'s lines about the unit are typed', () => {
    const p = log('systemctl-status-fatal.log');
    expect(p.diagnostics.filter((d) => d.message.startsWith('systemctl status header')).map((d) => d.line)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(p.data.events.map((e) => (e.kind === 'unit-state' ? `${e.kind}:${e.state}@${e.at.line}` : `${e.kind}@${e.at.line}`))).toEqual([
      'exited@8',
      'unit-state:exited@9',
      'unit-state:failed@10',
      'unit-state:start-refused@14',
    ]);
    expect(ofKind(p.data.events, 'exited')[0].reason).toBe('Unable to create proxer: failed to select a host interface: Unable to select an IP.');
  });
});

describe("the events kube-proxy logs, typed", () => {
  it('IPVS asked for, iptables run (1.10 gives no reason); node not found; clusterCIDR unset', () => {
    const p = log('klog-ipvs-fallback-rke.log');
    expect(kinds(p.data.events)).toEqual(['mode-fallback@1', 'proxier@2', 'node-lookup-failed@3', 'node-ip-fallback@4', 'config-warning@5']);
    expect(ofKind(p.data.events, 'mode-fallback')[0]).toMatchObject({ requested: 'ipvs', reason: '' });
  });
  it('IPVS refused (≥1.26 exits instead of falling back)', () => {
    const p = log('klog-ipvs-refused-ipset.log');
    expect(kinds(p.data.events)).toEqual(['exited@2', 'exited@3']);
    expect(ofKind(p.data.events, 'exited')[0].reason).toBe("can't use the IPVS proxier: error getting ipset version, error: exit status 1");
    expect(ofKind(p.data.events, 'mode-fallback')).toEqual([]);
  });
  it('`Unknown proxy mode ""` is the default (iptables), not a fallback; the API server refused twice', () => {
    const p = log('kubectl-logs-unknown-mode-api-refused.log');
    expect(ofKind(p.data.events, 'mode-fallback')).toEqual([]);
    expect(ofKind(p.data.events, 'config-warning').map((e) => e.field)).toEqual(['mode']);
    expect(ofKind(p.data.events, 'node-lookup-failed').map((e) => [e.node, e.notFound])).toEqual([
      ['k8s-node1', false],
      ['k8s-node1', false],
    ]);
    expect(p.diagnostics.filter((d) => d.code === 'input/noise').map((d) => d.line)).toEqual([1]);
  });
  it('node not found five times, then the fatal exit (1.16)', () => {
    const p = log('klog-fatal-node-ip.log');
    expect(ofKind(p.data.events, 'node-lookup-failed').filter((e) => e.notFound).map((e) => e.node)).toEqual(Array(5).fill('127.0.0.1'));
    expect(ofKind(p.data.events, 'exited').map((e) => [e.at.line, e.reason])).toEqual([[6, 'unable to get node IP for hostname 127.0.0.1']]);
  });
  it('the API server unreachable while reading the Node: not a name mismatch', () => {
    const p = log('kubectl-logs-api-timeout.log');
    expect(ofKind(p.data.events, 'node-lookup-failed').map((e) => [e.at.line, e.notFound, e.node])).toEqual([
      [3, false, 'ralphk8s-node-3'],
      [5, false, 'ralphk8s-node-3'],
    ]);
    expect(ofKind(p.data.events, 'node-ip-fallback').map((e) => e.ip)).toEqual(['127.0.0.1']);
  });
  it("kube-proxy's own checks: br_netfilter, and the Node", () => {
    const p = log('klog-br-netfilter-node-lookup.log');
    expect(ofKind(p.data.events, 'host-missing').map((e) => [e.what, e.at.line])).toEqual([['br-netfilter', 5]]);
    expect(ofKind(p.data.events, 'node-lookup-failed').map((e) => [e.node, e.notFound])).toEqual([['centos-master', true]]);
  });
  for (const [f, lines] of [
    ['journald-snap-conntrack-missing.log', [1]],
    ['journald-conntrack-missing-contrib.log', [1]],
    ['klog-conntrack-missing-structured.log', [1, 2]],
  ] as const) {
    it(`the conntrack tool missing: ${f}`, () => {
      expect(ofKind(log(f).data.events, 'host-missing').map((e) => [e.what, e.at.line])).toEqual(lines.map((l) => ['conntrack-tool', l]));
    });
  }
  it('ensure-chain failure with the tool output in a quoted err; an old-style multi-line warning goes on headerless', () => {
    const p = log('cri-ensure-chain-modprobe.log');
    expect(kinds(p.data.events)).toEqual(['sync-failed@1', 'sync-retry@2', 'module-load-failed@3']);
    expect(ofKind(p.data.events, 'sync-failed')[0]).toMatchObject({ tool: 'iptables', family: 4, exitStatus: 3, step: 'ensure-chain', chains: { table: 'filter', chain: 'KUBE-EXTERNAL-SERVICES' } });
    expect(ofKind(p.data.events, 'module-load-failed')[0]).toMatchObject({ module: 'ip_tables', at: { line: 3, endLine: 5 } });
  });
});
