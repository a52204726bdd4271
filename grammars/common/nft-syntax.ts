/**
 * The vocabulary of nft rules: the syntax tree the nft grammar (grammars/nft/) produces, and the
 * element and expression types the model (src/model/nft.ts) keeps as they are (NftExpr = SynExpr, …);
 * tables, chains and sets are re-shaped by the extractor. It lives in grammars/common, beside
 * positions and format ids, because both sides need it and the layers let the model import only
 * this shared leaf, never a grammar (test/layering/layers.js). No imports: plain data and printers.
 * Documented in grammars/nft/README.md.
 */
export interface SynElement {
  readonly key: readonly string[];
  readonly value?: SynValue;
  readonly comment?: string;
  readonly expires?: string;
  readonly timeout?: string;
  readonly counter?: { readonly packets: number; readonly bytes: number };
  readonly line: number;
  readonly column: number;
}

export type SynVerdictName = 'jump' | 'goto' | 'accept' | 'drop' | 'return' | 'continue' | 'queue';

export type SynValue =
  | { readonly kind: 'verdict'; readonly verdict: SynVerdictName; readonly chain?: string }
  | { readonly kind: 'data'; readonly parts: readonly string[] };

export type SynMapRef =
  | { readonly kind: 'ref'; readonly name: string }
  | { readonly kind: 'inline'; readonly elements: readonly SynElement[] };

export type SynBinaryOp = '&' | '|' | '^' | '<<' | '>>';

export type SynOperand =
  | { readonly kind: 'payload'; readonly protocol: string; readonly field: string }
  | { readonly kind: 'meta'; readonly key: string }
  | { readonly kind: 'ct'; readonly key: string; readonly dir?: string }
  | { readonly kind: 'fib'; readonly flags: readonly string[]; readonly result: string }
  | { readonly kind: 'numgen'; readonly mode: string; readonly mod: number; readonly offset: number }
  | { readonly kind: 'selector'; readonly words: readonly string[] }
  | { readonly kind: 'concat'; readonly parts: readonly SynOperand[] }
  | { readonly kind: 'binop'; readonly op: SynBinaryOp; readonly left: SynOperand; readonly right: SynOperand }
  | { readonly kind: 'map'; readonly key: SynOperand; readonly map: SynMapRef }
  | { readonly kind: 'set-ref'; readonly name: string }
  | { readonly kind: 'set'; readonly elements: readonly SynElement[] }
  | { readonly kind: 'value'; readonly text: string; readonly quoted?: boolean }
  | { readonly kind: 'list'; readonly items: readonly string[] };

export type SynRelOp = '==' | '!=' | '<' | '>' | '<=' | '>=' | 'implicit';

export interface SynNatTarget {
  readonly text: string;
  readonly addr?: string;
  readonly port?: string;
}

export type SynExpr =
  | { readonly kind: 'match'; readonly left: SynOperand; readonly op: SynRelOp; readonly right: SynOperand; readonly column: number }
  | { readonly kind: 'verdict'; readonly verdict: SynVerdictName; readonly chain?: string; readonly text?: string; readonly column: number }
  | { readonly kind: 'vmap'; readonly key: SynOperand; readonly map: SynMapRef; readonly column: number }
  | {
      readonly kind: 'dnat' | 'snat';
      readonly family?: string;
      readonly to?: SynNatTarget;
      readonly map?: { readonly key: SynOperand; readonly map: SynMapRef };
      readonly flags: readonly string[];
      readonly column: number;
    }
  | { readonly kind: 'masquerade' | 'redirect'; readonly to?: SynNatTarget; readonly flags: readonly string[]; readonly column: number }
  | { readonly kind: 'mark-set'; readonly target: 'meta' | 'ct'; readonly expr: SynOperand; readonly column: number }
  | { readonly kind: 'assign'; readonly left: SynOperand; readonly expr: SynOperand; readonly column: number }
  | { readonly kind: 'counter'; readonly packets?: number; readonly bytes?: number; readonly name?: string; readonly column: number }
  | {
      readonly kind: 'update-set';
      readonly op: 'update' | 'add' | 'delete';
      readonly set: string;
      readonly key: SynOperand;
      readonly timeout?: string;
      readonly column: number;
    }
  | { readonly kind: 'reject'; readonly with?: string; readonly column: number }
  | { readonly kind: 'log'; readonly prefix?: string; readonly group?: number; readonly level?: string; readonly text: string; readonly column: number }
  | { readonly kind: 'limit'; readonly rate: string; readonly over: boolean; readonly burst?: string; readonly text: string; readonly column: number }
  | { readonly kind: 'xt'; readonly match: boolean; readonly name: string; readonly column: number }
    | { readonly kind: 'statement'; readonly name: string; readonly text: string; readonly column: number }
  | { readonly kind: 'unsupported'; readonly text: string; readonly column: number };

