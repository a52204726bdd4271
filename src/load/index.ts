/**
 * Reading inputs: files, directories (bundles: every file inside is sniffed), `-` for stdin,
 * and `.gz` files. Formats are told apart by content. Nothing here throws on bad dump text; an
 * unreadable path or bundle entry is kept as such (reported, the rest analysed), and only inputs
 * of which nothing at all is readable raise InputError (exit code 2).
 *
 * Files are listed here and read later, as streams, by parseInput() (./input.ts): a reader with
 * parseStream() gets blocks of lines as they are read; one with parse() only gets the whole
 * text, under the same limits. Bundle entries are accounted for one by one (./bundle.ts).
 */
import { fstatSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { diagnostic, type Diagnostic } from '../source/index.js';
import { noiseKind, splitInput } from '../../grammars/common/text.js';
import { textStream, type TextStream } from '../../grammars/common/stream.js';
import type { FormatId, ParsedInput, ParseProgress } from './format.js';
import { parserFor, sniff } from './registry.js';
import { describeUnknown } from './describe.js';
import { detectPaste } from './paste.js';
import { looksLike } from './looks-like.js';
import { fsReason } from './errors.js';
import { DEFAULT_INPUT_SETTINGS, InputLimitError, NotGzip, openTextStream, readWhole, tooBigOnDisk, type InputLimits, type InputSettings, type StreamReport } from './input.js';
import { walkBundle } from './bundle.js';
import { fileInput, openable, type RawInput } from './raw-input.js';

export { fsReason } from './errors.js';
export { fileInput, openable, type RawInput } from './raw-input.js';

export class InputError extends Error {}

/**
 * Expand paths (directories → their files) and list them; `-` is stdin. A path or bundle
 * entry that cannot be read is returned as unreadable so the rest is still analysed; only when
 * nothing at all could be read is that an InputError (one line per path). Named paths that are
 * not directories are read whatever they are (a FIFO from `<(iptables-save)`, a `/proc` file);
 * inside a bundle, only regular files are (./bundle.ts).
 */
export function readInputs(paths: readonly string[], stdin?: () => Buffer, settings: InputSettings = DEFAULT_INPUT_SETTINGS): RawInput[] {
  const out = readAll(paths, stdin, settings);
  if (out.length > 0 && out.every((x) => x.unreadable !== undefined)) throw new InputError(out.map((x) => `${x.path}: ${x.unreadable}`).join('\n'));
  return onceEach(out);
}

/**
 * The same file named twice (`-i f -i f`, a symlink beside its target, a bundle and a file in it):
 * read once, the other names listed as duplicates — two copies would count every Service twice.
 */
function onceEach(inputs: RawInput[]): RawInput[] {
  const first = new Map<string, string>();
  return inputs.map((x) => {
    if (x.unreadable !== undefined || x.open === undefined || x.path === '<stdin>') return x;
    let key: string;
    try {
      const st = statSync(x.path);
      if (!st.isFile()) return x;
      key = `${st.dev}:${st.ino}`;
    } catch {
      return x;
    }
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, x.path);
      return x;
    }
    return { path: x.path, bytes: x.bytes, unreadable: `the same file as ${earlier}, read once`, unreadableCode: 'input/duplicate' };
  });
}

function readAll(paths: readonly string[], stdin: (() => Buffer) | undefined, settings: InputSettings): RawInput[] {
  const out: RawInput[] = [];
  for (const p of paths) {
    if (p === '-') {
      if (stdin) out.push({ path: '<stdin>', bytes: 0, open: (limits, report) => bufferStream(stdin(), limits, report) });
      else out.push({ path: '<stdin>', bytes: stdinSize(), open: (limits, report) => openTextStream({ fd: 0 }, stdinSize(), limits, report) });
      continue;
    }
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      out.push({ path: p, bytes: 0, unreadable: fsReason(e) });
      continue;
    }
    if (st.isDirectory()) {
      const before = out.length;
      walkBundle(p, out, { limits: settings.limits, followOutside: settings.followSymlinks });
      if (out.length === before) out.push({ path: p, bytes: 0, unreadable: 'the directory holds no files' });
      continue;
    }
    const why = openable(p);
    out.push(why === undefined ? fileInput(p, st.isFile() ? st.size : 0) : { path: p, bytes: 0, unreadable: why });
  }
  return out;
}

