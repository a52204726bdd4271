/**
 * Tokens of `ip route` text output (iproute2 `ip/iproute.c print_route()`, FORMATS.md §4.1).
 *
 * Every keyword also belongs to the `AnyWord` category so it can be a value (`table local`,
 * `dev cache0`). A plain `Word` is anything else that is not whitespace; addresses and numbers
 * are Words and are validated by the extractor, not by the lexer (the grammar is a superset).
 *
 * Order matters: `AngleList` (`<local,brd>` after `cache`) before `Word`; each keyword uses
 * `longer_alt: Word` so `devX` or `local0` stay Words.
 */
import { createToken, Lexer, type TokenType } from '../common/chevrotain.js';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });
export const AnyWord = createToken({ name: 'AnyWord', pattern: Lexer.NA });
/** Start characters of a Word, for Chevrotain's first-char optimisation (printable ASCII and Latin/Greek/Cyrillic, `…`). */
export const WORD_START_CHARS: readonly string[] = (() => {
  const out: string[] = [];
  for (let c = 33; c < 127; c++) out.push(String.fromCharCode(c));
  for (let c = 128; c < 1280; c++) out.push(String.fromCharCode(c));
  out.push('\u2026', '\u2018', '\u2019', '\u201c', '\u201d', '\u00a0');
  return out;
})();
export const Word = createToken({ name: 'Word', pattern: /[^\s]+/, start_chars_hint: [...WORD_START_CHARS], categories: [AnyWord] });
export const AngleList = createToken({ name: 'AngleList', pattern: /<[^>\s]*>/, categories: [AnyWord] });

/** `TYPE` words printed before DST (`unicast` only with `-d`). */
export const RouteType = createToken({ name: 'RouteType', pattern: Lexer.NA });
/** Keywords followed by exactly one value. */
export const ValueKey = createToken({ name: 'ValueKey', pattern: Lexer.NA });
/** Route metrics (`mtu 1450`, `mtu lock 1400`, `rtt 10ms`): iproute2 `mx_names`. */
export const MetricKey = createToken({ name: 'MetricKey', pattern: Lexer.NA });
/** Bare flag words (`onlink`, `linkdown`, …): iproute2 `print_rt_flags()`. */
export const FlagKey = createToken({ name: 'FlagKey', pattern: Lexer.NA });
/** Address families after `via` (`via inet6 fd00::1`). */
export const Family = createToken({ name: 'Family', pattern: Lexer.NA });

const keywords: TokenType[] = [];
function kw(word: string, categories: TokenType[]): TokenType {
  const name = `Kw_${word.replace(/[^A-Za-z0-9]/g, '_')}`;
  const t = createToken({ name, pattern: new RegExp(word.replace(/[-]/g, '\\-')), longer_alt: Word, categories: [...categories, AnyWord] });
  keywords.push(t);
  return t;
}

export const ROUTE_TYPES = [
  'unicast', 'local', 'broadcast', 'anycast', 'multicast', 'blackhole', 'unreachable', 'prohibit', 'throw', 'nat', 'xresolve',
] as const;
export const VALUE_KEYS = [
  'tos', 'dsfield', 'table', 'nhid', 'dev', 'proto', 'scope', 'src', 'metric', 'expires', 'pref', 'realms', 'from', 'weight',
  'uid', 'error', 'iif', 'oif', 'mark', 'ttl-propagate', 'vrf', 'ipproto', 'sport', 'dport',
] as const;
export const METRIC_KEYS = [
  'mtu', 'hoplimit', 'advmss', 'reordering', 'window', 'cwnd', 'initcwnd', 'initrwnd', 'features', 'rto_min', 'quickack',
  'congctl', 'fastopen_no_cookie', 'rtt', 'rttvar', 'ssthresh',
] as const;
export const FLAG_KEYS = [
  'onlink', 'linkdown', 'dead', 'pervasive', 'notify', 'offload', 'trap', 'rt_offload_failed', 'rt_offload', 'rt_trap',
  'unresolved',
] as const;

// Longer keywords first where one is a prefix of another in the same position (rt_offload_failed / rt_offload).
const byLength = <T extends string>(xs: readonly T[]) => [...xs].sort((a, b) => b.length - a.length);

export const Nexthop = kw('nexthop', []);
export const Cache = kw('cache', []);
export const Via = kw('via', []);
export const Lock = kw('lock', []);
export const Encap = kw('encap', []);
for (const w of byLength(ROUTE_TYPES)) kw(w, [RouteType]);
for (const w of byLength(VALUE_KEYS)) kw(w, [ValueKey]);
for (const w of byLength(METRIC_KEYS)) kw(w, [MetricKey]);
export const MetricN = createToken({ name: 'MetricN', pattern: /metric_\d+/, longer_alt: Word, categories: [MetricKey, AnyWord] });
for (const w of byLength(FLAG_KEYS)) kw(w, [FlagKey]);
kw('inet6', [Family]);
kw('inet', [Family]);

// `metric_N` before `metric`; otherwise keyword order is irrelevant thanks to longer_alt.
const metricIdx = keywords.findIndex((t) => t.name === 'Kw_metric');
keywords.splice(metricIdx, 0, MetricN);

export const allTokens: TokenType[] = [
  WhiteSpace,
  AngleList,
  ...keywords,
  Word,
  AnyWord,
  RouteType,
  ValueKey,
  MetricKey,
  FlagKey,
  Family,
];
