/**
 * kubectl's text output → a document of tables and describe blocks (issue 30). Syntax only: which
 * object kind a table or block is, and what its values mean, is src/extract/kubectl.ts's business.
 *
 * - A table is a header line (kubectl's upper-case column names: `NAME  TYPE  CLUSTER-IP …`) and
 *   the rows after it, up to a blank line, another header, a command or a describe field; or the
 *   same pasted as Markdown (`| NAME | TYPE |`, a `|---|` line, `| web | ClusterIP |`).
 * - A row's words are put in the header's columns: by the gaps of two or more blanks kubectl's
 *   tabwriter leaves (padding 3); else by the header's offsets; else, when the paste collapsed the
 *   blanks, in order, the surplus words going to the one column that holds blanks (RESTARTS
 *   `2 (3h ago)`, OS-IMAGE, ENDPOINTS `… + 3 more...`). A row that fits none of these is reported
 *   (file:line:column) and skipped.
 * - A describe block starts at `Name:` in column 1 and holds every line up to the next one, a
 *   command, a table header or a fence; each line is a `Key:  value` field (with its indentation,
 *   and the `- ` of a list item) or a line of text (continuations, describe's own small tables).
 *   Both describe layouts are read: today's (values aligned with blanks) and the old one (tabs).
 * - Commands (prompts, `**kubectl get svc**` captions) are kept: they say what a table is of.
 * - Everything else (prose, fences, `...`) is noise, kept with its line.
 */
import { Lexer } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';
import { commandOfLine, type PastedCommand } from '../common/command.js';
import { joinSpans, KubectlLineParser, type Span } from './parser.js';
import * as T from './tokens.js';

export type { Span } from './parser.js';

export interface KubectlCommandRef {
  readonly line: number;
  readonly command: PastedCommand;
}

export interface KubectlRow {
  readonly line: number;
  readonly text: string;
  /** One entry per header column (undefined: the row has nothing there). */
  readonly cells: readonly (Span | undefined)[];
}

export interface KubectlTable {
  readonly line: number;
  /** Column names as printed (multi-word names such as `NOMINATED NODE` joined). */
  readonly columns: readonly Span[];
  readonly markdown: boolean;
  /** The command the paste shows before the table, if any. */
  readonly command?: KubectlCommandRef;
  readonly rows: readonly KubectlRow[];
  /** An elision (`...`) inside the table: the author left rows out. */
  readonly elided: boolean;
}

export interface DescribeLine {
  readonly line: number;
  /** Blanks before the first character (a tab counts as 8 columns, as terminals show it). */
  readonly indent: number;
  readonly text: string;
  /** `Key:  value`: the key, its column, the value (trimmed; '' when none) and its column. */
  readonly key?: string;
  readonly keyColumn?: number;
  readonly value?: string;
  readonly valueColumn?: number;
  /** The line is a list item (`  - Addresses:  10.0.0.1`). */
  readonly dash?: boolean;
}

export interface DescribeBlock {
  readonly line: number;
  readonly command?: KubectlCommandRef;
  readonly lines: readonly DescribeLine[];
}

export interface KubectlDocument {
  readonly tables: readonly KubectlTable[];
  readonly blocks: readonly DescribeBlock[];
  /** `No resources found in NS namespace.` / `No resources found.` */
  readonly empty: readonly { readonly line: number; readonly text: string; readonly namespace?: string; readonly command?: KubectlCommandRef }[];
  readonly commands: readonly KubectlCommandRef[];
  readonly diagnostics: readonly Diagnostic[];
  readonly lineCount: number;
}

/** kubectl column names that hold blanks (a collapsed paste puts its surplus words there). */
const SPACED_COLUMNS = new Set(['RESTARTS', 'OS-IMAGE', 'ENDPOINTS', 'AGE', 'STATUS', 'LABELS', 'MESSAGE']);
/** Column names of two words. */
const TWO_WORD_COLUMNS = new Set(['NOMINATED NODE', 'READINESS GATES', 'LAST SEEN', 'FIRST SEEN', 'ADDRESS TYPE', 'SERVICE ACCOUNT']);
const HEADER_WORD = /^[A-Z][A-Z0-9_()/.-]*$/;
const MARKDOWN_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const NO_RESOURCES = /^\s*No resources found(?: in (\S+) namespace)?\.?\s*$/;
/** A describe field: `Key:` then blanks or the end of the line; keys are words with single blanks. */
const FIELD = /^(\s*)(-\s+)?([A-Za-z][A-Za-z0-9()./_-]*(?: [A-Za-z0-9()./_-]+){0,4}):(?:[ \t]+(\S.*?)|[ \t]*)$/;

