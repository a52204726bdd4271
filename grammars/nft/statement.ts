/**
 * One statement of an nft rule: a verdict, a keyword statement (`counter`, `reject`, `dnat`, `log`,
 * `limit`, `xt`, `update @set`, …) or an expression statement (`SELECTOR [relop] VALUE`,
 * `SELECTOR set EXPR`, `SELECTOR vmap MAP`). Whatever is not recognised becomes `unsupported`.
 */
import { operandText, type SynExpr, type SynRelOp, type SynVerdictName } from '../common/nft-syntax.js';
import { atomText, atomsText, Cursor } from './cursor.js';
import type { Atom, TokenAtom } from './parser.js';
import { parseMasquerade, parseNat } from './nat.js';
import { parseMapRef, parseOperand } from './operand.js';
import { GENERIC_STATEMENTS, NEVER_VALUE, REL_OPS, REL_WORDS, STMT_START, VERDICTS } from './vocabulary.js';

/** Consume atoms up to the next statement keyword; returns their text. */
function takeUntilStatement(c: Cursor): string {
  const from = c.i;
  while (!c.done) {
    const w = c.word();
    if (w !== undefined && STMT_START.has(w)) break;
    if (c.peek()!.t === 'handle' || c.peek()!.t === 'comment') break;
    c.i++;
  }
  return atomsText(c.atoms.slice(from, c.i));
}

export function parseStatement(c: Cursor): SynExpr | undefined {
  const a = c.peek()!;
  const column = a.column;
  if (a.t === 'word') {
    const e = keywordStatement(c, a.text, column);
    if (e) return e;
  }
  return expressionStatement(c, a, column);
}

/** The statement a keyword starts, or undefined when `w` starts none here (an expression follows). */
function keywordStatement(c: Cursor, w: string, column: number): SynExpr | undefined {
  if (VERDICTS.has(w)) {
    c.i++;
    return { kind: 'verdict', verdict: w as SynVerdictName, column };
  }
  switch (w) {
    case 'jump':
    case 'goto':
      return jumpStatement(c, w, column);
    case 'queue':
      return queueStatement(c, column);
    case 'counter':
      return counterStatement(c, column);
    case 'reject':
      return rejectStatement(c, column);
    case 'dnat':
    case 'snat':
      return parseNat(c, w, column);
    case 'masquerade':
    case 'redirect':
      return parseMasquerade(c, w, column);
    case 'log':
      return logStatement(c, column);
    case 'limit':
      return limitStatement(c, column);
    case 'xt':
      return c.word(1) === 'match' || c.word(1) === 'target' ? xtStatement(c, column) : undefined;
    case 'update':
    case 'add':
    case 'delete':
      return c.word(1)?.startsWith('@') ? updateSetStatement(c, w, column) : undefined;
    default:
      if (!GENERIC_STATEMENTS.has(w)) return undefined;
      c.i++;
      return genericStatement(c, w, column);
  }
}

function genericStatement(c: Cursor, w: string, column: number): SynExpr {
  const rest = takeUntilStatement(c);
  return { kind: 'statement', name: w, text: rest ? `${w} ${rest}` : w, column };
}

function jumpStatement(c: Cursor, w: 'jump' | 'goto', column: number): SynExpr {
  const t = c.peek(1);
  if (t && (t.t === 'word' || t.t === 'string')) {
    c.i += 2;
    return { kind: 'verdict', verdict: w, chain: t.text, column };
  }
  c.i++;
  c.error(t, `expected a chain name after ${w}`, 'chain name');
  return { kind: 'unsupported', text: w, column };
}

function queueStatement(c: Cursor, column: number): SynExpr {
  c.i++;
  const from = c.i;
  while (c.word() !== undefined && (['num', 'flags', 'bypass', 'fanout', 'to'].includes(c.word()!) || /^[\d,-]+$/.test(c.word()!) || c.word()!.split(',').every((x) => ['bypass', 'fanout'].includes(x)))) c.i++;
  const text = atomsText(c.atoms.slice(from - 1, c.i));
  return { kind: 'verdict', verdict: 'queue', text, column };
}

