/**
 * Tokens of `ip addr` / `ip -o addr` / `ip -br addr` text (iproute2 `ip/ipaddress.c`).
 * Values are generic Words; the extractor gives them meaning by the keyword before them.
 * `\` separates the parts of one record in `-o` (one-line) output.
 */
import { createToken, Lexer, type TokenType } from '../common/chevrotain.js';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });
export const AnyWord = createToken({ name: 'AnyWord', pattern: Lexer.NA });

const WORD_START: string[] = [];
for (let c = 33; c < 127; c++) if (c !== 92) WORD_START.push(String.fromCharCode(c));
for (let c = 128; c < 1280; c++) WORD_START.push(String.fromCharCode(c));
WORD_START.push('\u2026', '\u00a0');

export const Word = createToken({ name: 'Word', pattern: /[^\s\\]+/, start_chars_hint: WORD_START, categories: [AnyWord] });
export const Backslash = createToken({ name: 'Backslash', pattern: /\\/ });
/** `<BROADCAST,MULTICAST,UP,LOWER_UP>` interface flags. */
export const AngleList = createToken({ name: 'AngleList', pattern: /<[^>\s\\]*>/, categories: [AnyWord] });
/** `2:` — interface index at the start of a record (a longer Word such as `2001:db8::1` wins). */
export const IndexTok = createToken({ name: 'IndexTok', pattern: /\d+:/, longer_alt: Word });
export const Inet = createToken({ name: 'Inet', pattern: /inet6|inet/, longer_alt: Word, categories: [AnyWord] });
export const LinkType = createToken({ name: 'LinkType', pattern: /link\/[^\s\\]*/, categories: [AnyWord] });
export const ValidLft = createToken({ name: 'ValidLft', pattern: /valid_lft/, longer_alt: Word, categories: [AnyWord] });
export const Altname = createToken({ name: 'Altname', pattern: /altname/, longer_alt: Word, categories: [AnyWord] });

export const allTokens: TokenType[] = [WhiteSpace, Backslash, AngleList, IndexTok, Inet, LinkType, ValidLft, Altname, Word, AnyWord];
