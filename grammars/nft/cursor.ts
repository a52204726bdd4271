/**
 * A position in the atoms of one nft line (./parser.ts) and the problems found there: the rule
 * reader (./rule.ts and the files beside it) and the transaction reader's command lines use it.
 */
import type { Atom } from './parser.js';

export interface RuleProblem {
  readonly severity: 'error' | 'warning' | 'info';
  readonly code: string;
  /** Absolute file line. */
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly expected?: string;
  readonly found?: string;
}

/** A position in one rule's atoms (the transaction reader's command lines use it too). */
export class Cursor {
  i = 0;
  constructor(
    readonly atoms: readonly Atom[],
    readonly baseLine: number,
    readonly problems: RuleProblem[],
  ) {}
  get done(): boolean {
    return this.i >= this.atoms.length;
  }
  peek(k = 0): Atom | undefined {
    return this.atoms[this.i + k];
  }
  word(k = 0): string | undefined {
    const a = this.atoms[this.i + k];
    return a && a.t === 'word' ? a.text : undefined;
  }
  isOp(text: string, k = 0): boolean {
    const a = this.atoms[this.i + k];
    return a !== undefined && a.t === 'op' && a.text === text;
  }
  next(): Atom {
    return this.atoms[this.i++];
  }
  lineOf(a: Atom | undefined): number {
    return this.baseLine + (a ? a.line : (this.atoms[this.atoms.length - 1]?.line ?? 0));
  }
  colOf(a: Atom | undefined): number {
    if (a) return a.column;
    const last = this.atoms[this.atoms.length - 1];
    return last ? last.column + atomText(last).length : 1;
  }
  error(at: Atom | undefined, message: string, expected?: string): void {
    this.problems.push({
      severity: 'error',
      code: 'parse/unexpected-token',
      line: this.lineOf(at),
      column: this.colOf(at),
      message,
      expected,
      found: at ? atomText(at) : 'end of line',
    });
  }
}

/** Atom text as printed (strings re-quoted, groups rendered). */
export function atomText(a: Atom): string {
  if (a.t === 'group') return `{ ${a.elements.map((e) => e.map(atomText).join(' ')).join(', ')} }`;
  if (a.t === 'string') return `"${a.text}"`;
  if (a.t === 'bad-string') return `"${a.text}`;
  return a.text;
}

export function atomsText(atoms: readonly Atom[]): string {
  return atoms.map(atomText).join(' ');
}
