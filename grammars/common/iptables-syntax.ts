/**
 * What the iptables-save grammar produces: a lossless, position-carrying syntax of each line.
 * Arguments are kept exactly as written (quotes and escapes included); `unquote()` gives values.
 * The model keeps a rule's `RuleItem`s (to print it back losslessly), so this vocabulary lives in
 * grammars/common — the one leaf both the grammars and the model may import (test/layering/layers.js).
 */

export type GenericOption =
  | 'source'
  | 'destination'
  | 'in-interface'
  | 'out-interface'
  | 'protocol'
  | 'fragment'
  | 'ipv4'
  | 'ipv6'
  | 'unknown';

/** `[!] --name [!] args…` inside a match or target. */
export interface OptionSyntax {
  readonly name: string;
  readonly negated: boolean;
  /** Pre-2009 iptables wrote `--opt ! value`. */
  readonly legacyNegation?: true;
  readonly args: readonly string[];
  readonly column: number;
  /**
   * Index (in the rule's items) of the match or target this option belongs to, when that is
   * not the item it is written in: iptables takes an extension's options anywhere after it is
   * loaded (`-m tcp -p tcp --dport 80`, `-j ACCEPT --dport 80`).
   */
  readonly owner?: number;
  /** The full option name when it was written as an abbreviation getopt accepts (`--dp` → `--dport`). */
  readonly canonical?: string;
}

export type RuleItem =
  | {
      readonly kind: 'generic';
      readonly option: GenericOption;
      readonly spelled: string;
      readonly negated: boolean;
      readonly legacyNegation?: true;
      readonly args: readonly string[];
      readonly column: number;
    }
  | {
      readonly kind: 'match';
      /**
       * `-m` or `--match`; undefined for options given without -m: the protocol's match loaded
       * implicitly (its first option has no `owner`), or options of earlier items (all have one).
       */
      readonly spelled: string | undefined;
      readonly module: string;
      readonly options: readonly OptionSyntax[];
      readonly column: number;
    }
  | {
      readonly kind: 'target';
      readonly spelled: string;
      readonly goto: boolean;
      readonly name: string;
      readonly options: readonly OptionSyntax[];
      readonly column: number;
    }
  | { readonly kind: 'set-counters'; readonly spelled: string; readonly args: readonly string[]; readonly column: number };

export type RuleCommand = 'append' | 'insert' | 'delete' | 'replace';
export type ChainCommand = 'new-chain' | 'delete-chain' | 'flush' | 'zero' | 'policy';

export type LineSyntax =
  | { readonly kind: 'table'; readonly name: string }
  | {
      readonly kind: 'chain';
      readonly name: string;
      readonly policy: string;
      readonly counters?: readonly [string, string];
    }
  | { readonly kind: 'commit' }
  | {
      readonly kind: 'rule';
      readonly command: RuleCommand;
      readonly spelled: string;
      readonly chain: string;
      readonly ruleNumber?: string;
      /** `[pkts:bytes]` prefix of `iptables-save -c`. */
      readonly counters?: readonly [string, string];
      readonly items: readonly RuleItem[];
    }
  | {
      readonly kind: 'chain-command';
      readonly command: ChainCommand;
      readonly spelled: string;
      readonly args: readonly string[];
    };

/** Metadata comments iptables-save itself prints (FORMATS.md §1.1). */
export type SaveComment =
  | { readonly kind: 'generated'; readonly program: string; readonly version: string; readonly backend: 'nf_tables' | 'legacy'; readonly date: string }
  | { readonly kind: 'completed'; readonly date: string }
  | { readonly kind: 'legacy-tables-warning'; readonly program: string }
  | { readonly kind: 'incompatible-table'; readonly table: string; readonly partly: boolean }
  | { readonly kind: 'other' };

export type DocumentEntry =
  | { readonly kind: 'syntax'; readonly line: number; readonly column: number; readonly text: string; readonly syntax: LineSyntax }
  | { readonly kind: 'comment'; readonly line: number; readonly column: number; readonly text: string; readonly comment: SaveComment }
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: string }
  | { readonly kind: 'unsupported'; readonly line: number; readonly column: number; readonly text: string; readonly reason: string };

/** Undo xtables_save_string(): strip the quotes and the backslash before any character. */
export function unquote(arg: string): string {
  if (arg.length < 1 || arg.charCodeAt(0) !== 34 /* " */) return arg;
  const closed = arg.length >= 2 && arg.endsWith('"') && !isEscapedAt(arg, arg.length - 1);
  const inner = arg.slice(1, closed ? -1 : undefined);
  return inner.indexOf('\\') < 0 ? inner : inner.replace(/\\(.)/gs, '$1');
}

function isEscapedAt(s: string, i: number): boolean {
  let n = 0;
  for (let j = i - 1; j >= 0 && s[j] === '\\'; j--) n++;
  return n % 2 === 1;
}

/** Quote a value as xtables_save_string() would: bare when [A-Za-z0-9_-]+, else "…" with \ before " \ '. */
export function quoteLikeIptables(value: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(value)) return value;
  return `"${value.replace(/["\\']/g, (c) => `\\${c}`)}"`;
}
