/**
 * The tables, chains and rules of an iptables-save dump as they are read (iptables-save.ts fills
 * them, in line order); once read, the chains and rules are the model's Chain and Rule themselves.
 */
import { parseRuleItems, type LineSyntax, type RuleItem } from '../../grammars/iptables-save/index.js';
import type { SaveComment } from '../../grammars/common/iptables-syntax.js';
import type { Diagnostic } from '../source/index.js';
import type { Counters, DeletedChain, Match, Rule, Target } from '../model/netfilter.js';
import type { TableInference } from './fragment-table.js';

/**
 * A chain as it is read; it is then the model's Chain itself. Every field is there from the start
 * (undefined until read: JSON leaves those out, as it left out the fields added later), so 100k
 * chains have one shape and no property store of their own. The jump and goto targets to it are
 * made once and shared by every rule that jumps here (read-only data), with the chain's own name.
 */
export class MutableChain {
  policy: string | undefined = undefined;
  counters: Counters | undefined = undefined;
  line: number | undefined = undefined;
  rules: SavedRule[] = [];
  #jump: Target | undefined = undefined;
  #goto: Target | undefined = undefined;

  constructor(
    public table: string,
    readonly name: string,
    readonly builtin: boolean,
    readonly file: string,
  ) {}

  /** The (shared) `-j`/`-g` target to this chain. */
  target(goto: boolean): Target {
    if (goto) return (this.#goto ??= { kind: 'goto', chain: this.name });
    return (this.#jump ??= { kind: 'jump', chain: this.name });
  }

  toJSON(): Record<string, unknown> {
    // The fields in the order they were always written (table, name, builtin, rules, then as read).
    return { table: this.table, name: this.name, builtin: this.builtin, rules: this.rules, line: this.line, policy: this.policy, counters: this.counters };
  }
}

export interface MutableTable {
  name: string;
  line: number;
  endLine?: number;
  committed: boolean;
  implicit: boolean;
  generatedBy?: Extract<SaveComment, { kind: 'generated' }>;
  chains: Map<string, MutableChain>;
  /** A fragment's rule lines, read once its table name can be inferred (columns of one record, no object per rule). */
  pending: PendingRules;
  /** A rule line has been read: chains that appear from now on are `late`. */
  rulesStarted: boolean;
  /** Chains first seen after rules began (restore-style input): earlier `-j NAME` may have meant them. */
  lateChains?: Set<string>;
  /** A fragment: how its table was inferred (fragment-table.ts). */
  inferred?: TableInference;
  /** Names jumped to before (or without) any chain of that name in the table. */
  jumpedUnknown?: Set<string>;
  /** The chain of the last rule read (rules of one chain come together). */
  lastChain?: MutableChain;
  /**
   * The rules appended to lastChain since it became the last chain, not yet in its list: a
   * chain's list is made once per run of rules, of exactly its length (push() gives a 2-rule list
   * room for 17: 15 MB at 10k Services that lived to the end of the load).
   */
  run: SavedRule[];
  /** Per-rule warnings in rule order; `undeclared` ones are decided once the whole table is read. */
  ruleNotes: RuleNote[];
  /** Chains `-X` deleted (restore input), in order. */
  deleted?: DeletedChain[];
}

export type RuleNote = { readonly undeclared: string; readonly line: number; readonly column: number } | { readonly undeclared?: undefined; readonly diagnostic: Diagnostic };

export type RuleLine = Extract<LineSyntax, { kind: 'rule' }>;
export interface PendingRules {
  syntax: RuleLine[];
  line: number[];
  column: number[];
  text: string[];
}
export const noPending = (): PendingRules => ({ syntax: [], line: [], column: [], text: [] });

/**
 * A rule read from a dump. It keeps its text and its typed reading; its syntax (`items`) is read
 * again from the text when asked for (printing, round trips), because keeping every rule's
 * syntax objects was half of a big dump's model and much of its load time in garbage
 * collection (issue 8). Every rule has the same fields in the same order, so the code that
 * walks 300k of them sees one object shape.
 */
export class SavedRule implements Rule {
  constructor(
    /** Its chain: the rule's table, chain name and file are the chain's (three fields less on 300k rules). */
    private readonly home: MutableChain,
    public index: number,
    readonly line: number,
    readonly column: number,
    readonly raw: string,
    readonly matches: readonly Match[],
    readonly comments: readonly string[],
    readonly target: Target | undefined,
    readonly counters: Counters | undefined,
  ) {}

  get table(): string {
    return this.home.table;
  }

  get chain(): string {
    return this.home.name;
  }

  get file(): string {
    return this.home.file;
  }

  get comment(): string | undefined {
    return this.comments.length ? this.comments[0] : undefined;
  }

  get items(): readonly RuleItem[] {
    const items = parseRuleItems(this.raw, this.column);
    // The text parsed as this rule when the dump was read; the same grammar reads it the same way.
    if (items === undefined) throw new Error(`internal: ${this.file}:${this.line} no longer parses as a rule`);
    return items;
  }

  /** The model as JSON (`kpx dump -o json`): the fields as they always were, syntax included. */
  toJSON(): Record<string, unknown> {
    return {
      table: this.table,
      chain: this.chain,
      index: this.index,
      file: this.file,
      line: this.line,
      column: this.column,
      raw: this.raw,
      items: this.items,
      matches: this.matches,
      comments: this.comments,
      comment: this.comment,
      target: this.target,
      counters: this.counters,
    };
  }
}

export const counters = (c: readonly [string, string] | undefined): Counters | undefined => (c ? { packets: c[0], bytes: c[1] } : undefined);
