/**
 * Chevrotain lexer and parser for one logical line of `nft list` output (a statement line, or a
 * statement whose `{ … }` continues over several physical lines). The parser is a "super
 * grammar": it knows nft's token classes, strings, operators and nested `{ elem, elem }` groups
 * and produces a list of positioned atoms; the meaning of words (selectors, statements) is
 * decided by ./rule.ts. Keeping keywords out of the lexer lets chain names like `input`,
 * `filter` or `service-…/tcp/` and values like `tcp` pass as ordinary words.
 */
import { createToken, EmbeddedActionsParser, Lexer, type IToken, type TokenType } from '../common/chevrotain.js';

// ---- tokens -----------------------------------------------------------------------------------
// Order matters: comments and strings first; operator tokens before Word with longer_alt: Word,
// so `==` alone is an operator but `-110`, `:15001`, `10.0.0.0/8` stay words.

const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });
const Newline = createToken({ name: 'Newline', pattern: /\r?\n/, group: Lexer.SKIPPED, line_breaks: true });
export const HandleComment = createToken({ name: 'HandleComment', pattern: /#[ \t]*handle[ \t]+\d+/ });
export const HashComment = createToken({ name: 'HashComment', pattern: /#[^\n]*/ });
export const StringLit = createToken({ name: 'StringLit', pattern: /"[^"\n]*"/ });
export const BadString = createToken({ name: 'BadString', pattern: /"[^"\n]*/ });
export const LCurly = createToken({ name: 'LCurly', pattern: /\{/ });
export const RCurly = createToken({ name: 'RCurly', pattern: /\}/ });
export const Semi = createToken({ name: 'Semi', pattern: /;/ });
export const Comma = createToken({ name: 'Comma', pattern: /,/ });
/** A run of non-space text; embedded commas (`related,established`, `dynamic,timeout`) stay inside. */
// Written as explicit ranges (printable ASCII without `{},;"#`, plus non-ASCII) so that
// Chevrotain's first-char optimisation applies.
export const Word = createToken({
  name: 'Word',
  pattern: /[!$-+\--:<-z|~\u00a0-\uffff]+(?:,[!$-+\--:<-z|~\u00a0-\uffff]+)*/,
});

const opSpecs: [string, RegExp][] = [
  ['EqEq', /==/],
  ['NotEq', /!=/],
  ['LtEq', /<=/],
  ['GtEq', />=/],
  ['Shl', /<</],
  ['Shr', />>/],
  ['Lt', /</],
  ['Gt', />/],
  ['Amp', /&/],
  ['Pipe', /\|/],
  ['Caret', /\^/],
  ['Dot', /\./],
  ['Colon', /:/],
  ['Minus', /-/],
  ['Slash', /\//],
  ['Assign', /=/],
];
const Operator = createToken({ name: 'Operator', pattern: Lexer.NA });
export const OperatorTokens: TokenType[] = opSpecs.map(([name, pattern]) =>
  createToken({ name, pattern, longer_alt: Word, categories: [Operator] }),
);

const allTokens: TokenType[] = [
  WhiteSpace,
  Newline,
  HandleComment,
  HashComment,
  StringLit,
  BadString,
  LCurly,
  RCurly,
  Semi,
  Comma,
  ...OperatorTokens,
  Operator,
  Word,
];

// ---- atoms ------------------------------------------------------------------------------------

export type AtomKind = 'word' | 'string' | 'op' | 'handle' | 'comment' | 'bad-string';

export interface TokenAtom {
  readonly t: AtomKind;
  /** Word/operator text; strings without their quotes. */
  readonly text: string;
  /** Line relative to the start of the logical line (0 = first physical line). */
  readonly line: number;
  readonly column: number;
}

export interface GroupAtom {
  readonly t: 'group';
  /** Comma-separated elements, each a run of atoms. */
  readonly elements: readonly Atom[][];
  readonly line: number;
  readonly column: number;
  /** The closing brace was missing (a recovery). */
  readonly unclosed: boolean;
}

export type Atom = TokenAtom | GroupAtom;

/**
 * Words repeat across a listing (`ip`, `daddr`, `jump`, `mark-for-masquerade`, a chain name in its
 * jump and its header): one string each instead of one per token keeps the model small (each
 * token's image is a fresh copy when short, a 32-byte slice of the text when long). Bounded: the
 * table starts over when full.
 */
const interned = new Map<string, string>();
const INTERN_MAX = 1 << 16;

export function intern(text: string): string {
  const known = interned.get(text);
  if (known !== undefined) return known;
  if (interned.size >= INTERN_MAX) interned.clear();
  interned.set(text, text);
  return text;
}

function tokenAtom(tok: IToken): TokenAtom {
  const tt = tok.tokenType;
  const line = (tok.startLine ?? 1) - 1;
  const column = tok.startColumn ?? 1;
  if (tt === StringLit) return { t: 'string', text: tok.image.slice(1, -1), line, column };
  if (tt === BadString) return { t: 'bad-string', text: tok.image.slice(1), line, column };
  if (tt === HandleComment) return { t: 'handle', text: tok.image.replace(/\D+/, ''), line, column };
  if (tt === HashComment) return { t: 'comment', text: tok.image, line, column };
  if (tt === Word) return { t: 'word', text: intern(tok.image), line, column };
  return { t: 'op', text: tok.image, line, column };
}

// ---- plain lines --------------------------------------------------------------------------------

/** ASCII characters the Word token takes (its character class above, without the comma). */
const WORD_CHAR = new Uint8Array(128);
for (let c = 33; c < 127; c++) WORD_CHAR[c] = 1;
for (const ch of '"#,;{}') WORD_CHAR[ch.charCodeAt(0)] = 0;
/** Operator tokens' texts: a whitespace-delimited run equal to one lexes as that operator. */
const OPERATOR_TEXT = new Map(opSpecs.map(([, pattern]) => [pattern.source.replace(/\\/g, ''), pattern.source.replace(/\\/g, '')]));

/**
 * The atoms of a plain line — one physical line of words and operators only: no braces, strings,
 * comments, semicolons, stray commas or non-ASCII (most rule lines) — exactly as the lexer and
 * the parser make them (each run between blanks is one Word, or one operator when it is exactly
 * an operator's text: a Word as long as the operator does not win over it), without building
 * tokens. Undefined when the line needs the lexer and the parser (they report its problems).
 */
export function plainAtoms(line: string): TokenAtom[] | undefined {
  const out: TokenAtom[] = [];
  const n = line.length;
  let i = 0;
  while (i < n) {
    let c = line.charCodeAt(i);
    if (c === 32 || c === 9) {
      i++;
      continue;
    }
    const start = i;
    // A comma only between word characters (`related,established`): else it is a token of its own.
    let afterComma = true;
    for (; i < n; i++) {
      c = line.charCodeAt(i);
      if (c === 32 || c === 9) break;
      if (c === 44) {
        if (afterComma) return undefined;
        afterComma = true;
        continue;
      }
      if (c >= 128 || WORD_CHAR[c] === 0) return undefined;
      afterComma = false;
    }
    if (afterComma) return undefined;
    const text = line.slice(start, i);
    const op = OPERATOR_TEXT.get(text);
    out.push(op !== undefined ? { t: 'op', text: op, line: 0, column: start + 1 } : { t: 'word', text: intern(text), line: 0, column: start + 1 });
  }
  return out;
}

class NftLineParser extends EmbeddedActionsParser {
  constructor() {
    super(allTokens, { recoveryEnabled: true, maxLookahead: 2 });
    this.performSelfAnalysis();
  }

  /** line := (atom | ',' | '}')* — a stray `}` or `,` at top level is kept as an operator atom. */
  public line = this.RULE('line', (): Atom[] => {
    const out: Atom[] = [];
    this.MANY(() => {
      this.OR([
        { ALT: () => out.push(this.SUBRULE(this.atom)) },
        { ALT: () => out.push(tokenAtom(this.CONSUME(Comma))) },
        { ALT: () => out.push(tokenAtom(this.CONSUME(RCurly))) },
      ]);
    });
    return out;
  });

  private atom = this.RULE('atom', (): Atom => {
    return this.OR([
      { ALT: () => this.SUBRULE(this.group) },
      { ALT: () => tokenAtom(this.CONSUME(Word)) },
      { ALT: () => tokenAtom(this.CONSUME(StringLit)) },
      { ALT: () => tokenAtom(this.CONSUME(BadString)) },
      { ALT: () => tokenAtom(this.CONSUME(Operator)) },
      { ALT: () => tokenAtom(this.CONSUME(Semi)) },
      { ALT: () => tokenAtom(this.CONSUME(HandleComment)) },
      { ALT: () => tokenAtom(this.CONSUME(HashComment)) },
    ]);
  });

  /** group := '{' element? (',' element?)* '}' ; element := atom+ */
  private group = this.RULE('group', (): GroupAtom => {
    const open = this.CONSUME(LCurly);
    const elements: Atom[][] = [];
    let cur: Atom[] = [];
    this.MANY(() => {
      this.OR([
        { ALT: () => cur.push(this.SUBRULE(this.atom)) },
        {
          ALT: () => {
            this.CONSUME(Comma);
            this.ACTION(() => {
              if (cur.length) elements.push(cur);
              cur = [];
            });
          },
        },
      ]);
    });
    // The closing brace is optional here so a cut line still yields its elements; a missing
    // one is reported by the classifier (parse/unclosed-brace) at the opening brace.
    let close: IToken | undefined;
    this.OPTION(() => {
      close = this.CONSUME(RCurly);
    });
    return this.ACTION(() => {
      if (cur.length) elements.push(cur);
      return {
        t: 'group' as const,
        elements,
        line: (open.startLine ?? 1) - 1,
        column: open.startColumn ?? 1,
        unclosed: close === undefined || close.isInsertedInRecovery === true || !Number.isFinite(close.startOffset),
      };
    });
  });
}

export interface LineProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly expected?: string;
  readonly found?: string;
}

export interface LexedLine {
  readonly tokens: readonly IToken[];
  readonly problems: readonly LineProblem[];
}

let lexer: Lexer | undefined;
let parser: NftLineParser | undefined;

function getLexer(): Lexer {
  lexer ??= new Lexer(allTokens, { positionTracking: 'full', ensureOptimizations: true });
  return lexer;
}

/** Lex a logical line; lexing problems carry line offsets relative to the logical line. */
export function lexLine(text: string): LexedLine {
  const r = getLexer().tokenize(text);
  const problems = r.errors.map((e) => ({
    line: (e.line ?? 1) - 1,
    column: e.column ?? 1,
    message: `unexpected character ${JSON.stringify(text.substr(e.offset, 1))}`,
    found: text.substr(e.offset, e.length),
  }));
  return { tokens: r.tokens, problems };
}

/** Brace balance of already-lexed tokens (strings and comments are single tokens). */
export function braceBalance(tokens: readonly IToken[]): number {
  let b = 0;
  for (const t of tokens) {
    if (t.tokenType === LCurly) b++;
    else if (t.tokenType === RCurly) b--;
  }
  return b;
}

export function isWordToken(t: IToken | undefined, ...images: string[]): boolean {
  return t !== undefined && t.tokenType === Word && (images.length === 0 || images.includes(t.image));
}

export function isToken(t: IToken | undefined, type: 'lcurly' | 'rcurly' | 'handle' | 'comment'): boolean {
  if (!t) return false;
  // A switch, not a lookup object built per call: asked several times for every line.
  switch (type) {
    case 'lcurly':
      return t.tokenType === LCurly;
    case 'rcurly':
      return t.tokenType === RCurly;
    case 'handle':
      return t.tokenType === HandleComment;
    default:
      return t.tokenType === HashComment;
  }
}

/** Parse already-lexed tokens into atoms. Never throws. */
export function parseAtoms(tokens: readonly IToken[]): { atoms: Atom[]; problems: LineProblem[] } {
  parser ??= new NftLineParser();
  parser.input = tokens as IToken[];
  let atoms: Atom[] = [];
  try {
    atoms = parser.line() ?? [];
  } catch (e) {
    return { atoms: [], problems: [{ line: 0, column: 1, message: `internal parser failure: ${String(e)}` }] };
  }
  const problems: LineProblem[] = parser.errors.map((err) => {
    let tok: IToken = err.token;
    if (!Number.isFinite(tok.startOffset) || tok.tokenType === undefined || tok.image === '') {
      tok = (err as { previousToken?: IToken }).previousToken ?? tokens[tokens.length - 1] ?? tok;
      const line = (tok.endLine ?? tok.startLine ?? 1) - 1;
      const column = (tok.endColumn ?? tok.startColumn ?? 0) + 1;
      return { line, column, message: err.message, expected: expectedOf(err.message), found: 'end of line' };
    }
    return { line: (tok.startLine ?? 1) - 1, column: tok.startColumn ?? 1, message: err.message, expected: expectedOf(err.message), found: tok.image };
  });
  return { atoms, problems };
}

function expectedOf(message: string): string | undefined {
  const m = /Expecting[^-]*--> (.+?) <--/.exec(message) ?? /Expecting token of type --> (\w+) <--/.exec(message);
  return m ? m[1] : undefined;
}
