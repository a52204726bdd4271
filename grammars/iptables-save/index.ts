/**
 * iptables-save / ip6tables-save / iptables-restore input → a lossless document of entries,
 * one per non-blank line. Each line is lexed and parsed on its own, so a bad line becomes one
 * diagnostic and an `unsupported` entry, and the next line is read as usual.
 */
import type { IToken, ILexingError, Lexer } from '../common/chevrotain.js';
import { diagnostic, type Diagnostic } from '../common/source.js';
import type { ParseProgress } from '../common/format.js';
import { indentOf, noiseKind } from '../common/text.js';
import type { TextStream } from '../common/stream.js';
import { lineTools, type LineReader } from './parser.js';
import { refineOptions, resetInterned } from './tokens.js';
import type { DocumentEntry, LineSyntax, RuleItem } from '../common/iptables-syntax.js';
import { LISTING, readOtherLine, readTokens, type EmitOther, type EmitSyntax, type LineOut } from './lines.js';

export * from '../common/iptables-syntax.js';

export interface IptablesSaveDocument {
  readonly entries: readonly DocumentEntry[];
  readonly diagnostics: readonly Diagnostic[];
  readonly lineCount: number;
}


export function parseIptablesSave(text: string, file: string): IptablesSaveDocument {
  const entries: DocumentEntry[] = [];
  const { diagnostics, lineCount } = scanIptablesSave(text, file, {
    syntax: (line, column, text, syntax) => {
      entries.push({ kind: 'syntax', line, column, text, syntax });
    },
    entry: (e) => {
      entries.push(e);
    },
  });
  return { entries, diagnostics, lineCount };
}

/** Receives what scanIptablesSave() reads, in line order. */
export interface IptablesSaveSink {
  /** A line the grammar read (most lines: no entry object is made for them). */
  syntax(line: number, column: number, text: string, syntax: LineSyntax): void;
  /** Any other entry: comments, paste noise, unsupported lines. */
  entry(e: Exclude<DocumentEntry, { kind: 'syntax' }>): void;
  /**
   * A reading of a plain rule line without tokens (issue 33: kube-proxy's own shapes), or
   * undefined when the line needs the grammar. Called on lines as they are classified, before
   * the lines before them are handed over: it must depend on the text alone. What it returns is
   * handed back, in line order, to decoded().
   */
  decode?(text: string): unknown;
  /**
   * A line decode() read (no indentation: `column` is 1 and `text` the whole line). False when
   * the consumer wants the grammar's reading of it after all (then syntax() gets it).
   */
  decoded?(line: number, column: number, text: string, value: unknown): boolean;
}


/** What scanIptablesSave() reports besides the entries it hands over one by one. */
export interface IptablesSaveScan {
  readonly diagnostics: readonly Diagnostic[];
  readonly lineCount: number;
}

/** Lines lexed together in one lexer call (their tokens are then parsed line by line). */
const CHUNK_LINES = 512;

/** How often a long scan says how far it is. */
const PROGRESS_LINES = CHUNK_LINES * 32;

const enum LineKind {
  Skip,
  Lex,
  Other,
  /** Read by the sink's decode(), without tokens. */
  Decoded,
}

const NOTHING_LEXED: { tokens: IToken[]; errors: ILexingError[] } = { tokens: [], errors: [] };

/**
 * The same reading as parseIptablesSave(), entry by entry in line order, without keeping the
 * document: a consumer (the extractor) can keep only what it needs.
 *
 * Speed (issue 8): lines are lexed in chunks of CHUNK_LINES with one lexer call (the per-call
 * set-up of Chevrotain's lexer costs as much as lexing a short line), then each line is parsed
 * on its own over its slice of the tokens, so one bad line still gives one diagnostic.
 */
export function scanIptablesSave(text: string, file: string, sink: IptablesSaveSink, progress?: ParseProgress): IptablesSaveScan {
  const scanner = new IptablesSaveScanner(file, sink, progress === undefined ? undefined : (done) => progress(done, total));
  // Only the whole text's line count is known up front; a stream estimates it (scanIptablesSaveStream).
  const total = progress === undefined ? 0 : countLines(text);
  try {
    scanner.push(text);
    return scanner.end();
  } finally {
    scanner.close();
  }
}

/**
 * The same reading over a stream of blocks of whole lines (grammars/common/stream.ts), as they
 * are read: line numbers, columns and the lines joined across a pasted stderr warning are the
 * same as for the whole text, wherever the blocks are cut.
 */
