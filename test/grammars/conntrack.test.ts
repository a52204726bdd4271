import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { extractConntrack, extractConntrackStats } from '../../src/extract/conntrack.js';
import { formatEntry } from '../../src/model/conntrack.js';
import { conntrackSniffer, conntrackStatsSniffer } from '../../grammars/conntrack/sniff.js';
import { detectFormat } from '../../src/load/index.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/conntrack/${name}`, import.meta.url), 'utf8');
const entries = (text: string) => {
  const r = extractConntrack(text, 'f');
  return { ...r, all: Array.from({ length: r.table.size }, (_, i) => r.table.entry(i)) };
};

describe('conntrack -L grammar on public samples', () => {
  it('reads the untranslated [UNREPLIED] entry of kubernetes#48370', () => {
    const { all, diagnostics } = entries(fixture('k8s-48370-unreplied.txt'));
    expect(diagnostics).toEqual([]);
    expect(all).toMatchObject([
      { proto: 'udp', protoNum: 17, timeout: 29, unreplied: true, assured: false, mark: 0, use: 1, line: 1, orig: { src: '10.12.0.14', dst: '10.15.240.10', sport: 43145, dport: 53 }, reply: { src: '10.15.240.10', dst: '10.12.0.14', sport: 53, dport: 43145 } },
    ]);
    expect(all[0].state).toBeUndefined();
  });
  it('reads accounting and delta-time (kubernetes#129617), TIME_WAIT TCP (kubernetes#91216), /proc form (stackoverflow)', () => {
    const acct = entries(fixture('k8s-129617-udp-accounting.txt'));
    expect(acct.diagnostics).toEqual([]);
    expect(acct.all.map((e) => [e.orig.sport, e.timeout, e.reply.src])).toEqual([[37351, 3, '169.254.169.254'], [46781, 3, '169.254.169.254'], [36978, 13, '169.254.169.254']]);
    const tw = entries(fixture('k8s-91216-tcp-time-wait.txt'));
    expect(tw.diagnostics).toEqual([]);
    expect(tw.all.map((e) => e.state)).toEqual(['TIME_WAIT', 'TIME_WAIT', 'TIME_WAIT', 'TIME_WAIT', 'TIME_WAIT']);
    expect(tw.all.every((e) => e.assured)).toBe(true);
    const proc = entries(fixture('proc-nf-conntrack-stackoverflow.txt'));
    expect(proc.diagnostics).toEqual([]);
    expect(proc.table.variant).toBe('proc');
    expect(proc.all[0]).toMatchObject({ family: 4, proto: 'tcp', timeout: 300, state: 'ESTABLISHED', reply: { dst: '1.1.1.1', dport: 12000 } });
  });
  it('sniffs each sample as conntrack, and -S samples as conntrack-stats', () => {
    for (const f of ['k8s-48370-unreplied.txt', 'k8s-129617-udp-accounting.txt', 'k8s-91216-tcp-time-wait.txt', 'proc-nf-conntrack-stackoverflow.txt']) expect(detectFormat(fixture(f)), f).toBe('conntrack');
    for (const f of ['stats-rke2-3924.txt', 'stats-concourse-4153.txt']) expect(detectFormat(fixture(f)), f).toBe('conntrack-stats');
    expect(conntrackSniffer.sniff(['-A KUBE-SERVICES -j ACCEPT'])).toBe(0);
    expect(conntrackStatsSniffer.sniff(['net.ipv4.ip_forward = 1'])).toBe(0);
  });
});

