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
 *   command     := (-A|-I|-D|-R) chain [rulenum] word* | (-N|-X|-F|-Z|-P) word*
 *
 * A rule's words after the chain are not a context-free language: which word is an option's
 * argument, which extension an option belongs to, what an abbreviation means, all depend on
 * the extensions loaded so far. getopt.ts reads them as iptables does, inside ruleCommand's
 * action, so the result is part of the plan (and shared by shape like the rest).
 */
import { EmbeddedActionsParser, Lexer, type IOrAlt, type IRecognitionException, type IToken, type TokenType } from '../common/chevrotain.js';
import * as T from './tokens.js';
import type { ChainCommand, LineSyntax, OptionSyntax, RuleCommand, RuleItem } from '../common/iptables-syntax.js';
import { intern } from './tokens.js';
import { checkValue, keysNextWord, readRuleOptions, targetKey } from './getopt.js';
import type { GetoptFailure, ItemPlan, LinePlan, OptionPlan, SlotMemo, Tok, ValueCheck } from './plan.js';

export type { LinePlan } from './plan.js';

type RuleLine = Extract<LineSyntax, { kind: 'rule' }>;

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
const NO_CHECKS: readonly ValueCheck[] = Object.freeze([]) as readonly ValueCheck[];

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
    // Tokens are consumed in order: search on from the last one found (a rule of 120,000 tokens
    // must not cost 120,000 searches from the start).
    let i = this.input.indexOf(token, this.lastAt);
    if (i < 0) i = this.input.indexOf(token);
    if (i >= 0) this.lastAt = i;
    return i;
  }
  /** Where at() last found a token (reset with each line's input). */
  private lastAt = 0;

  /** A new line's tokens are the input: at() searches from their start. */
  resetAt(): void {
    this.lastAt = 0;
  }

  // Chevrotain's performance guide: build each OR's alternatives once, not on every call (they
  // refer to nothing but `this`; the state they need is kept in the fields below).
  private altsLine?: IOrAlt<LinePlan>[];
  private altsCommand?: IOrAlt<LinePlan>[];
  private altsRuleCmd?: IOrAlt<IToken>[];
  /** `[p:b]` before the command being read. */
  private lineCounters: Tok = -1;
  /** Why the last line's options are not what iptables accepts (undefined: they are). */
  failure: GetoptFailure | undefined;

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
    // The options: every remaining word, read the way iptables' getopt reads its argv (getopt.ts).
    let bodyStart: Tok = -1;
    let bodyEnd: Tok = -1;
    this.MANY(() => {
      const at = this.at(this.CONSUME(T.AnyArg));
      if (bodyStart === -1) bodyStart = at;
      bodyEnd = at + 1;
    });
    let items: readonly ItemPlan[] = [];
    let checks: readonly ValueCheck[] = NO_CHECKS;
    this.failure = undefined;
    if (!this.RECORDING_PHASE && bodyStart !== -1) {
      const read = readRuleOptions(this.input, bodyStart, bodyEnd);
      if ('getopt' in read) this.failure = read;
      else {
        items = read.items;
        if (read.checks.length > 0) checks = read.checks;
      }
    }
    return { k: 'rule', counters, command: RULE_COMMAND.get(cmd.tokenType)!, cmd: cmdAt, chain, ruleNumber, items, checks };
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

}

/**
 * Plans by line shape: the token types of the line, the spelling of each long option, and the
 * words getopt.ts's reading depends on (keysNextWord(): modules, target kinds, protocols). A trie, one step per token, so finding a line's plan costs a
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
      let key: number | string = t.tokenType === T.LongOption ? t.image : t.tokenTypeIdx;
      // The words after -m/-j/-g/-p/--mode decide how the options are read (getopt.ts).
      if (i > from && keysNextWord(tokens[i - 1])) {
        const prev = tokens[i - 1].tokenType;
        key = prev === T.Jump || prev === T.Goto ? targetKey(t.image) : t.image;
      }
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
      let o: OptionSyntax = p.legacy ? { name, negated, args, column, legacyNegation: true } : { name, negated, args, column };
      // Rare (restore input written in another order or abbreviated): kept off the common shape.
      if (p.owner !== -1 || p.canonical !== undefined) o = { ...o, ...(p.owner !== -1 ? { owner: p.owner } : {}), ...(p.canonical !== undefined ? { canonical: p.canonical } : {}) };
      out[i] = o;
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

/** `*nat` → `nat`, `:KUBE-SVC-…` → `KUBE-SVC-…` (a shared copy). */
function sliceName(image: string): string {
  // During Chevrotain's grammar recording phase tokens are placeholders without text.
  return typeof image === 'string' ? internShort(image.slice(1)) : '';
}

/** A line iptables would refuse for its options: the token (undefined: end of line), what was expected, iptables' reason. */
export interface LineFailure {
  readonly getopt: true;
  readonly token: IToken | undefined;
  readonly expected: string;
  readonly message: string;
}

/**
 * Reads lines with the grammar: the plan of a known shape, or the parser's for a new one; then
 * the syntax. `lastError` says why the last line that gave undefined did not parse.
 */
export class LineReader {
  readonly parser = new IptablesLineParser();
  readonly builder = new SyntaxBuilder();
  private readonly shapes = new ShapeCache();
  lastError: IRecognitionException | LineFailure | undefined;

  /**
   * The line made of tokens[from, to) (a chunk's tokens are read in place, no copy per line).
   * `base`: offset of the line's first character in the text the tokens were lexed from.
   */
  read(tokens: IToken[], base: number, from = 0, to = tokens.length): LineSyntax | undefined {
    const node = this.shapes.node(tokens, from, to);
    let plan = node?.plan;
    if (plan === undefined) {
      this.parser.input = from === 0 && to === tokens.length ? tokens : tokens.slice(from, to);
      this.parser.resetAt();
      this.parser.failure = undefined;
      plan = this.parser.line();
      if (this.parser.errors.length > 0) {
        this.lastError = this.parser.errors[0];
        return undefined;
      }
      const f = this.parser.failure as GetoptFailure | undefined;
      if (f !== undefined) {
        this.lastError = { getopt: true, token: f.at === -1 ? undefined : tokens[from + f.at], expected: f.expected, message: f.message };
        return undefined;
      }
      if (node !== undefined) ShapeCache.keep(node, plan);
    }
    // Values iptables checks while parsing (a port, a mark): their text is not in the shape.
    if (plan.k === 'rule' && plan.checks.length > 0) {
      for (const c of plan.checks) {
        const token = tokens[from + c.tok];
        const message = checkValue(c.kind, token.image, c.ext, c.option);
        if (message !== undefined) {
          this.lastError = { getopt: true, token, expected: `a valid value for ${c.option}`, message };
          return undefined;
        }
      }
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
