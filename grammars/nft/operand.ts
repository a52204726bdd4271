/**
 * Operands of nft expressions: a primary (selector or value atom) with binary operators, `/` masks,
 * `.` concatenations and `map` lookups.
 */
import { operandText, type SynBinaryOp, type SynMapRef, type SynOperand } from '../common/nft-syntax.js';
import type { Cursor } from './cursor.js';
import { parseGroupElements } from './elements.js';
import { parseSelector } from './selector.js';
import { BIN_OPS, BIN_WORDS } from './vocabulary.js';

/** One value atom: word (set-ref `@x`, comma list), string, or `{ … }` anonymous set. */
export function parseValueAtom(c: Cursor): SynOperand | undefined {
  const a = c.peek();
  if (!a) return undefined;
  if (a.t === 'word') {
    c.i++;
    if (a.text.startsWith('@') && a.text.length > 1) return { kind: 'set-ref', name: a.text.slice(1) };
    if (a.text.includes(',')) return { kind: 'list', items: a.text.split(',') };
    return { kind: 'value', text: a.text };
  }
  if (a.t === 'string' || a.t === 'bad-string') {
    c.i++;
    if (a.t === 'bad-string') c.error(a, 'unterminated string', '"');
    return { kind: 'value', text: a.text, quoted: true };
  }
  if (a.t === 'group') {
    c.i++;
    return { kind: 'set', elements: parseGroupElements(a, c.baseLine, c.problems) };
  }
  return undefined;
}

export type Mode = 'lhs' | 'value' | 'rhs';

function parsePrimary(c: Cursor, mode: Mode): SynOperand | undefined {
  if (mode === 'lhs') return parseSelector(c, true);
  if (mode === 'value') {
    const s = parseSelector(c, false);
    if (s) return s;
  }
  return parseValueAtom(c);
}

/** primary (binop primary)* ('.' …)* ('map' MAPREF)? */
export function parseOperand(c: Cursor, mode: Mode): SynOperand | undefined {
  const parseTerm = (m: Mode): SynOperand | undefined => {
    let left = parsePrimary(c, m);
    if (!left) return undefined;
    for (;;) {
      const a = c.peek();
      let op: SynBinaryOp | undefined;
      if (a && a.t === 'op' && BIN_OPS.has(a.text)) op = a.text as SynBinaryOp;
      else if (a && a.t === 'word' && BIN_WORDS[a.text] && mode !== 'rhs') op = BIN_WORDS[a.text];
      if (!op) break;
      const save = c.i;
      c.i++;
      const right = parsePrimary(c, 'value');
      if (!right) {
        c.i = save;
        break;
      }
      left = { kind: 'binop', op, left, right };
    }
    if (mode === 'rhs' && c.isOp('/')) {
      // `tcp flags syn / syn,rst`: value under mask, kept as printed
      const save = c.i;
      c.i++;
      const mask = parseValueAtom(c);
      if (mask) left = { kind: 'value', text: `${operandText(left)} / ${operandText(mask)}` };
      else c.i = save;
    }
    return left;
  };
  const first = parseTerm(mode);
  if (!first) return undefined;
  let result: SynOperand = first;
  if (c.isOp('.')) {
    const parts: SynOperand[] = [first];
    while (c.isOp('.')) {
      const save = c.i;
      c.i++;
      const p = parseTerm(mode === 'lhs' ? 'lhs' : mode);
      if (!p) {
        c.i = save;
        break;
      }
      parts.push(p);
    }
    if (parts.length > 1) result = { kind: 'concat', parts };
  }
  if (mode !== 'rhs' && c.word() === 'map') {
    const at = c.peek(1);
    c.i++;
    const map = parseMapRef(c);
    if (!map) c.error(at, 'expected @map or { … } after map', '@name or {');
    else result = { kind: 'map', key: result, map };
  }
  return result;
}

export function parseMapRef(c: Cursor): SynMapRef | undefined {
  const a = c.peek();
  if (a && a.t === 'word' && a.text.startsWith('@')) {
    c.i++;
    return { kind: 'ref', name: a.text.slice(1) };
  }
  if (a && a.t === 'group') {
    c.i++;
    return { kind: 'inline', elements: parseGroupElements(a, c.baseLine, c.problems) };
  }
  return undefined;
}
