/**
 * What the grammar read in a line, as token indices (never text): lines of one shape share a
 * plan (parser.ts ShapeCache), and SyntaxBuilder turns plan + tokens into the syntax.
 */
import type { ChainCommand, GenericOption, RuleCommand } from '../common/iptables-syntax.js';

/** A token of the line, by its index; -1 when the part is absent. */
export type Tok = number;

export interface OptionPlan {
  readonly bang: Tok;
  readonly name: Tok;
  /** `--opt ! value` (iptables ≤ 1.4.2). */
  readonly legacy: boolean;
  /** The words the option took (none: undefined). */
  readonly args: readonly Tok[] | undefined;
  /** Index of the rule item the option belongs to when it is not the item it is written in; -1 otherwise. */
  readonly owner: number;
  /** The option's full name when it was written abbreviated (getopt's unique prefix). */
  readonly canonical: string | undefined;
}

/**
 * The last word a plan's slot was given, and what it became (a shared copy, an argument list):
 * lines of one shape mostly repeat the words at the same place (`-m comment`, `-p tcp`,
 * `-j KUBE-MARK-MASQ`), and comparing with the last one costs less than a table lookup.
 */
export interface SlotMemo<T> {
  image: string | undefined;
  value: T | undefined;
}

export const memo = <T>(): SlotMemo<T> => ({ image: undefined, value: undefined });

export type ItemPlan =
  | {
      readonly k: 'generic';
      readonly option: GenericOption;
      readonly bang: Tok;
      readonly opt: Tok;
      readonly late: Tok;
      readonly arg: Tok;
      readonly args: SlotMemo<readonly string[]>;
    }
  | { readonly k: 'flag'; readonly option: GenericOption; readonly bang: Tok; readonly opt: Tok }
  | { readonly k: 'set-counters'; readonly opt: Tok; readonly a: Tok; readonly b: Tok }
  | { readonly k: 'match'; readonly m: Tok; readonly name: Tok; readonly options: OptionPlan[]; readonly module: SlotMemo<string> }
  /** Options written without `-m`: the protocol's match loaded implicitly, or options of an earlier block. */
  | { readonly k: 'implicit'; readonly options: OptionPlan[] }
  | { readonly k: 'target'; readonly j: Tok; readonly goto: boolean; readonly name: Tok; readonly options: OptionPlan[]; readonly target: SlotMemo<string> };

/** An argument whose value iptables checks while parsing (its text is not part of the shape). */
export interface ValueCheck {
  readonly tok: Tok;
  readonly kind: ValueKind;
  /** `EXT: … "--option"` for the message. */
  readonly ext: string;
  readonly option: string;
}

export type ValueKind = 'port' | 'port-list' | 'mark' | 'mark-mask' | 'probability' | 'count' | 'nat-no-ports' | 'ports-need-protocol' | 'reset-needs-tcp';

export type LinePlan =
  | { readonly k: 'table'; readonly name: Tok }
  | { readonly k: 'chain'; readonly name: Tok; readonly policy: Tok; readonly counters: Tok }
  | { readonly k: 'commit' }
  | {
      readonly k: 'rule';
      readonly counters: Tok;
      readonly command: RuleCommand;
      readonly cmd: Tok;
      readonly chain: Tok;
      readonly ruleNumber: Tok;
      readonly items: readonly ItemPlan[];
      readonly checks: readonly ValueCheck[];
    }
  | { readonly k: 'chain-command'; readonly command: ChainCommand; readonly cmd: Tok; readonly args: readonly Tok[] };

/** Why a rule's options are not what iptables accepts: the token (-1: the end of the line) and what was expected. */
export interface GetoptFailure {
  readonly getopt: true;
  readonly at: Tok;
  readonly expected: string;
  /** iptables' own complaint, when it says more than "expected …". */
  readonly message: string;
}
