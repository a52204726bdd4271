/**
 * Tokens of one `ipvsadm` output line (FORMATS.md §3): the `-L` listings (`-Ln`, `--stats`,
 * `--rate`, `--thresholds`, `--persistent-conn`, `--tun-info`), the `-S`/`--save` rule format
 * and `-Lc` connection entries.
 *
 * ipvsadm pads columns with printf widths (`%-28s`, `%-10u`, …), and pastes strip or re-flow
 * that padding, so the lexer tokenises on whitespace and never relies on column offsets.
 *
 * Order matters: Chevrotain takes the first pattern that matches, not the longest, so
 *  - `->` comes before the option words (an option needs a letter or digit after `-`);
 *  - the exact option spellings (`-A`, `-t`, …) come before the generic OptionWord;
 *  - keywords (`TCP`, `persistent`, `Masq`, …) and numbers come before Word.
 * Every keyword/option/number pattern ends with `(?![^\s()])`, so `persistent` does not match
 * the start of `persistent.example.com:http` and `125K` is not the start of `125Kb`.
 */
import { createToken, Lexer, type TokenType } from '../common/chevrotain.js';

const END = '(?![^\\s()])';

export const WhiteSpace = createToken({
  name: 'WhiteSpace',
  pattern: /[ \t]+/,
  group: Lexer.SKIPPED,
  start_chars_hint: [' ', '\t'],
});

/** `->` introducing a real server (destination) line. */
export const Arrow = createToken({ name: 'Arrow', label: "'->'", pattern: /->/ });

/** Scheduler flags as printed after the scheduler: `(sh-fallback,sh-port)`. */
export const SchedFlags = createToken({
  name: 'SchedFlags',
  label: 'scheduler flags "(…)"',
  pattern: /\([^()\s]*\)/,
  start_chars_hint: ['('],
});
/** A parenthesis that is not part of a flag list (damaged input); kept so the parser can report it. */
export const Paren = createToken({ name: 'Paren', label: 'parenthesis', pattern: /[()]/ });

function word(name: string, spellings: string[], label: string, categories: TokenType[] = []): TokenType {
  const alts = spellings.map((s) => s.replace(/[-]/g, '\\-')).join('|');
  return createToken({
    name,
    label,
    pattern: new RegExp(`(?:${alts})${END}`),
    categories,
    start_chars_hint: [...new Set(spellings.map((s) => s[0]))],
  });
}

// ---- `--save` rule format -------------------------------------------------------------------
/** Any option word (`-s`, `--pe`, `-6`, …); the exact spellings below are its sub-types. */
export const OptionWord = createToken({
  name: 'OptionWord',
  label: 'option',
  pattern: new RegExp(`--?[A-Za-z0-9][A-Za-z0-9-]*${END}`),
  start_chars_hint: ['-'],
});
export const AddService = word('AddService', ['-A', '--add-service'], "'-A'");
export const AddServer = word('AddServer', ['-a', '--add-server'], "'-a'");
/** The virtual-service selector of a rule: `-t`, `-u`, `--sctp-service`, `-f` and long forms. */
export const ServiceOption = word(
  'ServiceOption',
  ['-t', '--tcp-service', '-u', '--udp-service', '--sctp-service', '-f', '--fwmark-service'],
  "service option (-t|-u|--sctp-service|-f)",
);

// ---- numbers ----------------------------------------------------------------------------------
/** `print_largenum()` scaled output: `125426K`, `13034M`, `12G`, `3T`. */
export const ScaledNumber = createToken({
  name: 'ScaledNumber',
  label: 'number',
  pattern: new RegExp(`\\d+[KMGT]${END}`),
  start_chars_hint: ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
});
export const Integer = createToken({
  name: 'Integer',
  label: 'number',
  pattern: new RegExp(`\\d+${END}`),
  start_chars_hint: ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
});

// ---- listing keywords -----------------------------------------------------------------------
export const Protocol = createToken({ name: 'Protocol', label: 'protocol (TCP|UDP|SCTP|FWM)', pattern: Lexer.NA });
export const Tcp = word('Tcp', ['TCP'], "'TCP'", [Protocol]);
export const Udp = word('Udp', ['UDP'], "'UDP'", [Protocol]);
export const Sctp = word('Sctp', ['SCTP'], "'SCTP'", [Protocol]);
export const Fwm = word('Fwm', ['FWM'], "'FWM'", [Protocol]);
export const Ipv6 = word('Ipv6', ['IPv6'], "'IPv6'");
export const Persistent = word('Persistent', ['persistent'], "'persistent'");
export const Mask = word('Mask', ['mask'], "'mask'");
export const Pe = word('Pe', ['pe'], "'pe'");
export const Ops = word('Ops', ['ops'], "'ops'");
export const Forward = createToken({ name: 'Forward', label: 'forward method (Masq|Route|Tunnel|Local)', pattern: Lexer.NA });
export const Masq = word('Masq', ['Masq'], "'Masq'", [Forward]);
export const Route = word('Route', ['Route'], "'Route'", [Forward]);
export const Tunnel = word('Tunnel', ['Tunnel'], "'Tunnel'", [Forward]);
export const Local = word('Local', ['Local'], "'Local'", [Forward]);

/** Anything else without blanks or parentheses: addresses, `host:port`, scheduler names, states. */
export const Word = createToken({
  name: 'Word',
  label: 'word',
  pattern: /[^\s()]+/,
  // Printable ASCII except blanks and parentheses; other first characters are lexing errors.
  start_chars_hint: Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => c !== '(' && c !== ')'),
});

export const allTokens: TokenType[] = [
  WhiteSpace,
  Arrow,
  SchedFlags,
  Paren,
  AddService,
  AddServer,
  ServiceOption,
  OptionWord,
  ScaledNumber,
  Integer,
  Protocol,
  Tcp,
  Udp,
  Sctp,
  Fwm,
  Ipv6,
  Persistent,
  Mask,
  Pe,
  Ops,
  Forward,
  Masq,
  Route,
  Tunnel,
  Local,
  Word,
];
