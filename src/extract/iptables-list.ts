/**
 * `iptables -L` / `ip6tables -L` listings (and `iptables -S` lines pasted with them) → rulesets
 * marked as PARTIAL evidence (issue 30). Each rule is read into iptables-save words (the fixed
 * columns, then ./iptables-list-print.ts for the matches' text) and given its meaning by the one
 * rule reader every iptables input shares (./iptables-rule.ts interpretRule).
 *
 * A listing is never a whole dump; its table's `coverage` says what it shows:
 *  - which chains it lists whole (a listed chain prints all its rules; one the author cut with `...`
 *    is `elided`); a chain only jumped to is UNKNOWN, not empty;
 *  - whether it lists every chain (`iptables -L` without a chain name, not piped through grep);
 *  - how its table is known: the command's `-t`, iptables' default (`filter`), or guessed from the
 *    chains (PREROUTING, KUBE-SVC-…, DNAT targets → nat), an assumption said with the table;
 *  - whether `-i`/`-o` are shown (`-v`): without them rules are read as if they had none.
 * `watch` headers and `date` lines start a new copy of the listing: a chain listed again replaces
 * its earlier copy (the later one is newer).
 */
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { parseIptablesListing, type ListingEntry, type ListingRow, type Tok } from '../../grammars/iptables-list/index.js';
import { parseRuleItems } from '../../grammars/iptables-save/index.js';
import { iptablesRequest, type IptablesRequest } from '../../grammars/common/command.js';
import { diagnostic, printable, type Diagnostic, appendAll, minOf } from '../source/index.js';
import { BUILTIN_CHAINS, rulesetOfTables, type Chain, type Match, type Rule, type Ruleset, type Table, type TableCoverage } from '../model/netfilter.js';
import { chainJump, interpretRule, looksLikeExtensionTarget } from './iptables-rule.js';
import { protocolName, readPrinted } from './iptables-list-print.js';

interface MutableChain {
  name: string;
  line?: number;
  policy?: string;
  counters?: { packets: string; bytes: string };
  rules: Rule[];
  /** Shown whole by the listing (a `Chain` header), not only named by a rule or a grep line. */
  listed: boolean;
  elided: boolean;
}

/** One copy of a listing: what one command (or one refresh of `watch`) printed. */
interface Listing {
  request?: IptablesRequest;
  commandLine?: number;
  filtered: boolean;
  family?: 4 | 6;
  /** Set by `-t` or a `*table` line; else decided from the chains when the listing ends. */
  table?: string;
  tableFrom?: TableCoverage['tableFrom'];
  chains: Map<string, MutableChain>;
  current?: MutableChain;
  /** A user chain was listed: a built-in chain header after it starts another table. */
  sawUserChain: boolean;
  /** Rule lines before any `Chain` header (the author cut it): placed once their chain can be told. */
  orphans: Extract<ListingEntry, { kind: 'row' }>[];
}

/** A jump target that is not a standard verdict or an extension is a chain. */
const chainTarget = (name: string, goto: boolean) => (looksLikeExtensionTarget(name) ? undefined : chainJump(name, goto));

/** Targets and chains only kube-proxy's nat table has (KUBE-SERVICES and KUBE-NODEPORTS are in filter too). */
const NAT_TARGETS = /^(DNAT|SNAT|MASQUERADE|REDIRECT|NETMAP|KUBE-MARK-MASQ|KUBE-SVC-|KUBE-SVL-|KUBE-SEP-|KUBE-EXT-|KUBE-FW-|KUBE-XLB-|KUBE-POSTROUTING)/;
const NAT_CHAINS = /^(KUBE-SVC-|KUBE-SVL-|KUBE-SEP-|KUBE-EXT-|KUBE-FW-|KUBE-XLB-|KUBE-POSTROUTING$|KUBE-MARK-MASQ$|KUBE-MARK-DROP$)/;

