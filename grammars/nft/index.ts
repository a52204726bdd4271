/**
 * `nft list ruleset` / `nft list table …` / `nft -a list …` text → syntax document.
 *
 * Block structure (table → chain/set/map → lines) is followed line by line with a stack;
 * each logical line (a line, or a statement whose `{ … }` wraps onto continuation lines) is
 * lexed and parsed by ./parser.ts (Chevrotain) and classified by ./rule.ts. One bad line gives
 * diagnostics for that line only; parsing goes on with the next.
 */
import type { IToken } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic, appendAll } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';
import type { SynChain, SynCommand, SynCommandVerb, SynDocument, SynSet, SynTable, SynUnsupported } from '../common/nft-syntax.js';
import { braceBalance, intern, isToken, lexLine, parseAtoms, plainAtoms, type Atom, type TokenAtom } from './parser.js';
import type { RuleProblem } from './cursor.js';
import { classifyRule } from './rule.js';
import { parseChainSpec, parseSetProperty } from './properties.js';
import { COMMAND_VERBS, OTHER_VERBS, parseCommand } from './transaction.js';

export type * from '../common/nft-syntax.js';

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

const OBJECT_KEYWORDS = new Set(['chain', 'set', 'map', 'flowtable', 'counter', 'quota', 'limit', 'secmark', 'synproxy', 'ct', 'tunnel']);
const IPTABLES_NFT_WARNING = /^#\s*Warning:\s*table\s+(\S+)\s+(\S+)\s+is managed by iptables-nft/;

export interface NftSyntaxResult {
  readonly doc: SynDocument;
  readonly diagnostics: Diagnostic[];
}

/** How many tokens are significant: all but trailing `# handle N` / `# …` comments. */
function significantEnd(tokens: readonly IToken[]): number {
  let end = tokens.length;
  while (end > 0 && (isToken(tokens[end - 1], 'handle') || isToken(tokens[end - 1], 'comment'))) end--;
  return end;
}

/** Significant tokens: without trailing `# handle N` / `# …` comments. */
function significant(tokens: readonly IToken[]): { toks: IToken[]; handle?: number } {
  const toks = [...tokens];
  let handle: number | undefined;
  while (toks.length) {
    const last = toks[toks.length - 1];
    if (isToken(last, 'handle')) handle = Number(last.image.replace(/\D+/, ''));
    else if (!isToken(last, 'comment')) break;
    toks.pop();
  }
  return handle !== undefined ? { toks, handle } : { toks };
}

/** `table F N {`, `chain N {`, `set N {`, `ct helper N {`… → header words (without `{`). */
function openerWords(tokens: readonly IToken[]): { words: string[]; handle?: number; verb?: 'add' | 'create' } | undefined {
  // Most lines are rules: without a last significant `{` they open nothing (no copy of their tokens).
  const end = significantEnd(tokens);
  if (end < 2 || !isToken(tokens[end - 1], 'lcurly')) return undefined;
  const { toks, handle } = significant(tokens);
  if (toks.length < 2 || !isToken(toks[toks.length - 1], 'lcurly')) return undefined;
  const head = toks.slice(0, -1);
  if (head.some((t) => isToken(t, 'lcurly') || isToken(t, 'rcurly'))) return undefined;
  let first = head[0]?.image;
  // `add table ip t {` / `create table ip t {` over several lines: a table block with a verb.
  let verb: 'add' | 'create' | undefined;
  if ((first === 'add' || first === 'create') && head[1]?.image === 'table') {
    verb = first;
    head.shift();
    first = 'table';
  }
  if (first !== 'table' && !OBJECT_KEYWORDS.has(first ?? '')) return undefined;
  // Interned: a chain's name in its header and in the jumps and map elements that go to it is one string.
  const words = head.map((t) => intern(t.image.startsWith('"') && t.image.endsWith('"') && t.image.length >= 2 ? t.image.slice(1, -1) : t.image));
  return { words, ...(handle !== undefined ? { handle } : {}), ...(verb ? { verb } : {}) };
}

function isCloser(tokens: readonly IToken[]): boolean {
  return significantEnd(tokens) === 1 && isToken(tokens[0], 'rcurly');
}

/** Indentation with tabs counted as 8 columns (so tab-expanded pastes compare alike). */
function indentWidth(line: string): number {
  let w = 0;
  for (const ch of line) {
    if (ch === ' ') w++;
    else if (ch === '\t') w += 8 - (w % 8);
    else break;
  }
  return w;
}

const COMMAND_START = /^\s*(add|create|insert|replace|delete|destroy|flush|list|reset|rename|table)\s/;

