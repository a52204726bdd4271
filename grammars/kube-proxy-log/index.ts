/**
 * kube-proxy's log, as people paste it (`kubectl logs`, `journalctl -u kube-proxy`, `systemctl
 * status`, docker/CRI log files, a terminal UI, k3s' one-process journal), → records: one per klog
 * (or logrus) entry, with its key=value pairs, its `key=<` … ` >` blocks (and the pairs klog writes
 * after the closing ` >`), and the free-text lines that continue it (an old-style multi-line
 * message, the iptables-restore payload old kube-proxies logged after "Restoring iptables rules:",
 * a line the terminal wrapped). Syntax only: what a record means is decided in
 * src/extract/kube-proxy-log.ts. The grammar, its sources and deviations: README.md.
 *
 * Every line of the file is accounted for: a record's header, block or continuation line, paste
 * noise (prompts, fences, `systemctl status`' header, journal markers), a line another program
 * wrote into the same journal (systemd's own lines about the unit are kept as `unit` lines), or a
 * line before the first record (`orphan`, e.g. a pasted tail of a payload).
 */
import { noiseKind, splitInput, type NoiseKind } from '../common/text.js';
import { prefixShape, writerOf, type Envelope } from './envelope.js';
import { klogHeader, LOGRUS_TTY, type KeyValue, type KlogLevel } from './klog.js';
import { readLogrus, readPairs, readStructured } from './structured.js';
import { geometryOf, prepareLines, type PreparedLine } from './lines.js';
import { SYSTEMD_STATUS } from './systemd.js';

export type { Envelope, EnvelopeKind } from './envelope.js';
export { unwrap } from './envelope.js';

/** A line of the file as the record holds it: the text with its wrappers removed. */
export interface BodyLine {
  /** 1-based line in the file. */
  readonly line: number;
  /** 1-based column of `text` in the file's line; 0 when decoded from a JSON record. */
  readonly column: number;
  readonly text: string;
  /** The terminal wrapped the line before at its width: this one goes on without a line break. */
  readonly wrapped?: boolean;
}

export interface LogPair {
  readonly key: string;
  readonly value: string;
  /** For `key=<` blocks: the block's lines, with the block's indentation removed. */
  readonly lines?: readonly BodyLine[];
}

export interface LogRecord {
  readonly line: number;
  readonly endLine: number;
  readonly format: 'klog' | 'logrus';
  readonly level: KlogLevel;
  /** klog `MMDD hh:mm:ss.uuuuuu`, or the logrus/wrapper time. */
  readonly time: string;
  /** The wrapper's own time (journald, --timestamps, docker), when there is one. */
  readonly wallTime?: string;
  readonly thread?: number;
  readonly source?: string;
  readonly structured: boolean;
  /** The message: the quoted msg of a structured line, else the free text on the header line. */
  readonly msg: string;
  readonly msgColumn: number;
  readonly pairs: readonly LogPair[];
  /** Lines after the header that carry no header of their own (old multi-line messages, wrapped lines). */
  readonly continuation: readonly BodyLine[];
  readonly envelope: Envelope;
  /** The terminal wrapped the header line at this width: the next line goes on without a line break. */
  readonly wrappedAt?: number;
  /** The terminal (journalctl, less -S, systemctl status) cut the line at this width, or ellipsised it: its end is lost. */
  readonly cutAt?: number;
}

export type OtherNoise = NoiseKind | 'journal-marker' | 'systemd-status' | 'other-process';

export type OtherLine =
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: OtherNoise; readonly ident?: string }
  | { readonly kind: 'unit'; readonly line: number; readonly text: string; readonly time?: string }
  | { readonly kind: 'orphan'; readonly line: number; readonly column: number; readonly text: string }
  | { readonly kind: 'bad-json'; readonly line: number; readonly text: string; readonly message: string }
  | { readonly kind: 'unterminated-block'; readonly line: number; readonly key: string };

export interface KubeProxyLogSyntax {
  readonly records: readonly LogRecord[];
  readonly other: readonly OtherLine[];
  readonly lineCount: number;
}

const JOURNAL_MARKER = /^-- (Logs begin at|Journal begins at|No entries|Reboot|Boot [0-9a-f]+)/;
/** A block's end, and the pairs klog writes after it (` > ipFamily="IPv6"`). */
const BLOCK_END = /^\s*>(?:\s+(\S.*))?$/;
const BLOCK_TAIL = /^\s+>(?:\s+[A-Za-z_][\w.-]*=|\s*$)/;
const LOGRUS_LEVEL: Record<string, KlogLevel> = { debug: 'I', debu: 'I', info: 'I', warning: 'W', warn: 'W', error: 'E', erro: 'E', fatal: 'F', fata: 'F', panic: 'F', pani: 'F' };

