/**
 * Tokens of one connection-tracking entry line: `conntrack -L` (libnetfilter_conntrack's
 * `__snprintf_conntrack_default()`, with `-o extended`, `-o id`, `-o ktimestamp`) and the kernel's
 * `/proc/net/nf_conntrack` (`ct_seq_show()` in nf_conntrack_standalone.c).
 *
 * Every token is one blank-separated word, except a timestamp (`[start=Thu Nov 26 10:00:00 2026]`),
 * which holds blanks inside its brackets. That property is what lets ./index.ts classify the words of
 * a line without the lexer and reuse one parse per line shape (see `shapeOf`).
 *
 * Attribute words (`src=10.0.0.1`) are one token each, key and value together: the value's column is
 * the token's plus the key's length, and values are checked by the parser's actions.
 */
import { createToken, Lexer, type TokenType } from '../common/chevrotain.js';

/** A word ends at a blank or the end of the line. */
const END = '(?![^\\s])';
const DIGIT_CHARS = '0123456789'.split('');
/** Printable ASCII without `=`, `[`, `]`: what a bare word may start with. */
const WORD_CHARS = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => !'=[]'.includes(c));
const LETTERS = WORD_CHARS.filter((c) => /[A-Za-z]/.test(c));

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });

function attr(name: string, keys: readonly string[], label: string): TokenType {
  return createToken({
    name,
    label,
    pattern: new RegExp(`(?:${keys.join('|')})=\\S*`),
    start_chars_hint: [...new Set(keys.map((k) => k[0]))],
  });
}

// ---- flags (`[ASSURED]` …) and timestamps ---------------------------------------------------
export const Unreplied = createToken({ name: 'Unreplied', label: "'[UNREPLIED]'", pattern: new RegExp(`\\[UNREPLIED\\]${END}`), start_chars_hint: ['['] });
export const Assured = createToken({ name: 'Assured', label: "'[ASSURED]'", pattern: new RegExp(`\\[ASSURED\\]${END}`), start_chars_hint: ['['] });
export const Offload = createToken({ name: 'Offload', label: "'[OFFLOAD]'", pattern: new RegExp(`\\[OFFLOAD\\]${END}`), start_chars_hint: ['['] });
export const HwOffload = createToken({ name: 'HwOffload', label: "'[HW_OFFLOAD]'", pattern: new RegExp(`\\[HW_OFFLOAD\\]${END}`), start_chars_hint: ['['] });
/** `-o ktimestamp`: `[start=…]` / `[stop=…]` (ctime-formatted, with blanks). */
export const Timestamp = createToken({ name: 'Timestamp', label: 'timestamp [start=…]', pattern: /\[(?:start|stop)=[^\]\n]*\]/, start_chars_hint: ['['] });
/** Any other bracketed word: kept so the parser can name it in a diagnostic. */
export const OtherFlag = createToken({ name: 'OtherFlag', label: 'flag [...]', pattern: /\[[^\]\s]*\]?/, start_chars_hint: ['['] });

// ---- attributes -------------------------------------------------------------------------------
export const Src = attr('Src', ['src'], 'src=ADDRESS');
export const Dst = attr('Dst', ['dst'], 'dst=ADDRESS');
export const Sport = attr('Sport', ['sport'], 'sport=PORT');
export const Dport = attr('Dport', ['dport'], 'dport=PORT');
export const IcmpType = attr('IcmpType', ['type'], 'type=N');
export const IcmpCode = attr('IcmpCode', ['code'], 'code=N');
/** `id=`: the ICMP echo id inside a tuple, or the entry's id (`-o id`) after the tuples. */
export const Id = attr('Id', ['id'], 'id=N');
/** Other tuple keys some protocols print (GRE `srckey=`/`dstkey=`). */
export const TupleKey = attr('TupleKey', ['srckey', 'dstkey'], 'tuple key');
export const Packets = attr('Packets', ['packets'], 'packets=N');
export const Bytes = attr('Bytes', ['bytes'], 'bytes=N');
export const Mark = attr('Mark', ['mark'], 'mark=N');
export const Secctx = attr('Secctx', ['secctx', 'secmark'], 'secctx=…');
export const Zone = attr('Zone', ['zone', 'orig-zone', 'reply-zone'], 'zone=N');
export const Use = attr('Use', ['use'], 'use=N');
export const Labels = attr('Labels', ['labels'], 'labels=…');
export const Delta = attr('Delta', ['delta-time'], 'delta-time=N');
export const Helper = attr('Helper', ['helper'], 'helper=NAME');
/** Any other `key=value` (a newer tool's attribute): read, reported, not modelled. */
export const OtherAttr = createToken({ name: 'OtherAttr', label: 'attribute key=value', pattern: /[A-Za-z][A-Za-z0-9_-]*=\S*/, start_chars_hint: LETTERS });

// ---- header words -----------------------------------------------------------------------------
export const Integer = createToken({ name: 'Integer', label: 'number', pattern: new RegExp(`\\d+${END}`), start_chars_hint: DIGIT_CHARS });
/** Protocol names (`tcp`, `ipv4`, `unknown`) and states (`ESTABLISHED`). */
export const Word = createToken({ name: 'Word', label: 'word', pattern: /[^\s=[\]]+(?![^\s])/, start_chars_hint: WORD_CHARS });

export const allTokens: TokenType[] = [
  WhiteSpace,
  Unreplied,
  Assured,
  Offload,
  HwOffload,
  Timestamp,
  OtherFlag,
  Src,
  Dst,
  Sport,
  Dport,
  IcmpType,
  IcmpCode,
  Id,
  TupleKey,
  Packets,
  Bytes,
  Mark,
  Secctx,
  Zone,
  Use,
  Labels,
  Delta,
  Helper,
  OtherAttr,
  Integer,
  Word,
];
