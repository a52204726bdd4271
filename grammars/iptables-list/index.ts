/**
 * `iptables -L` / `ip6tables -L` listings (with -n, -v, -x, --line-numbers, or not) and the
 * `iptables -S` lines pasted with them → a document of entries, one per line (issue 30). Syntax
 * only: what a column's value or the matches' text means is src/extract/iptables-list.ts's.
 *
 * What iptables prints (iptables/xshared.c print_header(), print_rule_details(), print_ifaces(),
 * print_ipv4_addresses(), print_fragment(); iptables/iptables.c print_firewall()):
 *
 *   Chain NAME (policy TARGET[ N packets, M bytes])      built-in chains
 *   Chain NAME (N references)                            user chains
 *   [num] [pkts bytes] target prot opt [in out] source destination
 *   [N] [P B] TARGET !?PROT OPT [IN OUT] !?SRC !?DST [match and target text …]
 *
 * The target cell is empty for a rule without one; -n prints protocol numbers (iptables ≥ 1.8.8:
 * `0`, `6`, `17`), without -n names (`all`, `tcp`); counters are scaled (`12K`, `3M`) unless -x.
 * A row is read by the column header in force (the last one seen); without one (the author cut it)
 * by its shape: the `opt` cell (`--`, `-f`, `!f`) anchors the columns before and after it.
 *
 * Other lines kept for the extractor: commands (prompts), `iptables -S` / iptables-save rule lines
 * pasted with the listing, `watch` headers and `date` lines (a new copy of the listing starts),
 * iptables' own stderr, paste noise. A line that fits none is reported (file:line:column).
 */
import { Lexer } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';
import { commandOfLine, parseCommand, type PastedCommand } from '../common/command.js';
import { ListingLineParser, type Tok } from './parser.js';
import * as T from './tokens.js';

export type { Tok } from './parser.js';

export type ListingColumn = 'num' | 'pkts' | 'bytes' | 'target' | 'prot' | 'opt' | 'in' | 'out' | 'source' | 'destination';

export interface ListingRow {
  readonly num?: Tok;
  readonly pkts?: Tok;
  readonly bytes?: Tok;
  /** Absent when the rule has no target (the cell is blank). */
  readonly target?: Tok;
  readonly prot: Tok;
  readonly opt?: Tok;
  readonly in?: Tok;
  readonly out?: Tok;
  readonly source: Tok;
  readonly destination: Tok;
  /** The matches' and target's printed text, token by token. */
  readonly rest: readonly Tok[];
}

export type ListingEntry =
  | {
      readonly kind: 'chain';
      readonly line: number;
      readonly column: number;
      readonly text: string;
      readonly name: string;
      readonly policy?: string;
      readonly packets?: string;
      readonly bytes?: string;
      readonly references?: number;
    }
  | { readonly kind: 'columns'; readonly line: number; readonly columns: readonly ListingColumn[] }
  | { readonly kind: 'row'; readonly line: number; readonly column: number; readonly text: string; readonly row: ListingRow }
  | { readonly kind: 'command'; readonly line: number; readonly command: PastedCommand }
  /** An `iptables -S` / iptables-save line (`-A …`, `-N X`, `-P X ACCEPT`, `*nat`, `:X - [0:0]`, COMMIT). */
  | { readonly kind: 'save'; readonly line: number; readonly column: number; readonly text: string }
  /** A `watch` header (with the command it runs) or a `date` line: the listing that follows is a new copy. */
  | { readonly kind: 'snapshot'; readonly line: number; readonly text: string; readonly command?: PastedCommand }
  | { readonly kind: 'elision'; readonly line: number }
  | { readonly kind: 'other'; readonly line: number; readonly text: string; readonly why: string };

export interface ListingDocument {
  readonly entries: readonly ListingEntry[];
  readonly diagnostics: readonly Diagnostic[];
  readonly lineCount: number;
}

