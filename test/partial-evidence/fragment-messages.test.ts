import { describe, expect, it } from 'vitest';
import { iptablesSaveParser } from '../../src/extract/iptables-save.js';

/** A fragment (no `*table` line) is named as one in messages, never as `table ` with an empty name (issue 15). */
const parse = (text: string) => iptablesSaveParser.parse(text, 'frag.txt');
const messages = (text: string) => parse(text).diagnostics.map((d) => `${d.line}: ${d.code}: ${d.message}`);

const GREP = [
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-SERVICES - [0:0]',
  '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
  '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-IT2ZTR26TO4XFPTO',
];

describe('messages about a fragment', () => {
  it('a chain declared twice says "this fragment" and the inferred table, never an empty table name', () => {
    const m = messages(GREP.join('\n') + '\n');
    expect(m).toContain('2: extract/duplicate-chain: chain KUBE-SERVICES is declared twice in this fragment (first on line 1; no *table line, kpx assumes table nat)');
    expect(m.filter((x) => /table {2}|table \(|table $/.test(x))).toEqual([]);
  });

  it('the inferred name is filter when nothing NATs', () => {
    const m = messages(':KUBE-FIREWALL - [0:0]\n:KUBE-FIREWALL - [0:0]\n-A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP\n');
    expect(m).toContain('2: extract/duplicate-chain: chain KUBE-FIREWALL is declared twice in this fragment (first on line 1; no *table line, kpx assumes table filter)');
  });

  it('a fragment followed by a *table is not "a table with no COMMIT", and its -N/-P commands carry the inferred table', () => {
    const r = parse([...GREP, '-N KUBE-EXTRA', '*filter', ':INPUT ACCEPT [0:0]', 'COMMIT'].join('\n') + '\n');
    expect(r.diagnostics.filter((d) => d.code === 'extract/missing-commit')).toEqual([]);
    expect(r.data.commands.map((c) => [c.line, c.table])).toEqual([[5, 'nat']]);
  });

  it('a whole table keeps naming its table', () => {
    expect(messages('*nat\n:A - [0:0]\n:A - [0:0]\nCOMMIT\n')).toContain('3: extract/duplicate-chain: chain A is declared twice in table nat (first on line 2)');
  });
});
