/**
 * Tokens of one iptables-save / iptables-restore line (FORMATS.md §1).
 *
 * Speed: the lexer knows only a handful of token shapes (so each character position tries
 * one or two patterns), and every option is lexed as one `OptionWord`. `refineOptions()`
 * then gives each option its exact type (`-A`, `--source`, …) with one map lookup — the
 * keyword-by-lookup approach, instead of two dozen option regexes tried in turn.
 * The option pattern ends with `(?![^\s])` so `-s` does not match the start of `-set`.
 */
import { createToken, Lexer, type IToken, type TokenType } from '../common/chevrotain.js';

const END = '(?![^\\s])';

const WORD_START: string[] = [];
for (let c = 0x23; c <= 0x7e; c++) WORD_START.push(String.fromCharCode(c));
for (let c = 0xa1; c <= 0xff; c++) WORD_START.push(String.fromCharCode(c));

/** Every token is an acceptable argument where iptables' getopt takes "the next word whatever it is". */
export const AnyArg = createToken({ name: 'AnyArg', pattern: Lexer.NA });

/**
 * Blanks between words. `\n` is included so that many lines can be lexed in one call (a chunk of
 * the dump); no other pattern crosses a line end, so each line's tokens are what lexing the line
 * alone gives.
 */
export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t\n]+/, group: Lexer.SKIPPED, start_chars_hint: [' ', '\t', '\n'] });

/** Tokens that can be an option's argument (everything but options and `!`). */
export const ArgLike = createToken({ name: 'ArgLike', pattern: Lexer.NA });

export const Counters = createToken({ name: 'Counters', pattern: /\[\d+:\d+\]/, categories: [AnyArg, ArgLike], start_chars_hint: ['['] });
export const Bang = createToken({ name: 'Bang', pattern: /!/, categories: [AnyArg] });
export const QuotedString = createToken({ name: 'QuotedString', pattern: /"(?:[^"\\\n]|\\.)*"/, categories: [AnyArg, ArgLike], start_chars_hint: ['"'] });
/** A quote that never closes: a truncated line. Kept so the diagnostic can say so. */
export const UnterminatedString = createToken({ name: 'UnterminatedString', pattern: /"(?:[^"\\\n]|\\.)*\\?/, categories: [AnyArg, ArgLike], start_chars_hint: ['"'] });
export const TableHeader = createToken({ name: 'TableHeader', pattern: /\*\S+/, categories: [AnyArg, ArgLike], start_chars_hint: ['*'] });
export const ChainDecl = createToken({ name: 'ChainDecl', pattern: /:\S+/, categories: [AnyArg, ArgLike], start_chars_hint: [':'] });

/** Exact option spelling → its token type and the one shared copy of the spelling, filled by option(). */
const OPTION_TYPES = new Map<string, { readonly type: TokenType; readonly image: string }>();

function option(name: string, spellings: string[], category?: TokenType): TokenType {
  const t = createToken({ name, pattern: Lexer.NA, categories: category ? [AnyArg, category] : [AnyArg] });
  for (const s of spellings) OPTION_TYPES.set(s, { type: t, image: s });
  return t;
}

/** Commands (the first word of a rule/restore line). */
/** Restore-style chain commands (`-N`, `-X`, `-F`, `-Z`, `-P`). */
export const ChainCmd = createToken({ name: 'ChainCmd', pattern: Lexer.NA });
export const Append = option('Append', ['-A', '--append']);
export const Insert = option('Insert', ['-I', '--insert']);
export const Delete = option('Delete', ['-D', '--delete']);
export const Replace = option('Replace', ['-R', '--replace']);
export const NewChain = option('NewChain', ['-N', '--new-chain'], ChainCmd);
export const DeleteChain = option('DeleteChain', ['-X', '--delete-chain'], ChainCmd);
export const Flush = option('Flush', ['-F', '--flush'], ChainCmd);
export const Zero = option('Zero', ['-Z', '--zero'], ChainCmd);
export const Policy = option('Policy', ['-P', '--policy'], ChainCmd);

/** Generic rule options that take one argument (iptables(8) PARAMETERS). */
export const GenericWithArg = createToken({ name: 'GenericWithArg', pattern: Lexer.NA });
export const Source = option('Source', ['-s', '--source', '--src'], GenericWithArg);
export const Destination = option('Destination', ['-d', '--destination', '--dst'], GenericWithArg);
export const InInterface = option('InInterface', ['-i', '--in-interface'], GenericWithArg);
export const OutInterface = option('OutInterface', ['-o', '--out-interface'], GenericWithArg);
export const Protocol = option('Protocol', ['-p', '--protocol'], GenericWithArg);
/** Generic flags without argument. */
export const GenericFlag = createToken({ name: 'GenericFlag', pattern: Lexer.NA });
export const Fragment = option('Fragment', ['-f', '--fragment'], GenericFlag);
export const Ipv4Flag = option('Ipv4Flag', ['-4', '--ipv4'], GenericFlag);
export const Ipv6Flag = option('Ipv6Flag', ['-6', '--ipv6'], GenericFlag);
export const SetCounters = option('SetCounters', ['-c', '--set-counters']);

export const MatchOpt = option('MatchOpt', ['-m', '--match']);
export const Jump = option('Jump', ['-j', '--jump']);
export const Goto = option('Goto', ['-g', '--goto']);

