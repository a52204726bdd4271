/**
 * Syntax of `ipset list` (plain and terse) and `ipset save` (FORMATS.md §2): lines → blocks /
 * create+add entries with token positions. No value interpretation here (addresses, ports,
 * numbers): that is src/extract/ipset.ts. Never throws on user input.
 */
import { Lexer, type ILexingResult, type IRecognitionException, type IToken, EOF } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';
import { splitOptions, type OptionSyntax } from './options.js';
import { ipsetParser, type ListLineSyntax, type MemberSyntax, type SaveLineSyntax, type Tok } from './parser.js';
import { allTokens } from './tokens.js';
import { parseIpsetXmlLines } from './xml.js';
import type { IpsetListSyntax, IpsetSaveSyntax, MutableBlock, SaveEntrySyntax, SkippedLine } from './syntax.js';

export type { ExtraName, ExtraSyntax, FieldName, MemberSyntax, Tok } from './parser.js';
export type { OptionSyntax } from './options.js';
export { FLAG_OPTIONS, VALUED_OPTIONS, splitOptions } from './options.js';

export type { SkippedLine, HeaderSyntax, ListBlockSyntax, IpsetListSyntax, SaveEntrySyntax, IpsetSaveSyntax } from './syntax.js';

// ---------------------------------------------------------------------------------------------

let lexer: Lexer | undefined;
function ipsetLexer(): Lexer {
  // Only \n ends a line (\r is stripped by splitInput; U+2028/2029 are plain spaces in dumps).
  lexer ??= new Lexer(allTokens, { positionTracking: 'full', ensureOptimizations: true, lineTerminatorsPattern: /\n/g, lineTerminatorCharacters: ['\n'] });
  return lexer;
}

/** ipset's own stderr (`ipset v7.17: Kernel error received: …`, protocol-version warnings). */
const STDERR = /^\s*(ipset v\d[\w.]*:\s|Warning: Kernel support protocol versions?\b|ipset: (?:command not found|error))/;
/** `ipset restore` commands that `ipset save` never prints. */
const RESTORE_ONLY = /^\s*(-exist|-!|del|flush|destroy|swap|rename|test|version|help|-[A-Z])(\s|$)/;
/** `ipset list -o xml`. */
const XML_START = /^\s*(<\?xml\b|<ipsets>|<ipset\s+name=)/;

interface Prepared {
  readonly lines: readonly string[];
  readonly tokensByLine: readonly (IToken[] | undefined)[];
  readonly lastLineTruncated: boolean;
  readonly diagnostics: Diagnostic[];
}

function prepare(text: string, file: string): Prepared {
  const input = splitInput(text);
  const lines = input.lines;
  const diagnostics: Diagnostic[] = [];
  const lexed: ILexingResult = ipsetLexer().tokenize(lines.join('\n'));
  for (const e of lexed.errors) {
    diagnostics.push(
      diagnostic('error', 'parse/unexpected-character', `unexpected character ${JSON.stringify(printable(text.substr(e.offset, 1)))}`, file, e.line ?? 0, e.column ?? 0, {
        found: printable(text.substr(e.offset, e.length)),
      }),
    );
  }
  const tokensByLine: (IToken[] | undefined)[] = new Array(lines.length + 1);
  for (const token of lexed.tokens) {
    const n = token.startLine ?? 0;
    (tokensByLine[n] ??= []).push(token);
  }
  return { lines, tokensByLine, lastLineTruncated: input.missingFinalNewline, diagnostics };
}

