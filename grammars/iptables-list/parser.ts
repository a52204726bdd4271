/**
 * Line grammar of an `iptables -L` rule line: a run of words, comments and quoted strings, each
 * kept with its columns. Which word is which column (num, pkts, bytes, target, prot, opt, in, out,
 * source, destination) is decided by ./index.ts from the listing's column header; what follows the
 * destination is the matches' and target's printed text, read by src/extract/iptables-list-print.ts.
 *
 *   ruleLine := ( word | comment | quoted )+
 */
import { EmbeddedActionsParser, type IToken } from '../common/chevrotain.js';
import * as T from './tokens.js';

/** A token of a line: its text, 1-based columns (end exclusive) and kind. */
export interface Tok {
  readonly text: string;
  readonly column: number;
  readonly end: number;
  readonly kind: 'word' | 'comment' | 'quoted';
  /** The line, when not the row's own (the rest of a row the paste wrapped onto the next line). */
  readonly line?: number;
}

function tok(t: IToken): Tok {
  const kind = t.tokenType === T.Comment ? 'comment' : t.tokenType === T.Quoted ? 'quoted' : 'word';
  return { text: t.image, column: t.startOffset + 1, end: t.startOffset + 1 + t.image.length, kind };
}

export class ListingLineParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 1 });
    this.performSelfAnalysis();
  }

  public ruleLine = this.RULE('ruleLine', (): Tok[] => {
    const out: Tok[] = [];
    this.AT_LEAST_ONE(() => {
      const t = this.OR([{ ALT: () => this.CONSUME(T.Comment) }, { ALT: () => this.CONSUME(T.Quoted) }, { ALT: () => this.CONSUME(T.Word) }]);
      this.ACTION(() => out.push(tok(t)));
    });
    return out;
  });
}