export const LongOption = createToken({ name: 'LongOption', pattern: Lexer.NA, categories: [AnyArg] });
export const ShortOption = createToken({ name: 'ShortOption', pattern: Lexer.NA, categories: [AnyArg] });
/**
 * Module and target options found in kube-proxy's and CNIs' dumps: known spellings get their
 * type and shared copy in refineOptions()'s one lookup, with no intern() (which costs a second
 * lookup in a table that grows with the dump). Any other option is read the same way, interned.
 */
for (const spelling of [
  '--comment', '--to-destination', '--to-source', '--to', '--mode', '--probability', '--every', '--packet',
  '--dport', '--sport', '--dports', '--sports', '--destination-port', '--source-port', '--destination-ports', '--source-ports',
  '--name', '--mask', '--rsource', '--rdest', '--seconds', '--reap', '--rcheck', '--set', '--update', '--remove', '--hitcount',
  '--src-type', '--dst-type', '--limit-iface-in', '--limit-iface-out', '--ctstate', '--state', '--reject-with',
  '--random', '--random-fully', '--persistent', '--mark', '--set-xmark', '--set-mark', '--or-mark', '--and-mark', '--xor-mark',
  '--match-set', '--tcp-flags', '--syn', '--icmp-type', '--icmpv6-type', '--log-prefix', '--log-level', '--nflog-prefix',
  '--nflog-group', '--to-ports', '--physdev-in', '--physdev-out', '--physdev-is-in', '--physdev-is-out', '--physdev-is-bridged',
  '--clamp-mss-to-pmtu', '--set-mss', '--notrack', '--zone', '--queue-num', '--queue-bypass', '--return-nomatch',
]) {
  OPTION_TYPES.set(spelling, { type: LongOption, image: spelling });
}

/** What the lexer produces for every option; refineOptions() replaces it. */
export const OptionWord = createToken({ name: 'OptionWord', pattern: new RegExp(`(?:--[A-Za-z0-9][\\w.-]*|-[A-Za-z0-9])${END}`), start_chars_hint: ['-'] });

export const Commit = createToken({ name: 'Commit', pattern: /COMMIT(?![^\s])/, categories: [AnyArg, ArgLike], start_chars_hint: ['C'] });
/** Any other run of non-blank characters: chain names, addresses, numbers, bare strings. */
export const Word = createToken({
  name: 'Word',
  pattern: /[^\s"!][^\s"]*/,
  categories: [AnyArg, ArgLike],
  // A complement set cannot be analysed by Chevrotain; name the possible first characters
  // (printable ASCII and Latin-1 but `"` and `!`) so the first-char optimisation stays on.
  start_chars_hint: WORD_START,
});

/** What the lexer tries, in order (first match wins; each first character has one or two candidates). */
export const lexedTokens: TokenType[] = [WhiteSpace, Counters, Bang, QuotedString, UnterminatedString, TableHeader, ChainDecl, OptionWord, Commit, Word];

/** The parser's vocabulary: the lexed shapes, the refined option types and the categories. */
export const allTokens: TokenType[] = [
  ...lexedTokens,
  Append, Insert, Delete, Replace, NewChain, DeleteChain, Flush, Zero, Policy,
  Source, Destination, InInterface, OutInterface, Protocol,
  Fragment, Ipv4Flag, Ipv6Flag, SetCounters,
  MatchOpt, Jump, Goto,
  LongOption,
  ShortOption,
  AnyArg, ArgLike, ChainCmd, GenericWithArg, GenericFlag,
];

/** Token types that can be an option's argument (ArgLike and its members). */
export const ARG_LIKE_TYPES: ReadonlySet<TokenType> = new Set<TokenType>([ArgLike, ...allTokens.filter((t) => t.CATEGORIES?.includes(ArgLike))]);

/**
 * One shared copy of each repeated word (option names, modules, targets, chain names…): a big
 * dump repeats them millions of times. Sharing keeps the model small, and a chain name that is
 * one string everywhere makes every later Map lookup by it cheap (its hash is computed once and
 * keys compare by identity). The table lives for one scan (resetInterned()), so it never keeps
 * a dump's text alive, and is bounded.
 */
const INTERNED_SHORT = new Map<string, string>();
const INTERNED_LONG = new Map<string, string>();
const INTERN_LIMIT = 1 << 20;
/**
 * Short words (modules, protocols, verdicts, shared chains: a few hundred) are looked up in a
 * table of their own that stays small and fast; chain names (100k+ in a big dump) in another.
 */
const SHORT = 16;

export function intern(s: string): string {
  const table = s.length <= SHORT ? INTERNED_SHORT : INTERNED_LONG;
  const known = table.get(s);
  if (known !== undefined) return known;
  if (table.size < INTERN_LIMIT && typeof s === 'string') table.set(s, s);
  return s;
}

/** Forget the shared words (at the start and end of each scan). */
export function resetInterned(): void {
  INTERNED_SHORT.clear();
  INTERNED_LONG.clear();
}

/** Give each OptionWord its exact type (and a shared copy of its spelling), in place, for tokens[from, to). */
export function refineOptions(tokens: IToken[], from = 0, to = tokens.length): void {
  for (let i = from; i < to; i++) {
    const t = tokens[i];
    if (t.tokenType !== OptionWord) continue;
    const known = OPTION_TYPES.get(t.image);
    let type: TokenType;
    if (known !== undefined) {
      type = known.type;
      t.image = known.image;
    } else {
      type = t.image.charCodeAt(1) === 45 /* - */ ? LongOption : ShortOption;
      t.image = intern(t.image);
    }
    t.tokenType = type;
    t.tokenTypeIdx = type.tokenTypeIdx!;
  }
}