/** Describe Chevrotain's error as a kpx diagnostic anchored on the offending token. */
function parseDiagnostic(
  e: IRecognitionException,
  line: number,
  text: string,
  tokens: readonly IToken[],
  file: string,
  truncated: boolean,
  what: string,
  afterMember: boolean,
): Diagnostic {
  const atEnd = e.token.tokenType === EOF;
  const last = tokens[tokens.length - 1];
  const column = atEnd ? (last ? (last.startColumn ?? 1) + last.image.length : text.length + 1) : (e.token.startColumn ?? 1);
  const found = atEnd ? 'end of line' : `'${printable(e.token.image, 40)}'`;
  // A complete member followed by an unknown word: name what may follow a member.
  const expected = afterMember && e.name === 'NotAllInputParsedException' ? MEMBER_FOLLOW : e.message;
  if (truncated) {
    return diagnostic('warning', 'input/truncated-line', `${what}: last line looks truncated (no final newline): expected ${expected}, found ${found}`, file, line, column, {
      expected,
      found,
    });
  }
  return diagnostic('error', atEnd ? 'parse/unexpected-end' : 'parse/unexpected-token', `${what}: expected ${expected}, found ${found}`, file, line, column, {
    expected,
    found,
  });
}

const MEMBER_FOLLOW = 'one of timeout, packets, bytes, comment, skbmark, skbprio, skbqueue, nomatch, end of line';

/**
 * A user's trailing `# annotation` after the content (FORMATS.md §6.1): cut the tokens there and
 * say so. Tokens before `from` (set names, elements) may legitimately start with `#`.
 */
function stripAnnotation(tokens: IToken[], from: number, file: string, diagnostics: Diagnostic[]): IToken[] {
  for (let k = from; k < tokens.length; k++) {
    const tk = tokens[k];
    if (tk.image.startsWith('#') && tk.tokenType.name === 'Word') {
      diagnostics.push(diagnostic('info', 'input/annotation', 'ignored trailing # annotation', file, tk.startLine ?? 0, tk.startColumn ?? 0, { found: `'${printable(tk.image, 40)}'` }));
      return tokens.slice(0, k);
    }
  }
  return tokens;
}

function noiseReason(text: string): string | undefined {
  const kind = noiseKind(text);
  if (kind) return kind;
  if (STDERR.test(text)) return 'stderr';
  if (/^\s*#/.test(text)) return 'comment';
  return undefined;
}

function checkMember(member: MemberSyntax, file: string, truncated: boolean, diagnostics: Diagnostic[]): void {
  for (const x of member.extras) {
    if (x.unterminated && x.value) {
      diagnostics.push(
        truncated
          ? diagnostic('warning', 'input/truncated-line', 'comment is cut off (last line has no final newline)', file, x.value.line, x.value.column - 1)
          : diagnostic('error', 'parse/unterminated-string', 'comment has no closing double quote', file, x.value.line, x.value.column - 1, {
              expected: '\'"\'',
              found: 'end of line',
            }),
      );
    }
  }
}

function checkOptions(options: readonly OptionSyntax[], file: string, truncated: boolean, diagnostics: Diagnostic[]): void {
  for (const o of options) {
    if (!o.missingValue) continue;
    diagnostics.push(
      diagnostic(truncated ? 'warning' : 'error', truncated ? 'input/truncated-line' : 'parse/unexpected-end', `option '${o.key.text}' needs a value`, file, o.key.line, o.key.endColumn, {
        expected: `a value for '${o.key.text}'`,
        found: 'end of line',
      }),
    );
  }
}

// ---------------------------------------------------------------------------------------------


/** `ipset list` / `ipset -L` / `ipset list -t` (and `ipset list -o xml`, see xml.ts). */
export function parseIpsetList(text: string, file: string): IpsetListSyntax {
  const { lines, tokensByLine, lastLineTruncated, diagnostics } = prepare(text, file);
  const r = new ListReader(file, diagnostics);
  const parser = ipsetParser();
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i];
    if (raw.trim() === '') {
      r.inMembers = false;
      continue;
    }
    if (r.noise(n, raw)) continue;
    if (r.blocks.length === 0 && XML_START.test(raw)) {
      const xml = parseIpsetXmlLines(lines, i, file, lastLineTruncated);
      return { variant: 'xml', blocks: xml.blocks, skipped: [...r.skipped, ...xml.skipped], diagnostics: [...diagnostics, ...xml.diagnostics] };
    }
    const truncated = lastLineTruncated && n === lines.length;
    const tokens = stripAnnotation(tokensByLine[n] ?? [], 1, file, diagnostics);
    parser.begin(tokens);
    const node = parser.listLine();
    if (parser.errors.length > 0 || node === undefined) r.failed(n, raw, tokens, truncated, parser.errors[0], node?.kind === 'member', parser.partial);
    else r.line(n, raw, node, truncated);
  }
  return { variant: 'plain', blocks: r.blocks, skipped: r.skipped, diagnostics };
}