export async function scanIptablesSaveStream(stream: TextStream, file: string, sink: IptablesSaveSink, progress?: ParseProgress): Promise<IptablesSaveScan> {
  const scanner = new IptablesSaveScanner(
    file,
    sink,
    progress === undefined
      ? undefined
      : (done) => {
          const f = stream.fraction();
          progress(done, f !== undefined && f > 0 ? Math.max(done, Math.round(done / f)) : done);
        },
  );
  try {
    for await (const block of stream) scanner.push(block);
    return scanner.end();
  } finally {
    scanner.close();
  }
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.length > 0 && text.charCodeAt(text.length - 1) !== 10 ? n + 1 : n;
}

/** A scan is running: the shared parser's per-scan state belongs to it. */
let scanning = false;

/**
 * The items of one rule line read again from its text (indentation removed; `column` is where
 * the text starts in its line, so item columns come out as the scan gave them). The model keeps
 * a rule's text and typed reading, not this syntax: re-reading the few rules someone prints
 * costs less than keeping 300k rules' syntax in memory (issue 8). Undefined when `text` is not
 * a rule line.
 */
export function parseRuleItems(text: string, column: number): readonly RuleItem[] | undefined {
  if (scanning) throw new Error('parseRuleItems() cannot run inside a scan');
  const { lexer, reader } = lineTools();
  try {
    const lexed = lexer.tokenize(text);
    if (lexed.errors.length > 0) return undefined;
    refineOptions(lexed.tokens);
    const syntax = reader.read(lexed.tokens, 1 - column);
    return syntax?.kind === 'rule' ? syntax.items : undefined;
  } finally {
    resetInterned();
    reader.resetScan();
  }
}

/**
 * Reads blocks of whole lines as they come. The last line of each block is held back until the
 * next block (or end()) so that every line read has its next line at hand: a rule split by a
 * pasted stderr warning is joined with the line after it, which may be in the next block.
 */
class IptablesSaveScanner {
  private readonly diagnostics: Diagnostic[] = [];
  private readonly lexer: Lexer;
  private readonly reader: LineReader;
  private readonly kinds = new Uint8Array(CHUNK_LINES);
  /** Where each lexed line of the chunk starts in the lexed text. */
  private readonly starts = new Int32Array(CHUNK_LINES);
  /** What the sink's decode() made of the chunk's Decoded lines. */
  private readonly values: unknown[] = new Array<unknown>(CHUNK_LINES).fill(undefined);
  private readonly decode: ((text: string) => unknown) | undefined;
  private readonly decoded: ((line: number, column: number, text: string, value: unknown) => boolean) | undefined;
  /** Lines read before the current block. */
  private lineBase = 0;
  /** The held-back last line of the previous block, with its `\n` when it had one. */
  private carry = '';
  /** The held-back line was already joined to the line before it: skip it. */
  private skipFirst = false;
  private started = false;
  private lastLine = 0;
  private lastRule = false;
  private readonly emit: EmitOther;
  private readonly emitSyntax: EmitSyntax;
  /** Where the grammar's line readers (lines.ts) put what they read. */
  private readonly out: LineOut;

  constructor(
    private readonly file: string,
    sink: IptablesSaveSink,
    private readonly progress: ((linesDone: number) => void) | undefined,
  ) {
    const { lexer, reader } = lineTools();
    this.lexer = lexer;
    this.reader = reader;
    if (sink.decode !== undefined && sink.decoded !== undefined) {
      this.decode = sink.decode.bind(sink);
      this.decoded = sink.decoded.bind(sink);
    }
    resetInterned();
    reader.resetScan();
    scanning = true;
    this.emit = (e) => {
      this.lastLine = e.line;
      this.lastRule = false;
      sink.entry(e);
    };
    this.emitSyntax = (line, column, text, syntax) => {
      this.lastLine = line;
      this.lastRule = syntax.kind === 'rule';
      sink.syntax(line, column, text, syntax);
    };
    this.out = { file, emit: this.emit, emitSyntax: this.emitSyntax, diagnostics: this.diagnostics, lexer, reader };
  }

