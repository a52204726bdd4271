/**
 * Line grammar of kubectl's text output: a line is either a Markdown table row (cells between
 * `|`) or a run of words. Both keep every word's columns, which ./index.ts needs to put words in
 * the header's columns and to tell a describe key from its value.
 *
 *   markdownRow := '|' ( word* '|' )* word*
 *   wordsLine   := ( word | '|' )+
 */
import { EmbeddedActionsParser, type IToken } from '../common/chevrotain.js';
import * as T from './tokens.js';

/** A word or cell of a line: its text and 1-based columns (end exclusive). */
export interface Span {
  readonly text: string;
  readonly column: number;
  readonly end: number;
}

function span(t: IToken): Span {
  return { text: t.image, column: t.startOffset + 1, end: t.startOffset + 1 + t.image.length };
}

/** Words of one cell joined as they were written (the line's own text between the first and last word). */
export function joinSpans(line: string, words: readonly Span[]): Span | undefined {
  if (words.length === 0) return undefined;
  const column = words[0].column;
  const end = words[words.length - 1].end;
  return { text: line.slice(column - 1, end - 1), column, end };
}

export class KubectlLineParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 2 });
    this.performSelfAnalysis();
  }

  /** The words of each cell of a `| a | b |` row (an empty cell is an empty list). */
  public markdownRow = this.RULE('markdownRow', (): Span[][] => {
    const cells: Span[][] = [];
    let current: Span[] = [];
    this.CONSUME(T.Pipe);
    this.MANY(() => {
      this.OR([
        {
          ALT: () => {
            const w = this.CONSUME(T.Word);
            this.ACTION(() => current.push(span(w)));
          },
        },
        {
          ALT: () => {
            this.CONSUME1(T.Pipe);
            this.ACTION(() => {
              cells.push(current);
              current = [];
            });
          },
        },
      ]);
    });
    this.ACTION(() => {
      if (current.length > 0) cells.push(current);
    });
    return cells;
  });

  /** Every word of a plain line, a `|` inside it kept as a word. */
  public wordsLine = this.RULE('wordsLine', (): Span[] => {
    const out: Span[] = [];
    this.AT_LEAST_ONE(() => {
      const t = this.OR([{ ALT: () => this.CONSUME(T.Word) }, { ALT: () => this.CONSUME(T.Pipe) }]);
      this.ACTION(() => out.push(span(t)));
    });
    return out;
  });
}
