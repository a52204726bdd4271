/**
 * The input layer (issue 23): every dump kpx reads comes through here, as a stream of blocks of
 * whole lines (grammars/common/stream.ts), never as one string read up front.
 *
 * - A file is read in 1 MiB pieces; a `.gz` file (told by its magic bytes, not its name) is
 *   inflated as it is read. Memory follows what the reader keeps, not the size of the file.
 *   A regular file is read with synchronous reads into one reused buffer (the cheapest way, as
 *   fast as reading it whole); pipes, devices, stdin and `.gz` data go through Node streams.
 * - Limits, each named in its refusal with the flag that raises it:
 *   `--max-input-size` (the text of one input, after inflating: a bigger regular file is refused
 *   before it is read; a stream is stopped when it gets there), and `--max-gzip-ratio` (a `.gz`
 *   that inflates to more than that many times its compressed size, once past RATIO_FLOOR: a
 *   gzip bomb, or a file of zeros).
 * - A `.gz` that ends early or is damaged mid-way: what inflated before the damage is read, and
 *   the damage is said (`damaged`); a file whose first bytes do not inflate is unreadable.
 *
 * The CLI passes the limits from its flags as arguments (SnapshotOptions' `input`, parseInput's
 * `limits`, WalkOptions), and to worker threads loading cluster nodes as workerData, so that they
 * apply the same ones. There is no run-wide setting: a caller that passes none gets the defaults.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { TextStream } from '../../grammars/common/stream.js';

const MiB = 1024 * 1024;

/**
 * The default of --max-input-size: above the iptables-save of a 30k-Service node (89 MiB), which
 * kpx reads in about 1.3 GiB (the model of a dump takes 10–15× its text); much more would not
 * fit a small jump host.
 */
export const DEFAULT_MAX_INPUT_BYTES = 128 * MiB;
/** The default of --max-gzip-ratio: real dumps inflate 5–40×; zeros and repeated lines, 1000×. */
export const DEFAULT_MAX_GZIP_RATIO = 200;
/** The ratio is judged only past this much inflated text: a small file may compress very well. */
export const RATIO_FLOOR = 4 * MiB;
/**
 * The longest string V8 makes (0x1fffffe8 UTF-16 units): a reader that takes its input whole,
 * or one line of a streamed input, can never be longer than this.
 */
export const MAX_STRING = 0x1fffffe8;

const READ_BYTES = MiB;
/** The first read of a regular file: more than the 64 KiB of text sniffed for its format. */
const FIRST_READ = 128 * 1024;
/** The read buffer of a regular file whose size says nothing (a `/proc` file is 0 bytes on disk). */
const UNSIZED_READ = 64 * 1024;

export interface InputLimits {
  /** Bytes of text (inflated) one input may hold. */
  readonly maxBytes: number;
  /** Inflated / compressed size a `.gz` may reach once past RATIO_FLOOR; 0: no ratio limit. */
  readonly maxGzipRatio: number;
}

/** `512M`, `1G`, `1.5GiB`, `600MB`, `4096` → bytes (K/M/G/T are powers of 1024); undefined when not a size. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = m[2] ? 1024 ** ('kmgt'.indexOf(m[2].toLowerCase()) + 1) : 1;
  const n = Math.floor(Number(m[1]) * unit);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** 268435456 → `256 MiB`. */
