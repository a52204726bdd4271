/**
 * Listings that are not a kube-proxy dump but are pasted in its place (README.md): Cilium's
 * `cilium service list` / `cilium-dbg service list` and `cilium bpf lb list` tables, and tcpdump's or
 * tshark's packet lines. kpx reads kube-proxy's dataplane; these say what the paste is and what it
 * holds (how many services, backends, packets), nothing more. Lines are lexed and parsed with the
 * Chevrotain grammar of ./parser.ts; lines it does not take (headers, the author's words, tcpdump's
 * verbose second lines, hex dumps) are counted, not errors: nothing of them is used.
 */
import { Lexer } from '../common/chevrotain.js';
import { noiseKind, splitInput } from '../common/text.js';
import { ForeignLineParser, type ForeignLine } from './parser.js';
import { foreignKind, type ForeignKind } from './sniff.js';
import * as T from './tokens.js';

export type { ForeignKind } from './sniff.js';

export interface ForeignSyntax {
  readonly kind: ForeignKind;
  readonly lines: readonly (ForeignLine & { readonly line: number })[];
  /** Lines that are not rows (headers, prose, tcpdump's continuation lines): not used. */
  readonly other: number;
  readonly noise: readonly number[];
}

let lexer: Lexer | undefined;
let parser: ForeignLineParser | undefined;

const RULES: Readonly<Record<ForeignKind, readonly ('service' | 'backend' | 'lb' | 'packet')[]>> = {
  'cilium-service-list': ['service', 'backend'],
  'cilium-bpf-lb-list': ['lb'],
  tcpdump: ['packet'],
  tshark: [],
};

export function parseForeign(text: string, kind: ForeignKind | undefined = undefined): ForeignSyntax {
  const input = splitInput(text);
  const k = kind ?? foreignKind(input.lines)?.kind ?? 'tcpdump';
  lexer ??= new Lexer(T.allTokens, { positionTracking: 'onlyOffset', ensureOptimizations: false });
  parser ??= new ForeignLineParser();
  const lines: (ForeignLine & { line: number })[] = [];
  const noise: number[] = [];
  let other = 0;
  input.lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    if (noiseKind(raw)) return void noise.push(i + 1);
    // A CI runner's prefix (`\t `, a time) before the table's rows.
    const body = raw.replace(/^\s*(?:\d\d:\d\d:\d\d\s+)?\t?\s*/, '');
    const tokens = lexer!.tokenize(body).tokens;
    for (const rule of RULES[k]) {
      const r = parser!.parseLine(tokens, rule);
      if (r) return void lines.push({ ...r, line: i + 1 });
    }
    other++;
  });
  return { kind: k, lines, other, noise };
}
