/**
 * Undecided matches as questions, answered once per scenario. A trace runs once per scenario:
 * the first time a run meets a question nobody has answered, it takes "yes" and queues the same
 * run with "no", so every question forks the walk once and every later encounter (on any branch
 * of that run) gets the same answer. Within one scenario the outcomes' shares sum to 1.
 */
import type { Condition, QuestionCode } from './types.js';

/** A fact the evidence does not give, asked by a rule. `key` identifies the fact, not the rule. */
export interface Question {
  readonly code: QuestionCode;
  readonly key: string;
  readonly subject?: string;
  /** The match as written. */
  readonly match: string;
  readonly table: string;
  readonly chain: string;
  readonly file: string | null;
  readonly line: number | null;
  /** Interface questions: once the packet is known to arrive on (leave by) an exact name, the others follow. */
  readonly iface?: { readonly dir: 'in' | 'out'; readonly pattern: string };
}

/** iptables interface pattern semantics (`eth+` is a prefix); nft `eth*` is read the same way. */
export function ifaceMatches(pattern: string, name: string): boolean {
  if (pattern.endsWith('+') || pattern.endsWith('*')) return name.startsWith(pattern.slice(0, -1));
  return name === pattern;
}

const isExactName = (p: string) => !p.endsWith('+') && !p.endsWith('*');

export interface Assignment {
  readonly question: Question;
  readonly holds: boolean;
}

export function conditionOf(a: Assignment): Condition {
  const q = a.question;
  return { code: q.code, holds: a.holds, ...(q.subject !== undefined ? { subject: q.subject } : {}), match: q.match, table: q.table, chain: q.chain, file: q.file, line: q.line };
}

/** The answers of one run: those it was started with, and those it chose on the way. */
export class ScenarioRun {
  private readonly answers = new Map<string, boolean>();
  private readonly bound: { in?: string; out?: string } = {};
  readonly assignments: Assignment[] = [];
  /** Runs still to do: this run's answers so far with one of them flipped. */
  readonly forks: Assignment[][] = [];

  constructor(seed: readonly Assignment[]) {
    for (const a of seed) this.record(a);
  }

  private record(a: Assignment): void {
    this.answers.set(a.question.key, a.holds);
    const f = a.question.iface;
    if (f && a.holds && isExactName(f.pattern)) this.bound[f.dir] = f.pattern;
    this.assignments.push(a);
  }

  /** The answer in this scenario, choosing "holds" (and queueing "does not hold") when it is new. */
  answer(q: Question): boolean {
    const f = q.iface;
    const bound = f ? this.bound[f.dir] : undefined;
    if (f && bound !== undefined) return ifaceMatches(f.pattern, bound);
    const known = this.answers.get(q.key);
    if (known !== undefined) return known;
    this.forks.push([...this.assignments, { question: q, holds: false }]);
    this.record({ question: q, holds: true });
    return true;
  }
}
