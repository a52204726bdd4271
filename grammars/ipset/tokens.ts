/**
 * Tokens shared by the `ipset list` and `ipset save` grammars (FORMATS.md §2).
 *
 * Token order matters: Chevrotain picks the FIRST pattern that matches at a position (not the
 * longest), so
 *   1. the block labels (`Name:`, `Size in memory:` …) come before `Word`; they contain `:` or
 *      spaces, so a Word can never start the same way except for a list:set member literally
 *      called `Name:` (not a realistic set name);
 *   2. keywords (`create`, `add`, `timeout`, `comment`, …) use `longer_alt: Word`, so `address`
 *      or `timeouts` stay Words;
 *   3. every keyword also belongs to the `AnyWord` category, so a set called `comment` or
 *      `add` (legal in ipset) is still accepted wherever a name or value is expected;
 *   4. `QuotedString` before `Unterminated` before `Word`: `Word` excludes `"` so a comment
 *      always starts a string token.
 * Whitespace is skipped (columns survive on the tokens). Newlines separate lines: the input is
 * tokenized once and the tokens are grouped by line before parsing line by line.
 */
import { createToken, Lexer, type TokenType } from '../common/chevrotain.js';

/**
 * JS `\s` minus `\n`, spelled out (tabs, NBSP and other Unicode spaces from web pages): Chevrotain
 * cannot compute first characters of complement sets (`[^\S\n]`), and `ensureOptimizations`
 * needs them. `WORD_CHARS` below is the exact complement of `\s` and `"`.
 */
const SPACE_CHARS = '\\t\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const WORD_CHARS =
  '\\x00-\\x08\\x0e-\\x1f!#-\\u009f\\u00a1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\uffff';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: new RegExp(`[${SPACE_CHARS}]+`), group: Lexer.SKIPPED });
export const Newline = createToken({ name: 'Newline', pattern: /\n/, line_breaks: true, group: Lexer.SKIPPED });

/** Category for anything that can serve as a name, an element or an option value. */
export const AnyWord = createToken({ name: 'AnyWord', pattern: Lexer.NA });
/** Category for the `ipset list` block labels. */
export const Label = createToken({ name: 'Label', pattern: Lexer.NA });

export const Word = createToken({ name: 'Word', pattern: new RegExp(`[${WORD_CHARS}]+`), categories: [AnyWord] });

function label(name: string, text: string): TokenType {
  return createToken({ name, pattern: new RegExp(text), categories: [Label] });
}

export const NameLabel = label('NameLabel', 'Name:');
export const TypeLabel = label('TypeLabel', 'Type:');
export const RevisionLabel = label('RevisionLabel', 'Revision:');
export const HeaderLabel = label('HeaderLabel', 'Header:');
export const SizeLabel = label('SizeLabel', 'Size in memory:');
export const ReferencesLabel = label('ReferencesLabel', 'References:');
export const EntriesLabel = label('EntriesLabel', 'Number of entries:');
export const MembersLabel = label('MembersLabel', 'Members:');

function keyword(name: string, text: string): TokenType {
  return createToken({ name, pattern: new RegExp(text), longer_alt: Word, categories: [AnyWord] });
}

export const Create = keyword('Create', 'create');
export const Add = keyword('Add', 'add');
export const Timeout = keyword('Timeout', 'timeout');
export const Packets = keyword('Packets', 'packets');
export const Bytes = keyword('Bytes', 'bytes');
export const Comment = keyword('Comment', 'comment');
export const Skbmark = keyword('Skbmark', 'skbmark');
export const Skbprio = keyword('Skbprio', 'skbprio');
export const Skbqueue = keyword('Skbqueue', 'skbqueue');
export const Nomatch = keyword('Nomatch', 'nomatch');

/** `"TEXT"`; ipset refuses `"` inside comments, so there is no escape syntax. */
export const QuotedString = createToken({ name: 'QuotedString', pattern: /"[^"\n]*"/ });
/** A comment cut off by a truncated paste: `comment "kube-sys`. */
export const Unterminated = createToken({ name: 'Unterminated', pattern: /"[^"\n]*/ });

export const allTokens: TokenType[] = [
  WhiteSpace,
  Newline,
  NameLabel,
  TypeLabel,
  RevisionLabel,
  HeaderLabel,
  SizeLabel,
  ReferencesLabel,
  EntriesLabel,
  MembersLabel,
  Create,
  Add,
  Timeout,
  Packets,
  Bytes,
  Comment,
  Skbmark,
  Skbprio,
  Skbqueue,
  Nomatch,
  QuotedString,
  Unterminated,
  Word,
  AnyWord,
  Label,
];