type Building = { -readonly [K in keyof LogRecord]: LogRecord[K] } & {
  pairs: LogPair[];
  continuation: BodyLine[];
  writer: string;
  /** The shape of the header's unnamed wrapper, to peel it off the lines that continue the entry. */
  shape?: RegExp;
  /** The pair whose `<` block is being read, and the indentation its first line set. */
  open?: { index: number; lines: BodyLine[]; indent?: string };
};

function freeze(b: Building): LogRecord {
  const { open: _open, writer: _writer, shape: _shape, ...r } = b;
  return r;
}

/** A line continuing an entry whose header came in a wrapper kpx has no name for: the same wrapper peeled off. */
function peel(p: PreparedLine, cur: Building | undefined): PreparedLine {
  if (!cur?.envelope.prefix || p.u.envelope.prefix !== undefined) return p;
  cur.shape ??= prefixShape(cur.envelope.prefix);
  const m = cur.shape.exec(p.u.body);
  if (!m) return p;
  return { ...p, u: { body: p.u.body.slice(m[0].length), column: p.u.column ? p.u.column + m[0].length : 0, envelope: { ...p.u.envelope, kinds: [...p.u.envelope.kinds, 'prefix'], prefix: m[0] } } };
}

/** A header line → a record being built, or undefined when the body is not an entry. */
function startRecord(p: PreparedLine, lead: number, width: number | undefined, cuts: boolean): Building | undefined {
  const u = p.u;
  const body = u.body.slice(lead);
  const wallTime = u.envelope.time !== undefined ? { wallTime: u.envelope.time } : {};
  const base = { line: p.line, endLine: p.endLine, continuation: [], envelope: u.envelope, writer: writerOf(u.envelope), ...wallTime };
  const ellipsis = /…|\.\.\.$/.exec(p.raw.trimEnd());
  const geometry = width !== undefined && p.raw.length === width ? (cuts ? { cutAt: width } : { wrappedAt: width }) : ellipsis ? { cutAt: ellipsis.index + 1 } : {};
  const h = klogHeader(body);
  if (h) {
    const message = body.slice(h.messageOffset);
    const s = readStructured(message);
    const b: Building = {
      ...base,
      ...geometry,
      format: 'klog',
      level: h.level,
      time: `${h.date} ${h.time}`,
      thread: h.thread,
      source: h.source,
      structured: s !== undefined,
      msg: s ? s.msg : message,
      msgColumn: u.column ? u.column + lead + h.messageOffset : 0,
      pairs: s ? s.pairs.map((x) => ({ key: x.key, value: x.value })) : [],
    };
    openBlock(b, s?.pairs ?? [], 0);
    return b;
  }
  const lr = readLogrus(body);
  if (lr) {
    const b: Building = { ...base, ...geometry, format: 'logrus', level: LOGRUS_LEVEL[lr.level.toLowerCase()] ?? 'I', time: lr.time, structured: true, msg: lr.msg, msgColumn: u.column, pairs: lr.pairs.map((x) => ({ key: x.key, value: x.value })) };
    openBlock(b, lr.pairs, 0);
    return b;
  }
  const tty = LOGRUS_TTY.exec(body);
  if (tty) return { ...base, ...geometry, format: 'logrus', level: LOGRUS_LEVEL[tty[1].toLowerCase()] ?? 'I', time: tty[2], structured: false, msg: tty[3], msgColumn: u.column ? u.column + lead + tty[0].length - tty[3].length : 0, pairs: [] };
  return undefined;
}

/** Pairs read from index `from` on: the last may open a `key=<` block. */
function openBlock(b: Building, pairs: readonly KeyValue[], from: number): void {
  const i = pairs.findIndex((x) => x.block);
  if (i >= 0) b.open = { index: from + i, lines: [] };
}

function closeBlock(b: Building): void {
  if (!b.open) return;
  const p = b.pairs[b.open.index];
  b.pairs[b.open.index] = { key: p.key, value: b.open.lines.map((l) => l.text).join('\n'), lines: b.open.lines };
  b.open = undefined;
}