export interface SynRule {
  readonly exprs: readonly SynExpr[];
  readonly comment?: string;
  readonly handle?: number;
  readonly counter?: { readonly packets: number; readonly bytes: number };
  readonly raw: string;
  readonly line: number;
  readonly column: number;
}


/** Chain as read from the listing; the numeric priority is left to the extractor. */
export interface SynChain {
  readonly name: string;
  readonly type?: string;
  readonly hook?: string;
  readonly device?: string;
  /** `dstnat - 10` → text 'dstnat - 10', base 'dstnat', offset -10; `-110` → base '-110', offset 0. */
  readonly priorityText?: string;
  readonly priorityBase?: string;
  readonly priorityOffset?: number;
  readonly policy?: string;
  readonly comment?: string;
  readonly rules: readonly SynRule[];
  readonly line: number;
  readonly handle?: number;
}

export interface SynSet {
  readonly name: string;
  readonly kind: 'set' | 'map';
  /** `type` data types, one per concatenation part; for `typeof` sets the expression texts. */
  readonly keyType: readonly string[];
  /** The `typeof` key text as printed, when the set was declared with typeof. */
  readonly typeof?: string;
  /** Map value type: 'verdict' for verdict maps, `ipv4_addr . inet_service` for nat maps. */
  readonly valueType?: string;
  readonly flags: readonly string[];
  readonly timeout?: string;
  readonly gcInterval?: string;
  readonly size?: number;
  readonly counter?: boolean;
  readonly policy?: string;
  readonly comment?: string;
  readonly elements: readonly SynElement[];
  readonly line: number;
  readonly handle?: number;
}

export interface SynTable {
  readonly family: string;
  readonly name: string;
  readonly implicit: boolean;
  readonly comment?: string;
  readonly flags: readonly string[];
  readonly chains: readonly SynChain[];
  readonly sets: readonly SynSet[];
  readonly line: number;
  readonly endLine: number;
  readonly handle?: number;
  /** The input ended inside this table (or inside a chain of a pasted fragment): a cut dump. */
  readonly truncated?: true;
}