export function sizeWords(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : Number.isInteger(v) ? v : v.toFixed(1)} ${units[u]}`;
}

/** What the command line sets for reading inputs: the limits, and whether a bundle walk follows symlinks out of the bundle. */
export interface InputSettings {
  readonly limits: InputLimits;
  /** --follow-symlinks (./bundle.ts: never into /proc, /sys or /dev). */
  readonly followSymlinks: boolean;
}

export const DEFAULT_INPUT_SETTINGS: InputSettings = {
  limits: { maxBytes: DEFAULT_MAX_INPUT_BYTES, maxGzipRatio: DEFAULT_MAX_GZIP_RATIO },
  followSymlinks: false,
};

/** An input stopped by a limit: `message` names the limit and how to raise it. */
export class InputLimitError extends Error {
  constructor(
    message: string,
    readonly limit: 'max-input-size' | 'max-gzip-ratio' | 'string-length',
  ) {
    super(message);
  }
}

/** Refusal of a file whose size on disk is already over --max-input-size (nothing is read). */
export function tooBigOnDisk(bytes: number, limits: InputLimits): InputLimitError | undefined {
  if (bytes <= limits.maxBytes) return undefined;
  return new InputLimitError(
    `${sizeWords(bytes)} is more than kpx reads from one input (--max-input-size ${sizeWords(limits.maxBytes)}); not read. ` +
      `If it is a real dump and this machine has the memory, raise the limit: --max-input-size ${sizeWords(nextSize(bytes)).replace(/ /g, '').replace(/iB$/, '')}`,
    'max-input-size',
  );
}

/** A round size above `bytes` to suggest: the next power of two MiB. */
function nextSize(bytes: number): number {
  let s = 64 * MiB;
  while (s < bytes) s *= 2;
  return s;
}

/** What a stream learned while it was read (valid once it has been read to its end). */
export interface StreamReport {
  /** Text bytes read (after inflating). */
  bytes: number;
  gzip: boolean;
  /** The gzip data ended early or was damaged after `bytes` bytes of text: why. */
  damaged?: string;
}

/**
 * A stream over an open descriptor. Stdin that is a pipe or a socket is read through
 * process.stdin, which waits for data whatever the descriptor's mode: a parent may hand it over
 * non-blocking (a Node parent's socketpair, a shell whose other job set O_NONBLOCK), and plain
 * reads of such a descriptor fail with EAGAIN whenever the writer is slower than kpx. A file
 * redirected into stdin keeps the large reads of createReadStream.
 */
function descriptorStream(fd: number): Readable {
  if (fd === 0 && !fstatSync(0).isFile()) return process.stdin;
  return createReadStream('', { fd, autoClose: false, highWaterMark: READ_BYTES });
}

/** Where a stream's bytes come from: a path, or an open descriptor (stdin). */
export type StreamOrigin = { readonly path: string } | { readonly fd: number } | { readonly stream: Readable };

/**
 * What reading one input has counted so far: `raw`, the bytes read from the file or stream
 * (compressed ones for a `.gz`: the progress fraction is of the size on disk); the report's
 * `bytes`, the text (after inflating), which the limits bound.
 */
interface ReadCount {
  raw: number;
  readonly report: StreamReport;
  readonly limits: InputLimits;
}

/**
 * The text of an input as blocks of whole lines. `sizeOnDisk`: for progress (0 when unknown).
 * Throws InputLimitError when a limit is reached, and the file system's own errors (ENOENT,
 * EACCES, EIO…) as they come.
 */
export function openTextStream(origin: StreamOrigin, sizeOnDisk: number, limits: InputLimits, report: StreamReport = { bytes: 0, gzip: false }): TextStream {
  const count: ReadCount = { raw: 0, report, limits };
  return {
    fraction: () => (sizeOnDisk > 0 ? Math.min(1, count.raw / sizeOnDisk) : undefined),
    [Symbol.asyncIterator]: () => blocks(origin, count),
  };
}

const isGzipHead = (buf: Buffer): boolean => buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;

/**
 * The blocks of an uncompressed regular file, cut at the last `\n` of each read while still
 * bytes (UTF-8 never has 0x0a inside a character), so each block is decoded once, straight into
 * its string, with no decoder and no joined pieces; the bytes after the cut (part of a line) are
 * moved to the front of the buffer and the next read goes after them. The buffer is the file's
 * size up to READ_BYTES (a bundle of tiny files allocates tiny buffers); a line longer than it
 * makes it grow. Returns true, having yielded and counted nothing, when the file starts like gzip:
 * it is then inflated as a stream.
 */
function* fileBlocks(fd: number, size: number, count: ReadCount): Generator<string, boolean> {
  const { report, limits } = count;
  let buf = Buffer.allocUnsafe(size === 0 ? UNSIZED_READ : Math.min(READ_BYTES, size + 1));
  let held = 0;
  for (let first = true; ; first = false) {
    if (held === buf.length) {
      if (held >= MAX_STRING) throw longLine();
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, MAX_STRING + READ_BYTES));
      buf.copy(bigger, 0, 0, held);
      buf = bigger;
    }
    // The first read is short: it is what parseInput() sniffs, and a reader that takes its text
    // whole then reads the file again in one piece (wholeFile()).
    const n = readSync(fd, buf, held, first ? Math.min(buf.length, FIRST_READ) : buf.length - held, null);
    if (n === 0) break;
    if (first && n >= 2 && isGzipHead(buf)) return true;
    count.raw += n;
    report.bytes += n;
    if (report.bytes > limits.maxBytes) throw overSize(limits, report.bytes);
    const filled = held + n;
    const cut = buf.lastIndexOf(0x0a, filled - 1) + 1;
    held = filled - cut;
    if (cut === 0) continue;
    const block = buf.toString('utf8', 0, cut);
    if (held > 0) buf.copy(buf, 0, cut, filled);
    yield block;
  }
  if (held > 0) yield buf.toString('utf8', 0, held);
  return false;
}

/**
 * How reading a path with synchronous reads ended: `read` (a plain regular file, all yielded),
 * `gzip` (a regular file starting like gzip, nothing yielded), `not-regular` (a pipe, a device,
 * a `/proc` file that is not regular: nothing read).
 */
type PathRead = 'read' | 'gzip' | 'not-regular';

/**
 * A regular file is read with synchronous reads into one buffer, each read decoded at once:
 * no stream machinery, no buffer per read, as cheap as reading the file whole (issue 23).
 */
function* regularFileBlocks(path: string, count: ReadCount): Generator<string, PathRead> {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'not-regular';
    return (yield* fileBlocks(fd, st.size, count)) ? 'gzip' : 'read';
  } finally {
    closeSync(fd);
  }
}

async function* raw(file: Readable, count: ReadCount): AsyncGenerator<Buffer> {
  for await (const chunk of file as AsyncIterable<Buffer>) {
    count.raw += chunk.length;
    yield chunk;
  }
}

function streamOf(origin: StreamOrigin): Readable {
  if ('stream' in origin) return origin.stream;
  if ('path' in origin) return createReadStream(origin.path, { highWaterMark: READ_BYTES });
  return descriptorStream(origin.fd);
}

async function* blocks(origin: StreamOrigin, count: ReadCount): AsyncGenerator<string> {
  if ('path' in origin) {
    const read = yield* regularFileBlocks(origin.path, count);
    if (read === 'read') return;
    // A `.gz` on disk is inflated once without reading its text first: one that inflates past a
    // limit is refused before any of it is parsed (a text bomb would otherwise be parsed up to
    // --max-input-size, seconds to minutes, before the limit stopped it).
    if (read === 'gzip') await gzipFits(origin.path, count.limits);
    // A pipe, a device, a `/proc` file that is not regular, or a `.gz`: read as a stream below.
  }
  const file = streamOf(origin);
  const source = raw(file, count);
  let first: IteratorResult<Buffer>;
  try {
    first = await source.next();
  } catch (e) {
    file.destroy();
    throw e;
  }
  if (first.done) return;
  const head = first.value;
  count.report.gzip = isGzipHead(head);
  if (count.report.gzip) yield* inflatedBlocks(file, head, source, count);
  else yield* plainStreamBlocks(file, head, source, count);
}

/** The blocks of a stream of plain text, whose first chunk (`head`) was read to tell gzip from text. */
async function* plainStreamBlocks(file: Readable, head: Buffer, source: AsyncGenerator<Buffer>, { report, limits }: ReadCount): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const lines = new LineBlocks();
  try {
    for (let chunk: Buffer | undefined = head; chunk !== undefined; ) {
      report.bytes += chunk.length;
      if (report.bytes > limits.maxBytes) throw overSize(limits, report.bytes);
      const block = lines.push(decoder.write(chunk));
      if (block !== undefined) yield block;
      const next = await source.next();
      chunk = next.done ? undefined : next.value;
    }
  } finally {
    file.destroy();
  }
  const rest = lines.end(decoder.end());
  if (rest !== undefined) yield rest;
}

/**
 * The blocks of a gzip stream, inflated as the file is read; stops at a limit (the iterator's
 * return() destroys the pipeline). Damaged or cut short: what inflated so far is read, and the
 * report says where it stopped.
 */
async function* inflatedBlocks(file: Readable, head: Buffer, source: AsyncGenerator<Buffer>, { report, limits }: ReadCount): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const lines = new LineBlocks();
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  const compressed = Readable.from((async function* () {
    yield head;
    yield* source;
  })());
  const inflated = pipeline(compressed, gunzip, () => {});
  try {
    for await (const chunk of inflated as AsyncIterable<Buffer>) {
      report.bytes += chunk.length;
      if (report.bytes > limits.maxBytes) throw overSize(limits, report.bytes, true);
      // Compressed bytes the inflater has consumed (not those read ahead of it).
      if (limits.maxGzipRatio > 0 && report.bytes > RATIO_FLOOR && report.bytes > limits.maxGzipRatio * gunzip.bytesWritten) throw overRatio(limits, report.bytes, gunzip.bytesWritten);
      const block = lines.push(decoder.write(chunk));
      if (block !== undefined) yield block;
    }
  } catch (e) {
    if (e instanceof InputLimitError || !isZlibError(e)) throw e;
    // Damaged or cut short: what inflated so far is read; the reader is told, and says so.
    if (report.bytes === 0) throw new NotGzip((e as Error).message);
    report.damaged = (e as Error).message;
  } finally {
    file.destroy();
    gunzip.destroy();
  }
  const rest = lines.end(decoder.end());
  if (rest !== undefined) yield rest;
}

/**
 * Inflate a `.gz` file only to count its text, and throw the limit it goes past (size or ratio).
 * Damage is not judged here: the reading pass reads what inflates and says where it stops.
 */
async function gzipFits(path: string, limits: InputLimits): Promise<void> {
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  const file = createReadStream(path, { highWaterMark: READ_BYTES });
  const inflated = pipeline(file, gunzip, () => {});
  let bytes = 0;
  try {
    for await (const chunk of inflated as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) throw overSize(limits, bytes, true);
      if (limits.maxGzipRatio > 0 && bytes > RATIO_FLOOR && bytes > limits.maxGzipRatio * gunzip.bytesWritten) throw overRatio(limits, bytes, gunzip.bytesWritten);
    }
  } catch (e) {
    if (e instanceof InputLimitError || !isZlibError(e)) throw e;
  } finally {
    file.destroy();
    gunzip.destroy();
  }
}

/** A file that starts like gzip but whose data does not inflate at all. */
export class NotGzip extends Error {}

function isZlibError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

function overSize(limits: InputLimits, bytes: number, gzip = false): InputLimitError {
  return new InputLimitError(
    `${gzip ? 'inflates to' : 'holds'} more than --max-input-size ${sizeWords(limits.maxBytes)} of text (kpx stopped at ${sizeWords(bytes)}); not read. ` +
      `If it is a real dump and this machine has the memory, raise the limit: --max-input-size ${sizeWords(nextSize(bytes * 2)).replace(/ /g, '').replace(/iB$/, '')}`,
    'max-input-size',
  );
}

function overRatio(limits: InputLimits, inflated: number, compressed: number): InputLimitError {
  return new InputLimitError(
    `inflates more than ${limits.maxGzipRatio}× its compressed size (${sizeWords(compressed)} gave ${sizeWords(inflated)} and more): a gzip bomb or a file of zeros, not a dump; not read. ` +
      `If it is a real dump, raise the limit: --max-gzip-ratio ${limits.maxGzipRatio * 10} (0: no ratio limit; --max-input-size still applies)`,
    'max-gzip-ratio',
  );
}

function longLine(): InputLimitError {
  return new InputLimitError(
    `holds a line longer than kpx can keep in memory (JavaScript strings stop at ${sizeWords(MAX_STRING)}); not read: this is not a dump kpx reads`,
    'string-length',
  );
}

/** Decoded text → blocks that end at a line's end; the piece after the last `\n` waits for more. */
class LineBlocks {
  private carry: string[] = [];
  private carryLength = 0;

  push(text: string): string | undefined {
    const cut = text.lastIndexOf('\n');
    if (cut < 0) {
      this.hold(text);
      return undefined;
    }
    const block = this.carryLength === 0 ? text.slice(0, cut + 1) : this.take() + text.slice(0, cut + 1);
    if (cut + 1 < text.length) this.hold(text.slice(cut + 1));
    return block;
  }

  end(text: string): string | undefined {
    if (text.length > 0) this.hold(text);
    return this.carryLength === 0 ? undefined : this.take();
  }

  private hold(text: string): void {
    this.carryLength += text.length;
    if (this.carryLength > MAX_STRING - 2 * READ_BYTES) throw longLine();
    this.carry.push(text);
  }

  private take(): string {
    const s = this.carry.length === 1 ? this.carry[0] : this.carry.join('');
    this.carry = [];
    this.carryLength = 0;
    return s;
  }
}

/**
 * A regular, uncompressed file's whole text in one read and one decode, for the readers that take
 * their input whole (once its head has been sniffed from the stream): joining the stream's blocks
 * would copy the text once more (issue 23). Undefined when the file is not that — a pipe, a
 * `/proc` file, a `.gz`, a file longer than a string can be or one that grew while it was read —
 * and the caller joins the blocks (readWhole()) instead. Throws InputLimitError past --max-input-size.
 */
export function wholeFile(path: string, limits: InputLimits, report: StreamReport): string | undefined {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size === 0 || st.size > MAX_STRING) return undefined;
    if (st.size > limits.maxBytes) throw overSize(limits, st.size);
    const magic = Buffer.alloc(2);
    if (readSync(fd, magic, 0, 2, 0) === 2 && magic[0] === 0x1f && magic[1] === 0x8b) return undefined;
    // One byte more than its size: a file that grew since it was listed is read as a stream.
    const buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, n);
    if (n !== st.size) return undefined;
    report.bytes = n;
    return buf.toString('utf8', 0, n);
  } finally {
    closeSync(fd);
  }
}

/**
 * The whole text of a stream, for readers that read a file whole: refused when it would be
 * longer than a JavaScript string can be (the limit was raised past it), never an internal error.
 */
export async function readWhole(stream: AsyncIterable<string>, format: string): Promise<string> {
  const parts: string[] = [];
  let length = 0;
  for await (const block of stream) {
    length += block.length;
    if (length > MAX_STRING) {
      throw new InputLimitError(
        `kpx reads ${format} files whole, and this one is longer than a JavaScript string can be (${sizeWords(MAX_STRING)}); not read: split it, or keep only the part you need`,
        'string-length',
      );
    }
    parts.push(block);
  }
  return parts.length === 1 ? parts[0] : parts.join('');
}

/**
 * A small file read whole (a `--config`, a `--baseline`), at most `maxBytes`: read in pieces,
 * and refused as soon as it holds more (`/dev/zero`, a 1 GB file, a FIFO that never ends), so
 * neither memory nor time grows past the limit. `what` names it in the refusal. Throws
 * InputLimitError, or the file system's error.
 */
export function readBoundedFile(path: string, maxBytes: number, what: string): string {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.allocUnsafe(Math.min(READ_BYTES, maxBytes + 1));
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) {
        throw new InputLimitError(`${what} holds more than ${sizeWords(maxBytes)}, the most kpx reads from it; not read`, 'max-input-size');
      }
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
