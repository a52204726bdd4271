/**
 * One `ip addr` output line → segments. Embedded actions, one instance, reused.
 *
 *   line     := header | segment
 *   header   := IndexTok Word (AngleList words | segment)? (Backslash segment?)*   -- `2: eth0@if5: <…> mtu …` / `-o` records
 *   segment  := Inet words | LinkType words | ValidLft words | Altname words | Word words   -- the last: -d/-s details, -br rows
 *   words    := AnyWord*
 */
import { EmbeddedActionsParser, Lexer, type IToken } from '../common/chevrotain.js';
import * as t from './tokens.js';

export interface Tok {
  readonly text: string;
  readonly column: number;
  readonly endColumn: number;
}

export type SegmentKind = 'addr' | 'link' | 'lft' | 'altname' | 'other';

export interface Segment {
  readonly kind: SegmentKind;
  /** The first word (`inet6`, `link/ether`, `valid_lft`, `altname`, or the unknown word). */
  readonly head: Tok;
  readonly words: readonly Tok[];
}

export interface AddrLineNode {
  /** Present on an interface record's first line (`2: eth0: …`, or each `-o` line). */
  readonly header?: { readonly index: Tok; readonly name: Tok; readonly flags?: Tok; readonly words: readonly Tok[] };
  readonly segments: readonly Segment[];
}

export interface LineSyntaxError {
  readonly column: number;
  readonly message: string;
  readonly expected?: string;
  readonly found?: string;
}

const tok = (x: IToken): Tok => ({ text: x.image, column: x.startOffset + 1, endColumn: x.startOffset + 1 + x.image.length });

class IpAddrLineParser extends EmbeddedActionsParser {
  constructor() {
    super(t.allTokens, { recoveryEnabled: false, maxLookahead: 1 });
    this.performSelfAnalysis();
  }

  public line = this.RULE('line', (): AddrLineNode => {
    return this.OR([{ ALT: () => this.SUBRULE(this.header) }, { ALT: () => ({ segments: [this.SUBRULE1(this.segment)] }) }]);
  });

  private header = this.RULE('header', (): AddrLineNode => {
    const index = this.CONSUME(t.IndexTok);
    const name = this.CONSUME(t.Word);
    const segments: Segment[] = [];
    let flags: IToken | undefined;
    let words: Tok[] = [];
    this.OPTION(() => {
      this.OR([
        {
          ALT: () => {
            flags = this.CONSUME(t.AngleList);
            words = this.SUBRULE(this.words);
          },
        },
        { ALT: () => segments.push(this.SUBRULE(this.segment)) },
      ]);
    });
    this.MANY(() => {
      this.CONSUME(t.Backslash);
      this.OPTION1(() => segments.push(this.SUBRULE2(this.segment)));
    });
    return this.ACTION(() => {
      const header: { index: Tok; name: Tok; flags?: Tok; words: Tok[] } = { index: tok(index), name: tok(name), words };
      if (flags) header.flags = tok(flags);
      return { header, segments };
    });
  });

  private segment = this.RULE('segment', (): Segment => {
    const head = this.OR([
      { ALT: () => this.CONSUME(t.Inet) },
      { ALT: () => this.CONSUME(t.LinkType) },
      { ALT: () => this.CONSUME(t.ValidLft) },
      { ALT: () => this.CONSUME(t.Altname) },
      { ALT: () => this.CONSUME(t.Word) },
    ]);
    const words = this.SUBRULE(this.words);
    return this.ACTION(() => {
      const kind: SegmentKind =
        head.tokenType === t.Inet ? 'addr' : head.tokenType === t.LinkType ? 'link' : head.tokenType === t.ValidLft ? 'lft' : head.tokenType === t.Altname ? 'altname' : 'other';
      return { kind, head: tok(head), words };
    });
  });

  private words = this.RULE('words', (): Tok[] => {
    const out: Tok[] = [];
    this.MANY(() => {
      const w = this.CONSUME(t.AnyWord);
      this.ACTION(() => out.push(tok(w)));
    });
    return out;
  });
}

let lexer: Lexer | undefined;
let parser: IpAddrLineParser | undefined;

export function parseAddrLine(text: string): { node?: AddrLineNode; errors: LineSyntaxError[] } {
  if (!lexer) lexer = new Lexer(t.allTokens, { positionTracking: 'onlyOffset', ensureOptimizations: true });
  if (!parser) parser = new IpAddrLineParser();
  const lexed = lexer.tokenize(text);
  if (lexed.errors.length) {
    return {
      errors: lexed.errors.map((e) => ({ column: e.offset + 1, message: `unexpected character ${JSON.stringify(text.slice(e.offset, e.offset + 1))}`, found: text.slice(e.offset, e.offset + e.length) })),
    };
  }
  parser.input = lexed.tokens;
  const node = parser.line();
  if (parser.errors.length) {
    return {
      errors: parser.errors.map((e) => ({
        column: Number.isFinite(e.token.startOffset) ? e.token.startOffset + 1 : text.replace(/\s+$/, '').length + 1,
        message: e.message,
        expected: e.context.ruleStack.includes('header') ? 'an interface record: `INDEX: NAME: <FLAGS> …` or `INDEX: NAME inet …`' : 'an ip addr line',
        found: e.token.image === '' ? 'end of line' : e.token.image,
      })),
    };
  }
  return { node, errors: [] };
}