export function extractIptablesList(text: string, file: string): ParsedInput<readonly Ruleset[]> {
  const doc = parseIptablesListing(text, file);
  const diagnostics: Diagnostic[] = [...doc.diagnostics];
  const listings: Listing[] = [];
  let cur: Listing | undefined;
  const start = (from?: Listing): Listing => {
    const l: Listing = { chains: new Map(), sawUserChain: false, orphans: [], filtered: from?.filtered ?? false, ...(from?.request ? { request: from.request } : {}), ...(from?.commandLine ? { commandLine: from.commandLine } : {}) };
    if (from?.request?.table) {
      l.table = from.request.table;
      l.tableFrom = 'command';
    }
    listings.push(l);
    return l;
  };
  for (const e of doc.entries) cur = readEntry(e, cur, start, file, diagnostics);
  for (const l of listings) placeOrphans(l, file, diagnostics);
  const rulesets = assemble(listings.filter((l) => l.chains.size > 0), file, diagnostics);
  const tables = rulesets.reduce((n, r) => n + r.tables.length, 0);
  const rules = rulesets.reduce((n, r) => n + r.ruleCount, 0);
  const chains = rulesets.reduce((n, r) => n + r.tables.reduce((m, t) => m + t.chains.length, 0), 0);
  return { format: 'iptables-list', file, data: rulesets, diagnostics, variant: 'listing', counts: { tables, chains, rules } };
}

function readEntry(e: ListingEntry, cur: Listing | undefined, start: (from?: Listing) => Listing, file: string, diagnostics: Diagnostic[]): Listing | undefined {
  switch (e.kind) {
    case 'command': {
      const req = iptablesRequest(e.command);
      if (!req) return undefined; // another tool's output follows: not this listing's
      const l = start();
      l.request = req;
      l.commandLine = e.line;
      l.filtered = e.command.filtered;
      l.family = req.family;
      if (req.table) {
        l.table = req.table;
        l.tableFrom = 'command';
      }
      return l;
    }
    case 'snapshot':
      // A watch header names the command of every copy it heads.
      return e.command && iptablesRequest(e.command) ? readEntry({ kind: 'command', line: e.line, command: e.command }, cur, start, file, diagnostics) : start(cur);
    case 'chain': {
      let l = cur ?? start();
      const builtin = Object.values(BUILTIN_CHAINS).some((b) => b.includes(e.name));
      // The same chain again, or a built-in chain after user chains: another table, or a refresh.
      if (l.chains.get(e.name)?.listed || (builtin && l.sawUserChain)) l = start(l);
      if (!builtin) l.sawUserChain = true;
      const c = chainOf(l, e.name);
      c.listed = true;
      c.line = e.line;
      if (e.policy) c.policy = e.policy;
      if (e.packets !== undefined) c.counters = { packets: e.packets, bytes: e.bytes ?? '0' };
      l.current = c;
      return l;
    }
    case 'row': {
      const l = cur ?? start();
      const c = l.current ?? (l.request?.chain ? chainOf(l, l.request.chain) : undefined);
      if (!c) {
        l.orphans.push(e);
        return l;
      }
      if (l.request?.chain === c.name && !c.listed) c.listed = true;
      c.rules.push(ruleOfRow(e, c, l, file, diagnostics));
      if (/:/.test(e.row.source.text + e.row.destination.text)) l.family ??= 6;
      return l;
    }
    case 'save':
      return readSaveLine(e, cur ?? start(), file, diagnostics);
    case 'elision':
      if (cur?.current) cur.current.elided = true;
      return cur;
    default:
      return cur;
  }
}

/** kube-proxy's dispatch rules: a jump to a Service's chain with its `ns/svc:port cluster IP`-style comment. */
const DISPATCH_TARGET = /^KUBE-(SVC|SVL|EXT|FW|XLB)-|^KUBE-MARK-MASQ$|^KUBE-NODEPORTS$/;
const DISPATCH_COMMENT = /(cluster IP|external IP|loadbalancer IP|load balancer IP|service nodeports|has no endpoints)/;

/**
 * Rule lines the paste shows before any `Chain` header: when every one is a kube-proxy dispatch
 * rule (a jump to KUBE-SVC-…/KUBE-EXT-… with a `… cluster IP` comment), they are read as part of
 * KUBE-SERVICES — an assumption said as such, the chain not shown whole; otherwise they are skipped.
 */
