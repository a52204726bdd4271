/**
 * The grammar of one iptables-save / iptables-restore line, as a Chevrotain parser with
 * embedded actions: it hands back the syntax objects directly (no CST), which keeps large
 * dumps fast and small (ARCHITECTURE.md; issue 8's Chevrotain performance notes).
 *
 *   line        := TableHeader | ChainDecl Word Counters? | COMMIT | Counters? command
 *   command     := (-A|-I|-D|-R) chain [rulenum] item* | (-N|-X|-F|-Z|-P) word*
 *   item        := [!] (-s|-d|-i|-o|-p) arg | [!] (-f|-4|-6) | -c n n
 *                | -m module option* | (-j|-g) target option* | option   (implicit -m PROTO)
 *   option      := [!] --name [!] arg*        (getopt: some options take the next word, whatever it is)
 */
import { EmbeddedActionsParser, EOF, Lexer, type IOrAlt, type IToken, type TokenType } from '../common/chevrotain.js';
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

export class IptablesLineParser extends EmbeddedActionsParser {
  /**
   * Offset of the current line's first character in the lexed text: tokens of a chunk of lines
   * carry offsets into the chunk, and columns are 1-based within the line.
   */
  public base = 0;

  private lastChainImage: string | undefined;
  private lastChain: string | undefined;

  /** Rules of one chain come together: reuse the previous rule's chain name without a lookup. */
  private chainName(image: string): string {
    if (image === this.lastChainImage) return this.lastChain!;
    this.lastChainImage = image;
    this.lastChain = intern(image);
    return this.lastChain;
  }

  /** `[value]` argument lists of protocols and interfaces, shared (read-only) within a scan. */
  private argLists = new Map<string, readonly string[]>();

  private sharedArgs(value: string): readonly string[] {
    let a = this.argLists.get(value);
    if (a === undefined) {
      a = [value];
      if (this.argLists.size < 4096) this.argLists.set(value, a);
    }
    return a;
  }

  /** Forget per-scan state (see resetInterned()). */
  public resetScan(): void {
    this.lastChainImage = undefined;
    this.lastChain = undefined;
    this.argLists.clear();
  }