describe('conntrack -L grammar: forms and errors', () => {
  const LINES = [
    'tcp      6 src=198.51.100.100 dst=192.0.2.100 sport=41676 dport=1122 src=192.0.2.100 dst=198.51.100.100 sport=1122 dport=41676 [OFFLOAD] mark=0 use=2',
    'tcp      6 src=198.51.100.101 dst=192.0.2.100 sport=41677 dport=1122 src=192.0.2.100 dst=198.51.100.101 sport=1122 dport=41677 [HW_OFFLOAD] mark=0 use=2',
    'icmp     1 29 src=192.168.1.3 dst=192.0.0.4 type=8 code=0 id=56508 src=192.0.0.4 dst=192.168.1.3 type=0 code=0 id=56508 mark=0 secctx=system_u:object_r:unlabeled_t:s0 zone=3 use=1 id=3735928559',
    'ipv6     10 udp      17 25 src=fd00::1 dst=fd00:10:96::a sport=5000 dport=53 src=fd00:10:244::5 dst=fd00::1 sport=53 dport=5000 [ASSURED] mark=0 zone=0 use=2',
    'sctp     132 3 CLOSED src=10.0.0.1 dst=10.96.0.5 sport=3000 dport=9000 [UNREPLIED] src=10.244.0.9 dst=10.0.0.1 sport=9000 dport=3000 mark=0 use=1',
    'tcp      6 431999 ESTABLISHED src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 [ASSURED] mark=0 [start=Thu Nov 26 10:00:00 2026] use=1',
  ];
  it('reads offload, ICMP, secctx/zone/id, IPv6 -o extended, SCTP states and ktimestamp words', () => {
    const { all, diagnostics } = entries(LINES.join('\n') + '\n');
    expect(diagnostics).toEqual([]);
    expect(all.map((e) => [e.offload, e.hwOffload, e.timeout])).toEqual([[true, false, undefined], [false, true, undefined], [false, false, 29], [false, false, 25], [false, false, 3], [false, false, 431999]]);
    expect(all[2]).toMatchObject({ proto: 'icmp', orig: { type: 8, code: 0, sport: 56508 }, zone: 3, id: 3735928559 });
    expect(all[3]).toMatchObject({ family: 6, orig: { dst: 'fd00:10:96::a' }, reply: { src: 'fd00:10:244::5' } });
    expect(all[4]).toMatchObject({ proto: 'sctp', state: 'CLOSED', unreplied: true });
  });
  it('gives file:line:column, expected and found for a broken entry, and reads the rest', () => {
    const text = [LINES[0], 'tcp 6 300 ESTABLISHED src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 [ASSURED] use=1', 'udp 17 30 src=10.0.0.300 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 use=1', 'tcp 17 30 src=10.0.0.3 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 dst=10.0.0.3 sport=2 dport=1 use=1', LINES[5]].join('\n') + '\n';
    const { all, diagnostics } = entries(text);
    expect(all.map((e) => e.line)).toEqual([1, 5]);
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'error', code: 'parse/unexpected-token', line: 2, column: 78, expected: 'dst=ADDRESS', found: '[ASSURED]' }),
      expect.objectContaining({ severity: 'error', code: 'parse/bad-address', line: 3, column: 11, found: 'src=10.0.0.300' }),
      expect.objectContaining({ severity: 'error', code: 'parse/protocol-mismatch', line: 4, column: 5, found: '17' }),
    ]);
  });
  it('checks the summary line against what it read', () => {
    const { diagnostics, table } = entries(`${LINES[0]}\nconntrack v1.4.7 (conntrack-tools): 2 flow entries have been shown.\n`);
    expect(table.shown).toEqual({ count: 2, line: 2, version: '1.4.7' });
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'conntrack/count-mismatch', line: 2 })]);
  });
  it('a line read through a shared plan is read as the full grammar reads it alone', () => {
    // Every line parsed alone takes the Chevrotain parse; in one file, lines of a shape reuse the first one's plan.
    // Two lines with as many words in the same places, one with mark=, one with zone=: different shapes.
    const lines = [
      ...LINES,
      'udp 17 30 src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2 src=10.0.0.2 dst=10.0.0.1 sport=2 dport=1 mark=7 use=1',
      'udp 17 30 src=10.0.0.1 dst=10.0.0.2 sport=3 dport=2 src=10.0.0.2 dst=10.0.0.1 sport=2 dport=3 zone=7 use=1',
    ];
    const alone = lines.map((l) => entries(`${l}\n`).all[0]);
    const together = entries([...lines, ...lines].join('\n')).all;
    expect(together.slice(0, lines.length).map(({ line, index, ...e }) => e)).toEqual(alone.map(({ line, index, ...e }) => e));
    expect(together.slice(lines.length).map(({ line, index, ...e }) => e)).toEqual(alone.map(({ line, index, ...e }) => e));
  });
  it('gives the same table whatever the chunking of the input', () => {
    const text = `${LINES.join('\n')}\r\n${LINES.join('\r\n')}\n`;
    const whole = entries(text).all;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 12 }), (cuts) => {
        const { ConntrackTableBuilder } = builder;
        const b = new ConntrackTableBuilder('f');
        const at = [0, ...[...new Set(cuts)].sort((a, c) => a - c), text.length];
        for (let i = 0; i + 1 < at.length; i++) b.push(text.slice(at[i], at[i + 1]));
        const r = b.finish();
        expect(Array.from({ length: r.table.size }, (_, i) => r.table.entry(i))).toEqual(whole);
      }),
      { numRuns: 50 },
    );
  });
  it('re-prints an entry in conntrack -L layout that reads back the same', () => {
    const all = entries(LINES.join('\n')).all;
    const again = entries(all.map(formatEntry).join('\n')).all;
    expect(again.map(({ line, index, ...e }) => e)).toEqual(all.map(({ line, index, ...e }) => e));
  });
});