function counterStatement(c: Cursor, column: number): SynExpr {
  c.i++;
  if (c.word() === 'packets' && c.word(2) === 'bytes' && /^\d+$/.test(c.word(1) ?? '') && /^\d+$/.test(c.word(3) ?? '')) {
    const e = { kind: 'counter' as const, packets: Number(c.word(1)), bytes: Number(c.word(3)), column };
    c.i += 4;
    return e;
  }
  if (c.word() === 'name' && c.peek(1) && (c.peek(1)!.t === 'word' || c.peek(1)!.t === 'string')) {
    const name = (c.peek(1) as TokenAtom).text;
    c.i += 2;
    return { kind: 'counter', name, column };
  }
  return { kind: 'counter', column };
}

function rejectStatement(c: Cursor, column: number): SynExpr {
  c.i++;
  if (c.word() !== 'with') return { kind: 'reject', column };
  c.i++;
  const words: string[] = [];
  const w1 = c.word();
  if (w1 !== undefined) {
    words.push(w1);
    c.i++;
    if (w1 === 'icmp' || w1 === 'icmpv6' || w1 === 'icmpx' || w1 === 'tcp') {
      if (c.word() === 'type' || c.word() === 'code') {
        words.push(c.word()!);
        c.i++;
      }
      if (c.word() !== undefined && !STMT_START.has(c.word()!)) {
        words.push(c.word()!);
        c.i++;
      }
    }
  } else c.error(c.peek(), 'expected a reject type after with', 'icmp/tcp reset');
  return { kind: 'reject', with: words.join(' '), column };
}

function logStatement(c: Cursor, column: number): SynExpr {
  c.i++;
  const from = c.i;
  let prefix: string | undefined;
  let group: number | undefined;
  let level: string | undefined;
  for (;;) {
    const k = c.word();
    const v = c.peek(1);
    if (!k || !v || !['prefix', 'level', 'group', 'snaplen', 'queue-threshold', 'flags'].includes(k) || (v.t !== 'word' && v.t !== 'string')) break;
    if (k === 'prefix') prefix = v.text;
    if (k === 'group') group = Number(v.text);
    if (k === 'level') level = v.text;
    c.i += 2;
  }
  const e: { -readonly [K in string]: unknown } = { kind: 'log', text: atomsText(c.atoms.slice(from - 1, c.i)), column };
  if (prefix !== undefined) e.prefix = prefix;
  if (group !== undefined) e.group = group;
  if (level !== undefined) e.level = level;
  return e as SynExpr;
}

function limitStatement(c: Cursor, column: number): SynExpr {
  c.i++;
  const from = c.i;
  let over = false;
  let rate = '';
  let burst: string | undefined;
  if (c.word() === 'rate') {
    c.i++;
    if (c.word() === 'over') {
      over = true;
      c.i++;
    }
    if (c.word() !== undefined) {
      rate = c.word()!;
      c.i++;
      if (!rate.includes('/') && c.word()?.includes('/')) {
        rate += ` ${c.word()!}`;
        c.i++;
      }
    }
    if (c.word() === 'burst' && c.word(1) !== undefined) {
      burst = c.word(1)!;
      c.i += 2;
      if (['packets', 'bytes', 'kbytes', 'mbytes'].includes(c.word() ?? '')) {
        burst += ` ${c.word()!}`;
        c.i++;
      }
    }
  } else c.error(c.peek(), 'expected rate after limit', 'rate');
  const text = atomsText(c.atoms.slice(from - 1, c.i));
  return burst !== undefined ? { kind: 'limit', rate, over, burst, text, column } : { kind: 'limit', rate, over, text, column };
}

function xtStatement(c: Cursor, column: number): SynExpr {
  const isMatch = c.word(1) === 'match';
  const n = c.peek(2);
  const name = n && (n.t === 'word' || n.t === 'string') ? n.text : '';
  c.i += name ? 3 : 2;
  if (!name) c.error(c.peek(), 'expected an extension name', 'name');
  return { kind: 'xt', match: isMatch, name, column };
}