export interface SynUnsupported {
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

/** Verbs of `nft -f` input (nftables src/parser_bison.y base_cmd). */
export type SynCommandVerb = 'add' | 'create' | 'insert' | 'replace' | 'delete' | 'destroy' | 'flush';
export type SynCommandObject = 'table' | 'chain' | 'rule' | 'set' | 'map' | 'element' | 'ruleset';

/**
 * One command of the `nft -f` transaction form (`add chain ip kube-proxy services`), or a
 * `table F N { … }` block met among commands (`block`: nft adds its objects like `add`).
 */
export interface SynCommand {
  readonly verb: SynCommandVerb;
  readonly object: SynCommandObject | 'block';
  /** `ip` when the command names none (nft's default family). */
  readonly family: string;
  readonly table?: string;
  /** Chain of a rule command; chain/set/map name of the other commands. */
  readonly name?: string;
  /** `handle N` naming the object (delete/replace rule, delete chain/set/table by handle). */
  readonly handle?: number;
  /** Where `add`/`insert rule` places the rule: after/before handle N or index N. */
  readonly position?: { readonly by: 'handle' | 'index'; readonly value: number };
  /** Table properties of `add table … { comment "…" ; flags … ; }`. */
  readonly tableSpec?: { readonly comment?: string; readonly flags: readonly string[] };
  /** Chain properties (type/hook/priority/policy/comment) of `add chain … { … }`; rules empty. */
  readonly chain?: SynChain;
  /** Set or map properties (and `elements = { … }`) of `add set|map … { … }`. */
  readonly set?: SynSet;
  readonly rule?: SynRule;
  readonly elements?: readonly SynElement[];
  /** The block of a `block` command. */
  readonly block?: SynTable;
  readonly line: number;
  readonly column: number;
  /** Column of the word naming the object (where nft points its errors). */
  readonly nameColumn: number;
}

export interface SynDocument {
  readonly tables: readonly SynTable[];
  /**
   * Present when the input is the `nft -f` transaction form: its commands (and table blocks)
   * in input order, to be applied in turn. A plain listing has none.
   */
  readonly commands?: readonly SynCommand[];
  readonly unsupported: readonly SynUnsupported[];
  /** Tables named by `# Warning: table F N is managed by iptables-nft, do not touch!` lines. */
  readonly iptablesNftWarnings: readonly { readonly family: string; readonly name: string; readonly line: number }[];
  /** `nft -j`'s `{"metainfo": {"version": "1.0.6", …}}`: the nft that printed the listing (the text form does not say). */
  readonly nftVersion?: { readonly version: string; readonly line: number };
}

// Printing helpers (nft's own notation), shared by the grammar's messages and the model.

/** Render an operand roughly as nft prints it (for messages and comparisons). */
export function operandText(o: SynOperand): string {
  switch (o.kind) {
    case 'payload':
      return `${o.protocol} ${o.field}`;
    case 'meta':
      return `meta ${o.key}`;
    case 'ct':
      return o.dir ? `ct ${o.dir} ${o.key}` : `ct ${o.key}`;
    case 'fib':
      return `fib ${o.flags.join(' . ')} ${o.result}`;
    case 'numgen':
      return `numgen ${o.mode} mod ${o.mod}${o.offset ? ` offset ${o.offset}` : ''}`;
    case 'selector':
      return o.words.join(' ');
    case 'concat':
      return o.parts.map(operandText).join(' . ');
    case 'binop':
      return `${operandText(o.left)} ${o.op} ${operandText(o.right)}`;
    case 'map':
      return `${operandText(o.key)} map ${mapRefText(o.map)}`;
    case 'set-ref':
      return `@${o.name}`;
    case 'set':
      return `{ ${o.elements.map(elementText).join(', ')} }`;
    case 'value':
      return o.quoted ? `"${o.text}"` : o.text;
    case 'list':
      return o.items.join(',');
  }
}

export function mapRefText(m: SynMapRef): string {
  return m.kind === 'ref' ? `@${m.name}` : `{ ${m.elements.map(elementText).join(', ')} }`;
}

export function valueText(v: SynValue): string {
  if (v.kind === 'data') return v.parts.join(' . ');
  return v.chain !== undefined ? `${v.verdict} ${v.chain}` : v.verdict;
}

export function elementText(e: SynElement): string {
  const k = e.key.join(' . ');
  return e.value ? `${k} : ${valueText(e.value)}` : k;
}

/** Seconds to nft's printed form (10800 → `3h`, 90 → `1m30s`). */
export function formatNftTime(seconds: number): string {
  let ms = Math.round(seconds * 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    if (ms >= size) {
      parts.push(`${Math.floor(ms / size)}${unit}`);
      ms %= size;
    }
  }
  return parts.length ? parts.join('') : '0s';
}

