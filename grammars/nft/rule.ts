/**
 * The meaning of an nft statement line: atoms (./parser.ts) → expressions and statements
 * (../common/nft-syntax.ts). Recursive descent over the atoms with nft's selector vocabulary (nftables
 * `src/parser_bison.y`, printers in `src/expression.c`, `src/statement.c`): statements in
 * ./statement.ts and ./nat.ts, operands in ./operand.ts and ./selector.ts, set elements in
 * ./elements.ts. Whatever is not recognised becomes an `unsupported` expression that keeps its text
 * and column.
 */
import type { SynExpr } from '../common/nft-syntax.js';
import { atomText, Cursor, type RuleProblem } from './cursor.js';
import type { Atom, TokenAtom } from './parser.js';
import { parseStatement } from './statement.js';

export interface ClassifiedRule {
  readonly exprs: SynExpr[];
  readonly comment?: string;
  readonly handle?: number;
  readonly counter?: { packets: number; bytes: number };
  /** A trailing `# …` that is not `# handle N` (user annotation). */
  readonly annotation?: string;
}

/** Classify a rule line's atoms. `baseLine` is the file line of the logical line's first line. */
export function classifyRule(atoms: readonly Atom[], baseLine: number, problems: RuleProblem[]): ClassifiedRule {
  let end = atoms.length;
  let handle: number | undefined;
  let annotation: string | undefined;
  // trailing `# handle N` and/or `# annotation`
  while (end > 0) {
    const last = atoms[end - 1];
    if (last.t === 'handle') handle = Number(last.text);
    else if (last.t === 'comment') annotation = last.text;
    else break;
    end--;
  }
  const c = new Cursor(atoms.slice(0, end), baseLine, problems);
  const exprs: SynExpr[] = [];
  let comment: string | undefined;
  let counter: { packets: number; bytes: number } | undefined;
  while (!c.done) {
    const a = c.peek()!;
    if (a.t === 'word' && a.text === 'comment' && c.peek(1) && (c.peek(1)!.t === 'string' || c.peek(1)!.t === 'bad-string')) {
      const s = c.peek(1) as TokenAtom;
      if (s.t === 'bad-string') c.error(s, 'unterminated string', '"');
      comment = s.text;
      c.i += 2;
      continue;
    }
    if (a.t === 'handle' || a.t === 'comment') {
      c.i++;
      continue;
    }
    const before = c.i;
    const e = parseStatement(c);
    if (c.i === before) c.i++; // never loop forever
    if (!e) continue;
    if (e.kind === 'counter' && e.packets !== undefined && e.bytes !== undefined) counter = { packets: e.packets, bytes: e.bytes };
    if (e.kind === 'unsupported') {
      problems.push({
        severity: 'info',
        code: 'nft/unsupported-expression',
        line: c.lineOf(a),
        column: e.column,
        message: `kept as unsupported: ${e.text}`,
        found: e.text,
      });
    }
    exprs.push(e);
  }
  const out: { -readonly [K in keyof ClassifiedRule]: ClassifiedRule[K] } = { exprs: exprs.slice() };
  if (comment !== undefined) out.comment = comment;
  if (handle !== undefined) out.handle = handle;
  if (counter) out.counter = counter;
  if (annotation !== undefined) out.annotation = annotation;
  return out;
}

/** Parse a value/type run like `ipv4_addr . inet_proto . inet_service` into parts. */
export function dotParts(atoms: readonly Atom[]): string[] {
  const parts: string[] = [];
  let cur: string[] = [];
  for (const a of atoms) {
    if (a.t === 'op' && a.text === '.') {
      parts.push(cur.join(' '));
      cur = [];
    } else cur.push(atomText(a));
  }
  if (cur.length) parts.push(cur.join(' '));
  return parts;
}
