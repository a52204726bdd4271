/**
 * kube-proxy's log, as people paste it (`kubectl logs`, `journalctl -u kube-proxy`, docker/CRI log
 * files, a terminal UI), → records: one per klog (or logrus) entry, with its key=value pairs,
 * its `key=<` … ` >` blocks and the free-text lines that continue it (an old-style multi-line
 * message, or the iptables-restore payload old kube-proxies logged after "Restoring iptables
 * rules:"). Syntax only: what a record means is decided in src/extract/kube-proxy-log.ts.
 *
 * Every line of the file is accounted for: a record's header, block or continuation line,
 * paste noise, or a line before the first record (`orphan`, e.g. a pasted tail of a payload).
 */
import { noiseKind, splitInput, type NoiseKind } from '../common/text.js';
import { unwrap, type Envelope } from './envelope.js';
import { klogHeader, readLogrus, readStructured, type KlogLevel } from './klog.js';

export type { Envelope, EnvelopeKind } from './envelope.js';
export { unwrap } from './envelope.js';

/** A line of the file as the record holds it: the text with its wrappers removed. */
export interface BodyLine {
  /** 1-based line in the file. */
  readonly line: number;
  /** 1-based column of `text` in the file's line; 0 when decoded from a JSON record. */
  readonly column: number;
  readonly text: string;
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
  /** Lines after the header that carry no header of their own (old multi-line messages). */
  readonly continuation: readonly BodyLine[];
  readonly envelope: Envelope;
}

export type OtherLine =
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: NoiseKind | 'journal-marker' }
  | { readonly kind: 'orphan'; readonly line: number; readonly column: number; readonly text: string }
  | { readonly kind: 'bad-json'; readonly line: number; readonly text: string; readonly message: string }
  | { readonly kind: 'unterminated-block'; readonly line: number; readonly key: string };

export interface KubeProxyLogSyntax {
  readonly records: readonly LogRecord[];
  readonly other: readonly OtherLine[];
  readonly lineCount: number;
}

const JOURNAL_MARKER = /^-- (Logs begin at|Journal begins at|No entries|Reboot|Boot [0-9a-f]+)/;
const BLOCK_END = /^\s*>\s*$/;

const LOGRUS_LEVEL: Record<string, KlogLevel> = { debug: 'I', info: 'I', warning: 'W', warn: 'W', error: 'E', fatal: 'F', panic: 'F' };

interface Building {
  line: number;
  endLine: number;
  format: 'klog' | 'logrus';
  level: KlogLevel;
  time: string;
  wallTime?: string;
  thread?: number;
  source?: string;
  structured: boolean;
  msg: string;
  msgColumn: number;
  pairs: LogPair[];
  continuation: BodyLine[];
  envelope: Envelope;
  /** The pair whose `<` block is being read, and the indentation its first line set. */
  open?: { index: number; lines: BodyLine[]; indent?: string };
}

function freeze(b: Building): LogRecord {
  const r: LogRecord = {
    line: b.line,
    endLine: b.endLine,
    format: b.format,
    level: b.level,
    time: b.time,
    ...(b.wallTime !== undefined ? { wallTime: b.wallTime } : {}),
    ...(b.thread !== undefined ? { thread: b.thread } : {}),
    ...(b.source !== undefined ? { source: b.source } : {}),
    structured: b.structured,
    msg: b.msg,
    msgColumn: b.msgColumn,
    pairs: b.pairs,
    continuation: b.continuation,
    envelope: b.envelope,
  };
  return r;
}

export function parseKubeProxyLog(text: string): KubeProxyLogSyntax {
  const input = splitInput(text);
  const records: LogRecord[] = [];
  const other: OtherLine[] = [];
  let cur: Building | undefined;

  const closeBlock = (b: Building) => {
    if (!b.open) return;
    const p = b.pairs[b.open.index];
    b.pairs[b.open.index] = { key: p.key, value: b.open.lines.map((l) => l.text).join('\n'), lines: b.open.lines };
    b.open = undefined;
  };
  const finish = () => {
    if (!cur) return;
    if (cur.open) {
      other.push({ kind: 'unterminated-block', line: cur.line, key: cur.pairs[cur.open.index].key });
      closeBlock(cur);
    }
    records.push(freeze(cur));
    cur = undefined;
  };

  input.lines.forEach((raw, i) => {
    const line = i + 1;
    const u = unwrap(raw);
    if (u.envelope.badJson !== undefined) {
      other.push({ kind: 'bad-json', line, text: raw, message: u.envelope.badJson });
      return;
    }
    const body = u.body;
    // Inside a `key=<` block every line belongs to it until ` >`, even blank ones.
    if (cur?.open) {
      cur.endLine = line;
      if (BLOCK_END.test(body)) {
        closeBlock(cur);
        return;
      }
      const open = cur.open;
      open.indent ??= /^(\t| {1,8})?/.exec(body)?.[0] ?? '';
      const strip = body.startsWith(open.indent) ? open.indent.length : /^\s*/.exec(body)![0].length;
      open.lines.push({ line, column: u.column ? u.column + strip : 0, text: body.slice(strip) });
      return;
    }
    if (body.trim() === '') return;
    const noise = noiseKind(body);
    if (noise) return void other.push({ kind: 'noise', line, text: raw, noise });
    if (JOURNAL_MARKER.test(body)) return void other.push({ kind: 'noise', line, text: raw, noise: 'journal-marker' });

    // Pastes indent whole logs (markdown code blocks, `\t` before each line): a header may follow blanks.
    const lead = /^\s*/.exec(body)![0].length;
    const h = klogHeader(body.slice(lead));
    if (h) {
      finish();
      const message = body.slice(lead + h.messageOffset);
      const s = readStructured(message);
      cur = {
        line,
        endLine: line,
        format: 'klog',
        level: h.level,
        time: `${h.date} ${h.time}`,
        ...(u.envelope.time !== undefined ? { wallTime: u.envelope.time } : {}),
        thread: h.thread,
        source: h.source,
        structured: s !== undefined,
        msg: s ? s.msg : message,
        msgColumn: u.column ? u.column + lead + h.messageOffset : 0,
        pairs: s ? s.pairs.map((p) => ({ key: p.key, value: p.value })) : [],
        continuation: [],
        envelope: u.envelope,
      };
      const blockIndex = s ? s.pairs.findIndex((p) => p.block) : -1;
      if (blockIndex >= 0) cur.open = { index: blockIndex, lines: [] };
      return;
    }
    const lr = readLogrus(body.slice(lead));
    if (lr) {
      finish();
      cur = {
        line,
        endLine: line,
        format: 'logrus',
        level: LOGRUS_LEVEL[lr.level.toLowerCase()] ?? 'I',
        time: lr.time,
        ...(u.envelope.time !== undefined ? { wallTime: u.envelope.time } : {}),
        structured: true,
        msg: lr.msg,
        msgColumn: u.column,
        pairs: lr.pairs.map((p) => ({ key: p.key, value: p.value })),
        continuation: [],
        envelope: u.envelope,
      };
      const blockIndex = lr.pairs.findIndex((p) => p.block);
      if (blockIndex >= 0) cur.open = { index: blockIndex, lines: [] };
      return;
    }
    if (cur) {
      cur.endLine = line;
      cur.continuation.push({ line, column: u.column, text: body });
      return;
    }
    other.push({ kind: 'orphan', line, column: u.column, text: body });
  });
  finish();
  return { records, other, lineCount: input.lines.length };
}
