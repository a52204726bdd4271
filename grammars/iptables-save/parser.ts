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
import { EmbeddedActionsParser, EOF, Lexer, type IToken, type TokenType } from 'chevrotain';
import * as T from './tokens.js';
import type { ChainCommand, GenericOption, LineSyntax, OptionSyntax, RuleCommand, RuleItem } from './syntax.js';

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

/** Columns are 1-based; the caller adds the line's indentation. */
const col = (t: IToken) => t.startOffset + 1;

export class IptablesLineParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 3 });
    this.performSelfAnalysis();
  }

  public line = this.RULE('line', (): LineSyntax => {
    return this.OR([
      { ALT: () => this.SUBRULE(this.tableLine) },
      { ALT: () => this.SUBRULE(this.chainLine) },
      { ALT: () => this.SUBRULE(this.commitLine) },
      { ALT: () => this.SUBRULE(this.commandLine) },
    ]);
  });

  private tableLine = this.RULE('tableLine', (): LineSyntax => {
    const t = this.CONSUME(T.TableHeader);
    return { kind: 'table', name: t.image.slice(1) };
  });

  private chainLine = this.RULE('chainLine', (): LineSyntax => {
    const name = this.CONSUME(T.ChainDecl);
    const policy = this.CONSUME(T.Word);
    const counters = this.OPTION(() => this.CONSUME(T.Counters));
    return counters === undefined
      ? { kind: 'chain', name: name.image.slice(1), policy: policy.image }
      : { kind: 'chain', name: name.image.slice(1), policy: policy.image, counters: counterPair(counters.image) };
  });

  private commitLine = this.RULE('commitLine', (): LineSyntax => {
    this.CONSUME(T.Commit);
    return { kind: 'commit' };
  });

  private commandLine = this.RULE('commandLine', (): LineSyntax => {
    const counters = this.OPTION(() => this.CONSUME(T.Counters));
    return this.OR([
      { ALT: () => this.SUBRULE(this.ruleCommand, { ARGS: [counters] }) },
      { ALT: () => this.SUBRULE(this.chainCommand) },
    ]);
  });

  private ruleCommand = this.RULE('ruleCommand', (counters: IToken | undefined): LineSyntax => {
    const cmd = this.OR([
      { ALT: () => this.CONSUME(T.Append) },
      { ALT: () => this.CONSUME(T.Insert) },
      { ALT: () => this.CONSUME(T.Delete) },
      { ALT: () => this.CONSUME(T.Replace) },
    ]);
    const chain = this.CONSUME(T.Word);
    const ruleNumber = this.OPTION({
      GATE: () => /^\d+$/.test(this.LA(1).image) && cmd.tokenType !== T.Append,
      DEF: () => this.CONSUME2(T.Word),
    });
    const items: RuleItem[] = [];
    this.MANY(() => {
      items.push(this.SUBRULE(this.item));
    });
    const syntax: LineSyntax = {
      kind: 'rule',
      command: RULE_COMMAND.get(cmd.tokenType)!,
      spelled: cmd.image,
      chain: chain.image,
      items,
      ...(ruleNumber ? { ruleNumber: ruleNumber.image } : {}),
      ...(counters ? { counters: counterPair(counters.image) } : {}),
    };
    return syntax;
  });

  private chainCommand = this.RULE('chainCommand', (): LineSyntax => {
    const cmd = this.CONSUME(T.ChainCmd);
    const args: string[] = [];
    this.MANY(() => {
      args.push(this.CONSUME(T.ArgLike).image);
    });
    return { kind: 'chain-command', command: CHAIN_COMMAND.get(cmd.tokenType)!, spelled: cmd.image, args };
  });

  private item = this.RULE('item', (): RuleItem => {
    return this.OR([
      { ALT: () => this.SUBRULE(this.genericWithArg) },
      { ALT: () => this.SUBRULE(this.genericFlag) },
      { ALT: () => this.SUBRULE(this.setCounters) },
      { ALT: () => this.SUBRULE(this.matchItem) },
      { ALT: () => this.SUBRULE(this.targetItem) },
      { ALT: () => this.SUBRULE(this.implicitMatch) },
      { ALT: () => this.SUBRULE(this.unknownShort) },
    ]);
  });

  private genericWithArg = this.RULE('genericWithArg', (): RuleItem => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const opt = this.CONSUME(T.GenericWithArg);
    // `-s ! 10.0.0.0/8` (iptables ≤ 1.4.2).
    const late = this.OPTION2({ GATE: () => this.LA(2).tokenType !== EOF, DEF: () => this.CONSUME2(T.Bang) });
    const arg = this.CONSUME(T.AnyArg);
    const item: RuleItem = {
      kind: 'generic',
      option: GENERIC_BY_TOKEN.get(opt.tokenType)!,
      spelled: opt.image,
      negated: bang !== undefined || late !== undefined,
      args: [arg.image],
      column: col(bang ?? opt),
      ...(late !== undefined ? { legacyNegation: true as const } : {}),
    };
    return item;
  });

  private genericFlag = this.RULE('genericFlag', (): RuleItem => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const opt = this.CONSUME(T.GenericFlag);
    return { kind: 'generic', option: GENERIC_BY_TOKEN.get(opt.tokenType)!, spelled: opt.image, negated: bang !== undefined, args: [], column: col(bang ?? opt) };
  });

  private setCounters = this.RULE('setCounters', (): RuleItem => {
    const opt = this.CONSUME(T.SetCounters);
    const a = this.CONSUME(T.ArgLike);
    const b = this.CONSUME2(T.ArgLike);
    return { kind: 'set-counters', spelled: opt.image, args: [a.image, b.image], column: col(opt) };
  });

  private unknownShort = this.RULE('unknownShort', (): RuleItem => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const opt = this.CONSUME(T.ShortOption);
    const args: string[] = [];
    this.MANY(() => {
      args.push(this.CONSUME(T.ArgLike).image);
    });
    return { kind: 'generic', option: 'unknown', spelled: opt.image, negated: bang !== undefined, args, column: col(bang ?? opt) };
  });

  private matchItem = this.RULE('matchItem', (): RuleItem => {
    const m = this.CONSUME(T.MatchOpt);
    const name = this.CONSUME(T.ArgLike);
    const options: OptionSyntax[] = [];
    this.MANY(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { kind: 'match', spelled: m.image, module: name.image, options, column: col(m) };
  });

  private targetItem = this.RULE('targetItem', (): RuleItem => {
    const j = this.OR([{ ALT: () => this.CONSUME(T.Jump) }, { ALT: () => this.CONSUME(T.Goto) }]);
    const name = this.CONSUME(T.ArgLike);
    const options: OptionSyntax[] = [];
    this.MANY(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { kind: 'target', spelled: j.image, goto: j.tokenType === T.Goto, name: name.image, options, column: col(j) };
  });

  /** Options given before any -m: iptables loads the protocol's match implicitly (`-p tcp --dport 80`). */
  private implicitMatch = this.RULE('implicitMatch', (): RuleItem => {
    const options: OptionSyntax[] = [];
    this.AT_LEAST_ONE(() => {
      options.push(this.SUBRULE(this.optionClause));
    });
    return { kind: 'match', spelled: undefined, module: '', options, column: options[0]?.column ?? 0 };
  });

  private optionClause = this.RULE('optionClause', (): OptionSyntax => {
    const bang = this.OPTION(() => this.CONSUME(T.Bang));
    const name = this.CONSUME(T.LongOption);
    const args: string[] = [];
    let legacy = false;
    this.OR([
      {
        GATE: () => VERBATIM_ARG.has(name.image),
        ALT: () => {
          args.push(this.CONSUME(T.AnyArg).image);
        },
      },
      {
        ALT: () => {
          this.OPTION2({
            GATE: () => bang === undefined && isArgToken(this.LA(2)),
            DEF: () => {
              this.CONSUME2(T.Bang);
              legacy = true;
            },
          });
          this.MANY(() => {
            args.push(this.CONSUME(T.ArgLike).image);
          });
        },
      },
    ]);
    const o: OptionSyntax = {
      name: name.image,
      negated: bang !== undefined || legacy,
      args,
      column: col(bang ?? name),
      ...(legacy ? { legacyNegation: true as const } : {}),
    };
    return o;
  });
}

function isArgToken(t: IToken): boolean {
  const cats = t.tokenType.CATEGORIES;
  return t.tokenType === T.ArgLike || (cats !== undefined && cats.includes(T.ArgLike));
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
