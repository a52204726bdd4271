/**
 * `ip addr` / `ip -o addr` / `ip -br addr` text → one syntax entry per non-blank line.
 * Syntax only; src/extract/ipaddr.ts groups lines into interfaces.
 */
import { indentOf, noiseKind, splitInput, type NoiseKind } from '../common/text.js';
import { parseAddrLine, type AddrLineNode, type LineSyntaxError } from './parser.js';

export type { AddrLineNode, Segment, SegmentKind, Tok, LineSyntaxError } from './parser.js';

export type AddrSyntaxLine =
  | { readonly kind: 'node'; readonly line: number; readonly text: string; readonly indent: number; readonly node: AddrLineNode }
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: NoiseKind }
  | { readonly kind: 'stderr'; readonly line: number; readonly text: string }
  | { readonly kind: 'error'; readonly line: number; readonly text: string; readonly errors: readonly LineSyntaxError[] };

const IP_STDERR = /^\s*(Error:|RTNETLINK answers:|Cannot find device|Device "[^"]*" does not exist|Command line is not complete|Object "[^"]*" is unknown|Dump terminated)/;

export function parseIpAddrText(text: string): { lines: readonly AddrSyntaxLine[]; missingFinalNewline: boolean } {
  const input = splitInput(text);
  const out: AddrSyntaxLine[] = [];
  input.lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const noise = noiseKind(raw);
    if (noise) return void out.push({ kind: 'noise', line, text: raw, noise });
    if (IP_STDERR.test(raw)) return void out.push({ kind: 'stderr', line, text: raw });
    const r = parseAddrLine(raw);
    if (r.node) out.push({ kind: 'node', line, text: raw, indent: indentOf(raw), node: r.node });
    else out.push({ kind: 'error', line, text: raw, errors: r.errors });
  });
  return { lines: out, missingFinalNewline: input.missingFinalNewline };
}