function placeOrphans(l: Listing, file: string, diagnostics: Diagnostic[]): void {
  if (l.orphans.length === 0) return;
  const dispatch = l.orphans.every((e) => DISPATCH_TARGET.test(e.row.target?.text ?? '') && e.row.rest.some((t) => t.kind === 'comment' && DISPATCH_COMMENT.test(t.text)));
  const first = l.orphans[0];
  if (!dispatch) {
    for (const e of l.orphans) diagnostics.push(diagnostic('warning', 'iptables-list/no-chain', 'a rule line with no `Chain …` header above it: its chain is unknown, so it is skipped', file, e.line, e.column));
    return;
  }
  const had = l.chains.get('KUBE-SERVICES');
  const c = had ?? chainOf(l, 'KUBE-SERVICES');
  const rules = l.orphans.map((e) => ruleOfRow(e, c, l, file, diagnostics));
  const after = c.rules.splice(0);
  appendAll(c.rules, rules);
  appendAll(c.rules, after);
  c.rules.forEach((r, i) => ((r as { index: number }).index = i));
  if (!had) c.elided = true;
  diagnostics.push(diagnostic('info', 'iptables-list/assumed-chain', `${l.orphans.length} rule line(s) before any \`Chain …\` header are read as part of KUBE-SERVICES (kube-proxy's dispatch rules, by their targets and comments); the chain is not shown whole`, file, first.line, first.column));
}

function chainOf(l: Listing, name: string): MutableChain {
  let c = l.chains.get(name);
  if (!c) l.chains.set(name, (c = { name, rules: [], listed: false, elided: false }));
  return c;
}

