/**
 * `nft list ruleset` / `nft list table …` / `nft -a list …` text → syntax document.
 *
 * Block structure (table → chain/set/map → lines) is followed line by line with a stack
 * (./document.ts); each logical line (a line, or a statement whose `{ … }` wraps onto continuation
 * lines) is lexed and parsed by ./parser.ts (Chevrotain) and classified by ./rule.ts. One bad line
 * gives diagnostics for that line only; parsing goes on with the next.
 */
import type { Diagnostic } from '../common/source.js';
import { splitInput } from '../common/text.js';
import type { SynDocument } from '../common/nft-syntax.js';
import { NftDocumentReader } from './document.js';

export type * from '../common/nft-syntax.js';

export interface NftSyntaxResult {
  readonly doc: SynDocument;
  readonly diagnostics: Diagnostic[];
}

export function parseNftSyntax(text: string, file: string): NftSyntaxResult {
  const lines = splitInput(text).lines;
  const reader = new NftDocumentReader(file, lines);
  let i = 0;
  while (i < lines.length) i = reader.readAt(i);
  const doc = reader.end();
  return { doc, diagnostics: reader.diagnostics };
}
