/**
 * The grammar of one iptables-save / iptables-restore line, as a Chevrotain parser with
 * embedded actions (no CST, ARCHITECTURE.md; issue 8's Chevrotain performance notes).
 *
 * The actions record *which token* plays which part (a LinePlan of token indices), never a
 * token's text; SyntaxBuilder turns a plan and the line's tokens into the syntax. What the
 * parser decides depends only on the token types and the option spellings (its gates look at
 * nothing else), so lines of the same shape — a 10k-Service dump has a few dozen shapes in
 * 400k lines — share one plan: ShapeCache keeps them, and the parser runs once per shape.
 *
 *   line        := TableHeader | ChainDecl Word Counters? | COMMIT | Counters? command
 *   command     := (-A|-I|-D|-R) chain [rulenum] item* | (-N|-X|-F|-Z|-P) word*
 *   item        := [!] (-s|-d|-i|-o|-p) arg | [!] (-f|-4|-6) | -c n n
 *                | -m module option* | (-j|-g) target option* | option   (implicit -m PROTO)
 *   option      := [!] --name [!] arg*        (getopt: some options take the next word, whatever it is)
 */
import { EmbeddedActionsParser, EOF, Lexer, type IOrAlt, type IRecognitionException, type IToken, type TokenType } from '../common/chevrotain.js';
import * as T from './tokens.js';
import type { ChainCommand, GenericOption, LineSyntax, OptionSyntax, RuleCommand, RuleItem } from './syntax.js';
import { intern } from './tokens.js';

type RuleLine = Extract<LineSyntax, { kind: 'rule' }>;

/** Options whose single argument getopt takes verbatim even when it looks like an option. */
const VERBATIM_ARG = new Set(['--comment', '--log-prefix', '--nflog-prefix', '--string', '--hex-string', '--u32', '--helper']);

const GENERIC_BY_TOKEN = new Map<TokenType, GenericOption>([
  [T.Source, 'source'],
  [T.Destination, 'destination'],
  [T.InInterface, 'in-interface'],
  [T.OutInterface, 'out-interface'],
  [T.Protocol, 'protocol'],
  [T.Fragment, 'fragment'],
  [T.Ipv4Flag, 'ipv4'],
  [T.Ipv6Flag, 'ipv6'],
]);

const RULE_COMMAND = new Map<TokenType, RuleCommand>([
  [T.Append, 'append'],
  [T.Insert, 'insert'],
  [T.Delete, 'delete'],
  [T.Replace, 'replace'],
]);

const CHAIN_COMMAND = new Map<TokenType, ChainCommand>([
  [T.NewChain, 'new-chain'],
  [T.DeleteChain, 'delete-chain'],
  [T.Flush, 'flush'],
  [T.Zero, 'zero'],
  [T.Policy, 'policy'],
]);

function counterPair(image: string): readonly [string, string] {
  // During Chevrotain's grammar recording phase tokens are placeholders without text.
  if (typeof image !== 'string') return ['', ''];
  const colon = image.indexOf(':');
  return [image.slice(1, colon), image.slice(colon + 1, -1)];
}

/** Shared by every syntax node without options or arguments (the model is read-only). */
const NO_OPTIONS: readonly OptionSyntax[] = Object.freeze([]) as readonly OptionSyntax[];
const NO_ARGS: readonly string[] = Object.freeze([]) as readonly string[];

/** Token types that can be an option's argument (ArgLike and its members). */
const ARG_LIKE = new Set<TokenType>([T.ArgLike, ...T.allTokens.filter((t) => t.CATEGORIES?.includes(T.ArgLike))]);

/** A token of the line, by its index; -1 when the part is absent. */
type Tok = number;

interface OptionPlan {
  readonly bang: Tok;
  readonly name: Tok;
  /** `--opt ! value` (iptables ≤ 1.4.2). */
  readonly legacy: boolean;
  /** One verbatim argument, or the argument words that follow (none: undefined). */
  readonly args: readonly Tok[] | undefined;
}

/**
 * The last word a plan's slot was given, and what it became (a shared copy, an argument list):
 * lines of one shape mostly repeat the words at the same place (`-m comment`, `-p tcp`,
 * `-j KUBE-MARK-MASQ`), and comparing with the last one costs less than a table lookup.
 */
