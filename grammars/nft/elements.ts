/**
 * Set and map elements: `KEY ('.' KEY)* [comment S | timeout T | expires T | counter …]* [':' VALUE]`,
 * one per item of a `{ … }` group (anonymous sets, `elements = { … }`, inline maps).
 */
import type { SynElement, SynValue, SynVerdictName } from '../common/nft-syntax.js';
import { atomText, atomsText, Cursor, type RuleProblem } from './cursor.js';
import type { Atom, GroupAtom, TokenAtom } from './parser.js';
import { VERDICTS } from './vocabulary.js';

function isPlainWord(a: Atom | undefined): a is TokenAtom {
  return a !== undefined && a.t === 'word';
}

export function parseGroupElements(g: GroupAtom, baseLine: number, problems: RuleProblem[]): SynElement[] {
  if (g.unclosed) {
    problems.push({
      severity: 'error',
      code: 'parse/unclosed-brace',
      line: baseLine + g.line,
      column: g.column,
      message: '`{` is never closed',
      expected: '}',
      found: 'end of input',
    });
  }
  // after an unclosed `{` the last element swallows the rest of the line: one error is enough
  const sink: RuleProblem[] = g.unclosed ? [] : problems;
  return g.elements.map((atoms) => parseElement(atoms, baseLine, sink));
}

function parseVerdictValue(c: Cursor): SynValue | undefined {
  const w = c.word();
  if (w === undefined) return undefined;
  if (VERDICTS.has(w) || w === 'queue') {
    c.i++;
    return { kind: 'verdict', verdict: w as SynVerdictName };
  }
  if (w === 'jump' || w === 'goto') {
    const t = c.peek(1);
    if (t && (t.t === 'word' || t.t === 'string')) {
      c.i += 2;
      return { kind: 'verdict', verdict: w, chain: t.text };
    }
  }
  return undefined;
}

/** KEY ('.' KEY)* [comment S | timeout T | expires T | counter packets N bytes M]* [':' VALUE] */
export function parseElement(atoms: readonly Atom[], baseLine: number, problems: RuleProblem[]): SynElement {
  const c = new Cursor(atoms, baseLine, problems);
  const first = atoms[0];
  const key: string[] = [];
  const keyPart = (): boolean => {
    const a = c.peek();
    if (!a || a.t === 'op' || a.t === 'handle' || a.t === 'comment') return false;
    if (a.t === 'word' && ['comment', 'timeout', 'expires', 'counter'].includes(a.text) && key.length > 0) return false;
    c.i++;
    key.push(a.t === 'group' ? atomText(a) : a.text);
    return true;
  };
  if (keyPart()) {
    while (c.isOp('.')) {
      c.i++;
      if (!keyPart()) {
        c.error(c.peek(), 'expected a key part after `.`', 'value');
        break;
      }
    }
  }
  let comment: string | undefined;
  let timeout: string | undefined;
  let expires: string | undefined;
  let counter: { packets: number; bytes: number } | undefined;
  for (;;) {
    const w = c.word();
    const a1 = c.peek(1);
    if (w === 'comment' && a1 && (a1.t === 'string' || a1.t === 'word')) {
      comment = a1.text;
      c.i += 2;
    } else if (w === 'timeout' && isPlainWord(a1)) {
      timeout = a1.text;
      c.i += 2;
    } else if (w === 'expires' && isPlainWord(a1)) {
      expires = a1.text;
      c.i += 2;
    } else if (w === 'counter' && c.word(1) === 'packets' && c.word(3) === 'bytes') {
      counter = { packets: Number(c.word(2)), bytes: Number(c.word(4)) };
      c.i += 5;
    } else break;
  }
  const value = c.isOp(':') ? elementValue(c) : undefined;
  if (!c.done) {
    const rest = atoms.slice(c.i);
    c.error(rest[0], `unexpected ${JSON.stringify(atomsText(rest))} in set element`, ', or }');
  }
  if (key.length === 0 && first) c.error(first, 'empty set element', 'value');
  const el: { -readonly [K in keyof SynElement]: SynElement[K] } = {
    // exact-size copies: arrays grown by push keep room for seventeen items, and the model keeps them
    key: key.slice(),
    line: baseLine + (first?.line ?? 0),
    column: first?.column ?? 1,
  };
  if (value) el.value = value;
  if (comment !== undefined) el.comment = comment;
  if (expires !== undefined) el.expires = expires;
  if (timeout !== undefined) el.timeout = timeout;
  if (counter) el.counter = counter;
  return el;
}

/** `: VERDICT` or `: DATA ('.' DATA)*` after an element's key (the cursor is at the `:`). */
function elementValue(c: Cursor): SynValue | undefined {
  c.next();
  const verdict = parseVerdictValue(c);
  if (verdict) return verdict;
  const parts: string[] = [];
  const part = (): boolean => {
    const a = c.peek();
    if (!a || a.t === 'op' || a.t === 'handle' || a.t === 'comment') return false;
    c.i++;
    parts.push(a.t === 'group' ? atomText(a) : a.text);
    return true;
  };
  if (part()) while (c.isOp('.') && (c.i++, part()));
  if (parts.length) return { kind: 'data', parts };
  c.error(c.peek() ?? undefined, 'expected a value after `:`', 'verdict or value');
  return undefined;
}
