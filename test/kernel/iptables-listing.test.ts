/**
 * Listings made by the real iptables (issue 30): load samples/iptables-mode-node (and the IPv6
 * ladder) into a namespace this test creates and deletes, print `iptables -L`/`-S` in the ways
 * people paste them, and check every rule kpx reads from each listing means what the same rule
 * read from iptables-save means. With the iptables the fixtures were made with (1.8.9), the
 * listings must also be the stored test/fixtures/pastes/iptables-list/tool/ ones byte for byte
 * (KPX_UPDATE_FIXTURES=1 rewrites them instead).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requireKernel, withNetns, type Netns } from '../helpers/netns.js';
import { extractIptablesList } from '../../src/extract/iptables-list.js';
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import type { Match, Rule, Ruleset, Table } from '../../src/model/netfilter.js';

const kernel = requireKernel();
const SAMPLE = readFileSync(new URL('../../samples/iptables-mode-node/iptables-save.txt', import.meta.url), 'utf8');
const IPV6 = readFileSync(new URL('../fixtures/kernel/ipv6.ip6tables', import.meta.url), 'utf8');
const MIXED = readFileSync(new URL('../fixtures/pastes/iptables-list/tool/mixed.rules', import.meta.url), 'utf8');
const FIXTURE = (name: string) => new URL(`../fixtures/pastes/iptables-list/tool/${name}`, import.meta.url);
const FIXTURE_VERSION = /^ip6?tables v1\.8\.9 \(nf_tables\)/;

/** What a listing form cannot show: names instead of addresses (no -n), interfaces (no -v). */
interface Shown {
  readonly named: boolean;
  readonly noInterfaces: boolean;
}
const ALL_SHOWN: Shown = { named: false, noInterfaces: false };

/**
 * A rule's meaning: an address by its CIDR (`10.0.0.1/32` in a dump is `10.0.0.1` in a listing), the
 * rest as read. Without -n, iptables prints host and network names (`loopback/8`), which kpx keeps as
 * written: only that there is an address match there is compared. Without -v it prints no
 * interfaces: the dump's are left out (the model records the listing hides them).
 */