interface SlotMemo<T> {
  image: string | undefined;
  value: T | undefined;
}

const memo = <T>(): SlotMemo<T> => ({ image: undefined, value: undefined });

type ItemPlan =
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
  | { readonly k: 'unknown-short'; readonly bang: Tok; readonly opt: Tok; readonly args: readonly Tok[] }
  | { readonly k: 'match'; readonly m: Tok; readonly name: Tok; readonly options: readonly OptionPlan[]; readonly module: SlotMemo<string> }
  | { readonly k: 'implicit'; readonly options: readonly OptionPlan[] }
  | { readonly k: 'target'; readonly j: Tok; readonly goto: boolean; readonly name: Tok; readonly options: readonly OptionPlan[]; readonly target: SlotMemo<string> };

/** What the parser read in a line, as token indices (see the module comment). */
export type LinePlan =
  | { readonly k: 'table'; readonly name: Tok }
  | { readonly k: 'chain'; readonly name: Tok; readonly policy: Tok; readonly counters: Tok }
  | { readonly k: 'commit' }
  | { readonly k: 'rule'; readonly counters: Tok; readonly command: RuleCommand; readonly cmd: Tok; readonly chain: Tok; readonly ruleNumber: Tok; readonly items: readonly ItemPlan[] }
  | { readonly k: 'chain-command'; readonly command: ChainCommand; readonly cmd: Tok; readonly args: readonly Tok[] };

