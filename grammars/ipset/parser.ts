/**
 * One Chevrotain parser for both ipset formats, used line by line (a line is the unit of
 * recovery: a bad line gives one diagnostic and parsing goes on with the next one).
 *
 *   listLine   := field | header | members | member            (`ipset list`, `ipset list -t`)
 *   saveLine   := create | add                                 (`ipset save`, `ipset list -o save`)
 *   field      := (Name: | Type: | Revision: | Size in memory: | References: | Number of entries:) WORD
 *   header     := Header: WORD*                                (option arity: see options.ts)
 *   members    := Members:
 *   create     := create WORD(name) WORD(type) WORD*
 *   add        := add WORD(name) member
 *   member     := WORD(element) extra*
 *   extra      := timeout WORD | packets WORD | bytes WORD | comment STRING
 *               | skbmark WORD | skbprio WORD | skbqueue WORD | nomatch
 *
 * WORD is the AnyWord category: keywords are accepted as names/values. Values are not checked
 * here (a superset grammar); src/extract/ipset.ts validates them and warns.
 *
 * Partial results: when a line fails (e.g. a paste truncated mid-member), what was recognised
 * before the error is left in `partial`, so the caller can keep the element of a cut member.
 */
import {
  EmbeddedActionsParser,
  EOF,
  type IParserErrorMessageProvider,
  type IToken,
  type TokenType,
} from '../common/chevrotain.js';
import * as t from './tokens.js';

/** A token as the rest of kpx sees it: text plus 1-based line and columns (end exclusive). */
export interface Tok {
  readonly text: string;
  readonly line: number;
  readonly column: number;
  readonly endColumn: number;
}

export type ExtraName = 'timeout' | 'packets' | 'bytes' | 'comment' | 'skbmark' | 'skbprio' | 'skbqueue' | 'nomatch';

export interface ExtraSyntax {
  readonly name: ExtraName;
  readonly key: Tok;
  /** For `comment`, the text between the quotes. */
  readonly value?: Tok;
  /** `comment "…` with no closing quote (truncated line). */
  readonly unterminated?: boolean;
}

export interface MemberSyntax {
  readonly element: Tok;
  readonly extras: readonly ExtraSyntax[];
}

export type FieldName = 'name' | 'type' | 'revision' | 'size' | 'references' | 'entries';

export type ListLineSyntax =
  | { readonly kind: 'field'; readonly field: FieldName; readonly label: Tok; readonly value: Tok }
  | { readonly kind: 'header'; readonly label: Tok; readonly words: readonly Tok[] }
  | { readonly kind: 'members'; readonly label: Tok }
  | { readonly kind: 'member'; readonly member: MemberSyntax };

export type SaveLineSyntax =
  | { readonly kind: 'create'; readonly keyword: Tok; readonly name: Tok; readonly type: Tok; readonly words: readonly Tok[] }
  | { readonly kind: 'add'; readonly keyword: Tok; readonly name: Tok; readonly member: MemberSyntax };

/** What a failed line got as far as recognising. */
export interface Partial {
  setName?: Tok;
  element?: Tok;
  extras: ExtraSyntax[];
}

export function tok(token: IToken): Tok {
  const column = token.startColumn ?? 1;
  return { text: token.image, line: token.startLine ?? 0, column, endColumn: column + token.image.length };
}

const FIELD_OF: ReadonlyMap<TokenType, FieldName> = new Map([
  [t.NameLabel, 'name'],
  [t.TypeLabel, 'type'],
  [t.RevisionLabel, 'revision'],
  [t.SizeLabel, 'size'],
  [t.ReferencesLabel, 'references'],
  [t.EntriesLabel, 'entries'],
]);

const DISPLAY: ReadonlyMap<TokenType, string> = new Map([
  [t.AnyWord, 'a value'],
  [t.Word, 'a value'],
  [t.QuotedString, 'a double-quoted string'],
  [t.Unterminated, 'a double-quoted string'],
  [t.NameLabel, "'Name:'"],
  [t.TypeLabel, "'Type:'"],
  [t.RevisionLabel, "'Revision:'"],
  [t.HeaderLabel, "'Header:'"],
  [t.SizeLabel, "'Size in memory:'"],
  [t.ReferencesLabel, "'References:'"],
  [t.EntriesLabel, "'Number of entries:'"],
  [t.MembersLabel, "'Members:'"],
  [EOF, 'end of line'],
]);

function display(tt: TokenType): string {
  return DISPLAY.get(tt) ?? `'${tt.name.toLowerCase()}'`;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/**
 * Error messages carry only the "expected" part; the caller adds position and what was found.
 */
const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected }) => display(expected),
  buildNotAllInputParsedMessage: () => 'end of line',
  buildNoViableAltMessage: ({ expectedPathsPerAlt }) =>
    `one of ${unique(expectedPathsPerAlt.flatMap((alt) => alt.map((path) => display(path[0])))).join(', ')}`,
  buildEarlyExitMessage: ({ expectedIterationPaths }) =>
    `one of ${unique(expectedIterationPaths.map((path) => display(path[0]))).join(', ')}`,
};

class IpsetParser extends EmbeddedActionsParser {
  partial: Partial = { extras: [] };

  constructor() {
    super(t.allTokens, { recoveryEnabled: false, errorMessageProvider: messages, maxLookahead: 2 });
    this.performSelfAnalysis();
  }

