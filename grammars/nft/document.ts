/**
 * The block structure of an nft listing (table → chain/set/map → lines), followed line by line with a
 * stack, and what each logical line means where it stands: a block opener or closer, a command (an
 * `nft -f` transaction line), a table property, a chain's spec or rule, a set's property.
 */
import type { IToken } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic, appendAll } from '../common/source.js';
import { noiseKind } from '../common/text.js';
import type { SynChain, SynCommand, SynCommandVerb, SynDocument, SynSet, SynTable, SynUnsupported } from '../common/nft-syntax.js';
import type { RuleProblem } from './cursor.js';
import { braceBalance, lexLine, parseAtoms, plainAtoms, type Atom, type LexedLine, type TokenAtom } from './parser.js';
import { COMMAND_START, indentWidth, isCloser, looksLikeStructure, openerWords, type Opener } from './lines.js';
import { classifyRule } from './rule.js';
import { parseChainSpec, parseSetProperty } from './properties.js';
import { COMMAND_VERBS, OTHER_VERBS, parseCommand } from './transaction.js';

type Mut<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

interface MutTable extends Omit<Mut<SynTable>, 'chains' | 'sets'> {
  chains: Mut<SynChain>[];
  sets: Mut<SynSet>[];
}

type Frame =
  | { kind: 'table'; table: MutTable }
  | { kind: 'chain'; chain: Mut<SynChain>; table: MutTable }
  | { kind: 'set'; set: Mut<SynSet>; table: MutTable }
  | { kind: 'other'; what: string; line: number };

/** One logical line: a line, or a statement whose `{ … }` wraps onto continuation lines. */
interface LogicalLine {
  readonly raw: string;
  readonly trimmed: string;
  readonly lineNo: number;
  /** Atoms made directly from a plain line (words and operators only: most rules). */
  readonly plain: TokenAtom[] | undefined;
  /** Any other line, through the lexer. */
  readonly lexed: LexedLine | undefined;
  readonly opener: Opener | undefined;
  readonly isCommand: boolean;
  /** The text of the logical line, continuation lines joined with a space. */
  readonly logicalRaw: string;
  /** Index of the line after it. */
  readonly next: number;
}

const IPTABLES_NFT_WARNING = /^#\s*Warning:\s*table\s+(\S+)\s+(\S+)\s+is managed by iptables-nft/;

function frameName(f: Frame): string {
  return f.kind === 'table' ? `table ${f.table.family} ${f.table.name}` : f.kind === 'chain' ? `chain ${f.chain.name}` : f.kind === 'set' ? `${f.set.kind} ${f.set.name}` : f.what;
}

export class NftDocumentReader {
  readonly diagnostics: Diagnostic[] = [];
  private readonly unsupported: SynUnsupported[] = [];
  private readonly warnings: { family: string; name: string; line: number }[] = [];
  private readonly tables: MutTable[] = [];
  private readonly stack: Frame[] = [];
  /** Commands and top-level table blocks in input order (kept only if there is a command). */
  private readonly commands: SynCommand[] = [];
  private hasCommand = false;
  private implicit: MutTable | undefined;

  constructor(
    private readonly file: string,
    private readonly lines: readonly string[],
  ) {}