const CHAIN = /^Chain (\S+) \((?:policy (\S+)(?: (\S+) packets, (\S+) bytes)?|(\d+) references?|ERROR obtaining refs)\)\s*$/;
const COLUMN_WORDS = new Set<string>(['num', 'pkts', 'bytes', 'target', 'prot', 'opt', 'in', 'out', 'source', 'destination']);
const SAVE_LINE = /^(?:\[\d+:\d+\]\s+)?(?:-[AIDRNPXFZ]\s+\S|\*(?:filter|nat|mangle|raw|security)\s*$|:\S+\s+\S+\s+\[\d+:\d+\]|COMMIT\s*$)/;
/** `Every 2.0s: iptables -t nat -L -n        node1: Tue Mar  5 10:00:01 2024` (procps watch's header). */
const WATCH = /^Every\s+\d+(?:\.\d+)?s:\s+(.*?)(?:\s{2,}\S+:\s+\S.*)?$/;
/** `date` output: `Mon Jan  8 10:00:01 UTC 2024`, `Wed 24 Jan 2024 10:00:01 AM UTC`, `2024-01-08T10:00:01+00:00`. */
const DATE = /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\w*,? +(?:\d{1,2} +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w* +\d{1,2}.*\d{1,2}:\d\d:\d\d.*|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d\S*)\s*$/;
/** iptables' own complaints, pasted from stderr. */
const STDERR = /^(?:ip6?tables(?:-nft|-legacy)?(?: v[\d.]+(?: \([^)]*\))?)?: |Perhaps iptables or your kernel needs to be upgraded|# Warning: ip6?tables-legacy tables present|Try `ip6?tables -h' or|sudo: |bash: |-bash: )/;
const OPT = /^(?:--|-f|!f)$/;
const PROTOCOL = /^!?(?:all|tcp|udp|udplite|icmp|ipv6-icmp|icmpv6|esp|ah|sctp|mh|gre|ipip|ipv6|dccp|\d{1,3})$/;
/** An address cell: an address or network with its mask, `anywhere`, or (without -n) a host or network name. */
const ADDRESS = /^!?(?:anywhere|[0-9a-fA-F:.]*[:.][0-9a-fA-F:.]*(?:\/[\d.:a-fA-F]+)?|[A-Za-z0-9][\w.-]*(?:\/[\d.]+)?)$/;
const IFACE = /^!?(?:\*|any|[A-Za-z0-9_.@:+-]{1,15})$/;

let lexer: Lexer | undefined;
let parser: ListingLineParser | undefined;
function tools(): { lexer: Lexer; parser: ListingLineParser } {
  lexer ??= new Lexer(T.allTokens, { positionTracking: 'onlyOffset', safeMode: true });
  parser ??= new ListingLineParser();
  return { lexer, parser };
}

function tokens(raw: string): Tok[] | undefined {
  const { lexer, parser } = tools();
  const lexed = lexer.tokenize(raw);
  if (lexed.errors.length > 0 || lexed.tokens.length === 0) return undefined;
  parser.input = lexed.tokens;
  const out = parser.ruleLine();
  return parser.errors.length > 0 ? undefined : out;
}

/** Parse a listing. Never throws on user input. */
export function parseIptablesListing(text: string, file: string): ListingDocument {
  const { lines } = splitInput(text);
  const entries: ListingEntry[] = [];
  const diagnostics: Diagnostic[] = [];
  let columns: readonly ListingColumn[] | undefined;
  /** The row on the line before, which the next line may continue (a paste wrapped it). */
  let last: { index: number; raw: string } | undefined;
  lines.forEach((raw, i) => {
    const line = i + 1;
    const body = raw.trim();
    if (body === '') {
      last = undefined;
      return;
    }
    const column = raw.length - raw.trimStart().length + 1;
    const e = classify(raw, body, line, column, columns);
    if (e.kind === 'other' && last && continues(last.raw, body)) {
      const merged = wrappedRow(last.raw, raw, line, columns);
      const prev = entries[last.index];
      if (merged && prev.kind === 'row') {
        entries[last.index] = { ...prev, text: `${prev.text} ${body}`, row: merged };
        last = { index: last.index, raw: `${last.raw} ${raw}` };
        return;
      }
    }
    last = e.kind === 'row' ? { index: entries.length, raw } : undefined;
    if (e.kind === 'columns') columns = e.columns;
    if (e.kind === 'other') {
      const severity = e.why === 'not a listing line' ? 'warning' : 'info';
      diagnostics.push(diagnostic(severity, severity === 'warning' ? 'iptables-list/unreadable-line' : 'input/noise', `${e.why}: ${printable(body, 60)}`, file, line, column, severity === 'warning' ? { expected: 'a listing line (Chain …, a column header or a rule)', found: printable(body, 40) } : undefined));
    }
    entries.push(e);
  });
  return { entries, diagnostics, lineCount: lines.length };
}

