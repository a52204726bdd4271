/**
 * `-X CHAIN` in iptables-restore input: kube-proxy deletes a stale Service's chains so (declare to
 * flush, then delete). kpx applies it as iptables-restore does — the chain is gone from the model —
 * and `kpx dump` writes it back where it was. The payloads are kube-proxy's own
 * (test/fixtures/kube-proxy-restore: TestSyncProxyRulesRepeated, 3 of its 9 steps delete chains);
 * the kernel judges the same round trip in test/kernel/restore-roundtrip.test.ts. The small texts
 * below are constructed (unit cases), each checked against the real iptables-restore there too.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { iptablesSaveParser } from '../../src/extract/iptables-save.js';
import { renderIptablesSave } from '../../src/render/iptables-save.js';
import type { Ruleset } from '../../src/model/netfilter.js';
import { cli } from '../helpers/cli.js';
import { DELETE_CASES, DELETED, FIX, STEPS } from '../helpers/kube-proxy-restore.js';

const parse = (text: string) => iptablesSaveParser.parse(text, 'rules.txt');
const nat = (rs: Ruleset) => rs.tables.find((t) => t.name === 'nat')!;

describe('kube-proxy payloads with -X', () => {
  it('three of the nine steps delete chains', () => {
    const withX = STEPS.filter((n) => /^-X /m.test(readFileSync(FIX(n), 'utf8')));
    expect(withX).toEqual([3, 6, 9]);
  });

  it('the deleted chains are gone from the model, kept as deletions with their lines', () => {
    for (const [n, names] of Object.entries(DELETED)) {
      const text = readFileSync(FIX(Number(n)), 'utf8');
      const p = parse(text);
      expect(p.diagnostics.filter((d) => d.severity !== 'info'), `step ${n}`).toEqual([]);
      const t = nat(p.data);
      for (const name of names) expect(t.chainsByName.has(name), name).toBe(false);
      expect(t.chains.map((c) => c.name)).toEqual(expect.not.arrayContaining(names));
      const lines = text.split('\n');
      expect(t.deletedChains?.map((d) => [d.name, lines[d.line! - 1], lines[d.deletedAt - 1]])).toEqual(names.map((c) => [c, `:${c} - [0:0]`, `-X ${c}`]));
    }
  });

  it('kpx dump -o iptables-save writes every step back as it was given, -X lines where they were', async () => {
    for (const n of STEPS) {
      const r = await cli(['dump', FIX(n)]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, `step ${n}`).toBe(readFileSync(FIX(n), 'utf8'));
    }
  });

  it('services: a deleted Service is not listed', async () => {
    const r = await cli(['services', '-i', FIX(3), '-o', 'json']);
    const names = (JSON.parse(r.stdout) as { services: { namespace: string; name: string }[] }).services.map((s) => `${s.namespace}/${s.name}`);
    expect(names).not.toContain('ns2/svc2');
    const before = await cli(['services', '-i', FIX(1), '-o', 'json']);
    expect((JSON.parse(before.stdout) as { services: { name: string }[] }).services.map((s) => s.name)).toContain('svc2');
  });
});

describe('what iptables-restore refuses about -X, kpx says', () => {
  for (const [what, c] of Object.entries(DELETE_CASES)) {
    it(`deleting ${what}: ${c.code ?? 'nothing to say'}; written back as given`, () => {
      const p = parse(c.text);
      const said = p.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.severity} ${d.code}`);
      if (c.refused === true) expect(said).toContain(`error ${c.code}`);
      else if (c.refused === false) expect(said).toEqual([]);
      else expect(said).toEqual([`warning ${c.code}`]);
      expect(renderIptablesSave(p.data)).toBe(c.text);
    });
  }

  it('a bare -X deletes every user chain, not the built-in ones', () => {
    const t = nat(parse('*nat\n:PREROUTING ACCEPT [0:0]\n:A - [0:0]\n:B - [0:0]\n-X\nCOMMIT\n').data);
    expect(t.chains.map((c) => c.name)).toEqual(['PREROUTING']);
    expect(t.deletedChains?.map((d) => d.name)).toEqual(['A', 'B']);
  });
});