/** `iptables -S` / iptables-save lines in a listing paste: `-P`, `-N`, `-A`, `*table`. */
function readSaveLine(e: Extract<ListingEntry, { kind: 'save' }>, l: Listing, file: string, diagnostics: Diagnostic[]): Listing {
  const t = e.text.replace(/^\[\d+:\d+\]\s+/, '');
  const table = /^\*(\S+)/.exec(t);
  if (table) {
    l.table = table[1];
    l.tableFrom = 'command';
    return l;
  }
  const policy = /^-P\s+(\S+)\s+(\S+)/.exec(t) ?? /^:(\S+)\s+(\S+)\s+\[/.exec(t);
  if (policy) {
    const c = chainOf(l, policy[1]);
    if (policy[2] !== '-') c.policy = policy[2];
    c.line ??= e.line;
    return l;
  }
  const declared = /^-N\s+(\S+)\s*$/.exec(t);
  if (declared) {
    chainOf(l, declared[1]).line ??= e.line;
    return l;
  }
  const rule = /^-A\s+(\S+)\s/.exec(t);
  if (!rule) {
    if (!/^COMMIT/.test(t)) diagnostics.push(diagnostic('info', 'iptables-list/save-line', `${printable(t.split(/\s/)[0], 10)} line not applied to the listing: ${printable(t, 60)}`, file, e.line, e.column));
    return l;
  }
  const c = chainOf(l, rule[1]);
  const items = parseRuleItems(t, e.column);
  if (!items) {
    diagnostics.push(diagnostic('error', 'parse/iptables-rule', `cannot read this rule: ${printable(t, 60)}`, file, e.line, e.column, { expected: 'an iptables-save rule', found: printable(t, 40) }));
    return l;
  }
  const m = interpretRule(items, chainTarget);
  c.rules.push(makeRule(l, c, { line: e.line, column: e.column, raw: t, items, matches: m.matches, ...(m.target ? { target: m.target } : {}), comments: m.comments }, file));
  return l;
}

interface RuleParts {
  line: number;
  column: number;
  raw: string;
  items: Rule['items'];
  matches: readonly Match[];
  target?: Rule['target'];
  comments: readonly string[];
  counters?: Rule['counters'];
}

function makeRule(l: Listing, c: MutableChain, p: RuleParts, file: string): Rule {
  return {
    table: l.table ?? '',
    chain: c.name,
    index: c.rules.length,
    file,
    line: p.line,
    column: p.column,
    raw: p.raw,
    ...(p.counters ? { counters: p.counters } : {}),
    items: p.items,
    matches: p.matches,
    ...(p.target ? { target: p.target } : {}),
    ...(p.comments[0] !== undefined ? { comment: p.comments[0] } : {}),
    comments: p.comments,
  };
}

/** `anywhere`, `0.0.0.0/0`, `::/0`, `*`, `any`: no match on that column. */
const ANY = /^(anywhere|0\.0\.0\.0\/0|::\/0|\*|any)$/;

/** A listing row as iptables-save words, then read by the one rule reader. */
function ruleOfRow(e: Extract<ListingEntry, { kind: 'row' }>, c: MutableChain, l: Listing, file: string, diagnostics: Diagnostic[]): Rule {
  const r = e.row;
  const target = r.target?.text;
  const printed = readPrinted(r.rest, target);
  const words = ['-A', c.name, ...columnWords(r)];
  const targetWords = target ? [printed.goto ? '-g' : '-j', target, ...printed.targetArgs] : [];
  const counters = r.pkts && r.bytes ? { packets: r.pkts.text, bytes: r.bytes.text } : undefined;
  let items = parseRuleItems([...words, ...printed.args, ...targetWords].join(' '), e.column);
  let unknown = printed.unknown;
  if (!items) {
    // The matches' text did not read as options: keep the columns, the whole text as one unknown match.
    items = parseRuleItems([...words, ...targetWords.slice(0, 2)].join(' '), e.column);
    unknown = r.rest.length ? [{ text: restText(e.text, r.rest), column: r.rest[0].column }] : [];
    diagnostics.push(diagnostic('warning', 'iptables-list/unread-match', `the text after the addresses is not read (kept as a condition kpx cannot decide): ${printable(restText(e.text, r.rest), 60)}`, file, e.line, r.rest[0]?.column ?? e.column));
  }
  const m = items ? interpretRule(items, chainTarget) : { matches: [], comments: [] as string[] };
  const matches: Match[] = [...m.matches, ...unknown.map((u) => ({ kind: 'unsupported' as const, module: '', text: u.text, known: false }))];
  for (const u of unknown) diagnostics.push(diagnostic('info', 'iptables-list/unknown-text', `not a form kpx reads from a listing: ${printable(u.text, 60)} (kept; the trace asks it as a condition)`, file, u.line ?? e.line, u.column));
  return makeRule(l, c, { line: e.line, column: e.column, raw: e.text, items: items ?? [], matches, ...('target' in m && m.target ? { target: m.target } : {}), comments: m.comments, ...(counters ? { counters } : {}) }, file);
}

function restText(line: string, rest: readonly Tok[]): string {
  return rest.length ? rest.map((t) => t.text).join(' ') : line;
}

/** The fixed columns as iptables-save words (`! -s 10.0.0.0/8 -p tcp -f -i eth0`). */
function columnWords(r: ListingRow): string[] {
  const out: string[] = [];
  const negatable = (flag: string, t: Tok | undefined) => {
    if (!t || ANY.test(t.text)) return;
    const neg = t.text.startsWith('!');
    const v = neg ? t.text.slice(1) : t.text;
    if (ANY.test(v)) return;
    out.push(...(neg ? ['!'] : []), flag, v);
  };
  negatable('-s', r.source);
  negatable('-d', r.destination);
  negatable('-i', r.in);
  negatable('-o', r.out);
  const neg = r.prot.text.startsWith('!');
  const proto = protocolName(neg ? r.prot.text.slice(1) : r.prot.text);
  if (proto) out.push(...(neg ? ['!'] : []), '-p', proto);
  if (r.opt?.text === '-f') out.push('-f');
  else if (r.opt?.text === '!f') out.push('!', '-f');
  return out;
}

/** The table a listing without `-t` is of: iptables' default when its command is shown, else guessed. */
function decideTable(l: Listing): void {
  if (l.table) return;
  if (l.request) {
    l.table = 'filter';
    l.tableFrom = 'default';
    return;
  }
  l.table = guessTable(l);
  l.tableFrom = 'guessed';
}

/**
 * A listing's table from its chains: the built-in ones first (filter has FORWARD and no PREROUTING;
 * nat PREROUTING and POSTROUTING but no FORWARD; mangle all five), else what only nat holds
 * (KUBE-SVC-…/KUBE-SEP-… chains, DNAT/MASQUERADE/KUBE-MARK-MASQ targets), else filter.
 */
function guessTable(l: Listing): string {
  const names = new Set(l.chains.keys());
  const has = (n: string) => names.has(n) && l.chains.get(n)!.listed;
  if (has('PREROUTING') && has('FORWARD') && has('POSTROUTING')) return 'mangle';
  if (has('FORWARD') && !has('PREROUTING')) return 'filter';
  if (has('PREROUTING') && has('POSTROUTING')) return 'nat';
  const targets = [...l.chains.values()].flatMap((c) => c.rules.map((r) => (r.target && 'chain' in r.target ? r.target.chain : r.target?.kind.toUpperCase()) ?? ''));
  if ([...names].some((n) => NAT_CHAINS.test(n) || n === 'PREROUTING' || n === 'POSTROUTING') || targets.some((t) => NAT_TARGETS.test(t))) return 'nat';
  return 'filter';
}

/** Listings → one ruleset per family, one table per table name; a later copy of a chain replaces an earlier one. */
function assemble(listings: readonly Listing[], file: string, diagnostics: Diagnostic[]): Ruleset[] {
  const byFamily = new Map<4 | 6, Map<string, { table: Listing; chains: Map<string, MutableChain>; all: boolean; first: number }>>();
  for (const l of listings) {
    decideTable(l);
    const family = l.family ?? 4;
    let tables = byFamily.get(family);
    if (!tables) byFamily.set(family, (tables = new Map()));
    const key = l.table!;
    let t = tables.get(key);
    if (!t) tables.set(key, (t = { table: l, chains: new Map(), all: false, first: firstLine(l) }));
    for (const [name, c] of l.chains) {
      const prev = t.chains.get(name);
      if (prev?.listed && c.listed && prev.rules.length > 0) diagnostics.push(diagnostic('info', 'iptables-list/listed-again', `chain ${name} is listed again (line ${c.line}): the later listing is read, the earlier one (line ${prev.line}) is not`, file, c.line ?? 1, 1));
      if (!prev || c.listed || !prev.listed) t.chains.set(name, prev && !c.listed ? { ...prev, rules: [...prev.rules, ...c.rules] } : c);
    }
    // Every chain: `-L`/`-S` without a chain name, not filtered, with the command shown.
    if (l.request && !l.request.chain && !l.filtered) t.all = true;
    if (l.tableFrom === 'command' || !t.table.tableFrom) t.table = l;
  }
  const out: Ruleset[] = [];
  for (const [family, tables] of byFamily) {
    const list: Table[] = [...tables.values()].map((t) => tableOf(t.table, t.chains, t.all, t.first, file));
    out.push(rulesetOfTables(file, family, 'unknown', list));
  }
  return out;
}

function firstLine(l: Listing): number {
  return minOf([...l.chains.values()].map((c) => c.line ?? c.rules[0]?.line ?? Infinity), l.commandLine ?? Infinity);
}

function tableOf(l: Listing, chains: ReadonlyMap<string, MutableChain>, all: boolean, first: number, file: string): Table {
  const name = l.table!;
  const builtins = BUILTIN_CHAINS[name] ?? [];
  const list: Chain[] = [...chains.values()].map((c) => ({
    table: name,
    name: c.name,
    builtin: builtins.includes(c.name),
    ...(c.policy ? { policy: c.policy } : builtins.includes(c.name) ? {} : { policy: '-' }),
    ...(c.counters ? { counters: c.counters } : {}),
    ...(c.line !== undefined ? { line: c.line } : {}),
    // Rules were made before the table's name was decided: give them their table.
    rules: c.rules.map((r) => (r.table === name ? r : { ...r, table: name })),
  }));
  const listed = new Set([...chains.values()].filter((c) => c.listed || (l.request?.action === 'rules' && !l.filtered)).map((c) => c.name));
  const coverage: TableCoverage = {
    source: l.request?.action === 'rules' ? 'rules' : 'listing',
    tableFrom: l.tableFrom ?? 'guessed',
    listed,
    elided: new Set([...chains.values()].filter((c) => c.elided).map((c) => c.name)),
    // A listing of the whole table prints every chain a rule jumps to: one that is not there was cut by the paste.
    allChains: all && list.every((c) => listed.has(c.name) && c.rules.every((r) => !r.target || (r.target.kind !== 'jump' && r.target.kind !== 'goto') || listed.has(r.target.chain))),
    interfacesHidden: l.request ? !l.request.verbose && l.request.action !== 'rules' : ![...chains.values()].some((c) => c.rules.some((r) => r.counters !== undefined)),
    ...(l.commandLine !== undefined ? { commandLine: l.commandLine } : {}),
  };
  return {
    name,
    file,
    line: Number.isFinite(first) ? first : 1,
    committed: true,
    implicit: coverage.tableFrom === 'guessed',
    coverage,
    chains: list,
    chainsByName: new Map(list.map((c) => [c.name, c])),
  };
}

export const iptablesListParser: FormatParser<readonly Ruleset[]> = { id: 'iptables-list', parse: (text, file) => extractIptablesList(text, file) };