export class IptablesLineParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 3 });
    this.performSelfAnalysis();
  }

  /**
   * The index of a consumed token in the line. A search, but the parser runs once per line
   * shape, not once per line. (-1 while Chevrotain records the grammar with placeholder tokens.)
   */
  private at(token: IToken): Tok {
    return this.input.indexOf(token);
  }

  // Chevrotain's performance guide: build each OR's alternatives once, not on every call (they
  // refer to nothing but `this`; the state they need is kept in the fields below).
  private altsLine?: IOrAlt<LinePlan>[];
  private altsCommand?: IOrAlt<LinePlan>[];
  private altsRuleCmd?: IOrAlt<IToken>[];
  private altsItem?: IOrAlt<ItemPlan>[];
  private altsJump?: IOrAlt<IToken>[];
  private altsOptionArgs?: IOrAlt<void>[];
  /** `[p:b]` before the command being read. */
  private lineCounters: Tok = -1;
  /** The option being read by optionClause (it has no nested rules). */
  private optName: IToken | undefined;
  private optBang: Tok = -1;
  private optArgs: Tok[] | undefined;
  private optLegacy = false;

  public line = this.RULE('line', (): LinePlan => {
    return this.OR(
      (this.altsLine ??= [
        { ALT: () => this.SUBRULE(this.tableLine) },
        { ALT: () => this.SUBRULE(this.chainLine) },
        { ALT: () => this.SUBRULE(this.commitLine) },
        { ALT: () => this.SUBRULE(this.commandLine) },
      ]),
    );
  });

  private tableLine = this.RULE('tableLine', (): LinePlan => {
    return { k: 'table', name: this.at(this.CONSUME(T.TableHeader)) };
  });

  private chainLine = this.RULE('chainLine', (): LinePlan => {
    const name = this.at(this.CONSUME(T.ChainDecl));
    const policy = this.at(this.CONSUME(T.Word));
    let counters: Tok = -1;
    this.OPTION(() => {
      counters = this.at(this.CONSUME(T.Counters));
    });
    return { k: 'chain', name, policy, counters };
  });

  private commitLine = this.RULE('commitLine', (): LinePlan => {
    this.CONSUME(T.Commit);
    return { k: 'commit' };
  });

  private commandLine = this.RULE('commandLine', (): LinePlan => {
    this.lineCounters = -1;
    this.OPTION(() => {
      this.lineCounters = this.at(this.CONSUME(T.Counters));
    });
    return this.OR(
      (this.altsCommand ??= [{ ALT: () => this.SUBRULE(this.ruleCommand) }, { ALT: () => this.SUBRULE(this.chainCommand) }]),
    );
  });

  private ruleCommand = this.RULE('ruleCommand', (): LinePlan => {
    const counters = this.lineCounters;
    const cmd = this.OR(
      (this.altsRuleCmd ??= [
        { ALT: () => this.CONSUME(T.Append) },
        { ALT: () => this.CONSUME(T.Insert) },
        { ALT: () => this.CONSUME(T.Delete) },
        { ALT: () => this.CONSUME(T.Replace) },
      ]),
    );
    const cmdAt = this.at(cmd);
    const chain = this.at(this.CONSUME(T.Word));
    let ruleNumber: Tok = -1;
    this.OPTION({
      // The only gate that reads a word's text: ShapeCache never keeps plans of such lines.
      GATE: () => cmd.tokenType !== T.Append && /^\d+$/.test(this.LA(1).image),
      DEF: () => {
        ruleNumber = this.at(this.CONSUME2(T.Word));
      },
    });
    const items: ItemPlan[] = [];
    this.MANY(() => {
      items.push(this.SUBRULE(this.item));
    });
    return { k: 'rule', counters, command: RULE_COMMAND.get(cmd.tokenType)!, cmd: cmdAt, chain, ruleNumber, items };
  });

  private chainCommand = this.RULE('chainCommand', (): LinePlan => {
    const cmd = this.CONSUME(T.ChainCmd);
    const cmdAt = this.at(cmd);
    const args: Tok[] = [];
    this.MANY(() => {
      args.push(this.at(this.CONSUME(T.ArgLike)));
    });
    return { k: 'chain-command', command: CHAIN_COMMAND.get(cmd.tokenType)!, cmd: cmdAt, args };
  });

  private item = this.RULE('item', (): ItemPlan => {
    return this.OR(
      (this.altsItem ??= [
        { ALT: () => this.SUBRULE(this.genericWithArg) },
        { ALT: () => this.SUBRULE(this.genericFlag) },
        { ALT: () => this.SUBRULE(this.setCounters) },
        { ALT: () => this.SUBRULE(this.matchItem) },
        { ALT: () => this.SUBRULE(this.targetItem) },
        { ALT: () => this.SUBRULE(this.implicitMatch) },
        { ALT: () => this.SUBRULE(this.unknownShort) },
      ]),
    );
  });

  private optionalBang(): Tok {
    let bang: Tok = -1;
    this.OPTION(() => {
      bang = this.at(this.CONSUME(T.Bang));
    });
    return bang;
  }

  private genericWithArg = this.RULE('genericWithArg', (): ItemPlan => {
    const bang = this.optionalBang();
    const opt = this.CONSUME(T.GenericWithArg);
    const optAt = this.at(opt);
    // `-s ! 10.0.0.0/8` (iptables ≤ 1.4.2).
    let late: Tok = -1;
    this.OPTION2({
      GATE: () => this.LA(2).tokenType !== EOF,
      DEF: () => {
        late = this.at(this.CONSUME2(T.Bang));
      },
    });
    const arg = this.at(this.CONSUME(T.AnyArg));
    return { k: 'generic', option: GENERIC_BY_TOKEN.get(opt.tokenType)!, bang, opt: optAt, late, arg, args: memo() };
  });

  private genericFlag = this.RULE('genericFlag', (): ItemPlan => {
    const bang = this.optionalBang();
    const opt = this.CONSUME(T.GenericFlag);
    return { k: 'flag', option: GENERIC_BY_TOKEN.get(opt.tokenType)!, bang, opt: this.at(opt) };
  });

  private setCounters = this.RULE('setCounters', (): ItemPlan => {
    const opt = this.at(this.CONSUME(T.SetCounters));
    const a = this.at(this.CONSUME(T.ArgLike));
    const b = this.at(this.CONSUME2(T.ArgLike));
    return { k: 'set-counters', opt, a, b };
  });

  private unknownShort = this.RULE('unknownShort', (): ItemPlan => {
    const bang = this.optionalBang();
    const opt = this.at(this.CONSUME(T.ShortOption));
    const args: Tok[] = [];
    this.MANY(() => {
      args.push(this.at(this.CONSUME(T.ArgLike)));
    });
    return { k: 'unknown-short', bang, opt, args };
  });

  private matchItem = this.RULE('matchItem', (): ItemPlan => {
    const m = this.at(this.CONSUME(T.MatchOpt));
    const name = this.at(this.CONSUME(T.ArgLike));
    const options: OptionPlan[] = [];
    this.MANY(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { k: 'match', m, name, options, module: memo() };
  });

  private targetItem = this.RULE('targetItem', (): ItemPlan => {
    const j = this.OR((this.altsJump ??= [{ ALT: () => this.CONSUME(T.Jump) }, { ALT: () => this.CONSUME(T.Goto) }]));
    const jAt = this.at(j);
    const name = this.at(this.CONSUME(T.ArgLike));
    const options: OptionPlan[] = [];
    this.MANY(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { k: 'target', j: jAt, goto: j.tokenType === T.Goto, name, options, target: memo() };
  });

  /** Options given before any -m: iptables loads the protocol's match implicitly (`-p tcp --dport 80`). */
  private implicitMatch = this.RULE('implicitMatch', (): ItemPlan => {
    const options: OptionPlan[] = [];
    this.AT_LEAST_ONE(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { k: 'implicit', options };
  });

  private optionClause = this.RULE('optionClause', (): OptionPlan => {
    const bang = this.optionalBang();
    this.optName = this.CONSUME(T.LongOption);
    const name = this.at(this.optName);
    this.optBang = bang;
    this.optArgs = undefined;
    this.optLegacy = false;
    this.OR(
      (this.altsOptionArgs ??= [
        {
          // getopt takes these options' next word verbatim, whatever it looks like.
          GATE: () => VERBATIM_ARG.has(this.optName!.image),
          ALT: () => {
            this.optArgs = [this.at(this.CONSUME(T.AnyArg))];
          },
        },
        {
          ALT: () => {
            this.OPTION2({
              GATE: () => this.optBang === -1 && isArgToken(this.LA(2)),
              DEF: () => {
                this.CONSUME2(T.Bang);
                this.optLegacy = true;
              },
            });
            this.MANY(() => {
              const a = this.at(this.CONSUME(T.ArgLike));
              if (this.optArgs === undefined) this.optArgs = [a];
              else this.optArgs.push(a);
            });
          },
        },
      ]),
    );
    return { bang, name, legacy: this.optLegacy, args: this.optArgs };
  });
}

/**
 * Plans by line shape: the token types of the line, and the spelling of each long option
 * (optionClause's gate reads it). A trie, one step per token, so finding a line's plan costs a
 * small-map lookup per token and builds no key. Lines whose command is not -A are not kept
 * (ruleCommand's rule-number gate reads a word), nor are lines that fail to parse.
 */
export class ShapeCache {
  private root: ShapeNode = new ShapeNode();
  private nodes = 0;
  /** A dump with wildly varying lines must not grow the trie without end. */
  private static readonly NODE_LIMIT = 1 << 16;

  /** The node for this line's shape (created when missing), or undefined when it cannot be kept. */
  node(tokens: readonly IToken[], from: number, to: number): ShapeNode | undefined {
    let n = this.root;
    for (let i = from; i < to; i++) {
      const t = tokens[i];
      const key: number | string = t.tokenType === T.LongOption ? t.image : t.tokenTypeIdx;
      let next = n.next.get(key);
      if (next === undefined) {
        if (this.nodes >= ShapeCache.NODE_LIMIT) return undefined;
        next = new ShapeNode();
        n.next.set(key, next);
        this.nodes++;
      }
      n = next;
    }
    return n;
  }

  /** Keep a plan for a node, when plans of that shape may be shared. */
  static keep(node: ShapeNode, plan: LinePlan): void {
    if (plan.k === 'rule' && plan.command !== 'append') return;
    node.plan = plan;
  }

  clear(): void {
    this.root = new ShapeNode();
    this.nodes = 0;
  }
}

export class ShapeNode {
  readonly next = new Map<number | string, ShapeNode>();
  plan: LinePlan | undefined = undefined;
}

/**
 * Plan + tokens → the line's syntax. Keeps per-scan sharing state (chain names, argument
 * lists), reset by resetScan().
 */
export class SyntaxBuilder {
  /** Offset of the line's first character in the lexed text (tokens of a chunk carry chunk offsets). */
  public base = 0;
  private tokens: readonly IToken[] = [];
  /** Index in `tokens` of the line's first token (plans count from the line's start). */
  private first = 0;
  private lastChainImage: string | undefined;
  private lastChain: string | undefined;
  /** `[value]` argument lists of protocols and interfaces, shared (read-only) within a scan. */
  private argLists = new Map<string, readonly string[]>();

  resetScan(): void {
    this.lastChainImage = undefined;
    this.lastChain = undefined;
    this.argLists.clear();
  }

  build(plan: LinePlan, tokens: readonly IToken[], base: number, first = 0): LineSyntax {
    this.tokens = tokens;
    this.base = base;
    this.first = first;
    switch (plan.k) {
      case 'table':
        return { kind: 'table', name: sliceName(this.image(plan.name)) };
      case 'chain': {
        const name = sliceName(this.image(plan.name));
        const policy = intern(this.image(plan.policy));
        return plan.counters === -1 ? { kind: 'chain', name, policy } : { kind: 'chain', name, policy, counters: counterPair(this.image(plan.counters)) };
      }
      case 'commit':
        return { kind: 'commit' };
      case 'chain-command':
        return { kind: 'chain-command', command: plan.command, spelled: this.image(plan.cmd), args: plan.args.map((a) => intern(this.image(a))) };
      case 'rule': {
        const syntax: { -readonly [K in keyof RuleLine]: RuleLine[K] } = {
          kind: 'rule',
          command: plan.command,
          spelled: this.image(plan.cmd),
          chain: this.chainName(this.image(plan.chain)),
          items: this.items(plan.items),
        };
        if (plan.ruleNumber !== -1) syntax.ruleNumber = this.image(plan.ruleNumber);
        if (plan.counters !== -1) syntax.counters = counterPair(this.image(plan.counters));
        return syntax;
      }
    }
  }

  private image(i: Tok): string {
    return this.tokens[this.first + i].image;
  }

  private col(i: Tok): number {
    return this.tokens[this.first + i].startOffset - this.base + 1;
  }

  /** Rules of one chain come together: reuse the previous rule's chain name without a lookup. */
  private chainName(image: string): string {
    if (image === this.lastChainImage) return this.lastChain!;
    this.lastChainImage = image;
    this.lastChain = internShort(image);
    return this.lastChain;
  }

  private sharedArgs(value: string): readonly string[] {
    let a = this.argLists.get(value);
    if (a === undefined) {
      a = [value];
      if (this.argLists.size < 4096) this.argLists.set(value, a);
    }
    return a;
  }

  private items(plans: readonly ItemPlan[]): RuleItem[] {
    const out = new Array<RuleItem>(plans.length);
    for (let i = 0; i < plans.length; i++) out[i] = this.item(plans[i]);
    return out;
  }

  private item(p: ItemPlan): RuleItem {
    switch (p.k) {
      case 'generic': {
        const spelled = this.image(p.opt);
        const image = this.image(p.arg);
        const address = p.option === 'source' || p.option === 'destination';
        // Protocols and interfaces repeat on every rule; addresses mostly do not.
        const args = address ? [image] : remembered(p.args, image, (w) => this.sharedArgs(intern(w)));
        const negated = p.bang !== -1 || p.late !== -1;
        const column = this.col(p.bang !== -1 ? p.bang : p.opt);
        return p.late === -1
          ? { kind: 'generic', option: p.option, spelled, negated, args, column }
          : { kind: 'generic', option: p.option, spelled, negated, args, column, legacyNegation: true };
      }
      case 'flag':
        return { kind: 'generic', option: p.option, spelled: this.image(p.opt), negated: p.bang !== -1, args: NO_ARGS, column: this.col(p.bang !== -1 ? p.bang : p.opt) };
      case 'set-counters':
        return { kind: 'set-counters', spelled: this.image(p.opt), args: [this.image(p.a), this.image(p.b)], column: this.col(p.opt) };
      case 'unknown-short':
        return {
          kind: 'generic',
          option: 'unknown',
          spelled: this.image(p.opt),
          negated: p.bang !== -1,
          args: p.args.map((a) => this.image(a)),
          column: this.col(p.bang !== -1 ? p.bang : p.opt),
        };
      case 'match':
        return { kind: 'match', spelled: this.image(p.m), module: remembered(p.module, this.image(p.name), intern), options: this.options(p.options), column: this.col(p.m) };
      case 'implicit': {
        const options = this.options(p.options);
        return { kind: 'match', spelled: undefined, module: '', options, column: options[0]?.column ?? 0 };
      }
      case 'target':
        return { kind: 'target', spelled: this.image(p.j), goto: p.goto, name: remembered(p.target, this.image(p.name), targetName), options: this.options(p.options), column: this.col(p.j) };
    }
  }

  private options(plans: readonly OptionPlan[]): readonly OptionSyntax[] {
    if (plans.length === 0) return NO_OPTIONS;
    const out = new Array<OptionSyntax>(plans.length);
    for (let i = 0; i < plans.length; i++) {
      const p = plans[i];
      let args: readonly string[] = NO_ARGS;
      if (p.args !== undefined) {
        const a = new Array<string>(p.args.length);
        for (let k = 0; k < a.length; k++) a[k] = this.image(p.args[k]);
        args = a;
      }
      const negated = p.bang !== -1 || p.legacy;
      const column = this.col(p.bang !== -1 ? p.bang : p.name);
      const name = this.image(p.name);
      out[i] = p.legacy ? { name, negated, args, column, legacyNegation: true } : { name, negated, args, column };
    }
    return out;
  }
}

/**
 * Shared copies of short names only (built-in chains, KUBE-SERVICES…): a dump's 100k
 * per-Service chain names are each declared once and used by one run of rules, so a table of
 * them costs more lookups than it saves.
 */
function internShort(name: string): string {
  return name.length <= 16 ? intern(name) : name;
}

/** `make(image)`, or the slot's last value when the slot was last given the same word. */
function remembered<T>(slot: SlotMemo<T>, image: string, make: (image: string) => T): T {
  if (slot.image === image) return slot.value!;
  const value = make(image);
  slot.image = image;
  slot.value = value;
  return value;
}

/**
 * Verdicts and shared chains (ACCEPT, KUBE-MARK-MASQ) repeat on 100k rules: one copy each.
 * Per-Service chain names are used once or twice as targets: interning them only grows the table.
 */
function targetName(image: string): string {
  return image.length <= 16 ? intern(image) : image;
}

function isArgToken(t: IToken): boolean {
  return ARG_LIKE.has(t.tokenType);
}

/** `*nat` → `nat`, `:KUBE-SVC-…` → `KUBE-SVC-…` (a shared copy). */
function sliceName(image: string): string {
  // During Chevrotain's grammar recording phase tokens are placeholders without text.
  return typeof image === 'string' ? internShort(image.slice(1)) : '';
}

/**
 * Reads lines with the grammar: the plan of a known shape, or the parser's for a new one; then
 * the syntax. `lastError` says why the last line that gave undefined did not parse.
 */
export class LineReader {
  readonly parser = new IptablesLineParser();
  readonly builder = new SyntaxBuilder();
  private readonly shapes = new ShapeCache();
  lastError: IRecognitionException | undefined;

  /**
   * The line made of tokens[from, to) (a chunk's tokens are read in place, no copy per line).
   * `base`: offset of the line's first character in the text the tokens were lexed from.
   */
  read(tokens: IToken[], base: number, from = 0, to = tokens.length): LineSyntax | undefined {
    const node = this.shapes.node(tokens, from, to);
    let plan = node?.plan;
    if (plan === undefined) {
      this.parser.input = from === 0 && to === tokens.length ? tokens : tokens.slice(from, to);
      plan = this.parser.line();
      if (this.parser.errors.length > 0) {
        this.lastError = this.parser.errors[0];
        return undefined;
      }
      if (node !== undefined) ShapeCache.keep(node, plan);
    }
    return this.builder.build(plan, tokens, base, from);
  }

  /**
   * Forget per-scan state (see resetInterned()). The shapes go too: an unusual option's
   * spelling in the trie is a piece of the dump's text.
   */
  resetScan(): void {
    this.builder.resetScan();
    this.shapes.clear();
    this.lastError = undefined;
  }
}

let lexer: Lexer | undefined;
let reader: LineReader | undefined;

/** The shared lexer and line reader, built on first use (building them costs tens of milliseconds). */
export function lineTools(): { lexer: Lexer; reader: LineReader } {
  if (!lexer || !reader) {
    lexer = new Lexer(T.lexedTokens, { positionTracking: 'onlyOffset', ensureOptimizations: true });
    reader = new LineReader();
  }
  return { lexer, reader };
}
