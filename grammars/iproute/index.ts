/**
 * `ip route` text output → one syntax entry per non-blank line (syntax only; see
 * src/extract/iproute.ts for the model). Lines are parsed independently so one bad line gives
 * one error and the rest still parse. Continuation lines (`⇥nexthop …`, `    cache …`) are
 * recognised by their keyword, not by indentation, so indented (markdown) pastes work too.
 */
import { noiseKind, splitInput, indentOf, type NoiseKind } from '../common/text.js';
import { parseRouteLine, type LineSyntaxError, type RouteLineNode } from './parser.js';

export type { RouteLineNode, RouteAttr, Tok, LineSyntaxError } from './parser.js';

export type RouteSyntaxLine =
  | { readonly kind: 'node'; readonly line: number; readonly text: string; readonly indent: number; readonly node: RouteLineNode }
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: NoiseKind }
  | { readonly kind: 'stderr'; readonly line: number; readonly text: string }
  | { readonly kind: 'error'; readonly line: number; readonly text: string; readonly errors: readonly LineSyntaxError[] };

export interface RouteSyntax {
  readonly lines: readonly RouteSyntaxLine[];
  readonly missingFinalNewline: boolean;
}

/** Messages the `ip` tool prints on stderr that end up pasted among its output. */
export const IP_STDERR = /^\s*(Error:|RTNETLINK answers:|Cannot find device|Device "[^"]*" does not exist|Command line is not complete|Object "[^"]*" is unknown|ip: |Dump terminated)/;

export function parseIpRouteText(text: string): RouteSyntax {
  const input = splitInput(text);
  const out: RouteSyntaxLine[] = [];
  input.lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const noise = noiseKind(raw);
    if (noise) {
      out.push({ kind: 'noise', line, text: raw, noise });
      return;
    }
    if (IP_STDERR.test(raw)) {
      out.push({ kind: 'stderr', line, text: raw });
      return;
    }
    const r = parseRouteLine(raw);
    if (r.node) out.push({ kind: 'node', line, text: raw, indent: indentOf(raw), node: r.node });
    else out.push({ kind: 'error', line, text: raw, errors: r.errors });
  });
  return { lines: out, missingFinalNewline: input.missingFinalNewline };
}