function meaning(r: Rule, shown: Shown): string {
  const address = (x: Extract<Match, { kind: 'address' }>) => (shown.named ? { kind: x.kind, dir: x.dir, negated: x.negated } : x.cidr ? { ...x, text: undefined } : x);
  const m = (x: Match) => JSON.stringify(x.kind === 'address' ? address(x) : x, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  const matches = r.matches.filter((x) => !(shown.noInterfaces && x.kind === 'interface'));
  return `${r.chain} ${matches.map(m).join(' ')} -> ${JSON.stringify(r.target ?? null)}`;
}
const byName = (t: Table) => [...t.chains].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
const meanings = (t: Table | undefined, chain?: string, shown = ALL_SHOWN) => (t ? byName(t).filter((c) => !chain || c.name === chain).flatMap((c) => c.rules.map((r) => meaning(r, shown))) : []);
const tableOf = (rs: readonly Ruleset[], name: string) => rs.flatMap((r) => r.tables).find((t) => t.name === name);

/** The listings, as the fixtures name them: [file, tool, args, table, one chain]. */
const LISTINGS: readonly [string, string, string[], string, string?][] = [
  ['nat-L-n-v-line-numbers.txt', 'iptables', ['-t', 'nat', '-L', '-n', '-v', '--line-numbers'], 'nat'],
  ['nat-L-names.txt', 'iptables', ['-t', 'nat', '-L'], 'nat'],
  ['filter-L-n-v-x.txt', 'iptables', ['-L', '-n', '-v', '-x'], 'filter'],
  ['nat-S.txt', 'iptables', ['-t', 'nat', '-S'], 'nat'],
  ['nat-L-svc-kube-dns.txt', 'iptables', ['-t', 'nat', '-L', 'KUBE-SVC-TCOU7JCQXEZGVUNU', '-n'], 'nat', 'KUBE-SVC-TCOU7JCQXEZGVUNU'],
  ['ip6-nat-L-n-v.txt', 'ip6tables', ['-t', 'nat', '-L', '-n', '-v'], 'nat'],
];

/** The hand-written mixed rules: every table, with -n and without (names), -v or not; three are fixtures. */
const MIXED_LISTINGS: readonly [string | undefined, string[], string][] = [
  ['mixed-filter-L-v.txt', ['-L', '-v'], 'filter'],
  ['mixed-filter-L-n-v.txt', ['-L', '-n', '-v'], 'filter'],
  [undefined, ['-L'], 'filter'],
  ['mixed-mangle-L-n.txt', ['-t', 'mangle', '-L', '-n'], 'mangle'],
  [undefined, ['-t', 'mangle', '-L', '-v'], 'mangle'],
  [undefined, ['-t', 'nat', '-L', '-n', '-v', '-x'], 'nat'],
  [undefined, ['-t', 'nat', '-L'], 'nat'],
  [undefined, ['-t', 'raw', '-L', '-v'], 'raw'],
];

/** Read `tool args` as pasted after its command; its rules must mean the dump's. */
function sameAsDump(printed: string, tool: string, args: readonly string[], dump: string, name: string, file: string, chain?: string): void {
  const r = extractIptablesList(`# ${tool} ${args.join(' ')}\n${printed}`, file);
  expect(r.diagnostics.filter((d) => d.severity !== 'info'), file).toEqual([]);
  expect(r.diagnostics.filter((d) => d.code === 'iptables-list/unknown-text'), file).toEqual([]);
  const rules = args.includes('-S');
  const shown: Shown = { named: !rules && !args.includes('-n'), noInterfaces: !rules && !args.includes('-v') };
  const t = tableOf(r.data, name);
  expect(t?.coverage?.interfacesHidden, file).toBe(shown.noInterfaces);
  const want = meanings(tableOf([extractIptablesSave(dump, 'save').data as Ruleset], name), chain, shown);
  expect(want.length, file).toBeGreaterThan(chain ? 2 : 0);
  expect(meanings(t, undefined, shown), file).toEqual(want);
}

/** The stored listing is what this iptables printed (when it is the version that made it), or is rewritten. */
function sameAsFixture(printed: string, file: string, same: boolean): void {
  if (process.env.KPX_UPDATE_FIXTURES === '1') writeFileSync(FIXTURE(file), printed);
  else if (same) expect(printed, file).toBe(readFileSync(FIXTURE(file), 'utf8'));
}

describe.runIf(kernel)('kpx reads what the real iptables -L / -S prints as iptables-save says', () => {
  it('every listing form: the same rules, matches and targets; the fixtures are what this iptables prints', async () => {
    await withNetns('iptlist', (ns: Netns) => {
      ns.exec('iptables-restore', [], SAMPLE);
      ns.exec('ip6tables-restore', [], IPV6);
      const saved = { iptables: ns.exec('iptables-save', []), ip6tables: ns.exec('ip6tables-save', []) };
      const same = FIXTURE_VERSION.test(ns.exec('iptables', ['--version']));
      for (const [file, tool, args, name, chain] of LISTINGS) {
        // The command, as a paste shows it, tells the table (the -S form alone has none).
        const printed = ns.exec(tool, args);
        sameAsDump(printed, tool, args, saved[tool as 'iptables' | 'ip6tables'], name, file, chain);
        sameAsFixture(printed, file, same);
      }
    });
  });

  it('the print forms of other matches and targets (LOG, limit, icmp names, tcp flags, physdev, CONNMARK, NFLOG, CT, [goto])', async () => {
    await withNetns('iptmix', (ns: Netns) => {
      ns.exec('ipset', ['create', 'KUBE-NODE-PORT-TCP', 'bitmap:port', 'range', '0-65535']);
      ns.exec('ipset', ['create', 'foo', 'hash:ip']);
      ns.exec('iptables-restore', [], MIXED);
      const dump = ns.exec('iptables-save', []);
      const same = FIXTURE_VERSION.test(ns.exec('iptables', ['--version']));
      for (const [file, args, name] of MIXED_LISTINGS) {
        const printed = ns.exec('iptables', args);
        sameAsDump(printed, 'iptables', args, dump, name, file ?? `iptables ${args.join(' ')}`);
        if (file) sameAsFixture(printed, file, same);
      }
      if (process.env.KPX_UPDATE_FIXTURES === '1') writeFileSync(FIXTURE('mixed-save.txt'), dump.replace(/^#.*\n/gm, ''));
      else if (same) expect(dump.replace(/^#.*\n/gm, '')).toBe(readFileSync(FIXTURE('mixed-save.txt'), 'utf8'));
    });
  });
});