  /** Whole lines (the last may lack its `\n` only at the end of the input). */
  push(block: string): void {
    if (block.length === 0) return;
    if (!this.started) {
      this.started = true;
      if (block.charCodeAt(0) === 0xfeff) block = block.slice(1);
    }
    if (this.carry.length > 0) {
      // The held-back line, with the block's first line as its lookahead (held back in turn): the
      // two lines are joined, never the line and the whole block (a copy of every block).
      const first = block.indexOf('\n');
      this.read(this.carry + (first < 0 ? block : block.slice(0, first + 1)), false);
    }
    // Hold back the block's last line: from the start of the last line to the end.
    const end = block.charCodeAt(block.length - 1) === 10 ? block.length - 1 : block.length;
    const cut = block.lastIndexOf('\n', end - 1) + 1;
    this.carry = block.slice(cut);
    if (cut > 0) this.read(block, false);
  }

  end(): IptablesSaveScan {
    const text = this.carry;
    this.carry = '';
    const missingFinalNewline = text.length > 0 && text.charCodeAt(text.length - 1) !== 10;
    if (text.length > 0) this.read(text, true);
    if (missingFinalNewline && this.lastRule && this.lastLine === this.lineBase) {
      this.diagnostics.push(diagnostic('info', 'input/no-final-newline', 'the dump does not end with a newline; the last rule may be truncated', this.file, this.lastLine, 1));
    }
    return { diagnostics: this.diagnostics, lineCount: this.lineBase };
  }

  /** Leave the shared parser as it was (also after an error mid-stream). */
  close(): void {
    scanning = false;
    resetInterned();
    this.reader.resetScan();
  }

  /**
   * Read the lines of `text`, all but its last unless `last` (that one is the held-back line,
   * lookahead only). Line numbers continue from lineBase.
   */
  private read(text: string, last: boolean): void {
    const { lines, hadCr } = splitBlock(text);
    // Lines to read now: all but the held-back one (it is lookahead only).
    const count = last ? lines.length : lines.length - 1;
    let from = 0;
    let offset = 0;
    if (this.skipFirst && count > 0) {
      this.skipFirst = false;
      offset = lines[0].length + 1;
      from = 1;
    }
    const consumedNext = this.scanLines(text, !hadCr, lines, from, offset, count);
    this.lineBase += count;
    if (consumedNext) this.skipFirst = true;
  }

  /** Returns true when the last line read was joined with the (held-back) line after it. */
  private scanLines(body: string, sliceable: boolean, lines: readonly string[], start: number, startOffset: number, count: number): boolean {
    const { kinds, progress } = this;
    const base = this.lineBase;
    let consumedNext = false;
    let offset = startOffset; // offset of line `from` in `body` (when sliceable)
    for (let from = start; from < count; from += CHUNK_LINES) {
      if (progress !== undefined && (base + from) % PROGRESS_LINES < CHUNK_LINES) progress(base + from);
      const to = Math.min(count, from + CHUNK_LINES);
      // 1. Classify the chunk's lines: plain rule/table/chain lines are decoded or lexed together.
      const { lexable, decoded } = this.classify(lines, from, to);
      let chunkLength = 0;
      for (let i = from; i < to; i++) chunkLength += lines[i].length + 1;
      const { tokens, errors } = lexable === 0 ? NOTHING_LEXED : this.lexChunk(sliceable && decoded === 0 ? body : undefined, lines, from, to, offset, chunkLength);
      // 2. Each line in order: lexed lines are parsed over their tokens, others read as before.
      let ti = 0;
      let ei = 0;
      for (let i = from; i < to; i++) {
        const k = kinds[i - from];
        if (k === LineKind.Skip) continue;
        if (k === LineKind.Decoded) {
          const value = this.values[i - from];
          this.values[i - from] = undefined;
          this.adopt(lines[i], base + i + 1, value);
          continue;
        }
        if (k === LineKind.Other) {
          if (readOtherLine(this.out, lines, i, base)) {
            // A line joined with the next one (stderr pasted inside a rule): the next line is used up.
            i++;
            if (i >= count) {
              consumedNext = true; // the held-back line: skipped when its block is read
              break;
            }
            if (i >= to) {
              // It was the first line of the next chunk: skip it there.
              offset += lines[i].length + 1;
              from++;
            }
          }
          continue;
        }
        // Tokens of this line: those starting in [start, end).
        const raw = lines[i];
        const lineStart = this.starts[i - from];
        const end = lineStart + raw.length;
        while (ti < tokens.length && tokens[ti].startOffset < lineStart) ti++;
        let tj = ti;
        while (tj < tokens.length && tokens[tj].startOffset < end) tj++;
        while (ei < errors.length && errors[ei].offset < lineStart) ei++;
        const lexError = ei < errors.length && errors[ei].offset < end ? errors[ei] : undefined;
        readTokens(this.out, raw, base + i + 1, tokens, ti, tj, lineStart, lexError);
        ti = tj;
      }
      offset += chunkLength;
    }
    return consumedNext;
  }

