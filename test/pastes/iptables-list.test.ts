/**
 * `iptables -L` / `-S` listings read as PARTIAL iptables evidence (issue 30).
 *
 *  - Listings the real tool printed (test/fixtures/pastes/iptables-list/tool, from
 *    samples/iptables-mode-node loaded into a network namespace): every rule means what the same rule
 *    means read from iptables-save — the listing loses nothing kube-proxy's rules need, with -n or
 *    without (service and protocol names), with -v/-x/--line-numbers or not; IPv6 too.
 *  - Real public pastes: what is read, what is unknown, and the coverage the model records.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractIptablesList } from '../../src/extract/iptables-list.js';
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import { detectFormat } from '../../src/load/index.js';
import { tableShownWhole, type Match, type Rule, type Ruleset, type Table } from '../../src/model/netfilter.js';
import { snapshotOf } from '../lint/helpers.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';
import { renderTraceText } from '../../src/render/trace/index.js';
import { chalkInit } from '../../src/render/colors.js';

const FIX = (name: string) => readFileSync(new URL(`../fixtures/pastes/iptables-list/${name}`, import.meta.url), 'utf8');
const SAMPLE = (name: string) => readFileSync(new URL(`../../samples/iptables-mode-node/${name}`, import.meta.url), 'utf8');
const KERNEL = (name: string) => readFileSync(new URL(`../fixtures/kernel/${name}`, import.meta.url), 'utf8');
const list = (name: string, text = FIX(name)) => extractIptablesList(text, name);

/**
 * A rule's meaning, independent of how it was written: an address by its CIDR (iptables-save writes
 * `10.0.0.1/32`, a listing `10.0.0.1`; the same match), everything else as read.
 */
function meaning(r: Rule): string {
  const m = (x: Match) => JSON.stringify(x.kind === 'address' && x.cidr ? { ...x, text: undefined } : x, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  return `${r.chain}#${r.index} ${r.matches.map(m).join(' ')} -> ${JSON.stringify(r.target ?? null)}`;
}
/** Every rule's meaning, chain by chain in name order (the kernel lists user chains sorted, iptables-save in declaration order). */
const meanings = (t: Table | undefined) => (t ? [...t.chains].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).flatMap((c) => c.rules.map(meaning)) : []);
const table = (rs: readonly Ruleset[], name: string, family: 4 | 6 = 4) => rs.find((r) => r.family === family)?.tables.find((t) => t.name === name);
const save = (text: string, file: string) => extractIptablesSave(text, file).data as Ruleset;

