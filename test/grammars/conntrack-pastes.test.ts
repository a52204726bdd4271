/**
 * conntrack listings as pasted (issue 30): a real paste that starts mid-entry (test/fixtures/
 * conntrack-pastes, with its .source), and constructed variants of forms no public paste was found
 * for (labelled): the author's words, values the author hid (`dst=<clusterIp>`), the count line
 * merged with an entry. Every entry that is there is read; only what is really unreadable is flagged;
 * a hidden value is unknown, never matched.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseInput } from '../../src/load/index.js';
import type { ConntrackTable } from '../../src/model/conntrack.js';
import { KIND, lintFiles } from '../lint/helpers.js';

const read = (f: string) => readFileSync(new URL(`../fixtures/${f}`, import.meta.url), 'utf8');
const parse = async (text: string) => {
  const p = await parseInput({ path: 'ct.txt', text, bytes: text.length });
  return { format: p.format, table: p.parsed?.data as ConntrackTable, diagnostics: p.diagnostics.map((d) => [d.severity, d.code, d.line]) };
};

describe('conntrack -L as pasted', () => {
  it('real: an excerpt starting with `...` and a line cut at its start — all six entries read, the cut one from its protocol number', async () => {
    const r = await parse(read('conntrack-pastes/tcp-time-wait-cut.txt'));
    expect(r.format).toBe('conntrack');
    expect(r.table.size).toBe(6);
    expect(r.table.entry(0)).toMatchObject({ proto: 'tcp', protoNum: 6, timeout: 46, state: 'TIME_WAIT', orig: { src: '10.64.4.48', dst: '10.0.0.10', sport: 59817, dport: 53 }, line: 2 });
    expect(r.diagnostics).toEqual([
      ['info', 'input/noise', 1],
      ['info', 'conntrack/cut-line', 2],
    ]);
  });

  const entry = 'udp      17 29 src=10.12.0.14 dst=10.15.240.10 sport=43145 dport=53 src=10.12.0.11 dst=10.12.0.14 sport=53 dport=43145 mark=0 use=1';
  it("constructed: the author's words around entries are their words, not unreadable entries", async () => {
    const r = await parse(['Here is what conntrack shows for the DNS service:', entry, 'and nothing else after the pod restarted', ''].join('\n'));
    expect(r.table.size).toBe(1);
    expect(r.diagnostics).toEqual([
      ['info', 'input/prose', 1],
      ['info', 'input/prose', 3],
    ]);
  });
  it('constructed: the count line merged at the end of the last entry, or before the first', async () => {
    const after = await parse([entry, `${entry}conntrack v1.4.5 (conntrack-tools): 2 flow entries have been shown.`, ''].join('\n'));
    expect(after.table.size).toBe(2);
    expect(after.table.shown).toEqual({ count: 2, line: 2, version: '1.4.5' });
    expect(after.diagnostics).toEqual([]);
    const before = await parse([`conntrack v1.4.4 (conntrack-tools): 1 flow entries have been shown.${entry}`, ''].join('\n'));
    expect(before.table.size).toBe(1);
    expect(before.table.shown).toMatchObject({ count: 1, line: 1 });
  });
  it('constructed: hidden values are read as unknown — the entry kept, never matched to a Service', async () => {
    const hidden = entry.replace('dst=10.15.240.10', 'dst=<clusterIp>').replace('src=10.12.0.11', 'src=x.x.x.x');
    const r = await parse(hidden + '\n');
    expect(r.table.size).toBe(1);
    expect(r.diagnostics).toEqual([
      ['info', 'conntrack/redacted', 1],
      ['info', 'conntrack/redacted', 1],
    ]);
    // The same entry with its addresses gives the stale-endpoint finding on the kind sample; hidden, it gives none.
    const kind = KIND.split('10.96.0.10').join('10.15.240.10');
    const real = await lintFiles({ 'iptables-save.txt': kind, 'ct.txt': entry + '\n' });
    expect(real.findings.filter((f) => f.ruleId.startsWith('conntrack-')).map((f) => f.ruleId)).toEqual(['conntrack-stale-udp-endpoint']);
    const masked = await lintFiles({ 'iptables-save.txt': kind, 'ct.txt': hidden + '\n' });
    expect(masked.findings.filter((f) => f.ruleId.startsWith('conntrack-'))).toEqual([]);
    // Only the reply source hidden (the Service's address shown): whether it is an endpoint is unknown,
    // so no stale-endpoint claim either.
    const replyHidden = await lintFiles({ 'iptables-save.txt': kind, 'ct.txt': entry.replace('src=10.12.0.11', 'src=<podIp>') + '\n' });
    expect(replyHidden.findings.filter((f) => f.ruleId.startsWith('conntrack-'))).toEqual([]);
  });
  it('a line that is really unreadable is still flagged (a bare word where a value is needed)', async () => {
    const r = await parse([entry, 'udp 17 29 src=10.12.0.14 dst=nowhere sport=1 dport=53 src=10.12.0.11 dst=10.12.0.14 sport=53 dport=1 mark=0 use=1', ''].join('\n'));
    expect(r.table.size).toBe(1);
    expect(r.diagnostics).toEqual([['error', 'parse/bad-address', 2]]);
  });
});