let lexer: Lexer | undefined;
let parser: KubectlLineParser | undefined;
function tools(): { lexer: Lexer; parser: KubectlLineParser } {
  lexer ??= new Lexer(T.allTokens, { positionTracking: 'onlyOffset', safeMode: true });
  parser ??= new KubectlLineParser();
  return { lexer, parser };
}

/** The words of a plain line, or the cells of a Markdown row (each cell's words joined). */
function lexLine(raw: string, markdown: boolean): Span[] | (Span | undefined)[] | undefined {
  const { lexer, parser } = tools();
  const lexed = lexer.tokenize(raw);
  if (lexed.errors.length > 0 || lexed.tokens.length === 0) return undefined;
  parser.input = lexed.tokens;
  if (markdown) {
    const cells = parser.markdownRow();
    return parser.errors.length > 0 ? undefined : cells.map((words) => joinSpans(raw, words.map((w) => stripBold(w))));
  }
  const words = parser.wordsLine();
  return parser.errors.length > 0 ? undefined : words;
}

/** `**pending**` → `pending` (Markdown bold inside a pasted cell), keeping columns. */
function stripBold(w: Span): Span {
  const m = /^(\*\*|__)(.+)\1$/.exec(w.text);
  return m ? { text: m[2], column: w.column + 2, end: w.end - 2 } : w;
}

function indentOf(raw: string): number {
  let n = 0;
  for (const c of raw) {
    if (c === ' ') n++;
    else if (c === '\t') n += 8 - (n % 8);
    else break;
  }
  return n;
}

/** A header line's column names, or undefined when the words are not a kubectl header. */
function headerColumns(words: readonly Span[]): Span[] | undefined {
  if (words.length < 2 || !words.every((w) => HEADER_WORD.test(w.text))) return undefined;
  if (words[0].text !== 'NAME' && words[0].text !== 'NAMESPACE') return undefined;
  const out: Span[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const next = words[i + 1];
    if (next && TWO_WORD_COLUMNS.has(`${w.text} ${next.text}`)) {
      out.push({ text: `${w.text} ${next.text}`, column: w.column, end: next.end });
      i++;
    } else out.push(w);
  }
  return out;
}

/** Words grouped by gaps of at least `gap` blanks. */
function byGaps(words: readonly Span[], gap: number): Span[][] {
  const groups: Span[][] = [];
  for (const w of words) {
    const last = groups[groups.length - 1];
    if (last && w.column - last[last.length - 1].end < gap) last.push(w);
    else groups.push([w]);
  }
  return groups;
}

/**
 * A row's words in the header's columns, or undefined. Tried in order: the gaps (kubectl leaves at
 * least three blanks between columns), the header's offsets, then (a collapsed paste) word by word
 * with the surplus in the one column that holds blanks.
 */
export function assignCells(raw: string, words: readonly Span[], columns: readonly Span[]): (Span | undefined)[] | undefined {
  const n = columns.length;
  const gaps = byGaps(words, 2);
  if (gaps.length === n || (gaps.length < n && gaps.length >= 2 && alignedWith(gaps, columns))) return place(raw, gaps, columns);
  const byOffset = byColumnOffsets(words, columns);
  if (byOffset) return byOffset.map((ws) => joinSpans(raw, ws));
  if (words.length === n) return [...words];
  if (words.length > n) {
    const spaced = columns.map((c, i) => (SPACED_COLUMNS.has(c.text) ? i : -1)).filter((i) => i >= 0);
    for (const s of spaced) {
      const extra = words.length - n;
      const cells = [...words.slice(0, s).map((w) => [w]), words.slice(s, s + extra + 1), ...words.slice(s + extra + 1).map((w) => [w])];
      if (cells.length === n && plausibleSpaced(columns[s].text, cells[s])) return cells.map((ws) => joinSpans(raw, ws));
    }
  }
  return undefined;
}

/** Does each group start at (or within a blank of) the start of a column, in order? */
function alignedWith(groups: readonly Span[][], columns: readonly Span[]): boolean {
  let c = 0;
  for (const g of groups) {
    while (c < columns.length && Math.abs(columns[c].column - g[0].column) > 1) c++;
    if (c >= columns.length) return false;
    c++;
  }
  return true;
}

/** Groups placed in the columns they start under (all columns when there are as many groups). */
function place(raw: string, groups: readonly Span[][], columns: readonly Span[]): (Span | undefined)[] {
  if (groups.length === columns.length) return groups.map((g) => joinSpans(raw, g));
  const out: (Span | undefined)[] = columns.map(() => undefined);
  let c = 0;
  for (const g of groups) {
    while (c < columns.length - 1 && Math.abs(columns[c].column - g[0].column) > 1) c++;
    out[c++] = joinSpans(raw, g);
  }
  return out;
}

