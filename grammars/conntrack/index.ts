/**
 * Connection-tracking listings → per-line syntax, read line by line (never the whole file at once):
 *  - `conntrack -L` (conntrack-tools 1.4.x; `-o extended`, `-o id`, `-o ktimestamp`), with the
 *    "conntrack v1.4.7 (conntrack-tools): N flow entries have been shown." line it prints on stderr;
 *  - `/proc/net/nf_conntrack` (the kernel's `ct_seq_show()`: `ipv4 2 tcp 6 …`, the `-o extended` layout).
 *
 * Speed without losing the grammar: a table holds up to millions of lines of a handful of shapes.
 * The words of a line are classified cheaply (`shapeOf`: `src=`, a number, `[ASSURED]`, a word);
 * the first line of each shape is lexed and parsed by the Chevrotain grammar (./parser.ts), which
 * returns a plan (token indices by part). Lines of the same shape reuse the plan — the grammar's
 * decisions depend only on token types, which the shape fixes — and only their values are checked
 * (`checkEntry`). A line whose words the classifier cannot vouch for always takes the full parse.
 *
 * The reader holds no entries: it hands each one to a sink, so the caller decides how to keep them
 * (src/extract/conntrack.ts packs them into typed arrays).
 */
import { Lexer, type IRecognitionException } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind } from '../common/text.js';
import { ConntrackLineParser, type EntryPlan, type TuplePlan } from './parser.js';
import * as T from './tokens.js';

export type { EntryPlan, TuplePlan, Tok } from './parser.js';

/** One entry line: its words (a timestamp's blanks kept inside its word) and the plan naming them. */
export interface EntrySyntax {
  readonly line: number;
  readonly text: string;
  readonly words: readonly string[];
  readonly plan: EntryPlan;
}

export interface ListingSink {
  entry(e: EntrySyntax): void;
  /** The "N flow entries have been shown." line. */
  summary?(s: { readonly line: number; readonly version: string; readonly count: number }): void;
  diagnostic(d: Diagnostic): void;
}

/** Protocol name → IANA number, as libnetfilter_conntrack and the kernel print them. */
export const PROTOCOLS: Readonly<Record<string, number>> = {
  icmp: 1,
  igmp: 2,
  tcp: 6,
  udp: 17,
  dccp: 33,
  gre: 47,
  icmpv6: 58,
  sctp: 132,
  udplite: 136,
};
export const L3: Readonly<Record<string, number>> = { ipv4: 2, ipv6: 10 };

/** State names per protocol (libnetfilter_conntrack's tables, the kernel's `*_conntrack_names`). */
export const STATES: Readonly<Record<string, readonly string[]>> = {
  tcp: ['NONE', 'SYN_SENT', 'SYN_RECV', 'ESTABLISHED', 'FIN_WAIT', 'CLOSE_WAIT', 'LAST_ACK', 'TIME_WAIT', 'CLOSE', 'LISTEN', 'SYN_SENT2', 'MAX', 'IGNORE', 'RETRANS', 'UNACK'],
  sctp: ['NONE', 'CLOSED', 'COOKIE_WAIT', 'COOKIE_ECHOED', 'ESTABLISHED', 'SHUTDOWN_SENT', 'SHUTDOWN_RECD', 'SHUTDOWN_ACK_SENT', 'HEARTBEAT_SENT', 'HEARTBEAT_ACKED'],
  dccp: ['NONE', 'REQUEST', 'RESPOND', 'PARTOPEN', 'OPEN', 'CLOSEREQ', 'CLOSING', 'TIMEWAIT', 'IGNORE', 'INVALID'],
};

const SUMMARY = /^conntrack v(\d+(?:\.\d+)*) \(conntrack-tools\): (\d+) (?:flow|expectation) entries have been shown\.$/;
const SUMMARY_ANYWHERE = /conntrack v(\d+(?:\.\d+)*) \(conntrack-tools\): (\d+) (?:flow|expectation) entries have been shown\./;
/** A line cut at its start: the protocol number, a timeout, then the rest of an entry. */
const CUT_START = /^\s*(\d{1,3}) \d+ (?:[A-Z_]+ )?src=/;
const NAME_OF: Readonly<Record<number, string>> = { 1: 'icmp', 6: 'tcp', 17: 'udp', 33: 'dccp', 47: 'gre', 58: 'icmpv6', 132: 'sctp', 136: 'udplite' };

