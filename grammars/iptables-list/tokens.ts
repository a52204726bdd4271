/**
 * Tokens of one rule line of an `iptables -L` / `ip6tables -L` listing (iptables' print_firewall()
 * in iptables/iptables.c and xshared.c print_rule_details(), print_ifaces(), print_ipv4_addresses(),
 * then each extension's print()). The fixed columns are words; the matches' text after them is
 * words too, except two things that hold blanks: a comment (`/* ns/svc:port cluster IP *\/`, printed
 * by libxt_comment) and a quoted string (LOG's `prefix "…"`).
 *
 * Order matters (Chevrotain takes the first pattern that matches): the comment and the quoted
 * string before a word, since a word is any run of non-blank characters.
 */
import { createToken, Lexer } from '../common/chevrotain.js';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED, start_chars_hint: [' ', '\t'] });

/** `/* text *\/` — libxt_comment prints ` /* %s *\/`; the text may hold blanks. */
export const Comment = createToken({ name: 'Comment', label: 'comment', pattern: /\/\*.*?\*\//, start_chars_hint: ['/'] });

/** `"…"` — LOG's prefix, with `\"` inside. */
export const Quoted = createToken({ name: 'Quoted', label: 'quoted string', pattern: /"(?:[^"\\]|\\.)*"/, start_chars_hint: ['"'] });

export const Word = createToken({ name: 'Word', label: 'word', pattern: /[^\s]+/ });

export const allTokens = [WhiteSpace, Comment, Quoted, Word];
