/**
 * Text as it streams in (issue 23): readers that can read a dump piece by piece take blocks of
 * whole lines, so kpx's memory follows what a reader keeps, not the size of the file.
 *
 * A block holds whole lines, each ending with `\n`, except that the very last block of an input
 * may end without one (a missing final newline). Blocks are as the file has them: a BOM at the
 * start and `\r` before `\n` are left for the reader (linesOf() removes both, as splitInput() does).
 */

export interface TextStream extends AsyncIterable<string> {
  /**
   * How far through the input the blocks handed out so far reach, 0..1, for progress; undefined
   * when the size is not known (stdin, a pipe, a `/proc` file).
   */
  fraction(): number | undefined;
}

/** A stream of one block: text already in memory. */
export function textStream(text: string): TextStream {
  return {
    fraction: () => 1,
    async *[Symbol.asyncIterator]() {
      if (text.length > 0) yield text;
    },
  };
}

/** One line and its 1-based number. */
export interface NumberedLine {
  readonly line: number;
  readonly text: string;
}

/**
 * The lines of a stream, one by one, without terminators (BOM and `\r` removed); line numbers
 * count across blocks. The simplest way for a reader to stream: `for await (const l of linesOf(s))`.
 */
export async function* linesOf(stream: AsyncIterable<string>): AsyncGenerator<NumberedLine> {
  let n = 0;
  let first = true;
  for await (let block of stream) {
    if (first) {
      first = false;
      if (block.charCodeAt(0) === 0xfeff) block = block.slice(1);
    }
    let start = 0;
    while (start < block.length) {
      let end = block.indexOf('\n', start);
      if (end < 0) end = block.length;
      let text = block.slice(start, end);
      if (text.includes('\r')) text = text.replace(/\r+$/, '').replace(/\r/g, '');
      yield { line: ++n, text };
      start = end + 1;
    }
  }
}