/** The count line merged with an entry (before or after it). */
function splitSummary(text: string): { entry: string; summary: { version: string; count: number } } | undefined {
  const m = SUMMARY_ANYWHERE.exec(text);
  if (!m || (m.index === 0 && m[0].length === text.trim().length)) return undefined;
  return { entry: text.slice(0, m.index) + text.slice(m.index + m[0].length), summary: { version: m[1], count: Number(m[2]) } };
}
/** What conntrack prints on errors, pasted with the listing. */
const STDERR = /^(conntrack v[\d.]+ \(conntrack-tools\): (?!\d+ flow)|conntrack: |\S*conntrack: command not found|sudo: |bash: |sh: |cat: )/;

let lexer: Lexer | undefined;
let parser: ConntrackLineParser | undefined;
function tools(): { lexer: Lexer; parser: ConntrackLineParser } {
  lexer ??= new Lexer(T.allTokens, { positionTracking: 'onlyOffset', ensureOptimizations: true });
  parser ??= new ConntrackLineParser();
  return { lexer, parser };
}

const FLAGS = new Set(['[ASSURED]', '[UNREPLIED]', '[OFFLOAD]', '[HW_OFFLOAD]']);
const KEY = /^[A-Za-z][A-Za-z0-9_-]*=/;
const DIGITS = /^\d+$/;
const WORD = /^[^=[\]]+$/;

/**
 * The words of a line (blank-separated; a `[start=… …]` timestamp is one word) and its shape: one
 * class per word, exactly the token type the lexer would give it — or undefined when the classifier
 * cannot be sure (the line then always takes the full parse).
 */
export function shapeOf(text: string): { words: string[]; shape: string | undefined } {
  const raw = text.trim().split(/\s+/);
  const words: string[] = [];
  const classes: string[] = [];
  let sure = true;
  for (let i = 0; i < raw.length; i++) {
    let w = raw[i];
    if (w.charCodeAt(0) === 0x5b /* [ */) {
      if ((w.startsWith('[start=') || w.startsWith('[stop=')) && !w.endsWith(']')) {
        while (i + 1 < raw.length && !w.endsWith(']')) w += ` ${raw[++i]}`;
        words.push(w);
        classes.push('T');
        continue;
      }
      words.push(w);
      classes.push(FLAGS.has(w) ? w : w.startsWith('[start=') || w.startsWith('[stop=') ? 'T' : 'F');
      if (w.indexOf(']') !== w.length - 1) sure = false;
      continue;
    }
    words.push(w);
    const k = KEY.exec(w);
    if (k) classes.push(k[0]);
    else if (DIGITS.test(w)) classes.push('#');
    else if (WORD.test(w)) classes.push('w');
    else {
      classes.push('?');
      sure = false;
    }
  }
  return { words, shape: sure ? classes.join(' ') : undefined };
}

/** 1-based column of word `i` of `text` (blank-separated as shapeOf splits). */
export function columnOf(text: string, words: readonly string[], i: number): number {
  let at = 0;
  for (let k = 0; k <= i && k < words.length; k++) {
    const first = words[k].split(' ')[0];
    at = text.indexOf(first, at);
    if (k < i) at += first.length;
  }
  return at < 0 ? 1 : at + 1;
}

function expectedOf(err: IRecognitionException): string {
  if (err.name === 'NotAllInputParsedException') return 'end of line';
  const arrows = /-->\s*(.*?)\s*<--/.exec(err.message);
  if (arrows && !err.message.startsWith('Expecting: one of')) return arrows[1];
  const seqs = [...new Set([...err.message.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1].split(',')[0].trim()))];
  return seqs.length > 0 ? seqs.slice(0, 6).join(' or ') : err.message.split('\n')[0];
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-fA-F:]*:[0-9a-fA-F:.]*$/;

/** Is `v` an address as conntrack prints one (dotted IPv4, or IPv6 with colons)? */
export function isAddress(v: string): boolean {
  return IPV4.test(v) || (IPV6.test(v) && v.length >= 2);
}

