/**
 * The shape of an nft line before it is parsed: its significant tokens (without trailing `# handle N`
 * / `# …`), whether it opens (`table … {`, `chain N {`) or closes (`}`) a block, its indentation (nft
 * indents the continuation lines of a wrapped `{ … }` deeper than the statement).
 */
import type { IToken } from '../common/chevrotain.js';
import { intern, isToken } from './parser.js';

const OBJECT_KEYWORDS = new Set(['chain', 'set', 'map', 'flowtable', 'counter', 'quota', 'limit', 'secmark', 'synproxy', 'ct', 'tunnel']);


/** How many tokens are significant: all but trailing `# handle N` / `# …` comments. */
function significantEnd(tokens: readonly IToken[]): number {
  let end = tokens.length;
  while (end > 0 && (isToken(tokens[end - 1], 'handle') || isToken(tokens[end - 1], 'comment'))) end--;
  return end;
}

/** Significant tokens: without trailing `# handle N` / `# …` comments. */
function significant(tokens: readonly IToken[]): { toks: IToken[]; handle?: number } {
  const toks = [...tokens];
  let handle: number | undefined;
  while (toks.length) {
    const last = toks[toks.length - 1];
    if (isToken(last, 'handle')) handle = Number(last.image.replace(/\D+/, ''));
    else if (!isToken(last, 'comment')) break;
    toks.pop();
  }
  return handle !== undefined ? { toks, handle } : { toks };
}

/** The header of a block a line opens. */
export interface Opener {
  readonly words: string[];
  readonly handle?: number;
  readonly verb?: 'add' | 'create';
}

/** `table F N {`, `chain N {`, `set N {`, `ct helper N {`… → header words (without `{`). */
export function openerWords(tokens: readonly IToken[]): Opener | undefined {
  // Most lines are rules: without a last significant `{` they open nothing (no copy of their tokens).
  const end = significantEnd(tokens);
  if (end < 2 || !isToken(tokens[end - 1], 'lcurly')) return undefined;
  const { toks, handle } = significant(tokens);
  if (toks.length < 2 || !isToken(toks[toks.length - 1], 'lcurly')) return undefined;
  const head = toks.slice(0, -1);
  if (head.some((t) => isToken(t, 'lcurly') || isToken(t, 'rcurly'))) return undefined;
  let first = head[0]?.image;
  // `add table ip t {` / `create table ip t {` over several lines: a table block with a verb.
  let verb: 'add' | 'create' | undefined;
  if ((first === 'add' || first === 'create') && head[1]?.image === 'table') {
    verb = first;
    head.shift();
    first = 'table';
  }
  if (first !== 'table' && !OBJECT_KEYWORDS.has(first ?? '')) return undefined;
  // Interned: a chain's name in its header and in the jumps and map elements that go to it is one string.
  const words = head.map((t) => intern(t.image.startsWith('"') && t.image.endsWith('"') && t.image.length >= 2 ? t.image.slice(1, -1) : t.image));
  return { words, ...(handle !== undefined ? { handle } : {}), ...(verb ? { verb } : {}) };
}

export function isCloser(tokens: readonly IToken[]): boolean {
  return significantEnd(tokens) === 1 && isToken(tokens[0], 'rcurly');
}

/** Indentation with tabs counted as 8 columns (so tab-expanded pastes compare alike). */
export function indentWidth(line: string): number {
  let w = 0;
  for (const ch of line) {
    if (ch === ' ') w++;
    else if (ch === '\t') w += 8 - (w % 8);
    else break;
  }
  return w;
}

export const COMMAND_START = /^\s*(add|create|insert|replace|delete|destroy|flush|list|reset|rename|table)\s/;

export function looksLikeStructure(line: string): boolean {
  const t = line.trim();
  return t === '}' || /^(table|chain|set|map)\s+\S.*\{\s*(#.*)?$/.test(t);
}