function classify(raw: string, body: string, line: number, column: number, columns: readonly ListingColumn[] | undefined): ListingEntry {
  const chain = CHAIN.exec(body);
  if (chain) {
    return {
      kind: 'chain',
      line,
      column,
      text: body,
      name: chain[1],
      ...(chain[2] ? { policy: chain[2] } : {}),
      ...(chain[3] ? { packets: chain[3], bytes: chain[4] } : {}),
      ...(chain[5] ? { references: Number(chain[5]) } : {}),
    };
  }
  const words = body.split(/\s+/);
  if (words.every((w) => COLUMN_WORDS.has(w)) && words.includes('target') && words.includes('source')) return { kind: 'columns', line, columns: words as ListingColumn[] };
  const command = commandOfLine(raw);
  if (command) return { kind: 'command', line, command };
  const watch = WATCH.exec(body);
  if (watch) {
    const run = parseCommand(watch[1]);
    return { kind: 'snapshot', line, text: body, ...(run ? { command: run } : {}) };
  }
  if (DATE.test(body)) return { kind: 'snapshot', line, text: body };
  if (SAVE_LINE.test(body)) return { kind: 'save', line, column, text: body };
  const noise = noiseKind(raw);
  if (noise === 'elision') return { kind: 'elision', line };
  if (noise !== undefined) return { kind: 'other', line, text: body, why: `ignored ${noise} line` };
  if (STDERR.test(body)) return { kind: 'other', line, text: body, why: 'iptables message (stderr)' };
  const toks = tokens(raw);
  const row = toks ? rowOf(toks, columns) : undefined;
  if (row) return { kind: 'row', line, column, text: body, row };
  // A line with a listing's `opt` cell or two addresses was meant as a rule: say it could not be read.
  const looksLikeRow = toks !== undefined && (toks.some((t) => OPT.test(t.text)) || toks.filter((t) => /^!?(\d{1,3}\.){3}\d{1,3}(\/\d+)?$|^!?anywhere$/.test(t.text)).length >= 2);
  return { kind: 'other', line, text: body, why: looksLikeRow ? 'not a listing line' : 'author text (ignored)' };
}

function rowOf(toks: readonly Tok[], columns: readonly ListingColumn[] | undefined): ListingRow | undefined {
  return (columns ? (byHeader(toks, columns) ?? withoutOpt(toks, columns)) : undefined) ?? byShape(toks);
}

/** How the printed text after the addresses starts its parts (see src/extract/iptables-list-print.ts). */
const CONTINUATION =
  /^(?:\S*\*\/|\/\*|\[goto\]|(?:tcp|udp|sctp|udplite|dccp|multiport|statistic|recent:|mark|connmark|ctstate|state|ADDRTYPE|match-set|PHYSDEV|limit:|LOG|MARK|CONNMARK|masq|redir|reject-with|random|random-fully|persistent)(?:\s|$)|(?:dpts?|spts?|to|flags|mode|probability|icmp\S*|ipv6-icmp\S*|nflog-\S+):)/;

