/**
 * Line grammar of a connection-tracking entry (`conntrack -L` and `/proc/net/nf_conntrack`):
 *
 *   entry     := [L3NAME L3NUM] PROTO PROTONUM [TIMEOUT] [STATE] tuple [UNREPLIED] tuple trailer*
 *   tuple     := src= dst= (sport= | dport= | type= | code= | id= | srckey= | dstkey=)* [packets= bytes=]
 *   trailer   := [ASSURED] | [OFFLOAD] | [HW_OFFLOAD] | mark= | secctx= | zone= | use= | id= | labels=
 *              | delta-time= | helper= | [start=…] | [stop=…] | key=value | [FLAG]
 *
 * The order is libnetfilter_conntrack's `__snprintf_conntrack_default()` (layer 3 only with
 * `-o extended`), which the kernel's `ct_seq_show()` shares for /proc/net/nf_conntrack. The parser
 * returns a plan: which token (by index) plays which part. Lines whose words classify alike share
 * one plan (./index.ts), so the plan must never hold text.
 */
import { EmbeddedActionsParser, type IToken, type TokenType } from '../common/chevrotain.js';
import * as T from './tokens.js';

/** A token of the line by index; -1: absent. */
export type Tok = number;

export interface TuplePlan {
  readonly src: Tok;
  readonly dst: Tok;
  readonly sport: Tok;
  readonly dport: Tok;
  readonly type: Tok;
  readonly code: Tok;
  readonly id: Tok;
  readonly packets: Tok;
  readonly bytes: Tok;
  /** GRE keys and the like: read, not modelled. */
  readonly other: readonly Tok[];
}

export interface EntryPlan {
  readonly l3: Tok;
  readonly l3num: Tok;
  readonly proto: Tok;
  readonly protonum: Tok;
  readonly timeout: Tok;
  readonly state: Tok;
  readonly orig: TuplePlan;
  readonly unreplied: Tok;
  readonly reply: TuplePlan;
  readonly assured: Tok;
  readonly offload: Tok;
  readonly hwOffload: Tok;
  readonly mark: Tok;
  readonly secctx: Tok;
  readonly zones: readonly Tok[];
  readonly use: Tok;
  readonly id: Tok;
  readonly labels: Tok;
  readonly delta: Tok;
  readonly helper: Tok;
  readonly timestamps: readonly Tok[];
  /** Attributes and flags kpx does not know (a newer tool's): reported as info, not modelled. */
  readonly unknown: readonly Tok[];
}

const TRAILER: TokenType[] = [T.Assured, T.Offload, T.HwOffload, T.Mark, T.Secctx, T.Zone, T.Use, T.Id, T.Labels, T.Delta, T.Helper, T.Timestamp, T.OtherAttr, T.OtherFlag];

export class ConntrackLineParser extends EmbeddedActionsParser {
  private tokens: IToken[] = [];

  constructor() {
    super(T.allTokens, { recoveryEnabled: false, maxLookahead: 4 });
    this.performSelfAnalysis();
  }

  /** Parse one line's tokens; errors are in `this.errors`. */
  parseLine(tokens: IToken[]): EntryPlan {
    this.tokens = tokens;
    this.input = tokens;
    return this.entry();
  }

  private ix(t: IToken | undefined): Tok {
    return t === undefined ? -1 : this.tokens.indexOf(t);
  }

  private tuple = this.RULE('tuple', (): TuplePlan => {
    const src = this.CONSUME(T.Src);
    const dst = this.CONSUME(T.Dst);
    const got: Record<string, IToken | undefined> = {};
    const other: IToken[] = [];
    this.MANY(() => {
      this.OR([
        { ALT: () => (got.sport = this.CONSUME(T.Sport)) },
        { ALT: () => (got.dport = this.CONSUME(T.Dport)) },
        { ALT: () => (got.type = this.CONSUME(T.IcmpType)) },
        { ALT: () => (got.code = this.CONSUME(T.IcmpCode)) },
        { ALT: () => (got.id = this.CONSUME(T.Id)) },
        { ALT: () => other.push(this.CONSUME(T.TupleKey)) },
      ]);
    });
    this.OPTION(() => {
      got.packets = this.CONSUME(T.Packets);
      got.bytes = this.CONSUME(T.Bytes);
    });
    return this.ACTION(() => ({
      src: this.ix(src),
      dst: this.ix(dst),
      sport: this.ix(got.sport),
      dport: this.ix(got.dport),
      type: this.ix(got.type),
      code: this.ix(got.code),
      id: this.ix(got.id),
      packets: this.ix(got.packets),
      bytes: this.ix(got.bytes),
      other: other.map((t) => this.ix(t)),
    }));
  });

  public entry = this.RULE('entry', (): EntryPlan => {
    let l3: IToken | undefined;
    let l3num: IToken | undefined;
    // `-o extended` / /proc/net/nf_conntrack: `ipv4     2 tcp      6 …`
    // LL(k) alone would take `tcp 6` for a layer-3 prefix (the option's content is a prefix of
    // what follows it): the prefix is there only when a second NAME NUMBER pair follows.
    this.OPTION({
      GATE: () => this.LA(2).tokenType === T.Integer && this.LA(3).tokenType === T.Word && this.LA(4).tokenType === T.Integer,
      DEF: () => {
        l3 = this.CONSUME(T.Word);
        l3num = this.CONSUME(T.Integer);
      },
    });
    const proto = this.CONSUME1(T.Word);
    const protonum = this.CONSUME1(T.Integer);
    // [OFFLOAD] entries have no timeout.
    const timeout = this.OPTION1(() => this.CONSUME2(T.Integer));
    const state = this.OPTION2(() => this.CONSUME2(T.Word));
    const orig = this.SUBRULE(this.tuple);
    const unreplied = this.OPTION3(() => this.CONSUME(T.Unreplied));
    const reply = this.SUBRULE1(this.tuple);
    const got: Record<string, IToken | undefined> = {};
    const zones: IToken[] = [];
    const timestamps: IToken[] = [];
    const unknown: IToken[] = [];
    this.MANY(() => {
      const t = this.OR(TRAILER.map((tt) => ({ ALT: () => this.CONSUME(tt) })));
      this.ACTION(() => {
        switch (t.tokenType) {
          case T.Zone:
            zones.push(t);
            break;
          case T.Timestamp:
            timestamps.push(t);
            break;
          case T.OtherAttr:
          case T.OtherFlag:
            unknown.push(t);
            break;
          default:
            got[t.tokenType.name] = t;
        }
      });
    });
    return this.ACTION(() => ({
      l3: this.ix(l3),
      l3num: this.ix(l3num),
      proto: this.ix(proto),
      protonum: this.ix(protonum),
      timeout: this.ix(timeout),
      state: this.ix(state),
      orig,
      unreplied: this.ix(unreplied),
      reply,
      assured: this.ix(got.Assured),
      offload: this.ix(got.Offload),
      hwOffload: this.ix(got.HwOffload),
      mark: this.ix(got.Mark),
      secctx: this.ix(got.Secctx),
      zones: zones.map((z) => this.ix(z)),
      use: this.ix(got.Use),
      id: this.ix(got.Id),
      labels: this.ix(got.Labels),
      delta: this.ix(got.Delta),
      helper: this.ix(got.Helper),
      timestamps: timestamps.map((z) => this.ix(z)),
      unknown: unknown.map((z) => this.ix(z)),
    }));
  });
}