  /** Read the line at index `i` (with its continuation lines); returns the index of the next one. */
  readAt(i: number): number {
    const raw = this.lines[i];
    const lineNo = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || this.skipped(raw, trimmed, lineNo)) return i + 1;
    const ll = this.logicalLine(i, raw, trimmed);
    const top = this.stack[this.stack.length - 1];
    if (ll.lexed && isCloser(ll.lexed.tokens)) this.close(top, ll);
    else if (ll.opener) this.open(ll.opener, top, ll);
    else this.statement(top, ll);
    return ll.next;
  }

  /** End of input: open objects mean the dump was cut. */
  end(): SynDocument {
    const lines = this.lines;
    for (let k = this.stack.length - 1; k >= 0; k--) {
      const f = this.stack[k];
      this.diag('warning', 'nft/truncated', `${frameName(f)} is not closed at end of input (dump cut?)`, lines.length, 1, { expected: '}', found: 'end of input' });
      if (f.kind === 'table') f.table.endLine = lines.length;
      // A table (or a pasted chain's implicit table) left open: what followed the cut is not in the input.
      if (f.kind === 'table' || f.kind === 'chain') f.table.truncated = true;
    }
    if (this.implicit) this.implicit.endLine = lines.length;
    const { tables, commands, unsupported, warnings } = this;
    return this.hasCommand ? { tables, commands, unsupported, iptablesNftWarnings: warnings } : { tables, unsupported, iptablesNftWarnings: warnings };
  }

  private diag(sev: 'error' | 'warning' | 'info', code: string, msg: string, line: number, column: number, extra?: { expected?: string; found?: string }): void {
    this.diagnostics.push(diagnostic(sev, code, msg, this.file, line, column, extra));
  }

  private fromProblem(p: RuleProblem): void {
    this.diagnostics.push(
      diagnostic(p.severity, p.code, p.message, this.file, p.line, p.column, {
        ...(p.expected !== undefined ? { expected: p.expected } : {}),
        ...(p.found !== undefined ? { found: printable(p.found) } : {}),
      }),
    );
  }

  private report(problems: readonly RuleProblem[]): void {
    for (const p of problems) this.fromProblem(p);
  }

  private keep(line: number, txt: string, reason: string): void {
    this.unsupported.push({ line, text: txt, reason });
  }

  /** Paste noise, an iptables-nft warning, a comment line: kept as unsupported with an info. */
  private skipped(raw: string, trimmed: string, lineNo: number): boolean {
    const nk = noiseKind(raw);
    if (nk) {
      this.keep(lineNo, trimmed, `noise: ${nk}`);
      this.diag('info', 'input/noise', `skipped paste noise (${nk})`, lineNo, 1, { found: printable(trimmed) });
      return true;
    }
    const warn = IPTABLES_NFT_WARNING.exec(trimmed);
    if (warn || (trimmed.startsWith('#') && !/^#\s*handle\s+\d+\s*$/.test(trimmed))) {
      if (warn) this.warnings.push({ family: warn[1], name: warn[2], line: lineNo });
      this.keep(lineNo, trimmed, warn ? 'noise: iptables-nft warning (stderr)' : 'noise: comment');
      this.diag('info', 'input/noise', warn ? 'nft warning on stderr: table managed by iptables-nft' : 'skipped comment line', lineNo, 1, { found: printable(trimmed) });
      return true;
    }
    return false;
  }

  /**
   * Join continuation lines while `{` are open (wrapped element lists). A plain line (words and
   * operators only: most rules) has its atoms made directly; it opens, closes and continues nothing.
   * Any other line goes through the lexer and the parser.
   */
  private logicalLine(i: number, raw: string, trimmed: string): LogicalLine {
    const lines = this.lines;
    const plainLine = plainAtoms(raw);
    const plain = plainLine && plainLine.length > 0 ? plainLine : undefined;
    let lexed = plain ? undefined : lexLine(raw);
    const opener = lexed ? openerWords(lexed.tokens) : undefined;
    let endI = i;
    const firstWord = plain ? plain[0].text : lexed!.tokens[0]?.image;
    const isCommand = !opener && this.stack.length === 0 && firstWord !== undefined && (COMMAND_VERBS.has(firstWord) || OTHER_VERBS.has(firstWord));
    if (!opener && lexed) {
      // nft wraps only inside `{ … }` and indents continuation lines deeper than the statement;
      // a command's `{ … }` may go on over lines at any indentation (until the next command).
      let bal = braceBalance(lexed.tokens);
      const indent = indentWidth(raw);
      const continues = (next: string) =>
        isCommand ? !COMMAND_START.test(next) : next.trim() !== '' && indentWidth(next) > indent && !looksLikeStructure(next);
      while (bal > 0 && endI + 1 < lines.length && continues(lines[endI + 1])) {
        endI++;
        bal += braceBalance(lexLine(lines[endI]).tokens);
      }
      if (endI > i) lexed = lexLine(lines.slice(i, endI + 1).join('\n'));
    }
    const logicalRaw =
      endI === i
        ? trimmed
        : lines
            .slice(i, endI + 1)
            .map((l) => l.trim())
            .join(' ');
    return { raw, trimmed, lineNo: i + 1, plain, lexed, opener, isCommand, logicalRaw, next: endI + 1 };
  }

  private currentTable(line: number): MutTable {
    for (let k = this.stack.length - 1; k >= 0; k--) {
      const f = this.stack[k];
      if (f.kind === 'table') return f.table;
    }
    if (!this.implicit) {
      this.implicit = { family: '', name: '', implicit: true, flags: [], chains: [], sets: [], line, endLine: line };
      this.tables.push(this.implicit);
      this.diag('info', 'nft/fragment', 'objects without an enclosing `table … {`: read as a fragment', line, 1);
    }
    return this.implicit;
  }

  /** Parse a logical line into atoms, reporting lexing/parsing problems. */
  private atomsOf(ll: LogicalLine): Atom[] {
    if (ll.plain) return ll.plain;
    const { tokens, problems: lexProblems } = ll.lexed!;
    return this.parsedAtoms(tokens, lexProblems, ll.lineNo);
  }

  private parsedAtoms(tokens: readonly IToken[], lexProblems: LexedLine['problems'], baseLine: number): Atom[] {
    for (const p of lexProblems) this.diag('error', 'parse/unexpected-character', p.message, baseLine + p.line, p.column, p.found !== undefined ? { found: printable(p.found) } : undefined);
    const { atoms, problems } = parseAtoms(tokens);
    for (const p of problems) {
      if (p.found === 'end of line' && p.expected === 'RCurly') continue; // reported as an unclosed group
      this.diag('error', 'parse/unexpected-token', p.expected ? `expected ${p.expected} but found ${printable(p.found ?? '?')}` : p.message, baseLine + p.line, p.column, {
        ...(p.expected !== undefined ? { expected: p.expected } : {}),
        ...(p.found !== undefined ? { found: printable(p.found) } : {}),
      });
    }
    return atoms;
  }

  /**
   * A chain's rules were pushed one by one: give it an exact-size array once it is closed (at 10k
   * Services, 100k chains of two or three rules would otherwise each keep room for seventeen).
   */
  private popFrame(): Frame {
    const f = this.stack.pop()!;
    if (f.kind === 'chain') f.chain.rules = f.chain.rules.slice();
    return f;
  }

  private closeTo(kinds: Frame['kind'][], line: number, reason: string): void {
    while (this.stack.length && !kinds.includes(this.stack[this.stack.length - 1].kind)) {
      const f = this.popFrame();
      this.diag('error', 'parse/missing-close', `${frameName(f)} is not closed before ${reason}`, line, 1, { expected: '}', found: reason });
      if (f.kind === 'table') f.table.endLine = line - 1;
    }
  }

  private close(top: Frame | undefined, ll: LogicalLine): void {
    const { raw, trimmed, lineNo } = ll;
    if (!top) {
      if (this.implicit) this.diag('info', 'nft/stray-brace', 'closing brace of an enclosing object that is not part of the input', lineNo, raw.indexOf('}') + 1);
      else {
        this.keep(lineNo, trimmed, 'unmatched }');
        this.diag('error', 'parse/unexpected-token', 'unmatched `}`', lineNo, raw.indexOf('}') + 1, { found: '}' });
      }
      return;
    }
    this.popFrame();
    if (top.kind === 'table') top.table.endLine = lineNo;
  }

  private open(opener: Opener, top: Frame | undefined, ll: LogicalLine): void {
    const { raw, trimmed, lineNo } = ll;
    const [kw, ...rest] = opener.words;
    if (kw === 'table') {
      this.openTable(opener, rest, raw, lineNo);
      return;
    }
    if (top && top.kind === 'other') {
      this.stack.push({ kind: 'other', what: kw, line: lineNo });
      this.keep(lineNo, trimmed, `inside unsupported ${top.what}`);
      return;
    }
    if (top && (top.kind === 'chain' || top.kind === 'set')) this.closeTo(['table'], lineNo, `${kw} at line ${lineNo}`);
    const table = this.currentTable(lineNo);
    const name = rest.length === 1 ? rest[0] : rest.join(' ');
    if (kw === 'chain') {
      const chain: Mut<SynChain> = { name, rules: [], line: lineNo };
      if (opener.handle !== undefined) chain.handle = opener.handle;
      table.chains.push(chain);
      this.stack.push({ kind: 'chain', chain, table });
    } else if (kw === 'set' || kw === 'map') {
      const set: Mut<SynSet> = { name, kind: kw, keyType: [], flags: [], elements: [], line: lineNo };
      if (opener.handle !== undefined) set.handle = opener.handle;
      table.sets.push(set);
      this.stack.push({ kind: 'set', set, table });
    } else {
      this.stack.push({ kind: 'other', what: `${kw} ${name}`, line: lineNo });
      this.keep(lineNo, trimmed, `unsupported object: ${kw}`);
      this.diag('warning', 'nft/unsupported-object', `${kw} objects are not modelled; kept as unsupported`, lineNo, raw.search(/\S/) + 1, { found: printable(trimmed) });
    }
  }

  private openTable(opener: Opener, rest: readonly string[], raw: string, lineNo: number): void {
    this.closeTo([], lineNo, `table at line ${lineNo}`);
    this.implicit = undefined;
    const family = rest.length >= 2 ? rest[0] : 'ip';
    const name = rest.length >= 2 ? rest.slice(1).join(' ') : (rest[0] ?? '');
    const table: MutTable = { family, name, implicit: false, flags: [], chains: [], sets: [], line: lineNo, endLine: lineNo };
    if (opener.handle !== undefined) table.handle = opener.handle;
    this.tables.push(table);
    this.stack.push({ kind: 'table', table });
    if (opener.verb) this.hasCommand = true;
    const verb: SynCommandVerb = opener.verb ?? 'add';
    this.commands.push({ verb, object: 'block', family, table: name, block: table, line: lineNo, column: raw.search(/\S/) + 1, nameColumn: raw.search(/\S/) + 1 });
  }

  private statement(top: Frame | undefined, ll: LogicalLine): void {
    const { raw, trimmed, lineNo, logicalRaw } = ll;
    const column = ll.plain ? ll.plain[0].column : (ll.lexed!.tokens[0]?.startColumn ?? raw.search(/\S/) + 1);
    if (!top && ll.isCommand) {
      this.command(ll, column);
      return;
    }
    if (!top) {
      this.keep(lineNo, logicalRaw, 'outside any table or chain');
      if (this.hasCommand) this.diag('error', 'parse/unexpected-line', 'expected an nft command (add, create, insert, replace, delete, destroy, flush) or `table`', lineNo, column, { expected: 'add | create | insert | replace | delete | destroy | flush | table', found: printable(trimmed, 40) });
      else this.diag('error', 'parse/unexpected-line', 'expected `table`, `chain`, `set` or `map`', lineNo, column, { expected: 'table | chain | set | map', found: printable(trimmed, 40) });
      return;
    }
    if (top.kind === 'other') {
      this.keep(lineNo, logicalRaw, `inside unsupported ${top.what}`);
      return;
    }
    const atoms = this.atomsOf(ll);
    if (top.kind === 'table') this.tableLine(top.table, atoms, ll, column);
    else if (top.kind === 'chain') this.chainLine(top.chain, atoms, ll, column);
    else this.setLine(top.set, atoms, ll, column);
  }

  /** A command line of an `nft -f` transaction (`add rule …`, `flush chain …`). */
  private command(ll: LogicalLine, column: number): void {
    const { raw, trimmed, lineNo } = ll;
    this.hasCommand = true;
    const atoms = this.atomsOf(ll);
    const problems: RuleProblem[] = [];
    const r = parseCommand(atoms, raw, lineNo, problems);
    this.report(problems);
    if (r.kind === 'command') {
      this.commands.push(r.command);
      return;
    }
    this.keep(lineNo, ll.logicalRaw, r.kind === 'ignored' ? `command not applied: ${r.verb} ${r.object}` : 'command nft would refuse');
    if (r.kind === 'ignored') {
      const changes = r.verb === 'reset' || r.verb === 'rename' || r.verb === 'import' || r.object !== '' && !['list', 'describe', 'monitor', 'export', 'get'].includes(r.verb);
      this.diag(changes ? 'warning' : 'info', 'nft/command-not-applied', `\`${r.verb} ${r.object}\` is not applied by kpx${changes ? ': the model may differ from what nft makes of this input' : ' (it does not change the ruleset)'}`, lineNo, column, { found: printable(trimmed, 40) });
    }
  }

  private tableLine(table: MutTable, atoms: Atom[], ll: LogicalLine, column: number): void {
    const w0 = atoms[0]?.t === 'word' ? (atoms[0] as TokenAtom).text : undefined;
    if (w0 === 'comment' && atoms[1] && (atoms[1].t === 'string' || atoms[1].t === 'bad-string')) table.comment = (atoms[1] as TokenAtom).text;
    else if (w0 === 'flags' && atoms[1]?.t === 'word') appendAll(table.flags, (atoms[1] as TokenAtom).text.split(','));
    else {
      this.keep(ll.lineNo, ll.logicalRaw, 'unexpected line in table');
      this.diag('error', 'parse/unexpected-line', 'expected `comment`, `flags`, `chain`, `set`, `map` or `}` in a table', ll.lineNo, column, { found: printable(ll.trimmed, 40) });
    }
  }

  private chainLine(chain: Mut<SynChain>, atoms: Atom[], ll: LogicalLine, column: number): void {
    const { lineNo } = ll;
    const problems: RuleProblem[] = [];
    const w0 = atoms[0]?.t === 'word' ? (atoms[0] as TokenAtom).text : undefined;
    if (w0 === 'type' || (w0 === 'policy' && atoms.length <= 3) || w0 === 'devices' || w0 === 'device') {
      parseChainSpec(atoms, chain, lineNo, problems);
    } else if (w0 === 'comment' && atoms.length === 2 && (atoms[1].t === 'string' || atoms[1].t === 'word')) {
      chain.comment = (atoms[1] as TokenAtom).text;
    } else {
      const r = classifyRule(atoms, lineNo, problems);
      const rule: Mut<SynChain['rules'][number]> = { exprs: r.exprs, raw: ll.logicalRaw, line: lineNo, column };
      if (r.comment !== undefined) rule.comment = r.comment;
      if (r.handle !== undefined) rule.handle = r.handle;
      if (r.counter) rule.counter = r.counter;
      if (r.annotation !== undefined) this.diag('info', 'input/noise', 'user annotation after a rule', lineNo, 1, { found: printable(r.annotation) });
      // An empty line (only a trailing comment) that lexed cleanly adds no rule, and its problems are not reported.
      if (atoms.length === 0 && (ll.plain || ll.lexed!.problems.length === 0)) return;
      chain.rules.push(rule);
    }
    this.report(problems);
  }

  /** A set / map property line. */
  private setLine(set: Mut<SynSet>, atoms: Atom[], ll: LogicalLine, column: number): void {
    const problems: RuleProblem[] = [];
    if (!parseSetProperty(atoms, set, ll.lineNo, problems)) {
      const w0 = atoms[0]?.t === 'word' ? (atoms[0] as TokenAtom).text : undefined;
      this.keep(ll.lineNo, ll.logicalRaw, `unknown ${set.kind} property`);
      this.diag('warning', 'nft/unsupported-property', `unknown ${set.kind} property ${JSON.stringify(w0 ?? ll.trimmed)}; kept as unsupported`, ll.lineNo, column, { found: printable(ll.trimmed, 40) });
    }
    this.report(problems);
  }
}