/** The blocks of a plain listing, read line by line. */
class ListReader {
  readonly skipped: SkippedLine[] = [];
  readonly blocks: MutableBlock[] = [];
  private current: MutableBlock | undefined;
  inMembers = false;

  constructor(
    private readonly file: string,
    private readonly diagnostics: Diagnostic[],
  ) {}

  private skip(n: number, raw: string, kind: SkippedLine['kind'], reason: string): void {
    this.skipped.push({ line: n, text: raw, kind, reason });
  }

  private orphan(n: number, raw: string, reason: string): void {
    this.skip(n, raw, 'unsupported', reason);
    this.diagnostics.push(diagnostic('warning', 'ipset/orphan-line', `${reason}; line skipped`, this.file, n, indentLength(raw) + 1, { found: `'${printable(raw.trim(), 40)}'` }));
  }

  noise(n: number, raw: string): boolean {
    const noise = noiseReason(raw);
    if (!noise) return false;
    this.skip(n, raw, 'noise', noise);
    this.diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise} line`, this.file, n, indentLength(raw) + 1, { found: `'${printable(raw.trim(), 40)}'` }));
    return true;
  }

  /** A line the parser refused: reported; on a cut last line, the member read so far is kept. */
  failed(n: number, raw: string, tokens: readonly IToken[], truncated: boolean, e: IRecognitionException | undefined, afterMember: boolean, partial: { readonly element?: Tok; readonly extras: MemberSyntax['extras'] }): void {
    if (e) this.diagnostics.push(parseDiagnostic(e, n, raw, tokens, this.file, truncated, this.inMembers ? 'member' : 'ipset list line', afterMember));
    if (truncated && this.inMembers && this.current && partial.element && !isLabel(tokens[0])) {
      const member: MemberSyntax = { element: partial.element, extras: partial.extras };
      checkMember(member, this.file, truncated, this.diagnostics);
      this.current.members.push(member);
    } else this.skip(n, raw, 'unsupported', e ? `${e.message} expected` : 'not understood');
  }

  line(n: number, raw: string, node: ListLineSyntax, truncated: boolean): void {
    switch (node.kind) {
      case 'field':
        this.field(n, raw, node);
        return;
      case 'header': {
        if (!this.current) {
          this.orphan(n, raw, `'Header:' outside a set block (no 'Name:' line before it)`);
          return;
        }
        const options = splitOptions(node.words);
        checkOptions(options, this.file, truncated, this.diagnostics);
        this.current.header = { label: node.label, options };
        return;
      }
      case 'members':
        if (!this.current) {
          this.orphan(n, raw, `'Members:' outside a set block (no 'Name:' line before it)`);
          return;
        }
        this.current.membersLine = n;
        this.inMembers = true;
        return;
      case 'member':
        if (!this.current || !this.inMembers) {
          this.orphan(n, raw, this.current ? `member line outside the 'Members:' section of set ${printable(this.current.name.text, 40)}` : `member line before any 'Name:' block`);
          return;
        }
        checkMember(node.member, this.file, truncated, this.diagnostics);
        this.current.members.push(node.member);
        return;
    }
  }

  /** `Name:` starts a block; `Type:`, `Revision:`, `Size in memory:` … are its fields. */
  private field(n: number, raw: string, node: Extract<ListLineSyntax, { kind: 'field' }>): void {
    const current = this.current;
    if (node.field === 'name') {
      this.current = { line: n, name: node.value, members: [] };
      this.blocks.push(this.current);
      this.inMembers = false;
      return;
    }
    if (!current) {
      this.orphan(n, raw, `'${node.label.text}' outside a set block (no 'Name:' line before it)`);
      return;
    }
    if (current[node.field] !== undefined || current.membersLine !== undefined) {
      this.skip(n, raw, 'unsupported', `duplicate or misplaced '${node.label.text}'`);
      this.diagnostics.push(
        diagnostic('error', 'ipset/unexpected-field', `'${node.label.text}' repeated or after 'Members:' in set ${printable(current.name.text, 40)}`, this.file, n, node.label.column, {
          expected: this.inMembers ? 'a member' : 'the next header field',
          found: `'${node.label.text}'`,
        }),
      );
      return;
    }
    current[node.field] = node.value;
  }
}

function isLabel(token: IToken | undefined): boolean {
  return token !== undefined && token.tokenType.CATEGORIES?.some((c) => c.name === 'Label') === true;
}

function indentLength(raw: string): number {
  return raw.length - raw.trimStart().length;
}

/** `ipset save` / `ipset list -o save`. */
export function parseIpsetSave(text: string, file: string): IpsetSaveSyntax {
  const { lines, tokensByLine, lastLineTruncated, diagnostics } = prepare(text, file);
  const skipped: SkippedLine[] = [];
  const entries: SaveEntrySyntax[] = [];
  const parser = ipsetParser();
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i];
    if (raw.trim() === '') continue;
    const noise = noiseReason(raw);
    if (noise) {
      skipped.push({ line: n, text: raw, kind: 'noise', reason: noise });
      diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise} line`, file, n, indentLength(raw) + 1, { found: `'${printable(raw.trim(), 40)}'` }));
      continue;
    }
    const restore = RESTORE_ONLY.exec(raw);
    if (restore) {
      skipped.push({ line: n, text: raw, kind: 'unsupported', reason: `'${restore[1]}' is an ipset restore command, not save output` });
      diagnostics.push(
        diagnostic('warning', 'ipset/unsupported-command', `'${restore[1]}' is an ipset restore command that ipset save never prints; line skipped`, file, n, indentLength(raw) + 1, {
          expected: "'create' or 'add'",
          found: `'${restore[1]}'`,
        }),
      );
      continue;
    }
    const truncated = lastLineTruncated && n === lines.length;
    const tokens = stripAnnotation(tokensByLine[n] ?? [], 3, file, diagnostics);
    parser.begin(tokens);
    const node: SaveLineSyntax | undefined = parser.saveLine();
    if (parser.errors.length > 0 || node === undefined) {
      const e = parser.errors[0];
      if (e) diagnostics.push(parseDiagnostic(e, n, raw, tokens, file, truncated, 'ipset save line', node?.kind === 'add'));
      const partial = parser.partial;
      if (truncated && tokens[0]?.image === 'add' && partial.setName && partial.element) {
        const member: MemberSyntax = { element: partial.element, extras: partial.extras };
        checkMember(member, file, truncated, diagnostics);
        entries.push({ kind: 'add', line: n, text: raw, name: partial.setName, member });
      } else skipped.push({ line: n, text: raw, kind: 'unsupported', reason: e ? `${e.message} expected` : 'not understood' });
      continue;
    }
    if (node.kind === 'create') {
      const options = splitOptions(node.words);
      checkOptions(options, file, truncated, diagnostics);
      entries.push({ kind: 'create', line: n, text: raw, name: node.name, type: node.type, options });
    } else {
      checkMember(node.member, file, truncated, diagnostics);
      entries.push({ kind: 'add', line: n, text: raw, name: node.name, member: node.member });
    }
  }
  return { entries, skipped, diagnostics };
}