/**
 * A value the author hid before pasting: `<clusterIp>`, `<pod-ip>`, `x.x.x.x`, `***`, `REDACTED`. The
 * entry is still read (its protocol, state, ports and flags are there); what it hides is unknown.
 */
export const REDACTED = /^(<[^<>=\s]*>|\{[^{}=\s]*\}|[xX*#]+(\.[xX*#]+){1,7}|\*+|#+|x+|X+|redacted|\[redacted\]|hidden|…|\.\.\.)$/i;

/**
 * Value checks the grammar cannot make (addresses, port ranges, protocol number against name, states).
 * Returns the problems as [word index, severity, code, message, expected]; an `error` drops the entry.
 */
export function checkEntry(words: readonly string[], p: EntryPlan): [number, 'error' | 'warning' | 'info', string, string, string][] {
  const out: [number, 'error' | 'warning' | 'info', string, string, string][] = [];
  const val = (i: number): string => words[i].slice(words[i].indexOf('=') + 1);
  const hidden = (i: number, dir: string): boolean => {
    if (!REDACTED.test(val(i))) return false;
    out.push([i, 'info', 'conntrack/redacted', `${dir} ${words[i].split('=')[0]} was hidden by the author: the entry is read, that value is unknown`, 'a value']);
    return true;
  };
  const tuple = (t: TuplePlan, dir: string): void => {
    for (const i of [t.src, t.dst]) if (!isAddress(val(i)) && !hidden(i, dir)) out.push([i, 'error', 'parse/bad-address', `${dir} ${words[i].split('=')[0]} is not an IP address`, 'an IPv4 or IPv6 address']);
    for (const i of [t.sport, t.dport, t.id]) {
      if (i < 0) continue;
      const v = val(i);
      if ((!DIGITS.test(v) || Number(v) > 65535) && !hidden(i, dir)) out.push([i, 'error', 'parse/bad-port', `${dir} ${words[i].split('=')[0]} is not a port (0-65535)`, 'a number 0-65535']);
    }
    for (const i of [t.type, t.code]) if (i >= 0 && (!DIGITS.test(val(i)) || Number(val(i)) > 255)) out.push([i, 'error', 'parse/bad-number', `${dir} ${words[i].split('=')[0]} is not a number 0-255`, 'a number 0-255']);
    for (const i of [t.packets, t.bytes]) if (i >= 0 && !DIGITS.test(val(i))) out.push([i, 'error', 'parse/bad-number', `${dir} counter ${words[i]} is not a number`, 'a number']);
  };
  const proto = words[p.proto];
  const known = PROTOCOLS[proto];
  if (proto !== 'unknown' && known === undefined) out.push([p.proto, 'warning', 'conntrack/unknown-protocol', `unknown protocol name ${proto}`, Object.keys(PROTOCOLS).join('|')]);
  else if (known !== undefined && Number(words[p.protonum]) !== known) out.push([p.protonum, 'error', 'parse/protocol-mismatch', `protocol number ${words[p.protonum]} does not match ${proto} (${known})`, String(known)]);
  if (p.l3 >= 0) {
    const l3 = L3[words[p.l3]];
    if (l3 === undefined) out.push([p.l3, 'warning', 'conntrack/unknown-family', `unknown layer-3 protocol ${words[p.l3]}`, 'ipv4|ipv6']);
    else if (Number(words[p.l3num]) !== l3) out.push([p.l3num, 'error', 'parse/protocol-mismatch', `layer-3 number ${words[p.l3num]} does not match ${words[p.l3]} (${l3})`, String(l3)]);
  }
  if (p.state >= 0) {
    const states = STATES[proto];
    if (!states) out.push([p.state, 'warning', 'conntrack/unexpected-state', `${proto} entries have no state, found ${words[p.state]}`, 'src=']);
    else if (!states.includes(words[p.state])) out.push([p.state, 'warning', 'conntrack/unknown-state', `unknown ${proto} state ${words[p.state]}`, states.join('|')]);
  }
  tuple(p.orig, 'original');
  tuple(p.reply, 'reply');
  for (const i of [p.mark, p.use, p.id, p.delta, ...p.zones]) {
    if (i < 0) continue;
    const v = val(i);
    // marks print in decimal; a hex mark (0x…) is what some paste tools show: accept it.
    if (!DIGITS.test(v) && !(i === p.mark && /^0x[0-9a-fA-F]+$/.test(v))) out.push([i, 'error', 'parse/bad-number', `${words[i].split('=')[0]} is not a number`, 'a number']);
  }
  return out;
}

/** Cap on diagnostics kept per file: a damaged million-line table must not become a million diagnostics. */
export const MAX_DIAGNOSTICS = 200;

/**
 * A line-by-line reader. Feed it text in chunks of any size (`push`), then `end()`; or call
 * `line()` with whole lines. Entries go to the sink as they are read.
 */
export class ConntrackListingReader {
  private readonly plans = new Map<string, EntryPlan>();
  private rest = '';
  private lineNo = 0;
  private diagnostics = 0;
  private dropped = 0;
  private hadCr = false;
  /** Lines that were entries, and of those, how many took the full parse. */
  entries = 0;
  fullParses = 0;
  constructor(
    private readonly file: string,
    private readonly sink: ListingSink,
  ) {}

  private diag(d: Diagnostic): void {
    if (this.diagnostics++ < MAX_DIAGNOSTICS) this.sink.diagnostic(d);
    else this.dropped++;
  }

  /** A chunk of the file; lines may be cut anywhere. */
  push(chunk: string): void {
    let text = this.rest + chunk;
    if (this.lineNo === 0 && this.rest === '' && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      this.line(text.slice(start, nl));
      start = nl + 1;
    }
    this.rest = text.slice(start);
  }

  /** The end of the input; `cut` is set when the last line had no newline. */
  end(): { missingFinalNewline: boolean; lines: number } {
    const missing = this.rest !== '';
    if (missing) this.line(this.rest, true);
    this.rest = '';
    if (this.dropped > 0) {
      this.sink.diagnostic(diagnostic('info', 'input/too-many-diagnostics', `${this.dropped} more problems in this file are not listed`, this.file, this.lineNo, 1));
    }
    return { missingFinalNewline: missing, lines: this.lineNo };
  }

  /** One line (without its newline). */
  line(raw: string, last = false): void {
    const line = ++this.lineNo;
    let text = raw;
    if (text.length > 0 && text.charCodeAt(text.length - 1) === 13) {
      text = text.replace(/\r+$/, '');
      this.hadCr = true;
    }
    // conntrack prints its count on stderr, unbuffered: pasted, it lands on the same line as an entry.
    if (text.endsWith('shown.') || text.startsWith('conntrack v')) {
      const merged = splitSummary(text);
      if (merged) {
        this.sink.summary?.({ line, ...merged.summary });
        if (merged.entry.trim() === '') return;
        text = merged.entry;
      }
    }
    // The paste starts mid-line (`6 46 TIME_WAIT src=…`): the protocol's name is gone, its number is there.
    let restored = 0;
    const cut = CUT_START.exec(text);
    if (cut && NAME_OF[Number(cut[1])] !== undefined) {
      const name = NAME_OF[Number(cut[1])];
      this.diag(diagnostic('info', 'conntrack/cut-line', `the line starts mid-entry: the protocol name (${name}) is taken from its number ${cut[1]}`, this.file, line, 1));
      text = `${name} ${text.trimStart()}`;
      restored = name.length + 1;
    }
    // An entry always has `key=value`s; a line without any is the author's words or another tool's output.
    if (text.indexOf('=') < 0) {
      const trimmed = text.trim();
      if (trimmed === '' || this.other(trimmed, text, line) || this.prose(text, line)) return;
    }
    const first = text.charCodeAt(0);
    // Fast lane: an entry line starts with a protocol or family name (a lower-case letter).
    if (!(first >= 0x61 && first <= 0x7a)) {
      const trimmed = text.trim();
      if (trimmed === '') return;
      if (this.other(trimmed, text, line)) return;
    } else if (text.startsWith('conntrack')) {
      if (this.other(text.trim(), text, line)) return;
    }
    const { words, shape } = shapeOf(text);
    let plan = shape === undefined ? undefined : this.plans.get(shape);
    if (plan === undefined) {
      plan = this.parse(text, line, last);
      if (plan === undefined) return;
      if (shape !== undefined) this.plans.set(shape, plan);
    }
    const problems = checkEntry(words, plan);
    let bad = false;
    for (const [i, severity, code, message, expected] of problems) {
      if (severity === 'error') bad = true;
      this.diag(diagnostic(severity, code, message, this.file, line, Math.max(1, columnOf(text, words, i) - restored), { expected, found: printable(words[i], 60) }));
    }
    for (const i of plan.unknown) {
      this.diag(diagnostic('info', 'conntrack/unknown-attribute', `attribute ${printable(words[i].split('=')[0], 40)} is not modelled`, this.file, line, Math.max(1, columnOf(text, words, i) - restored)));
    }
    if (bad) return;
    this.entries++;
    this.sink.entry({ line, text, words, plan });
  }

  /** A line of words without `=`: prose around the paste (info), when it reads as a sentence. */
  private prose(text: string, line: number): boolean {
    const words = text.trim().split(/\s+/);
    if (words.length < 3 || words.filter((w) => /^[A-Za-z'’,.?!:()-]+$/.test(w)).length * 4 < words.length * 3) return false;
    this.diag(diagnostic('info', 'input/prose', `the author's words, not an entry: ${printable(text.trim(), 120)}`, this.file, line, 1));
    return true;
  }

  /** Non-entry lines: the summary, noise, stderr. True when the line was consumed. */
  private other(trimmed: string, text: string, line: number): boolean {
    const norm = trimmed.split(/\s+/).join(' ');
    const s = SUMMARY.exec(norm);
    if (s) {
      this.sink.summary?.({ line, version: s[1], count: Number(s[2]) });
      return true;
    }
    const noise = noiseKind(text) ?? (trimmed.startsWith('#') ? 'comment' : undefined);
    if (noise) {
      this.diag(diagnostic('info', 'input/noise', `ignored ${noise} line: ${printable(trimmed)}`, this.file, line, 1));
      return true;
    }
    if (STDERR.test(norm)) {
      this.diag(diagnostic('warning', 'input/stderr', `error output pasted into the dump: ${printable(norm)}`, this.file, line, 1));
      return true;
    }
    return false;
  }

  /** The full grammar, for the first line of a shape and for lines the classifier cannot vouch for. */
  private parse(text: string, line: number, last: boolean): EntryPlan | undefined {
    this.fullParses++;
    const { lexer, parser } = tools();
    const lexed = lexer.tokenize(text);
    if (lexed.errors.length > 0) {
      const e = lexed.errors[0];
      this.diag(
        diagnostic('error', 'parse/unexpected-character', `unexpected character ${printable(text.substr(e.offset, 1))} in a conntrack entry`, this.file, line, e.offset + 1, {
          expected: 'key=value, [FLAG], a protocol name or a number',
          found: printable(text.substr(e.offset, 20)),
        }),
      );
      return undefined;
    }
    const plan = parser.parseLine(lexed.tokens);
    if (parser.errors.length === 0) return plan;
    const err = parser.errors[0];
    const atEnd = Number.isNaN(err.token.startOffset) || err.token.tokenType.name === 'EOF';
    const column = atEnd ? text.trimEnd().length + 1 : err.token.startOffset + 1;
    const found = atEnd ? 'end of line' : printable(err.token.image, 40);
    const expected = expectedOf(err);
    const cut = last;
    this.diag(
      diagnostic(cut ? 'warning' : 'error', cut ? 'parse/truncated-line' : 'parse/unexpected-token', `${cut ? 'truncated' : 'malformed'} conntrack entry: expected ${expected}, found ${found}`, this.file, line, column, {
        expected,
        found,
      }),
    );
    return undefined;
  }

  /** How many distinct line shapes were seen (each parsed once by the grammar). */
  get shapes(): number {
    return this.plans.size;
  }
  get crlf(): boolean {
    return this.hadCr;
  }
}

/** Read a whole text (tests, small files). Large inputs should be pushed in chunks. */
export function readConntrackListing(text: string, file: string, sink: ListingSink): ConntrackListingReader {
  const r = new ConntrackListingReader(file, sink);
  const CHUNK = 1 << 20;
  for (let i = 0; i < text.length; i += CHUNK) r.push(text.slice(i, i + CHUNK));
  r.end();
  return r;
}

export { parseConntrackStats, type StatsSyntax, type StatsLine } from './stats.js';