  /** Each line's kind (and decoded value); how many are to be lexed, how many were decoded. */
  private classify(lines: readonly string[], from: number, to: number): { lexable: number; decoded: number } {
    const { kinds, decode } = this;
    let lexable = 0;
    let decoded = 0;
    for (let i = from; i < to; i++) {
      let k = plainLine(lines[i]);
      if (k === LineKind.Lex && decode !== undefined) {
        const value = decode(lines[i]);
        if (value !== undefined) {
          this.values[i - from] = value;
          k = LineKind.Decoded;
          decoded++;
        }
      }
      kinds[i - from] = k;
      if (k === LineKind.Lex) lexable++;
    }
    return { lexable, decoded };
  }

  /**
   * Lex the chunk's Lex lines in one lexer call: a slice of `body` when every line of the chunk is
   * in it as it stands, else those lines joined. Fills `starts`.
   */
  private lexChunk(body: string | undefined, lines: readonly string[], from: number, to: number, offset: number, chunkLength: number): { tokens: IToken[]; errors: ILexingError[] } {
    const { kinds, starts } = this;
    let chunk: string;
    let at = 0;
    if (body !== undefined) {
      for (let i = from; i < to; i++) {
        starts[i - from] = at;
        at += lines[i].length + 1;
      }
      chunk = body.slice(offset, Math.min(body.length, offset + chunkLength));
    } else {
      const parts: string[] = [];
      for (let i = from; i < to; i++) {
        if (kinds[i - from] !== LineKind.Lex) continue;
        starts[i - from] = at;
        at += lines[i].length + 1;
        parts.push(lines[i]);
      }
      chunk = parts.join('\n');
    }
    const lexed = this.lexer.tokenize(chunk);
    refineOptions(lexed.tokens);
    return lexed;
  }

  /** A decoded line to the sink, or — when the sink wants the grammar's reading after all — lexed alone and parsed. */
  private adopt(raw: string, lineNo: number, value: unknown): void {
    if (this.decoded!(lineNo, 1, raw, value)) {
      this.lastLine = lineNo;
      this.lastRule = true;
      return;
    }
    const lexed = this.lexer.tokenize(raw);
    refineOptions(lexed.tokens);
    readTokens(this.out, raw, lineNo, lexed.tokens, 0, lexed.tokens.length, 0, lexed.errors[0]);
  }
}

/** A block's lines without terminators (a final `\n` ends the last line; `\r`s removed as splitInput() does). */
function splitBlock(text: string): { lines: string[]; hadCr: boolean } {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const hadCr = text.includes('\r');
  if (hadCr) {
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      if (l.includes('\r')) lines[i] = l.replace(/\r+$/, '').replace(/\r/g, '');
    }
  }
  return { lines, hadCr };
}

/**
 * Blank lines are skipped; a line is lexed with its chunk when it can only be a table, chain,
 * COMMIT or rule line (it starts with `*`, `:`, `-`, `[` or `C` and holds no pasted stderr
 * warning or prompt); anything else takes the careful path of readOtherLine().
 */
function plainLine(raw: string): LineKind {
  if (raw.length === 0) return LineKind.Skip;
  const indent = indentOf(raw);
  if (indent === raw.length) return LineKind.Skip;
  const c = raw.charCodeAt(indent);
  // `*table`, `:CHAIN`, `-A …`, `[p:b] -A …`, `COMMIT`: never noise nor a listing, unless a
  // prompt (`user@host:~# …`, which needs an `@` and `#`/`$`) or a glued stderr warning is in it.
  if (c !== 42 /* * */ && c !== 58 /* : */ && c !== 45 /* - */ && c !== 91 /* [ */ && c !== 67 /* C */) return LineKind.Other;
  if (raw.indexOf('# Warning: ') >= 0) return LineKind.Other;
  // `--` (grep's group separator) and `**caption**` (markdown) are paste noise, never a rule or table.
  if ((c === 45 || c === 42) && raw.charCodeAt(indent + 1) === c) return LineKind.Other;
  if (raw.indexOf('@') >= 0 || c === 91 || c === 67) return noiseKind(indent === 0 ? raw : raw.slice(indent)) === undefined && !LISTING.test(raw.slice(indent)) ? LineKind.Lex : LineKind.Other;
  return LineKind.Lex;
}