/** Does this line carry on the row before it: a comment left open, or the start of a printed part? */
function continues(prev: string, body: string): boolean {
  const open = (prev.match(/\/\*/g)?.length ?? 0) > (prev.match(/\*\//g)?.length ?? 0);
  return open || CONTINUATION.test(body);
}

/** The row of `prev` with the next line's text after it; that text's tokens keep their own line and columns. */
function wrappedRow(prev: string, next: string, line: number, columns: readonly ListingColumn[] | undefined): ListingRow | undefined {
  const toks = tokens(`${prev} ${next}`);
  if (!toks) return undefined;
  const shift = prev.length + 1;
  const placed = toks.map((t) => (t.column > shift ? { ...t, column: t.column - shift, end: t.end - shift, line } : t));
  return rowOf(placed, columns);
}

/**
 * A row read by the column header: fixed columns in order, the target cell possibly blank (then
 * the row has one word less before `prot`), then the matches' text.
 */
function byHeader(toks: readonly Tok[], columns: readonly ListingColumn[]): ListingRow | undefined {
  const cells: Partial<Record<ListingColumn, Tok>> = {};
  let i = 0;
  for (const c of columns) {
    if (c === 'target') {
      // No target: the next two words are a protocol and an `opt` value (or, without opt, a protocol and an address).
      const blank = PROTOCOL.test(toks[i]?.text ?? '') && (columns.includes('opt') ? OPT.test(toks[i + 1]?.text ?? '') : !PROTOCOL.test(toks[i + 1]?.text ?? ''));
      if (!blank) cells.target = toks[i++];
      continue;
    }
    const t = toks[i++];
    if (!t || t.kind !== 'word') return undefined;
    cells[c] = t;
  }
  if (!cells.prot || !cells.source || !cells.destination || !PROTOCOL.test(cells.prot.text)) return undefined;
  if (!ADDRESS.test(cells.source.text) || !ADDRESS.test(cells.destination.text)) return undefined;
  if (cells.opt && !OPT.test(cells.opt.text)) return undefined;
  if (cells.num && !/^\d+$/.test(cells.num.text)) return undefined;
  return { ...cells, prot: cells.prot, source: cells.source, destination: cells.destination, rest: toks.slice(i) } as ListingRow;
}

/**
 * ip6tables before 1.8.9 prints blanks in the `opt` column (xshared.c print_fragment's `fake`, "--"
 * since 2022): under an `opt` header, a row without that cell.
 */
function withoutOpt(toks: readonly Tok[], columns: readonly ListingColumn[]): ListingRow | undefined {
  return columns.includes('opt') ? byHeader(toks, columns.filter((c) => c !== 'opt')) : undefined;
}

/** A row without a header in force: anchored on its `opt` cell (`--`, `-f`, `!f`). */
function byShape(toks: readonly Tok[]): ListingRow | undefined {
  const o = toks.findIndex((t) => t.kind === 'word' && OPT.test(t.text));
  if (o < 1 || !PROTOCOL.test(toks[o - 1].text)) return undefined;
  const before = toks.slice(0, o - 1);
  const cols: ListingColumn[] = [];
  if (before.length === 4 || before.length === 3) cols.push(...(before.length === 4 ? (['num', 'pkts', 'bytes', 'target'] as const) : /^\d+$/.test(before[0].text) && !/^\d+$/.test(before[2].text) ? (['pkts', 'bytes', 'target'] as const) : (['num', 'pkts', 'bytes'] as const)));
  else if (before.length === 2) cols.push(...(/^\d+[KMGT]?$/.test(before[0].text) && /^\d+[KMGT]?$/.test(before[1].text) ? (['pkts', 'bytes'] as const) : (['num', 'target'] as const)));
  else if (before.length === 1) cols.push('target');
  else if (before.length !== 0) return undefined;
  cols.push('prot', 'opt');
  // -v adds the in/out cells: `*`/`any` or interface names, before two addresses.
  const a = toks[o + 1]?.text ?? '';
  if ((a === '*' || a === 'any' || a.startsWith('!')) && IFACE.test(a) && IFACE.test(toks[o + 2]?.text ?? '') && toks.length >= o + 5) cols.push('in', 'out');
  cols.push('source', 'destination');
  return byHeader(toks, cols);
}