/** `update|add|delete @SET { KEY [timeout T] }`. */
function updateSetStatement(c: Cursor, w: 'update' | 'add' | 'delete', column: number): SynExpr {
  const set = c.word(1)!.slice(1);
  const g = c.peek(2);
  c.i += 2;
  if (!g || g.t !== 'group') {
    c.error(g, `expected { key } after ${w} @${set}`, '{');
    return { kind: 'unsupported', text: `${w} @${set}`, column };
  }
  c.i++;
  const inner = new Cursor(g.elements[0] ?? [], c.baseLine, c.problems);
  const key = parseOperand(inner, 'value') ?? { kind: 'value', text: '' };
  let timeout: string | undefined;
  while (!inner.done) {
    if (inner.word() === 'timeout' && inner.word(1) !== undefined) {
      timeout = inner.word(1);
      inner.i += 2;
    }
    else inner.i++;
  }
  return timeout !== undefined ? { kind: 'update-set', op: w, set, key, timeout, column } : { kind: 'update-set', op: w, set, key, column };
}

/** Expression statement: SELECTOR … (set EXPR | vmap MAPREF | [relop] RHS). */
function expressionStatement(c: Cursor, a: Atom, column: number): SynExpr {
  const start = c.i;
  const lhs = parseOperand(c, 'lhs');
  if (!lhs) {
    if (a.t === 'op' || a.t === 'bad-string') c.error(a, `unexpected ${JSON.stringify(atomText(a))}`, 'expression or statement');
    c.i = start + 1;
    const text = atomsText(c.atoms.slice(start, c.i));
    const more = takeUntilStatement(c);
    return { kind: 'unsupported', text: more ? `${text} ${more}` : text, column };
  }
  const nw = c.word();
  if (nw === 'set') {
    const at = c.peek(1);
    c.i++;
    const expr = parseOperand(c, 'value');
    if (!expr) {
      c.error(at, `expected a value after ${operandText(lhs)} set`, 'expression');
      return { kind: 'unsupported', text: `${operandText(lhs)} set`, column };
    }
    if ((lhs.kind === 'meta' || lhs.kind === 'ct') && lhs.key === 'mark' && !(lhs.kind === 'ct' && lhs.dir)) {
      return { kind: 'mark-set', target: lhs.kind, expr, column };
    }
    return { kind: 'assign', left: lhs, expr, column };
  }
  if (nw === 'vmap') {
    const at = c.peek(1);
    c.i++;
    const map = parseMapRef(c);
    if (!map) {
      c.error(at, 'expected @map or { … } after vmap', '@name or {');
      return { kind: 'unsupported', text: `${operandText(lhs)} vmap`, column };
    }
    return { kind: 'vmap', key: lhs, map, column };
  }
  let op: SynRelOp = 'implicit';
  const o = c.peek();
  if (o && o.t === 'op' && REL_OPS.has(o.text)) {
    op = o.text as SynRelOp;
    c.i++;
  } else if (o && o.t === 'word' && REL_WORDS[o.text] && c.peek(1)) {
    op = REL_WORDS[o.text];
    c.i++;
  }
  const rhsAt = c.peek();
  const rhsOk = rhsAt !== undefined && rhsAt.t !== 'handle' && rhsAt.t !== 'comment' && !(rhsAt.t === 'word' && NEVER_VALUE.has(rhsAt.text));
  const right = rhsOk ? parseOperand(c, 'rhs') : undefined;
  if (!right) {
    c.error(rhsAt, `expected a value after ${operandText(lhs)}${op === 'implicit' ? '' : ` ${op}`}`, 'value');
    if (rhsAt && rhsAt.t !== 'handle' && rhsAt.t !== 'comment') c.i++;
    return { kind: 'unsupported', text: atomsText(c.atoms.slice(start, c.i)), column };
  }
  return { kind: 'match', left: lhs, op, right, column };
}
