/**
 * Chain and set/map properties, as nft lists them inside `chain … {` / `set … {` and as the
 * transaction form writes them inside `add chain … { … }` / `add set … { … }`.
 */
import type { SynChain, SynElement, SynSet } from '../common/nft-syntax.js';
import type { Atom, TokenAtom } from './parser.js';
import { atomsText, type RuleProblem } from './cursor.js';
import { parseGroupElements } from './elements.js';
import { dotParts } from './rule.js';
import { appendAll } from '../common/source.js';

type Mut<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

export function parseChainSpec(atoms: readonly Atom[], chain: Mut<SynChain>, line: number, problems: RuleProblem[]): void {
  let k = 0;
  const word = (n: number) => (atoms[n] && (atoms[n].t === 'word' || atoms[n].t === 'string') ? (atoms[n] as TokenAtom).text : undefined);
  const err = (n: number, message: string, expected: string) => {
    const a = atoms[n] ?? atoms[atoms.length - 1];
    problems.push({ severity: 'error', code: 'parse/unexpected-token', line: line + (a?.line ?? 0), column: a ? a.column : 1, message, expected, found: atoms[n] ? atomsText([atoms[n]]) : 'end of line' });
  };
  while (k < atoms.length) {
    const a = atoms[k];
    if (a.t === 'op' && a.text === ';') {
      k++;
      continue;
    }
    const w = word(k);
    if (w === 'type' || w === 'hook' || w === 'policy' || w === 'device') {
      const v = word(k + 1);
      if (v === undefined) {
        err(k + 1, `expected a value after ${w}`, 'name');
        k++;
        continue;
      }
      chain[w === 'device' ? 'device' : w] = v;
      k += 2;
    } else if (w === 'devices') {
      k++;
      if (atoms[k]?.t === 'op' && (atoms[k] as TokenAtom).text === '=') k++;
      const g = atoms[k];
      if (g && g.t === 'group') {
        chain.device = parseGroupElements(g, line, problems)
          .map((e: SynElement) => e.key.join('.'))
          .join(',');
        k++;
      } else err(k, 'expected { devices } after devices =', '{');
    } else if (w === 'priority') {
      k++;
      const parts: string[] = [];
      const base = word(k);
      if (base === undefined) {
        err(k, 'expected a priority', 'number or name');
        continue;
      }
      parts.push(base);
      k++;
      let offset = 0;
      const sign = atoms[k];
      if (sign && ((sign.t === 'op' && sign.text === '-') || (sign.t === 'word' && sign.text === '+')) && /^\d+$/.test(word(k + 1) ?? '')) {
        offset = (sign.text === '-' ? -1 : 1) * Number(word(k + 1));
        parts.push(sign.text, word(k + 1)!);
        k += 2;
      }
      chain.priorityText = parts.join(' ');
      chain.priorityBase = base;
      chain.priorityOffset = offset;
    } else {
      err(k, `unexpected ${JSON.stringify(atomsText([a]))} in chain declaration`, 'type | hook | device | priority | policy');
      k++;
    }
  }
}

export function parseSetProperty(atoms: readonly Atom[], set: Mut<SynSet>, line: number, problems: RuleProblem[]): boolean {
  const list = atoms.filter((a) => !(a.t === 'op' && a.text === ';') && a.t !== 'handle' && a.t !== 'comment');
  const w0 = list[0]?.t === 'word' ? (list[0] as TokenAtom).text : undefined;
  const rest = list.slice(1);
  const v1 = rest[0] && rest[0].t !== 'group' ? (rest[0] as TokenAtom).text : undefined;
  switch (w0) {
    case 'type':
    case 'typeof': {
      const colon = rest.findIndex((a) => a.t === 'op' && a.text === ':');
      const keyAtoms = colon >= 0 ? rest.slice(0, colon) : rest;
      const valueAtoms = colon >= 0 ? rest.slice(colon + 1) : [];
      set.keyType = dotParts(keyAtoms);
      if (w0 === 'typeof') set.typeof = atomsText(keyAtoms);
      if (valueAtoms.length) set.valueType = dotParts(valueAtoms).join(' . ');
      return keyAtoms.length > 0;
    }
    case 'flags':
      if (v1 === undefined) return false;
      appendAll(set.flags, rest.map((a) => atomsText([a])).join(',').split(',').filter(Boolean));
      return true;
    case 'timeout':
      if (v1 === undefined) return false;
      set.timeout = v1;
      return true;
    case 'gc-interval':
      if (v1 === undefined) return false;
      set.gcInterval = v1;
      return true;
    case 'size':
      if (v1 === undefined || !/^\d+$/.test(v1)) return false;
      set.size = Number(v1);
      return true;
    case 'counter':
      set.counter = true;
      return true;
    case 'policy':
      if (v1 === undefined) return false;
      set.policy = v1;
      return true;
    case 'auto-merge':
      set.flags.push('auto-merge');
      return true;
    case 'comment':
      if (v1 === undefined) return false;
      set.comment = v1;
      return true;
    case 'elements': {
      const g = rest.find((a) => a.t === 'group');
      if (!g || g.t !== 'group') {
        problems.push({ severity: 'error', code: 'parse/unexpected-token', line, column: list[0].column, message: 'expected `= { … }` after elements', expected: '{', found: 'end of line' });
        return true;
      }
      appendAll(set.elements, parseGroupElements(g, line, problems));
      return true;
    }
    default:
      return false;
  }
}
