/**
 * Chevrotain's runtime, loaded from the single-file ESM bundle its package ships
 * (`lib/chevrotain.mjs`, the same release). The package's main entry imports lodash-es module
 * by module, several hundred files, which costs about 0.25 s of start-up in every kpx process
 * (issue 8: a small dump must answer well under a second). Falls back to the main entry when
 * the bundle is not where this release keeps it.
 *
 * Every grammar takes Chevrotain's values from here, never from 'chevrotain' directly: two
 * copies of the library would not recognise each other's token types.
 */
import type * as Chevrotain from 'chevrotain';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

async function loadChevrotain(): Promise<typeof Chevrotain> {
  try {
    const entry = createRequire(import.meta.url).resolve('chevrotain');
    const bundle = join(dirname(entry), '..', 'chevrotain.mjs');
    if (existsSync(bundle)) return (await import(pathToFileURL(bundle).href)) as typeof Chevrotain;
  } catch {
    // resolved differently (bundlers, test runners): use the package's own entry
  }
  return import('chevrotain');
}

const chevrotain = await loadChevrotain();

export const createToken = chevrotain.createToken;
export const EOF = chevrotain.EOF;
export const Lexer = chevrotain.Lexer;
export type Lexer = Chevrotain.Lexer;
export const EmbeddedActionsParser = chevrotain.EmbeddedActionsParser;
export type EmbeddedActionsParser = Chevrotain.EmbeddedActionsParser;
export type {
  ILexingError,
  ILexingResult,
  IOrAlt,
  IParserErrorMessageProvider,
  IRecognitionException,
  IToken,
  TokenType,
} from 'chevrotain';
