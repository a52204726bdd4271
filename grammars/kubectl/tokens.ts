/**
 * Tokens of one line of kubectl's text output (`kubectl get` tables, `kubectl describe`) and of the
 * same tables pasted as Markdown. kubectl aligns columns with a tabwriter (padding 3) and pastes
 * re-flow that padding, so a line is lexed into words with their offsets: which word belongs to
 * which column is decided from the header's offsets, or the gaps, by ./index.ts.
 *
 * Order matters (Chevrotain takes the first pattern that matches): `|` before a word, since a
 * word is any run of characters other than blanks and `|`.
 */
import { createToken, Lexer } from '../common/chevrotain.js';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED, start_chars_hint: [' ', '\t'] });

/** A Markdown table's cell separator. */
export const Pipe = createToken({ name: 'Pipe', label: "'|'", pattern: /\|/, start_chars_hint: ['|'] });

/** A word: a cell value, a header word, a describe key or value word. */
export const Word = createToken({ name: 'Word', label: 'word', pattern: /[^\s|]+/ });

export const allTokens = [WhiteSpace, Pipe, Word];
