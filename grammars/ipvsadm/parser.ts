/**
 * Line grammar of `ipvsadm` output (FORMATS.md §3). One line is parsed at a time; the driver
 * in ./index.ts picks the start rule from the line's first token and the current listing view.
 *
 * The grammar accepts a superset of what ipvsadm prints (the extractor checks the number of
 * counters against the view and warns about truncated lines):
 *
 *   serviceLine    := PROTOCOL target [IPv6] ( number+ | scheduler [FLAGS] serviceOpt* )?
 *   serviceOpt     := 'persistent' number | 'mask' (word|number) | 'pe' word | 'ops'
 *   realServerLine := '->' address [FORWARD] number*
 *   realServerTun  := '->' address [FORWARD [word]] number*          (--tun-info)
 *   saveLine       := ('-A'|'-a') SERVICE_OPT target ( option [value] | 'pe' word | 'ops' )*
 *   connectionLine := proto expire state source virtual destination [pe-name [pe-data]]
 */
import { EmbeddedActionsParser, type IToken, type TokenType } from '../common/chevrotain.js';
import * as T from './tokens.js';

/** A token of a line: text and 1-based columns (endColumn exclusive). */
export interface Tok {
  readonly text: string;
  readonly column: number;
  readonly endColumn: number;
  /** Token type name (Integer, ScaledNumber, Word, …). */
  readonly type: string;
}

export interface ServiceSyntax {
  readonly kind: 'service';
  readonly protocol: Tok;
  /** `ADDR:PORT` / `[V6]:PORT` / `host:name`, or the mark of a `FWM` service. */
  readonly target: Tok;
  readonly ipv6?: Tok;
  readonly scheduler?: Tok;
  readonly schedFlags?: Tok;
  readonly persistent?: Tok;
  readonly timeout?: Tok;
  readonly mask?: Tok;
  readonly pe?: Tok;
  readonly ops?: Tok;
  /** Counters of `--stats` / `--rate` views. */
  readonly numbers: readonly Tok[];
}

export interface RealServerSyntax {
  readonly kind: 'real-server';
  readonly arrow: Tok;
  readonly address: Tok;
  readonly forward?: Tok;
  readonly tunnelInfo?: Tok;
  readonly numbers: readonly Tok[];
}

export interface SaveOptionSyntax {
  readonly name: Tok;
  readonly value?: Tok;
}

export interface SaveSyntax {
  readonly kind: 'save';
  /** `-A` (add service) or `-a` (add real server). */
  readonly command: Tok;
  readonly serviceOption: Tok;
  readonly target?: Tok;
  readonly options: readonly SaveOptionSyntax[];
}

export interface ConnectionSyntax {
  readonly kind: 'connection';
  readonly fields: readonly Tok[];
}

export type LineSyntax = ServiceSyntax | RealServerSyntax | SaveSyntax | ConnectionSyntax;

function tok(t: IToken): Tok {
  const column = Number.isNaN(t.startOffset) ? NaN : t.startOffset + 1;
  const endColumn = column + t.image.length;
  return { text: t.image, column, endColumn, type: t.tokenType.name };
}

const NUMBER_TOKENS: TokenType[] = [T.Integer, T.ScaledNumber];