  private col(t: IToken): number {
    return t.startOffset - this.base + 1;
  }

  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 3 });
    this.performSelfAnalysis();
  }

  // Chevrotain's performance guide: build each OR's alternatives once, not on every call (they
  // refer to nothing but `this`; the state they need is kept in the fields below).
  private altsLine?: IOrAlt<LineSyntax>[];
  private altsCommand?: IOrAlt<LineSyntax>[];
  private altsRuleCmd?: IOrAlt<IToken>[];
  private altsItem?: IOrAlt<RuleItem>[];
  private altsJump?: IOrAlt<IToken>[];
  private altsOptionArgs?: IOrAlt<void>[];
  /** `[p:b]` before the command being read. */
  private lineCounters: IToken | undefined;
  /** The option being read by optionClause (it has no nested rules). */
  private optName: IToken | undefined;
  private optBang: IToken | undefined;
  private optArgs: string[] | undefined;
  private optLegacy = false;

  public line = this.RULE('line', (): LineSyntax => {
    return this.OR(
      (this.altsLine ??= [
        { ALT: () => this.SUBRULE(this.tableLine) },
        { ALT: () => this.SUBRULE(this.chainLine) },
        { ALT: () => this.SUBRULE(this.commitLine) },
        { ALT: () => this.SUBRULE(this.commandLine) },
      ]),
    );
  });

  private tableLine = this.RULE('tableLine', (): LineSyntax => {
    const t = this.CONSUME(T.TableHeader);
    return { kind: 'table', name: sliceName(t.image) };
  });

  private chainLine = this.RULE('chainLine', (): LineSyntax => {
    const name = this.CONSUME(T.ChainDecl);
    const policy = this.CONSUME(T.Word);
    const counters = this.OPTION(() => this.CONSUME(T.Counters));
    return counters === undefined
      ? { kind: 'chain', name: sliceName(name.image), policy: intern(policy.image) }
      : { kind: 'chain', name: sliceName(name.image), policy: intern(policy.image), counters: counterPair(counters.image) };
  });

  private commitLine = this.RULE('commitLine', (): LineSyntax => {
    this.CONSUME(T.Commit);
    return { kind: 'commit' };
  });

  private commandLine = this.RULE('commandLine', (): LineSyntax => {
    this.lineCounters = this.OPTION(() => this.CONSUME(T.Counters));
    return this.OR(
      (this.altsCommand ??= [{ ALT: () => this.SUBRULE(this.ruleCommand) }, { ALT: () => this.SUBRULE(this.chainCommand) }]),
    );
  });

  private ruleCommand = this.RULE('ruleCommand', (): LineSyntax => {
    const counters = this.lineCounters;
    const cmd = this.OR(
      (this.altsRuleCmd ??= [
        { ALT: () => this.CONSUME(T.Append) },
        { ALT: () => this.CONSUME(T.Insert) },
        { ALT: () => this.CONSUME(T.Delete) },
        { ALT: () => this.CONSUME(T.Replace) },
      ]),
    );
    const chain = this.CONSUME(T.Word);
    const ruleNumber = this.OPTION({
      GATE: () => cmd.tokenType !== T.Append && /^\d+$/.test(this.LA(1).image),
      DEF: () => this.CONSUME2(T.Word),
    });
    const items: RuleItem[] = [];
    this.MANY(() => {
      items.push(this.SUBRULE(this.item));
    });
    const syntax: { -readonly [K in keyof RuleLine]: RuleLine[K] } = {
      kind: 'rule',
      command: RULE_COMMAND.get(cmd.tokenType)!,
      spelled: cmd.image,
      chain: this.chainName(chain.image),
      items: exact(items),
    };
    if (ruleNumber) syntax.ruleNumber = ruleNumber.image;
    if (counters) syntax.counters = counterPair(counters.image);
    return syntax;
  });

  private chainCommand = this.RULE('chainCommand', (): LineSyntax => {
    const cmd = this.CONSUME(T.ChainCmd);
    const args: string[] = [];
    this.MANY(() => {
      args.push(intern(this.CONSUME(T.ArgLike).image));
    });
    return { kind: 'chain-command', command: CHAIN_COMMAND.get(cmd.tokenType)!, spelled: cmd.image, args: exact(args) };
  });

  private item = this.RULE('item', (): RuleItem => {
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

  private genericWithArg = this.RULE('genericWithArg', (): RuleItem => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const opt = this.CONSUME(T.GenericWithArg);
    // `-s ! 10.0.0.0/8` (iptables ≤ 1.4.2).
    const late = this.OPTION2({ GATE: () => this.LA(2).tokenType !== EOF, DEF: () => this.CONSUME2(T.Bang) });
    const arg = this.CONSUME(T.AnyArg);
    const option = GENERIC_BY_TOKEN.get(opt.tokenType)!;
    // Protocols and interfaces repeat on every rule; addresses mostly do not.
    const value = option === 'source' || option === 'destination' ? arg.image : intern(arg.image);
    const column = this.col(bang ?? opt);
    const negated = bang !== undefined || late !== undefined;
    const args = option === 'source' || option === 'destination' ? [value] : this.sharedArgs(value);
    return late === undefined
      ? { kind: 'generic', option, spelled: opt.image, negated, args, column }
      : { kind: 'generic', option, spelled: opt.image, negated, args, column, legacyNegation: true };
  });

  private genericFlag = this.RULE('genericFlag', (): RuleItem => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const opt = this.CONSUME(T.GenericFlag);
    return { kind: 'generic', option: GENERIC_BY_TOKEN.get(opt.tokenType)!, spelled: opt.image, negated: bang !== undefined, args: NO_ARGS, column: this.col(bang ?? opt) };
  });

  private setCounters = this.RULE('setCounters', (): RuleItem => {
    const opt = this.CONSUME(T.SetCounters);
    const a = this.CONSUME(T.ArgLike);
    const b = this.CONSUME2(T.ArgLike);
    return { kind: 'set-counters', spelled: opt.image, args: [a.image, b.image], column: this.col(opt) };
  });

  private unknownShort = this.RULE('unknownShort', (): RuleItem => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const opt = this.CONSUME(T.ShortOption);
    const args: string[] = [];
    this.MANY(() => {
      args.push(this.CONSUME(T.ArgLike).image);
    });
    return { kind: 'generic', option: 'unknown', spelled: opt.image, negated: bang !== undefined, args: exact(args), column: this.col(bang ?? opt) };
  });

  private matchItem = this.RULE('matchItem', (): RuleItem => {
    const m = this.CONSUME(T.MatchOpt);
    const name = this.CONSUME(T.ArgLike);
    let options: OptionSyntax[] | undefined;
    this.MANY(() => {
      const o = this.SUBRULE(this.optionClause);
      if (options === undefined) options = [o];
      else options.push(o);
    });
    return { kind: 'match', spelled: m.image, module: intern(name.image), options: options === undefined ? NO_OPTIONS : exact(options), column: this.col(m) };
  });

  private targetItem = this.RULE('targetItem', (): RuleItem => {
    const j = this.OR((this.altsJump ??= [{ ALT: () => this.CONSUME(T.Jump) }, { ALT: () => this.CONSUME(T.Goto) }]));
    const name = this.CONSUME(T.ArgLike);
    let options: OptionSyntax[] | undefined;
    this.MANY(() => {
      const o = this.SUBRULE(this.optionClause);
      if (options === undefined) options = [o];
      else options.push(o);
    });
    return { kind: 'target', spelled: j.image, goto: j.tokenType === T.Goto, name: intern(name.image), options: options === undefined ? NO_OPTIONS : exact(options), column: this.col(j) };
  });

  /** Options given before any -m: iptables loads the protocol's match implicitly (`-p tcp --dport 80`). */
  private implicitMatch = this.RULE('implicitMatch', (): RuleItem => {
    const options: OptionSyntax[] = [];
    this.AT_LEAST_ONE(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { kind: 'match', spelled: undefined, module: '', options: exact(options), column: options[0]?.column ?? 0 };
  });

  private optionClause = this.RULE('optionClause', (): OptionSyntax => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const name = this.CONSUME(T.LongOption);
    this.optBang = bang;
    this.optName = name;
    this.optArgs = undefined;
    this.optLegacy = false;
    this.OR(
      (this.altsOptionArgs ??= [
        {
          GATE: () => VERBATIM_ARG.has(this.optName!.image),
          ALT: () => {
            this.optArgs = [this.CONSUME(T.AnyArg).image];
          },
        },
        {
          ALT: () => {
            this.OPTION2({
              GATE: () => this.optBang === undefined && isArgToken(this.LA(2)),
              DEF: () => {
                this.CONSUME2(T.Bang);
                this.optLegacy = true;
              },
            });
            this.MANY(() => {
              const a = this.CONSUME(T.ArgLike).image;
              if (this.optArgs === undefined) this.optArgs = [a];
              else this.optArgs.push(a);
            });
          },
        },
      ]),
    );
    // (set by the alternatives above; TypeScript cannot see that)
    const collected = this.optArgs as string[] | undefined;
    const args = collected === undefined ? undefined : exact(collected);
    const legacy = this.optLegacy;
    const negated = bang !== undefined || legacy;
    const column = this.col(bang ?? name);
    return legacy
      ? { name: name.image, negated, args: args ?? NO_ARGS, column, legacyNegation: true }
      : { name: name.image, negated, args: args ?? NO_ARGS, column };
  });
}

/**
 * An array of exactly its length. Arrays grown by push() keep room for 16 more elements (V8),
 * which for 300k rules × a few small arrays each is a large share of the model's memory.
 */
export function exact<T>(a: T[]): T[] {
  return a.length === 0 ? a : a.slice();
}

function isArgToken(t: IToken): boolean {
  return ARG_LIKE.has(t.tokenType);
}

/** `*nat` → `nat`, `:KUBE-SVC-…` → `KUBE-SVC-…` (a shared copy). */
function sliceName(image: string): string {
  // During Chevrotain's grammar recording phase tokens are placeholders without text.
  return typeof image === 'string' ? intern(image.slice(1)) : '';
}

let lexer: Lexer | undefined;
let parser: IptablesLineParser | undefined;

/** The shared lexer and parser, built on first use (building them costs tens of milliseconds). */
export function lineTools(): { lexer: Lexer; parser: IptablesLineParser } {
  if (!lexer || !parser) {
    lexer = new Lexer(T.lexedTokens, { positionTracking: 'onlyOffset', ensureOptimizations: true });
    parser = new IptablesLineParser();
  }
  return { lexer, parser };
}