/** Words put under the column whose range holds their start; undefined unless every column's first word starts at that column. */
function byColumnOffsets(words: readonly Span[], columns: readonly Span[]): Span[][] | undefined {
  const out: Span[][] = columns.map(() => []);
  for (const w of words) {
    let c = columns.length - 1;
    while (c > 0 && w.column < columns[c].column - 1) c--;
    out[c].push(w);
  }
  const ok = out.every((ws, i) => ws.length === 0 ? i === columns.length - 1 : Math.abs(ws[0].column - columns[i].column) <= 1);
  return ok ? out : undefined;
}

/** The words a collapsed paste put in one spaced column look like what that column prints. */
function plausibleSpaced(column: string, words: readonly Span[]): boolean {
  const text = words.map((w) => w.text).join(' ');
  switch (column) {
    case 'RESTARTS':
      return /^\d+ \(\S+ ago\)$/.test(text);
    case 'ENDPOINTS':
      return /^\S+ \+ \d+ more\.\.\.$/.test(text);
    case 'AGE':
      return false;
    default:
      return true;
  }
}

interface State {
  command?: KubectlCommandRef;
  table?: { line: number; columns: Span[]; markdown: boolean; command?: KubectlCommandRef; rows: KubectlRow[]; elided: boolean };
  block?: { line: number; command?: KubectlCommandRef; lines: DescribeLine[] };
}

/** Parse kubectl text output. Never throws on user input. */
export function parseKubectlText(text: string, file: string): KubectlDocument {
  const input = splitInput(text);
  const tables: KubectlTable[] = [];
  const blocks: DescribeBlock[] = [];
  const empty: { line: number; text: string; namespace?: string; command?: KubectlCommandRef }[] = [];
  const commands: KubectlCommandRef[] = [];
  const diagnostics: Diagnostic[] = [];
  const st: State = {};
  const closeTable = () => {
    if (st.table) tables.push(st.table);
    st.table = undefined;
  };
  const closeBlock = () => {
    if (st.block) blocks.push(st.block);
    st.block = undefined;
  };
  input.lines.forEach((raw, i) => {
    const line = i + 1;
    const r = readLine(raw, line, file, st, diagnostics);
    switch (r.kind) {
      case 'blank':
        closeTable();
        break;
      case 'command':
        closeTable();
        closeBlock();
        st.command = { line, command: r.command };
        commands.push(st.command);
        break;
      case 'fence':
        closeTable();
        closeBlock();
        break;
      case 'elision':
        if (st.table) st.table.elided = true;
        break;
      case 'empty':
        closeTable();
        closeBlock();
        empty.push({ line, text: raw.trim(), ...(r.namespace ? { namespace: r.namespace } : {}), ...(st.command ? { command: st.command } : {}) });
        break;
      case 'header':
        closeTable();
        closeBlock();
        st.table = { line, columns: r.columns, markdown: r.markdown, ...(st.command ? { command: st.command } : {}), rows: [], elided: false };
        break;
      case 'row':
        st.table!.rows.push(r.row);
        break;
      case 'describe':
        if (r.starts) {
          closeTable();
          closeBlock();
          st.block = { line, ...(st.command ? { command: st.command } : {}), lines: [] };
        }
        st.block!.lines.push(r.line);
        break;
      case 'other':
        break;
    }
  });
  closeTable();
  closeBlock();
  return { tables, blocks, empty, commands, diagnostics, lineCount: input.lines.length };
}

type LineResult =
  | { kind: 'blank' | 'fence' | 'elision' | 'other' }
  | { kind: 'command'; command: PastedCommand }
  | { kind: 'empty'; namespace?: string }
  | { kind: 'header'; columns: Span[]; markdown: boolean }
  | { kind: 'row'; row: KubectlRow }
  | { kind: 'describe'; starts: boolean; line: DescribeLine };