const builder = await import('../../src/extract/conntrack.js');

describe('conntrack -S / -C', () => {
  it('sums per-CPU counters (rancher/rke2#3924, concourse#4153) and keeps the line of the first non-zero', () => {
    const { stats, diagnostics } = extractConntrackStats(fixture('stats-rke2-3924.txt'), 's');
    expect(diagnostics).toEqual([]);
    expect(stats.form).toBe('per-cpu');
    expect(stats.cpus).toHaveLength(8);
    expect(stats.totals.invalid).toBe(1 + 1 + 2 + 137 + 140 + 125 + 139 + 4);
    expect(stats.totals.error).toBe(1);
    expect(stats.lineOf.error).toBe(5);
    const c = extractConntrackStats(fixture('stats-concourse-4153.txt'), 's');
    expect(c.diagnostics).toEqual([]);
    expect(c.stats.totals.ignore).toBe(2185350 + 2148703 + 2122309 + 2055852 + 2120821 + 2120860 + 2122838 + 2373314);
  });
  it('reads the one-counter-per-line form and conntrack -C (constructed samples: no public paste of the old form was found)', () => {
    const old = extractConntrackStats(['entries                 \t1456', 'searched                \t22233', 'insert_failed           \t7', 'drop                    \t0', ''].join('\n'), 'o');
    expect(old.diagnostics).toEqual([]);
    expect(old.stats).toMatchObject({ form: 'summary', count: { value: 1456, line: 1 }, totals: { insert_failed: 7, drop: 0 }, lineOf: { insert_failed: 3 } });
    expect(conntrackStatsSniffer.sniff(['entries 1456', 'searched 22233', 'insert_failed 7'])).toBeGreaterThan(0.5);
    const count = extractConntrackStats('123\n', 'c');
    expect(count.stats).toMatchObject({ form: 'count', count: { value: 123, line: 1 } });
    // …but a lone number is not sniffed as conntrack -C: /proc/sys values (`1` of ip_forward) look the same.
    expect(conntrackStatsSniffer.sniff(['1'])).toBe(0);
  });
  it('says where a statistics line is broken', () => {
    const r = extractConntrackStats('cpu=0 found=0 invalid=x1\ncpu=1 found=0 oops\n', 's');
    expect(r.diagnostics).toEqual([
      expect.objectContaining({ code: 'parse/bad-number', line: 1, column: 23, found: 'x1' }),
      expect.objectContaining({ code: 'parse/unexpected-token', line: 2, column: 15, found: 'oops' }),
    ]);
  });
});