describe('listings the tool printed mean what iptables-save says', () => {
  const fromSave = save(SAMPLE('iptables-save.txt'), 'iptables-save.txt');
  it('nat -L -n -v --line-numbers: every rule, in order, the same matches and target', () => {
    const r = list('tool/nat-L-n-v-line-numbers.txt');
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const want = meanings(fromSave.tables.find((t) => t.name === 'nat'));
    expect(want.length).toBeGreaterThan(300);
    // Listed without a command: the table is guessed (nat, from its chains) — an assumption the model records.
    const t = table(r.data, 'nat')!;
    expect(t.coverage).toMatchObject({ source: 'listing', tableFrom: 'guessed', allChains: false, interfacesHidden: false });
    expect(meanings(t)).toEqual(want);
    expect(t.chains.find((c) => c.name === 'PREROUTING')).toMatchObject({ builtin: true, policy: 'ACCEPT', counters: { packets: '0', bytes: '0' } });
  });

  it('nat -L without -n: service names (`dpt:http`, `http-alt`, `syslog`), protocol names, `anywhere` — the same meaning', () => {
    const t = table(list('tool/nat-L-names.txt').data, 'nat')!;
    expect(FIX('tool/nat-L-names.txt')).toMatch(/dpt:http-alt/);
    expect(meanings(t)).toEqual(meanings(fromSave.tables.find((x) => x.name === 'nat')));
    // Without -v the interfaces are not shown: an assumption, recorded.
    expect(t.coverage!.interfacesHidden).toBe(true);
  });

  it('filter -L -n -v -x, and the ip6tables listing of an IPv6 ladder', () => {
    const t = table(list('tool/filter-L-n-v-x.txt').data, 'filter')!;
    expect(meanings(t)).toEqual(meanings(fromSave.tables.find((x) => x.name === 'filter')));
    const six = list('tool/ip6-nat-L-n-v.txt').data;
    expect(six.map((r) => r.family)).toEqual([6]);
    expect(meanings(table(six, 'nat', 6))).toEqual(meanings(save(KERNEL('ipv6.ip6tables'), 'ipv6.ip6tables').tables.find((x) => x.name === 'nat')));
  });

  it('`-S` output with its command (`# iptables -t nat -S`): the table from -t, every chain shown whole', () => {
    const text = `# iptables -t nat -S\n${FIX('tool/nat-S.txt')}`;
    expect(detectFormat(text)).toBe('iptables-list');
    const t = table(list('nat-S.txt', text).data, 'nat')!;
    expect(t.coverage).toMatchObject({ source: 'rules', tableFrom: 'command', allChains: true });
    expect(tableShownWhole(t)).toBe(true);
    expect(meanings(t).map((m) => m.replace(/#\d+/, ''))).toEqual(meanings(fromSave.tables.find((x) => x.name === 'nat')).map((m) => m.replace(/#\d+/, '')));
  });
});

describe('public listings', () => {
  it('k3s#7096 (-n -v, no command): built-in chains with counters, user chains `(0 references)`; table guessed nat; KUBE-SERVICES only named', () => {
    const t = table(list('k3s-7096-nat-nvL.txt').data, 'nat')!;
    expect(t.chains.map((c) => `${c.name}:${c.rules.length}`)).toEqual(['PREROUTING:1', 'INPUT:0', 'OUTPUT:1', 'POSTROUTING:1', 'FLANNEL-POSTRTG:0', 'KUBE-KUBELET-CANARY:0', 'KUBE-MARK-DROP:0']);
    expect(t.chains[0].rules[0]).toMatchObject({ line: 4, counters: { packets: '44', bytes: '3984' }, target: { kind: 'jump', chain: 'KUBE-SERVICES' }, comment: 'kubernetes service portals' });
    expect(t.coverage!.listed.has('KUBE-SERVICES')).toBe(false);
    expect(tableShownWhole(t)).toBe(false);
  });

  it('kubernetes#39658 (-v without -n): `any`/`anywhere`, a DNAT `to:` target after the `udp` match', () => {
    const t = table(list('kubernetes-39658-nat-v-names.txt').data, 'nat')!;
    const dnat = t.chains.find((c) => c.name === 'KUBE-SEP-NCDBIYVKEUM6V7JV')!.rules[1];
    expect(dnat.target).toMatchObject({ kind: 'dnat', to: [{ ip: '192.168.75.33', port: 53 }] });
    expect(dnat.matches.map((m) => m.kind)).toEqual(['protocol', 'comment']);
    const masq = t.chains.find((c) => c.name === 'KUBE-SEP-NCDBIYVKEUM6V7JV')!.rules[0];
    expect(masq.matches[0]).toMatchObject({ kind: 'address', dir: 'src', text: '192.168.75.33' });
  });

  it('kubernetes#11634: prompts, iptables\' stderr and a Markdown caption are noise; `sudo iptables -t nat` names the table', () => {
    const r = list('kubernetes-11634-nat-nvL-stderr.txt');
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const t = table(r.data, 'nat')!;
    // `-L` of the whole table, but the paste stops before the KUBE-PORTALS-* chains its rules jump to: not whole.
    expect(t.coverage).toMatchObject({ tableFrom: 'command', allChains: false });
    expect(t.chains[0].rules[1].matches.find((m) => m.kind === 'addrtype')).toMatchObject({ dir: 'dst', types: ['LOCAL'] });
  });

  it('k3s#829 and kubernetes#45459 (no -n): host and network names are kept as written, never guessed', () => {
    const f = table(list('k3s-829-filter-L-hostnames.txt').data, 'filter')!;
    const fwd = f.chains.find((c) => c.name === 'FORWARD')!.rules;
    expect(fwd[2].matches[0]).toEqual({ kind: 'address', dir: 'src', negated: false, text: 'master.novalocal/16' });
    expect(fwd[1].matches.find((m) => m.kind === 'ctstate')).toMatchObject({ states: ['NEW'] });
    const n = table(list('kubernetes-45459-nat-L-netnames.txt').data, 'nat')!;
    expect(n.coverage!.tableFrom).toBe('command');
    const masq = n.chains.find((c) => c.name === 'POSTROUTING')!.rules[3];
    expect(masq.matches).toContainEqual({ kind: 'address', dir: 'dst', negated: true, text: 'base-address.mcast.net/4' });
  });

  it('cht-core#6876: rows before any Chain header are KUBE-SERVICES\' (by their targets and comments), not shown whole; `dpt:domain` is 53', () => {
    const r = list('cht-core-6876-nat-L-servicenames.txt');
    const t = table(r.data, 'nat')!;
    const svcs = t.chains.find((c) => c.name === 'KUBE-SERVICES')!;
    expect(svcs.rules.map((x) => x.line)).toEqual([2, 3, 4, 5]);
    expect(svcs.rules[0].matches.find((m) => m.kind === 'port')).toMatchObject({ ranges: [{ from: 53, to: 53 }] });
    expect(t.coverage!.elided.has('KUBE-SERVICES')).toBe(true);
    expect(r.diagnostics.find((d) => d.code === 'iptables-list/assumed-chain')).toMatchObject({ line: 2 });
  });

  it('kubernetes#43969 (`--list-rules` behind `>`) and #130484 (`-S -t nat | grep`): -S text read with its command; a grep shows no chain whole', () => {
    for (const [f, name, all] of [
      ['kubernetes-43969-list-rules.txt', 'filter', true],
      ['kubernetes-130484-S-grep.txt', 'nat', false],
    ] as const) {
      expect(detectFormat(FIX(f)), f).toBe('iptables-list');
      const t = table(list(f).data, name)!;
      expect(t.coverage, f).toMatchObject({ source: 'rules', tableFrom: 'command', allChains: all });
      expect(t.coverage!.listed.size > 0, f).toBe(all);
    }
  });
});

describe('other print forms the tool made (hand-written rules: tool/mixed.rules)', () => {
  const dump = save(FIX('tool/mixed-save.txt'), 'mixed-save.txt');
  /** Without -v the listing shows no interfaces; the dump's are left out of its meaning. */
  const noIfaces = (ms: string[]) => ms.map((m) => m.replace(/ \{"kind":"interface"[^}]*\}/g, ''));
  it('-L -n -v: LOG prefix after limit, tcp flags in hex, icmptype N / !type N code C, physdev, CONNMARK save/restore mask, [goto], NFLOG/TCPMSS/CT text as the target\'s', () => {
    const r = list('tool/mixed-filter-L-n-v.txt');
    expect(r.diagnostics.filter((d) => d.code === 'iptables-list/unknown-text' || d.severity !== 'info')).toEqual([]);
    const t = table(r.data, 'filter')!;
    expect(meanings(t).map((m) => m.replace(/#\d+/, ''))).toEqual(meanings(dump.tables.find((x) => x.name === 'filter')).map((m) => m.replace(/#\d+/, '')));
    const fwd = t.chains.find((c) => c.name === 'FORWARD')!.rules;
    expect(fwd[0].target).toEqual({ kind: 'goto', chain: 'cali-fw-cali1234' });
    expect(fwd[1].target).toMatchObject({ kind: 'log', prefix: 'kpx: ' });
    // NFLOG is a log target to kpx: its `nflog-group 5` is the target's text, not a condition.
    expect(fwd.find((x) => x.raw.includes('NFLOG'))!).toMatchObject({ target: { kind: 'log' }, matches: [{ kind: 'mark' }] });
  });

  it('-L -v without -n: icmp type names (`echo-request`, `!fragmentation-needed`), flag names, `spts:1000:cisco-sccp`, `LOG level info`; network names kept as written', () => {
    const t = table(list('tool/mixed-filter-L-v.txt').data, 'filter')!;
    const icmp = t.chains.find((c) => c.name === 'INPUT')!.rules.flatMap((x) => x.matches.filter((m) => m.kind === 'icmp'));
    expect(icmp).toEqual([
      { kind: 'icmp', negated: false, type: '8' },
      { kind: 'icmp', negated: true, type: '3/4' },
    ]);
    const local = t.chains.find((c) => c.name === 'KUBE-FIREWALL')!.rules[0].matches[0];
    expect(local).toEqual({ kind: 'address', dir: 'src', negated: true, text: 'loopback/8' });
    const ports = t.chains.find((c) => c.name === 'FORWARD')!.rules.flatMap((x) => x.matches.filter((m) => m.kind === 'port' && m.dir === 'src'));
    expect(ports).toContainEqual(expect.objectContaining({ ranges: [{ from: 1000, to: 2000 }] }));
  });

  it('mangle -L -n (no -v): interfaces hidden, recorded; CONNMARK restore; the rest as the dump', () => {
    const t = table(list('tool/mixed-mangle-L-n.txt').data, 'mangle')!;
    expect(t.coverage!.interfacesHidden).toBe(true);
    expect(t.chains.find((c) => c.name === 'PREROUTING')!.rules[1].target).toEqual({ kind: 'extension', name: 'CONNMARK', terminating: false });
    expect(meanings(t).length).toBe(3);
    expect(noIfaces(meanings(t))).toEqual(noIfaces(meanings(dump.tables.find((x) => x.name === 'mangle'))));
  });
});

describe('the trace says what a listing without -v assumes', () => {
  it('nat -L (no -v): the trace to kube-dns DNATs as from the dump, with the assumption that rules have no interfaces stated', async () => {
    const snap = await snapshotOf({ 'nat.txt': `$ sudo iptables -t nat -L\n${FIX('tool/nat-L-names.txt')}` });
    const d = parseDestination('10.96.0.10:53/udp') as Destination;
    const t = tracePacket(snap, await resolveServices(snap), d, d.protocol!, { from: 'pod', assumptions: { established: false, affinityHit: false } });
    expect(t.outcomes.map((o) => o.verdict)).toEqual(['DNAT', 'DNAT']);
    expect(t.assumptions).toContainEqual({ code: 'listing-interfaces-hidden', table: 'nat', file: 'nat.txt' });
    expect(renderTraceText(t, chalkInit(false))).toContain("nat is an iptables -L listing without -v (nat.txt): it does not show the rules' -i/-o interfaces");
    // With -v the interfaces are shown: nothing assumed.
    const v = await snapshotOf({ 'nat.txt': FIX('tool/nat-L-n-v-line-numbers.txt') });
    const tv = tracePacket(v, await resolveServices(v), d, d.protocol!, { from: 'pod', assumptions: { established: false, affinityHit: false } });
    expect(tv.assumptions.some((a) => a.code === 'listing-interfaces-hidden')).toBe(false);
  });
});