  public listLine = this.RULE('listLine', (): ListLineSyntax | undefined => {
    return this.OR([
      { ALT: () => this.SUBRULE(this.field) },
      { ALT: () => this.SUBRULE(this.header) },
      { ALT: () => this.SUBRULE(this.membersLine) },
      { ALT: () => ({ kind: 'member' as const, member: this.SUBRULE(this.member) }) },
    ]);
  });

  public saveLine = this.RULE('saveLine', (): SaveLineSyntax | undefined => {
    return this.OR([{ ALT: () => this.SUBRULE(this.create) }, { ALT: () => this.SUBRULE(this.add) }]);
  });

  private field = this.RULE('field', (): ListLineSyntax => {
    const label = this.OR([
      { ALT: () => this.CONSUME(t.NameLabel) },
      { ALT: () => this.CONSUME(t.TypeLabel) },
      { ALT: () => this.CONSUME(t.RevisionLabel) },
      { ALT: () => this.CONSUME(t.SizeLabel) },
      { ALT: () => this.CONSUME(t.ReferencesLabel) },
      { ALT: () => this.CONSUME(t.EntriesLabel) },
    ]);
    const value = this.CONSUME(t.AnyWord);
    return this.ACTION(() => ({ kind: 'field' as const, field: FIELD_OF.get(label.tokenType)!, label: tok(label), value: tok(value) }));
  });

  private header = this.RULE('header', (): ListLineSyntax => {
    const label = this.CONSUME(t.HeaderLabel);
    const words: Tok[] = [];
    this.MANY(() => {
      const w = this.CONSUME(t.AnyWord);
      this.ACTION(() => words.push(tok(w)));
    });
    return this.ACTION(() => ({ kind: 'header' as const, label: tok(label), words }));
  });

  private membersLine = this.RULE('membersLine', (): ListLineSyntax => {
    const label = this.CONSUME(t.MembersLabel);
    return this.ACTION(() => ({ kind: 'members' as const, label: tok(label) }));
  });

  private create = this.RULE('create', (): SaveLineSyntax => {
    const keyword = this.CONSUME(t.Create);
    const name = this.CONSUME1(t.AnyWord);
    this.ACTION(() => (this.partial.setName = tok(name)));
    const type = this.CONSUME2(t.AnyWord);
    const words: Tok[] = [];
    this.MANY(() => {
      const w = this.CONSUME3(t.AnyWord);
      this.ACTION(() => words.push(tok(w)));
    });
    return this.ACTION(() => ({ kind: 'create' as const, keyword: tok(keyword), name: tok(name), type: tok(type), words }));
  });

  private add = this.RULE('add', (): SaveLineSyntax => {
    const keyword = this.CONSUME(t.Add);
    const name = this.CONSUME(t.AnyWord);
    this.ACTION(() => (this.partial.setName = tok(name)));
    const member = this.SUBRULE(this.member);
    return this.ACTION(() => ({ kind: 'add' as const, keyword: tok(keyword), name: tok(name), member }));
  });

  private member = this.RULE('member', (): MemberSyntax => {
    const element = this.CONSUME(t.AnyWord);
    this.ACTION(() => (this.partial.element = tok(element)));
    const extras = this.partial.extras;
    this.MANY(() => {
      const extra = this.SUBRULE(this.extra);
      this.ACTION(() => extras.push(extra));
    });
    return this.ACTION(() => ({ element: tok(element), extras: [...extras] }));
  });

  private valued(name: ExtraName, key: TokenType, idx: number): ExtraSyntax {
    const k = this.consume(idx, key);
    const v = this.consume(idx, t.AnyWord);
    return this.ACTION(() => ({ name, key: tok(k), value: tok(v) }));
  }

  private extra = this.RULE('extra', (): ExtraSyntax => {
    return this.OR([
      { ALT: () => this.valued('timeout', t.Timeout, 1) },
      { ALT: () => this.valued('packets', t.Packets, 2) },
      { ALT: () => this.valued('bytes', t.Bytes, 3) },
      { ALT: () => this.valued('skbmark', t.Skbmark, 4) },
      { ALT: () => this.valued('skbprio', t.Skbprio, 5) },
      { ALT: () => this.valued('skbqueue', t.Skbqueue, 6) },
      {
        ALT: () => {
          const k = this.CONSUME(t.Comment);
          return this.OR1([
            {
              ALT: () => {
                const s = this.CONSUME(t.QuotedString);
                return this.ACTION(() => ({ name: 'comment' as const, key: tok(k), value: unquote(tok(s), true) }));
              },
            },
            {
              ALT: () => {
                const s = this.CONSUME(t.Unterminated);
                return this.ACTION(() => ({ name: 'comment' as const, key: tok(k), value: unquote(tok(s), false), unterminated: true }));
              },
            },
          ]);
        },
      },
      {
        ALT: () => {
          const k = this.CONSUME(t.Nomatch);
          return this.ACTION(() => ({ name: 'nomatch' as const, key: tok(k) }));
        },
      },
    ]);
  });

  /** Reset for a new line. */
  begin(tokens: IToken[]): void {
    this.partial = { extras: [] };
    this.input = tokens;
  }
}

function unquote(s: Tok, closed: boolean): Tok {
  return { ...s, text: s.text.slice(1, closed ? -1 : undefined), column: s.column + 1, endColumn: closed ? s.endColumn - 1 : s.endColumn };
}

let instance: IpsetParser | undefined;

/** The one parser instance (created on first use; Chevrotain's self-analysis is not free). */
export function ipsetParser(): IpsetParser {
  instance ??= new IpsetParser();
  return instance;
}

export type { IpsetParser };