export class IpvsadmLineParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 3 });
    this.performSelfAnalysis();
  }

  private number = this.RULE('number', (): Tok => {
    const t = this.OR(NUMBER_TOKENS.map((tt) => ({ ALT: () => this.CONSUME(tt) })));
    return this.ACTION(() => tok(t));
  });

  /** Something that can stand where an address or a name is printed. */
  private anyWord = this.RULE('anyWord', (): Tok => {
    const t = this.OR([
      { ALT: () => this.CONSUME(T.Word) },
      { ALT: () => this.CONSUME(T.Integer) },
      { ALT: () => this.CONSUME(T.ScaledNumber) },
      { ALT: () => this.CONSUME(T.Protocol) },
      { ALT: () => this.CONSUME(T.Forward) },
      { ALT: () => this.CONSUME(T.Ipv6) },
      { ALT: () => this.CONSUME(T.Persistent) },
      { ALT: () => this.CONSUME(T.Mask) },
      { ALT: () => this.CONSUME(T.Pe) },
      { ALT: () => this.CONSUME(T.Ops) },
    ]);
    return this.ACTION(() => tok(t));
  });

  public serviceLine = this.RULE('serviceLine', (): ServiceSyntax => {
    const protocol = this.CONSUME(T.Protocol);
    const target = this.OR1([{ ALT: () => this.CONSUME(T.Word) }, { ALT: () => this.CONSUME1(T.Integer) }]);
    const ipv6 = this.OPTION(() => this.CONSUME(T.Ipv6));
    const numbers: Tok[] = [];
    let scheduler: IToken | undefined;
    let schedFlags: IToken | undefined;
    let persistent: IToken | undefined;
    let timeout: Tok | undefined;
    let mask: Tok | undefined;
    let pe: Tok | undefined;
    let ops: IToken | undefined;
    this.OPTION1(() => {
      this.OR2([
        {
          ALT: () => {
            this.AT_LEAST_ONE(() => {
              const n = this.SUBRULE(this.number);
              this.ACTION(() => numbers.push(n));
            });
          },
        },
        {
          ALT: () => {
            scheduler = this.CONSUME1(T.Word);
            this.OPTION2(() => {
              schedFlags = this.CONSUME(T.SchedFlags);
            });
            this.MANY(() => {
              this.OR3([
                {
                  ALT: () => {
                    persistent = this.CONSUME(T.Persistent);
                    timeout = this.SUBRULE1(this.number);
                  },
                },
                {
                  ALT: () => {
                    this.CONSUME(T.Mask);
                    mask = this.SUBRULE(this.anyWord);
                  },
                },
                {
                  ALT: () => {
                    this.CONSUME(T.Pe);
                    pe = this.SUBRULE1(this.anyWord);
                  },
                },
                {
                  ALT: () => {
                    ops = this.CONSUME(T.Ops);
                  },
                },
              ]);
            });
          },
        },
      ]);
    });
    return this.ACTION(() => {
      const out: { -readonly [K in keyof ServiceSyntax]: ServiceSyntax[K] } = {
        kind: 'service',
        protocol: tok(protocol),
        target: tok(target),
        numbers,
      };
      if (ipv6) out.ipv6 = tok(ipv6);
      if (scheduler) out.scheduler = tok(scheduler);
      if (schedFlags) out.schedFlags = tok(schedFlags);
      if (persistent) out.persistent = tok(persistent);
      if (timeout) out.timeout = timeout;
      if (mask) out.mask = mask;
      if (pe) out.pe = pe;
      if (ops) out.ops = tok(ops);
      return out;
    });
  });

  public realServerLine = this.RULE('realServerLine', (): RealServerSyntax => {
    const arrow = this.CONSUME(T.Arrow);
    const address = this.SUBRULE(this.anyWord);
    const forward = this.OPTION(() => this.CONSUME(T.Forward));
    const numbers: Tok[] = [];
    this.MANY(() => {
      const n = this.SUBRULE(this.number);
      this.ACTION(() => numbers.push(n));
    });
    return this.ACTION(() => {
      const out: { -readonly [K in keyof RealServerSyntax]: RealServerSyntax[K] } = {
        kind: 'real-server',
        arrow: tok(arrow),
        address,
        numbers,
      };
      if (forward) out.forward = tok(forward);
      return out;
    });
  });

  /** `--tun-info` listing: `-> ADDR FORWARD TUNNELINFO WEIGHT ACTIVE INACT` (TunnelInfo `n/a`, `ipip`, `gue:6080:-c`). */
  public realServerTunLine = this.RULE('realServerTunLine', (): RealServerSyntax => {
    const arrow = this.CONSUME(T.Arrow);
    const address = this.SUBRULE(this.anyWord);
    let forward: IToken | undefined;
    let tunnelInfo: IToken | undefined;
    this.OPTION(() => {
      forward = this.OR([{ ALT: () => this.CONSUME(T.Forward) }, { ALT: () => this.CONSUME(T.Word) }]);
      this.OPTION1(() => {
        tunnelInfo = this.OR1([{ ALT: () => this.CONSUME1(T.Word) }, { ALT: () => this.CONSUME(T.OptionWord) }]);
      });
    });
    const numbers: Tok[] = [];
    this.MANY(() => {
      const n = this.SUBRULE(this.number);
      this.ACTION(() => numbers.push(n));
    });
    return this.ACTION(() => {
      const out: { -readonly [K in keyof RealServerSyntax]: RealServerSyntax[K] } = {
        kind: 'real-server',
        arrow: tok(arrow),
        address,
        numbers,
      };
      if (forward) out.forward = tok(forward);
      if (tunnelInfo) out.tunnelInfo = tok(tunnelInfo);
      return out;
    });
  });

  private saveValue = this.RULE('saveValue', (): Tok => {
    const t = this.OR([
      { ALT: () => this.CONSUME(T.Word) },
      { ALT: () => this.CONSUME(T.Integer) },
      { ALT: () => this.CONSUME(T.ScaledNumber) },
      { ALT: () => this.CONSUME(T.Protocol) },
      { ALT: () => this.CONSUME(T.Forward) },
      { ALT: () => this.CONSUME(T.Ipv6) },
      { ALT: () => this.CONSUME(T.Persistent) },
      { ALT: () => this.CONSUME(T.Mask) },
      { ALT: () => this.CONSUME(T.SchedFlags) },
    ]);
    return this.ACTION(() => tok(t));
  });

  public saveLine = this.RULE('saveLine', (): SaveSyntax => {
    const command = this.OR([{ ALT: () => this.CONSUME(T.AddService) }, { ALT: () => this.CONSUME(T.AddServer) }]);
    const serviceOption = this.CONSUME(T.ServiceOption);
    const target = this.SUBRULE(this.saveValue);
    const options: SaveOptionSyntax[] = [];
    this.MANY(() => {
      this.OR1([
        {
          ALT: () => {
            const name = this.OR2([
              { ALT: () => this.CONSUME(T.OptionWord) },
              { ALT: () => this.CONSUME1(T.ServiceOption) },
              { ALT: () => this.CONSUME1(T.AddService) },
              { ALT: () => this.CONSUME1(T.AddServer) },
            ]);
            const value = this.OPTION(() => this.SUBRULE1(this.saveValue));
            this.ACTION(() => options.push(value ? { name: tok(name), value } : { name: tok(name) }));
          },
        },
        {
          // ipvsadm < 1.27 printed the persistence engine and one-packet flag as bare words.
          ALT: () => {
            const name = this.CONSUME(T.Pe);
            const value = this.SUBRULE2(this.saveValue);
            this.ACTION(() => options.push({ name: tok(name), value }));
          },
        },
        {
          ALT: () => {
            const name = this.CONSUME(T.Ops);
            this.ACTION(() => options.push({ name: tok(name) }));
          },
        },
      ]);
    });
    return this.ACTION(() => ({
      kind: 'save' as const,
      command: tok(command),
      serviceOption: tok(serviceOption),
      target,
      options,
    }));
  });

  /** `pro expire state source virtual destination [pe-name pe-data]`: six to eight words. */
  public connectionLine = this.RULE('connectionLine', (): ConnectionSyntax => {
    const fields: Tok[] = [];
    this.AT_LEAST_ONE(() => {
      const t = this.OR([
        { ALT: () => this.SUBRULE(this.anyWord) },
        {
          ALT: () => {
            const o = this.CONSUME(T.OptionWord);
            return this.ACTION(() => tok(o));
          },
        },
      ]);
      this.ACTION(() => fields.push(t));
    });
    return { kind: 'connection', fields };
  });
}