function looksLikeStructure(line: string): boolean {
  const t = line.trim();
  return t === '}' || /^(table|chain|set|map)\s+\S.*\{\s*(#.*)?$/.test(t);
}

export function parseNftSyntax(text: string, file: string): NftSyntaxResult {
  const input = splitInput(text);
  const lines = input.lines;
  const diagnostics: Diagnostic[] = [];
  const unsupported: SynUnsupported[] = [];
  const warnings: { family: string; name: string; line: number }[] = [];
  const tables: MutTable[] = [];
  const stack: Frame[] = [];
  /** Commands and top-level table blocks in input order (kept only if there is a command). */
  const commands: SynCommand[] = [];
  let hasCommand = false;
  let implicit: MutTable | undefined;

  const diag = (sev: 'error' | 'warning' | 'info', code: string, msg: string, line: number, column: number, extra?: { expected?: string; found?: string }) =>
    diagnostics.push(diagnostic(sev, code, msg, file, line, column, extra));
  const fromProblem = (p: RuleProblem) =>
    diagnostics.push(
      diagnostic(p.severity, p.code, p.message, file, p.line, p.column, {
        ...(p.expected !== undefined ? { expected: p.expected } : {}),
        ...(p.found !== undefined ? { found: printable(p.found) } : {}),
      }),
    );
  const keep = (line: number, txt: string, reason: string) => unsupported.push({ line, text: txt, reason });

  const currentTable = (line: number): MutTable => {
    for (let k = stack.length - 1; k >= 0; k--) {
      const f = stack[k];
      if (f.kind === 'table') return f.table;
    }
    if (!implicit) {
      implicit = { family: '', name: '', implicit: true, flags: [], chains: [], sets: [], line, endLine: line };
      tables.push(implicit);
      diag('info', 'nft/fragment', 'objects without an enclosing `table … {`: read as a fragment', line, 1);
    }
    return implicit;
  };

  /** Parse a logical line into atoms, reporting lexing/parsing problems. */
  const atomsOf = (tokens: readonly IToken[], lexProblems: readonly { line: number; column: number; message: string; found?: string }[], baseLine: number): Atom[] => {
    for (const p of lexProblems) diag('error', 'parse/unexpected-character', p.message, baseLine + p.line, p.column, p.found !== undefined ? { found: printable(p.found) } : undefined);
    const { atoms, problems } = parseAtoms(tokens);
    for (const p of problems) {
      if (p.found === 'end of line' && p.expected === 'RCurly') continue; // reported as an unclosed group
      diag('error', 'parse/unexpected-token', p.expected ? `expected ${p.expected} but found ${printable(p.found ?? '?')}` : p.message, baseLine + p.line, p.column, {
        ...(p.expected !== undefined ? { expected: p.expected } : {}),
        ...(p.found !== undefined ? { found: printable(p.found) } : {}),
      });
    }
    return atoms;
  };

  /**
   * A chain's rules were pushed one by one: give it an exact-size array once it is closed (at 10k
   * Services, 100k chains of two or three rules would otherwise each keep room for seventeen).
   */
  const popFrame = (): Frame => {
    const f = stack.pop()!;
    if (f.kind === 'chain') f.chain.rules = f.chain.rules.slice();
    return f;
  };

  const closeTo = (kinds: Frame['kind'][], line: number, reason: string) => {
    while (stack.length && !kinds.includes(stack[stack.length - 1].kind)) {
      const f = popFrame();
      const what = f.kind === 'table' ? `table ${f.table.family} ${f.table.name}` : f.kind === 'chain' ? `chain ${f.chain.name}` : f.kind === 'set' ? `${f.set.kind} ${f.set.name}` : f.what;
      diag('error', 'parse/missing-close', `${what} is not closed before ${reason}`, line, 1, { expected: '}', found: reason });
      if (f.kind === 'table') f.table.endLine = line - 1;
    }
  };

  let i = 0;
  while (i < lines.length) {
    const raw = lines[i];
    const lineNo = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '') {
      i++;
      continue;
    }
    const nk = noiseKind(raw);
    if (nk) {
      keep(lineNo, trimmed, `noise: ${nk}`);
      diag('info', 'input/noise', `skipped paste noise (${nk})`, lineNo, 1, { found: printable(trimmed) });
      i++;
      continue;
    }
    const warn = IPTABLES_NFT_WARNING.exec(trimmed);
    if (warn || (trimmed.startsWith('#') && !/^#\s*handle\s+\d+\s*$/.test(trimmed))) {
      if (warn) warnings.push({ family: warn[1], name: warn[2], line: lineNo });
      keep(lineNo, trimmed, warn ? 'noise: iptables-nft warning (stderr)' : 'noise: comment');
      diag('info', 'input/noise', warn ? 'nft warning on stderr: table managed by iptables-nft' : 'skipped comment line', lineNo, 1, { found: printable(trimmed) });
      i++;
      continue;
    }

    // ---- logical line: join continuation lines while `{` are open (wrapped element lists).
    // A plain line (words and operators only: most rules) has its atoms made directly; it opens,
    // closes and continues nothing. Any other line goes through the lexer and the parser.
    const plainLine = plainAtoms(raw);
    const plain = plainLine && plainLine.length > 0 ? plainLine : undefined;
    let lexed = plain ? undefined : lexLine(raw);
    const opener = lexed ? openerWords(lexed.tokens) : undefined;
    let endI = i;
    const firstWord = plain ? plain[0].text : lexed!.tokens[0]?.image;
    const isCommand = !opener && stack.length === 0 && firstWord !== undefined && (COMMAND_VERBS.has(firstWord) || OTHER_VERBS.has(firstWord));
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
    i = endI + 1;
    const top = stack[stack.length - 1];

    // ---- closers
    if (lexed && isCloser(lexed.tokens)) {
      if (!top) {
        if (implicit) diag('info', 'nft/stray-brace', 'closing brace of an enclosing object that is not part of the input', lineNo, raw.indexOf('}') + 1);
        else {
          keep(lineNo, trimmed, 'unmatched }');
          diag('error', 'parse/unexpected-token', 'unmatched `}`', lineNo, raw.indexOf('}') + 1, { found: '}' });
        }
        continue;
      }
      popFrame();
      if (top.kind === 'table') top.table.endLine = lineNo;
      continue;
    }

    // ---- openers
    if (opener) {
      const [kw, ...rest] = opener.words;
      if (kw === 'table') {
        closeTo([], lineNo, `table at line ${lineNo}`);
        implicit = undefined;
        const family = rest.length >= 2 ? rest[0] : 'ip';
        const name = rest.length >= 2 ? rest.slice(1).join(' ') : (rest[0] ?? '');
        const table: MutTable = { family, name, implicit: false, flags: [], chains: [], sets: [], line: lineNo, endLine: lineNo };
        if (opener.handle !== undefined) table.handle = opener.handle;
        tables.push(table);
        stack.push({ kind: 'table', table });
        if (opener.verb) hasCommand = true;
        const verb: SynCommandVerb = opener.verb ?? 'add';
        commands.push({ verb, object: 'block', family, table: name, block: table, line: lineNo, column: raw.search(/\S/) + 1, nameColumn: raw.search(/\S/) + 1 });
        continue;
      }
      if (top && top.kind === 'other') {
        stack.push({ kind: 'other', what: kw, line: lineNo });
        keep(lineNo, trimmed, `inside unsupported ${top.what}`);
        continue;
      }
      if (top && (top.kind === 'chain' || top.kind === 'set')) closeTo(['table'], lineNo, `${kw} at line ${lineNo}`);
      const table = currentTable(lineNo);
      const name = rest.length === 1 ? rest[0] : rest.join(' ');
      if (kw === 'chain') {
        const chain: Mut<SynChain> = { name, rules: [], line: lineNo };
        if (opener.handle !== undefined) chain.handle = opener.handle;
        table.chains.push(chain);
        stack.push({ kind: 'chain', chain, table });
      } else if (kw === 'set' || kw === 'map') {
        const set: Mut<SynSet> = { name, kind: kw, keyType: [], flags: [], elements: [], line: lineNo };
        if (opener.handle !== undefined) set.handle = opener.handle;
        table.sets.push(set);
        stack.push({ kind: 'set', set, table });
      } else {
        stack.push({ kind: 'other', what: `${kw} ${name}`, line: lineNo });
        keep(lineNo, trimmed, `unsupported object: ${kw}`);
        diag('warning', 'nft/unsupported-object', `${kw} objects are not modelled; kept as unsupported`, lineNo, raw.search(/\S/) + 1, { found: printable(trimmed) });
      }
      continue;
    }

    // ---- statement lines
    const column = plain ? plain[0].column : (lexed!.tokens[0]?.startColumn ?? raw.search(/\S/) + 1);
    const atomsOfLine = (): Atom[] => plain ?? atomsOf(lexed!.tokens, lexed!.problems, lineNo);
    if (!top && isCommand) {
      hasCommand = true;
      const atoms = atomsOfLine();
      const problems: RuleProblem[] = [];
      const r = parseCommand(atoms, raw, lineNo, problems);
      problems.forEach(fromProblem);
      if (r.kind === 'command') commands.push(r.command);
      else {
        keep(lineNo, logicalRaw, r.kind === 'ignored' ? `command not applied: ${r.verb} ${r.object}` : 'command nft would refuse');
        if (r.kind === 'ignored') {
          const changes = r.verb === 'reset' || r.verb === 'rename' || r.verb === 'import' || r.object !== '' && !['list', 'describe', 'monitor', 'export', 'get'].includes(r.verb);
          diag(changes ? 'warning' : 'info', 'nft/command-not-applied', `\`${r.verb} ${r.object}\` is not applied by kpx${changes ? ': the model may differ from what nft makes of this input' : ' (it does not change the ruleset)'}`, lineNo, column, { found: printable(trimmed, 40) });
        }
      }
      continue;
    }
    if (!top) {
      keep(lineNo, logicalRaw, 'outside any table or chain');
      if (hasCommand) diag('error', 'parse/unexpected-line', 'expected an nft command (add, create, insert, replace, delete, destroy, flush) or `table`', lineNo, column, { expected: 'add | create | insert | replace | delete | destroy | flush | table', found: printable(trimmed, 40) });
      else diag('error', 'parse/unexpected-line', 'expected `table`, `chain`, `set` or `map`', lineNo, column, { expected: 'table | chain | set | map', found: printable(trimmed, 40) });
      continue;
    }
    if (top.kind === 'other') {
      keep(lineNo, logicalRaw, `inside unsupported ${top.what}`);
      continue;
    }
    const atoms = atomsOfLine();
    const problems: RuleProblem[] = [];
    const w0 = atoms[0]?.t === 'word' ? (atoms[0] as TokenAtom).text : undefined;
    const onlyString = (k: number) => atoms.length === k + 1 && (atoms[k].t === 'string' || atoms[k].t === 'word');

    if (top.kind === 'table') {
      if (w0 === 'comment' && atoms[1] && (atoms[1].t === 'string' || atoms[1].t === 'bad-string')) top.table.comment = (atoms[1] as TokenAtom).text;
      else if (w0 === 'flags' && atoms[1]?.t === 'word') appendAll(top.table.flags, (atoms[1] as TokenAtom).text.split(','));
      else {
        keep(lineNo, logicalRaw, 'unexpected line in table');
        diag('error', 'parse/unexpected-line', 'expected `comment`, `flags`, `chain`, `set`, `map` or `}` in a table', lineNo, column, { found: printable(trimmed, 40) });
      }
      continue;
    }

    if (top.kind === 'chain') {
      const chain = top.chain;
      if (w0 === 'type' || (w0 === 'policy' && atoms.length <= 3) || w0 === 'devices' || w0 === 'device') {
        parseChainSpec(atoms, chain, lineNo, problems);
      } else if (w0 === 'comment' && onlyString(1)) {
        chain.comment = (atoms[1] as TokenAtom).text;
      } else {
        const r = classifyRule(atoms, lineNo, problems);
        const rule: Mut<SynChain['rules'][number]> = { exprs: r.exprs, raw: logicalRaw, line: lineNo, column };
        if (r.comment !== undefined) rule.comment = r.comment;
        if (r.handle !== undefined) rule.handle = r.handle;
        if (r.counter) rule.counter = r.counter;
        if (r.annotation !== undefined) diag('info', 'input/noise', 'user annotation after a rule', lineNo, 1, { found: printable(r.annotation) });
        if (atoms.length === 0 && (plain || lexed!.problems.length === 0)) continue;
        chain.rules.push(rule);
      }
      problems.forEach(fromProblem);
      continue;
    }

    // set / map properties
    const set = top.set;
    if (!parseSetProperty(atoms, set, lineNo, problems)) {
      keep(lineNo, logicalRaw, `unknown ${set.kind} property`);
      diag('warning', 'nft/unsupported-property', `unknown ${set.kind} property ${JSON.stringify(w0 ?? trimmed)}; kept as unsupported`, lineNo, column, { found: printable(trimmed, 40) });
    }
    problems.forEach(fromProblem);
  }

  // ---- end of input: open objects mean the dump was cut
  for (let k = stack.length - 1; k >= 0; k--) {
    const f = stack[k];
    const what = f.kind === 'table' ? `table ${f.table.family} ${f.table.name}` : f.kind === 'chain' ? `chain ${f.chain.name}` : f.kind === 'set' ? `${f.set.kind} ${f.set.name}` : f.what;
    diag('warning', 'nft/truncated', `${what} is not closed at end of input (dump cut?)`, lines.length, 1, { expected: '}', found: 'end of input' });
    if (f.kind === 'table') f.table.endLine = lines.length;
    // A table (or a pasted chain's implicit table) left open: what followed the cut is not in the input.
    if (f.kind === 'table' || f.kind === 'chain') f.table.truncated = true;
  }
  if (implicit) implicit.endLine = lines.length;

  const doc: SynDocument = hasCommand ? { tables, commands, unsupported, iptablesNftWarnings: warnings } : { tables, unsupported, iptablesNftWarnings: warnings };
  return { doc, diagnostics };
}
