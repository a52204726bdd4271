/**
 * Every iptables/ip6tables dump in ../shared/corpus parses without error diagnostics and
 * round-trips rule for rule; the iptables project's own extension tests (OK lines, the
 * EXPECTED save form) each parse as one rule and re-emit identically.
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpusDir, corpusFiles, readCorpus } from '../helpers/corpus.js';
import { allRules, expectSameReadings, parse, roundTripDiffs } from '../helpers/iptables.js';
import { detectFormat } from '../../src/load/index.js';

const dumps = corpusFiles(/^(iptables\/.*\.iptables|ip6tables\/.*\.ip6tables|generated\/save.*\.txt|iptables-extension-tests\/save-dumps\/.*)$/).filter(
  (f) => detectFormat(readCorpus(f)) === 'iptables-save',
);

describe('corpus iptables-save dumps', () => {
  it('finds the dumps (and sniffs the non-iptables ones in save-dumps/ as other formats)', () => {
    expect(dumps.length).toBeGreaterThanOrEqual(17);
    const saveDumps = readdirSync(join(corpusDir(), 'iptables-extension-tests', 'save-dumps'));
    const notIptables = saveDumps.filter((f) => !dumps.some((d) => basename(d) === f));
    // The XML export and the native nft listing are not iptables-save text.
    expect(notIptables.sort()).toEqual(['ipt-save--fedora27-iptables.xml', 'nft-only--0010-nft-native.txt']);
  });

  for (const f of dumps) {
    it(`${f.slice(corpusDir().length + 1)} parses without errors and round-trips`, () => {
      const { data, diagnostics } = parse(readCorpus(f), f);
      expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(data.ruleCount).toBeGreaterThan(0);
      expect(roundTripDiffs(data)).toEqual([]);
      expect(data.unsupported).toEqual([]);
    });
  }

  it('reads kube-proxy\'s lines without tokens into the model the grammar gives, on every dump (issue 33)', () => {
    // Every line of every dump both ways (src/extract/iptables-kube-lines.ts): same rules,
    // positions, evidence and diagnostics; and the token-free reading takes the kube-proxy lines.
    let decoded = 0;
    const perDump: string[] = [];
    for (const f of dumps) {
      const n = expectSameReadings(readCorpus(f), f);
      decoded += n;
      if (n > 0) perDump.push(`${basename(f)} ${n}`);
    }
    console.log(`token-free reading: ${decoded} lines in ${perDump.length} of ${dumps.length} dumps (${perDump.join(', ')})`);
    expect(decoded).toBeGreaterThan(100);
    expect(perDump.length).toBeGreaterThanOrEqual(5);
  });

  it('reads concrete values of the kind 1.23 dump (legacy backend, blank lines between tables)', () => {
    const f = join(corpusDir(), 'iptables/kind-1.23-traefik-legacy-1.8.4.iptables');
    const { data } = parse(readCorpus(f), f);
    expect(data.backend).toBe('legacy');
    expect(data.tables.map((t) => t.name)).toEqual(['mangle', 'filter', 'nat']);
    expect(data.headers[0]).toMatchObject({ program: 'iptables-save', version: '1.8.4' });
    expect(data.tables[0].chainsByName.get('PREROUTING')?.counters).toEqual({ packets: '1789547', bytes: '356082101' });
  });

  it('reads the escaped single quotes of the k8s-104755 fragment', () => {
    const f = join(corpusDir(), 'iptables/k8s-104755-ipvs-sctp-escaped-quote-fragment.iptables');
    const { data } = parse(readCorpus(f), f);
    const [r] = allRules(data);
    expect(r.comment).toBe("Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'");
    expect(r.matches.find((m) => m.kind === 'set')).toEqual({ kind: 'set', negated: false, name: 'KUBE-NODE-PORT-SCTP-HASH', flags: ['dst', 'dst'] });
  });

  it('reads per-rule counters of iptables-save -c (generated/save-c.txt)', () => {
    const f = join(corpusDir(), 'generated/save-c.txt');
    const { data } = parse(readCorpus(f), f);
    expect(allRules(data).every((r) => r.counters !== undefined)).toBe(true);
  });
});

interface ExtensionCase {
  file: string;
  line: number;
  table: string;
  chain: string;
  expected: string;
}

function extensionCases(): ExtensionCase[] {
  const dir = join(corpusDir(), 'iptables-extension-tests');
  const out: ExtensionCase[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.t')).sort()) {
    let table = 'filter';
    let chain = 'INPUT';
    readCorpus(join(dir, name))
      .split('\n')
      .forEach((raw, i) => {
        const line = raw.trimEnd();
        if (line === '' || line.startsWith('#') || line.startsWith('@') || line.startsWith('%')) return;
        if (line.startsWith('*')) return void (table = line.slice(1));
        if (line.startsWith(':')) return void (chain = line.slice(1).split(',')[0]);
        const [rule, expected, result] = line.split(';');
        if (result !== 'OK') return;
        out.push({ file: name, line: i + 1, table, chain, expected: expected === '=' ? rule : expected });
      });
  }
  return out;
}

describe('iptables extension tests: OK lines in their EXPECTED save form', () => {
  const cases = extensionCases();
  it('parses each as one rule that re-emits identically', () => {
    const failures: string[] = [];
    let decoded = 0;
    for (const c of cases) {
      const text = `*${c.table}\n:${c.chain} ACCEPT [0:0]\n-A ${c.chain} ${c.expected}\nCOMMIT\n`;
      const { data, diagnostics } = parse(text, c.file);
      // The token-free reading of kube-proxy's shapes must agree with the grammar here too.
      decoded += expectSameReadings(text, c.file);
      const errors = diagnostics.filter((d) => d.severity === 'error');
      const rules = allRules(data);
      if (errors.length || rules.length !== 1 || roundTripDiffs(data).length) failures.push(`${c.file}:${c.line} ${c.expected} ${errors.map((e) => e.message).join('; ')}`);
    }
    console.log(`iptables extension tests: ${cases.length - failures.length}/${cases.length} OK lines parse and re-emit identically (${decoded} read without tokens)`);
    expect(cases.length).toBeGreaterThan(600);
    expect(failures).toEqual([]);
  });
});