function readLine(raw: string, line: number, file: string, st: State, diagnostics: Diagnostic[]): LineResult {
  if (raw.trim() === '') return { kind: 'blank' };
  const command = commandOfLine(raw);
  if (command) return { kind: 'command', command };
  const noise = noiseKind(raw);
  if (noise === 'elision') return { kind: 'elision' };
  if (noise !== undefined && !(st.block && noise === 'fence' && /^\s*-{3,}\s*$/.test(raw))) {
    diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise} line: ${printable(raw.trim(), 60)}`, file, line, indentOf(raw) + 1));
    return { kind: noise === 'fence' ? 'fence' : 'other' };
  }
  const none = NO_RESOURCES.exec(raw);
  if (none) return { kind: 'empty', ...(none[1] ? { namespace: none[1] } : {}) };
  const markdown = /^\s*\|/.test(raw);
  if (markdown && MARKDOWN_SEPARATOR.test(raw)) return { kind: 'other' };
  const described = describeField(raw, line, st);
  if (described) return described;
  const lexed = lexLine(raw, markdown);
  if (!lexed) {
    diagnostics.push(diagnostic('warning', 'kubectl/unreadable-line', `cannot read this line: ${printable(raw.trim(), 60)}`, file, line, indentOf(raw) + 1));
    return { kind: 'other' };
  }
  const words = (lexed as (Span | undefined)[]).filter((w): w is Span => w !== undefined);
  const header = headerColumns(words);
  if (header) return { kind: 'header', columns: header, markdown };
  if (st.table && st.table.markdown === markdown) {
    const wrapped = !markdown && continuation(words, st.table);
    if (wrapped) return wrapped;
    const cells = markdown ? padCells(lexed, st.table.columns.length) : assignCells(raw, words, st.table.columns);
    if (cells) return { kind: 'row', row: { line, text: raw, cells } };
    diagnostics.push(
      diagnostic('warning', 'kubectl/row-columns', `this row does not fit the table's ${st.table.columns.length} columns (${st.table.columns.map((c) => c.text).join(', ')}): skipped`, file, line, words[0]?.column ?? 1, {
        expected: `${st.table.columns.length} columns`,
        found: `${words.length} words`,
      }),
    );
    return { kind: 'other' };
  }
  // Inside a describe block: continuation lines, describe's small tables, events.
  if (st.block) return { kind: 'describe', starts: false, line: { line, indent: indentOf(raw), text: raw.trim() } };
  diagnostics.push(diagnostic('info', 'input/noise', `not kubectl output (ignored): ${printable(raw.trim(), 60)}`, file, line, indentOf(raw) + 1));
  return { kind: 'other' };
}

/**
 * A line holding only words under one column of the row above (a value kubectl wrapped onto a line
 * of its own, as 0.x did for a Service's second port): appended to that row's cell, comma-joined.
 */
function continuation(words: readonly Span[], table: NonNullable<State['table']>): LineResult | undefined {
  const prev = table.rows[table.rows.length - 1];
  if (!prev || words.length === 0) return undefined;
  const cols = table.columns;
  const at = cols.findIndex((c, i) => Math.abs(c.column - words[0].column) <= 1 && (i === cols.length - 1 || words[words.length - 1].end <= cols[i + 1].column));
  if (at <= 0) return undefined;
  const cell = prev.cells[at];
  const joined: Span = cell ? { text: `${cell.text},${words.map((w) => w.text).join(',')}`, column: cell.column, end: cell.end } : { text: words.map((w) => w.text).join(','), column: words[0].column, end: words[words.length - 1].end };
  const cells = [...prev.cells];
  cells[at] = joined;
  table.rows[table.rows.length - 1] = { ...prev, cells };
  return { kind: 'other' };
}

/** A Markdown row's cells, one per column (missing trailing cells undefined, extra ones dropped). */
function padCells(cells: readonly (Span | undefined)[], n: number): (Span | undefined)[] {
  return Array.from({ length: n }, (_, i) => cells[i]);
}

/** A `Key:  value` line: the `Name:` that starts a describe block, or a field inside one. */
function describeField(raw: string, line: number, st: State): LineResult | undefined {
  const f = FIELD.exec(raw);
  if (!f) return undefined;
  const key = f[3];
  const top = f[1] === '' && !f[2];
  // A block starts at `Name:`, or (an author cut its top) at a field describe prints near the top.
  if (top && (key === 'Name' || (!st.block && /^(Namespace|Labels|Selector|Type|IP|Port|Endpoints|AddressType|Subsets)$/.test(key)))) {
    return { kind: 'describe', starts: true, line: field(raw, line, indentOf(raw), f) };
  }
  if (st.block && !st.table) return { kind: 'describe', starts: false, line: field(raw, line, indentOf(raw), f) };
  return undefined;
}

function field(raw: string, line: number, indent: number, f: RegExpExecArray): DescribeLine {
  const keyColumn = f[1].length + (f[2]?.length ?? 0) + 1;
  const value = f[4] ?? '';
  const valueColumn = value ? raw.indexOf(value, keyColumn + f[3].length) + 1 : keyColumn + f[3].length + 1;
  return { line, indent, text: raw.trim(), key: f[3], keyColumn, value, valueColumn, ...(f[2] ? { dash: true } : {}) };
}