/** A line inside an open `key=<` block: its end (with the pairs after it), or one of its lines. */
function blockLine(cur: Building, p: PreparedLine): void {
  const open = cur.open!;
  const body = p.u.body;
  cur.endLine = p.endLine;
  const end = BLOCK_END.exec(body);
  if (end) {
    closeBlock(cur);
    const after = end[1] !== undefined ? readPairs(end[1]) : undefined;
    if (after) {
      const from = cur.pairs.length;
      cur.pairs.push(...after.map((x) => ({ key: x.key, value: x.value })));
      openBlock(cur, after, from);
    }
    return;
  }
  open.indent ??= /^(\t| {1,8})?/.exec(body)?.[0] ?? '';
  const strip = body.startsWith(open.indent) ? open.indent.length : /^\s*/.exec(body)![0].length;
  open.lines.push({ line: p.line, column: p.u.column ? p.u.column + strip : 0, text: body.slice(strip) });
}

/** A line that is not an entry: noise, another program's line, a continuation, or an orphan. */
function nonEntry(p: PreparedLine, cur: Building | undefined, other: OtherLine[]): boolean {
  const { u, line, raw } = p;
  // ` > key=value`: the end of a block whose start is not in the paste (not a `>` prompt).
  if (BLOCK_TAIL.test(u.body)) return false;
  const noise = noiseKind(u.body);
  if (noise) return void other.push({ kind: 'noise', line, text: raw, noise }), true;
  if (JOURNAL_MARKER.test(u.body)) return void other.push({ kind: 'noise', line, text: raw, noise: 'journal-marker' }), true;
  if (!u.envelope.kinds.length && SYSTEMD_STATUS.test(raw)) return void other.push({ kind: 'noise', line, text: raw, noise: 'systemd-status' }), true;
  const ident = u.envelope.ident;
  if (ident === undefined || (cur && writerOf(u.envelope) === cur.writer)) return false;
  // systemd's own lines about the unit (started, exited, failed) tell whether kube-proxy runs.
  if (ident === 'systemd') return void other.push({ kind: 'unit', line, text: u.body, ...(u.envelope.time !== undefined ? { time: u.envelope.time } : {}) }), true;
  // Another program in the same journal does not continue kube-proxy's entry; the same program
  // under another pid (a restart) before its first entry is an orphan line.
  if (!cur || cur.envelope.ident === ident) return false;
  other.push({ kind: 'noise', line, text: raw, noise: 'other-process', ident });
  return true;
}

export function parseKubeProxyLog(text: string): KubeProxyLogSyntax {
  const input = splitInput(text);
  const prepared = prepareLines(input.lines);
  const { width, cuts } = geometryOf(prepared);
  const records: LogRecord[] = [];
  const other: OtherLine[] = [];
  let cur: Building | undefined;

  const finish = () => {
    if (!cur) return;
    if (cur.open) {
      other.push({ kind: 'unterminated-block', line: cur.line, key: cur.pairs[cur.open.index].key });
      closeBlock(cur);
    }
    records.push(freeze(cur));
    cur = undefined;
  };

  let prevLength = -1;
  for (const original of prepared) {
    const p = peel(original, cur);
    const { u, line } = p;
    // A full-width line before this one, on a terminal that wraps: this line is its remainder.
    const wrapped = width !== undefined && !cuts && prevLength === width;
    prevLength = original.raw.length;
    if (u.envelope.badJson !== undefined) {
      other.push({ kind: 'bad-json', line, text: p.raw, message: u.envelope.badJson });
      continue;
    }
    // Inside a `key=<` block every line belongs to it until ` >`, even blank ones.
    if (cur?.open) {
      blockLine(cur, p);
      continue;
    }
    if (u.body.trim() === '') continue;
    // Pastes indent whole logs (markdown code blocks, `\t` before each line): a header may follow blanks.
    const lead = /^\s*/.exec(u.body)![0].length;
    const started = startRecord(p, lead, width, cuts);
    if (started) {
      finish();
      cur = started;
      continue;
    }
    if (nonEntry(p, cur, other)) continue;
    if (cur && (u.envelope.ident === undefined || writerOf(u.envelope) === cur.writer)) {
      cur.endLine = p.endLine;
      cur.continuation.push({ line, column: u.column, text: u.body, ...(wrapped ? { wrapped: true } : {}) });
      continue;
    }
    other.push({ kind: 'orphan', line, column: u.column, text: u.body });
  }
  finish();
  return { records, other, lineCount: input.lines.length };
}