function stdinSize(): number {
  try {
    const st = fstatSync(0);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}

/** Bytes already read (a test's stdin) as a stream, under the same limits (a .gz is inflated). */
function bufferStream(buf: Buffer, limits: InputLimits, report: StreamReport): TextStream {
  const stream = Readable.from([buf]);
  return openTextStream({ stream }, buf.length, limits, report);
}

const SNIFF_LINES = 200;

/** The text with paste noise (prompts, fences, heredoc ends) blanked, line numbers kept (`---` stays: YAML's). */
export function blankPasteNoise(text: string): string {
  return splitInput(text)
    .lines.map((l) => (/^\s*---/.test(l) || noiseKind(l) === undefined ? l : ''))
    .join('\n');
}

/** The first lines that are content (paste noise skipped), for sniffing. */
export function headLines(text: string): string[] {
  const head = text.length > 64 * 1024 ? text.slice(0, 64 * 1024) : text;
  const { lines } = splitInput(head);
  const out: string[] = [];
  for (const l of lines) {
    if (l.trim() === '' || noiseKind(l) !== undefined) continue;
    out.push(l);
    if (out.length >= SNIFF_LINES) break;
  }
  return out;
}

/**
 * The format of a file's text: sniffed from its first lines; a paste of several outputs (or one
 * whose command says what its text is) is told by its sections (./paste.ts).
 */
export function detectFormat(text: string): FormatId | undefined {
  const plain = sniff(headLines(text))?.id;
  const head = text.length > 64 * 1024 ? text.slice(0, 64 * 1024) : text;
  const pasted = detectPaste(splitInput(head).lines, sniff, plain);
  return pasted === null ? undefined : (pasted ?? plain);
}

/**
 * ` (it looks like …)`, or nothing. Another program's log, JSON or YAML of a kind, a timestamped log
 * and prose are said by describeUnknown; a terminal session or a table by looksLike, which names the
 * commands whose output kpx does not read.
 */
function lookedLike(head: string): string {
  // A binary file (an executable, an image) has no lines to describe.
  if (head.includes('\0')) return '';
  const described = describeUnknown(head);
  const what = described && !described.startsWith('a terminal session') ? described : (looksLike(head) ?? described);
  return what ? ` (it looks like ${what})` : '';
}

export interface ParsedFile {
  readonly path: string;
  readonly bytes: number;
  readonly format: FormatId | 'unknown' | 'empty';
  readonly parsed?: ParsedInput;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * The whole text of one file, under the input layer's limits (a .gz inflated), for code that
 * rewrites files rather than parsing them (redact). Throws InputLimitError, InputError for
 * data that does not inflate, or the file system's error.
 */
export async function readTextFile(input: RawInput, limits: InputLimits = DEFAULT_INPUT_SETTINGS.limits): Promise<string> {
  if (input.unreadable !== undefined) throw new InputError(`${input.path}: ${input.unreadable}`);
  if (input.text !== undefined) return input.text;
  const big = tooBigOnDisk(input.bytes, limits);
  if (big) throw big;
  try {
    const report: StreamReport = { bytes: 0, gzip: false };
    return input.whole?.(limits, report) ?? (await readWhole(input.open!(limits, report), 'these'));
  } catch (e) {
    if (e instanceof NotGzip) throw new InputError(`${input.path}: not a readable gzip file (${e.message})`);
    throw e;
  }
}

/** Decoded text sniffed before the format is known (headLines() looks at the first 64 KiB). */
const HEAD_CHARS = 64 * 1024;

/**
 * How much a refusal weighs: a duplicate is no loss (its content is read under its first name);
 * a link out of the bundle is the user's to follow; a note left out is only said.
 */
const SEVERITY: Readonly<Record<string, 'warning' | 'info'>> = { 'input/duplicate': 'warning', 'input/outside-bundle': 'warning', 'input/left-out': 'info' };

/** The one-row result for an input that gave nothing (unreadable, refused). */
function notRead(input: RawInput, code: string, message: string, format: ParsedFile['format'] = 'unknown', bytes = input.bytes): ParsedFile {
  return { path: input.path, bytes, format, diagnostics: [diagnostic(SEVERITY[code] ?? 'error', code, message, input.path, 1, 1)] };
}

/**
 * A file left out of a bundle as not a dump: listed with why; its first 64 KiB are sniffed (never
 * parsed), and a dump recognised there is a warning, so that `.iptables-save` is not silently unread.
 */
async function leftOutRow(input: RawInput, limits: InputLimits): Promise<ParsedFile> {
  const why = input.unreadable ?? 'not a dump';
  let format: FormatId | undefined;
  if (input.open) {
    const blocks = input.open(limits, { bytes: 0, gzip: false })[Symbol.asyncIterator]();
    try {
      let head = '';
      while (head.length < HEAD_CHARS) {
        const r = await blocks.next();
        if (r.done) break;
        head += r.value;
      }
      format = detectFormat(head);
    } catch {
      // unreadable: it was left out anyway
    } finally {
      try {
        await blocks.return?.();
      } catch {
        // closing a stream that failed
      }
    }
  }
  if (format === undefined) return notRead(input, 'input/left-out', `left out: ${why}`);
  const d = diagnostic('warning', 'input/left-out', `left out, though its content looks like a dump (${format}): ${why}`, input.path, 1, 1);
  return { path: input.path, bytes: input.bytes, format: 'unknown', diagnostics: [d] };
}

/** Why reading failed, as a diagnostic's code and message; undefined for a bug (rethrown). */
function readFailure(e: unknown): { code: string; message: string } | undefined {
  if (e instanceof InputLimitError) return { code: 'input/too-large', message: e.message };
  if (e instanceof NotGzip) return { code: 'input/unreadable', message: `cannot read: not a readable gzip file (${e.message})` };
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return { code: 'input/unreadable', message: `cannot read: ${fsReason(e)}` };
  return undefined;
}

/** The first blocks of an input, up to HEAD_CHARS, for sniffing; `ended`: they are all of it. */
interface Head {
  readonly blocks: string[];
  readonly ended: boolean;
}

async function readHead(blocks: AsyncIterator<string>): Promise<Head> {
  const head: string[] = [];
  let headLength = 0;
  while (headLength < HEAD_CHARS) {
    const r = await blocks.next();
    if (r.done) return { blocks: head, ended: true };
    head.push(r.value);
    headLength += r.value.length;
  }
  return { blocks: head, ended: false };
}

/** An input whose format is not known: empty (info), or not a dump kpx reads (error). */
function unknownFormatRow(input: RawInput, headText: string, ended: boolean, bytes: number): ParsedFile {
  const empty = ended && headText.trim() === '';
  const d = diagnostic(
    empty ? 'info' : 'error',
    empty ? 'input/empty' : 'input/unknown-format',
    empty
      ? 'the file is empty'
      : `kpx cannot tell what this file is${lookedLike(headText)}; it reads iptables-save, ip6tables-save, iptables -L/-S listings, ipset list/save, ipvsadm -Ln, ip route, ip rule, ip addr, ip -d link, bridge -d link, sysfs hairpin_mode listings, sysctl, uname, conntrack -L/-S and nft list ruleset output, kube-proxy logs and configuration, and kubectl get (tables, -o json|yaml) and describe of Services, Endpoints, EndpointSlices, Nodes and Pods`,
    input.path,
    1,
    1,
  );
  return { path: input.path, bytes, format: empty ? 'empty' : 'unknown', diagnostics: [d] };
}

/** The whole input, head first (the head's blocks are let go once given), then the blocks not yet read. */
function headThenRest(stream: TextStream, head: Head, blocks: AsyncIterator<string>, close: () => Promise<void>): TextStream {
  return {
    fraction: () => stream.fraction(),
    async *[Symbol.asyncIterator]() {
      try {
        yield* head.blocks;
        head.blocks.length = 0;
        if (head.ended) return;
        for (;;) {
          const r = await blocks.next();
          if (r.done) return;
          yield r.value;
        }
      } finally {
        await close();
      }
    },
  };
}

/** A reading of a `.gz` that ended early or is damaged: said first, with how much text came before. */
function withGzipDamage(parsed: ParsedInput, report: StreamReport, path: string): ParsedInput {
  if (report.damaged === undefined) return parsed;
  const d = diagnostic(
    'error',
    'input/gzip-damaged',
    `the gzip data ends early or is damaged (${report.damaged}) after ${report.bytes.toLocaleString('en-US')} bytes of text: kpx read what came before; the rest of this dump is missing`,
    path,
    1,
    1,
  );
  return { ...parsed, diagnostics: [d, ...parsed.diagnostics] };
}

/**
 * Parse one input whose format is sniffed (or forced). The input is read as a stream: its first
 * blocks are sniffed, then handed to the reader with the rest. A reader with parseStream() reads
 * block by block; one with parse() gets the whole text. Limits (./input.ts) stop an input that is
 * too big or inflates too much, with a message naming the limit; the other inputs are still read.
 */
export async function parseInput(input: RawInput, forced?: FormatId, progress?: ParseProgress, limits: InputLimits = DEFAULT_INPUT_SETTINGS.limits): Promise<ParsedFile> {
  if (input.leftOut) return leftOutRow(input, limits);
  if (input.unreadable !== undefined) {
    const code = input.unreadableCode ?? 'input/unreadable';
    return notRead(input, code, code === 'input/unreadable' ? `cannot read: ${input.unreadable}` : input.unreadable);
  }
  const report: StreamReport = { bytes: 0, gzip: false };
  if (input.text === undefined) {
    const big = tooBigOnDisk(input.bytes, limits);
    if (big) return notRead(input, 'input/too-large', big.message);
  }
  const stream = input.text !== undefined ? textStream(input.text) : input.open!(limits, report);
  const blocks = stream[Symbol.asyncIterator]();
  const close = async () => {
    try {
      await blocks.return?.();
    } catch {
      // closing a stream that failed: its error was reported already
    }
  };
  // 1. The head, for sniffing.
  let head: Head;
  try {
    head = await readHead(blocks);
  } catch (e) {
    await close();
    const why = readFailure(e);
    if (!why) throw e;
    return notRead(input, why.code, why.message, 'unknown', input.bytes || report.bytes);
  }
  const headText = head.blocks.length === 1 ? head.blocks[0] : head.blocks.join('');
  const bytes = () => input.bytes || report.bytes;
  const format = forced ?? detectFormat(headText);
  if (!format) {
    await close();
    return unknownFormatRow(input, headText, head.ended, bytes());
  }
  // 2. The whole input, head first, to the reader.
  const rest = headThenRest(stream, head, blocks, close);
  // A reader that takes its input whole: a regular file is read again in one piece (no copy of
  // the joined blocks); anything else, or an input the head already holds, is the blocks joined.
  const wholeText = async (): Promise<string> => {
    const text = head.ended || input.text !== undefined ? undefined : input.whole?.(limits, report);
    if (text === undefined) return readWhole(rest, format);
    await close();
    return text;
  };
  const parser = await parserFor(format);
  let parsed: ParsedInput;
  try {
    parsed = parser.parseStream ? await parser.parseStream(rest, input.path, progress) : parser.parse(await wholeText(), input.path, progress);
  } catch (e) {
    await close();
    const why = readFailure(e);
    if (why) return notRead(input, why.code, why.message, format, bytes());
    // A parser bug must not take the other files down with it; say so plainly.
    const d = diagnostic('error', 'internal/parser-crash', `kpx failed while reading this ${format} file: ${(e as Error).message}`, input.path, 1, 1);
    return { path: input.path, bytes: bytes(), format, diagnostics: [d] };
  }
  parsed = withGzipDamage(parsed, report, input.path);
  return { path: input.path, bytes: bytes(), format, parsed, diagnostics: parsed.diagnostics };
}
