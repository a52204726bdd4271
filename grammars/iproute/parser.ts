/**
 * One `ip route` output line → a small syntax node. Embedded actions, one instance, reused.
 *
 *   line     := nexthop | cache | route
 *   route    := (RouteType AnyWord | Word) attr*          -- TYPE DST or DST (a non-keyword word)
 *   nexthop  := 'nexthop' attr*                           -- multipath continuation (⇥nexthop …)
 *   cache    := 'cache' AngleList? attr*                  -- `ip route get` / route cache continuation
 *   attr     := ValueKey AnyWord | 'via' Family? AnyWord | MetricKey 'lock'? AnyWord
 *             | 'lock' MetricKey AnyWord | FlagKey | 'encap' AnyWord Word* | Word   -- Word: unknown, kept
 */
import { EmbeddedActionsParser, Lexer, type IToken } from '../common/chevrotain.js';
import * as t from './tokens.js';

export interface Tok {
  readonly text: string;
  /** 1-based column of the first character; endColumn is exclusive. */
  readonly column: number;
  readonly endColumn: number;
}

export type RouteAttrKind = 'value' | 'via' | 'metric' | 'flag' | 'encap' | 'unknown';

export interface RouteAttr {
  readonly kind: RouteAttrKind;
  /** Keyword as printed (`dev`, `mtu`, `onlink`, or the unknown word). */
  readonly key: string;
  readonly keyTok: Tok;
  readonly values: readonly Tok[];
  /** `via inet6 X`: the family word. */
  readonly family?: Tok;
  /** `mtu lock 1400` / `lock mtu 1400`. */
  readonly locked?: boolean;
}

export type RouteLineNode =
  | { readonly kind: 'route'; readonly type?: Tok; readonly dst: Tok; readonly attrs: readonly RouteAttr[] }
  | { readonly kind: 'nexthop'; readonly keyTok: Tok; readonly attrs: readonly RouteAttr[] }
  | { readonly kind: 'cache'; readonly keyTok: Tok; readonly cacheFlags?: Tok; readonly attrs: readonly RouteAttr[] };

export interface LineSyntaxError {
  readonly column: number;
  readonly message: string;
  readonly expected?: string;
  readonly found?: string;
}

function tok(x: IToken, offset: number): Tok {
  return { text: x.image, column: x.startOffset + 1 + offset, endColumn: x.startOffset + 1 + offset + x.image.length };
}

class IpRouteLineParser extends EmbeddedActionsParser {
  /** Column offset of the lexed text within the original line (0-based). */
  offset = 0;

  constructor() {
    super(t.allTokens, { recoveryEnabled: false, maxLookahead: 2, skipValidations: false });
    this.performSelfAnalysis();
  }

  public line = this.RULE('line', (): RouteLineNode => {
    return this.OR([
      { ALT: () => this.SUBRULE(this.nexthop) },
      { ALT: () => this.SUBRULE(this.cache) },
      { ALT: () => this.SUBRULE(this.route) },
    ]);
  });

  private route = this.RULE('route', (): RouteLineNode => {
    let type: IToken | undefined;
    let dst!: IToken;
    this.OR([
      {
        ALT: () => {
          type = this.CONSUME(t.RouteType);
          dst = this.CONSUME(t.AnyWord);
        },
      },
      { ALT: () => (dst = this.CONSUME(t.Word)) },
    ]);
    const attrs = this.SUBRULE(this.attrs);
    return this.ACTION(() => {
      const node: { kind: 'route'; type?: Tok; dst: Tok; attrs: readonly RouteAttr[] } = { kind: 'route', dst: tok(dst, this.offset), attrs };
      if (type) node.type = tok(type, this.offset);
      return node;
    });
  });

  private nexthop = this.RULE('nexthop', (): RouteLineNode => {
    const k = this.CONSUME(t.Nexthop);
    const attrs = this.SUBRULE(this.attrs);
    return this.ACTION(() => ({ kind: 'nexthop' as const, keyTok: tok(k, this.offset), attrs }));
  });

  private cache = this.RULE('cache', (): RouteLineNode => {
    const k = this.CONSUME(t.Cache);
    const flags = this.OPTION(() => this.CONSUME(t.AngleList));
    const attrs = this.SUBRULE(this.attrs);
    return this.ACTION(() => {
      const node: { kind: 'cache'; keyTok: Tok; cacheFlags?: Tok; attrs: readonly RouteAttr[] } = { kind: 'cache', keyTok: tok(k, this.offset), attrs };
      if (flags) node.cacheFlags = tok(flags, this.offset);
      return node;
    });
  });

  private attrs = this.RULE('attrs', (): RouteAttr[] => {
    const out: RouteAttr[] = [];
    this.MANY(() => out.push(this.SUBRULE(this.attr)));
    return out;
  });

  private attr = this.RULE('attr', (): RouteAttr => {
    const o = () => this.offset;
    return this.OR([
      {
        ALT: () => {
          const k = this.CONSUME(t.ValueKey);
          const v = this.CONSUME1(t.AnyWord);
          return this.ACTION(() => ({ kind: 'value' as const, key: k.image, keyTok: tok(k, o()), values: [tok(v, o())] }));
        },
      },
      {
        ALT: () => {
          const k = this.CONSUME(t.Via);
          const fam = this.OPTION(() => this.CONSUME(t.Family));
          const v = this.CONSUME2(t.AnyWord);
          return this.ACTION(() => {
            const a: { kind: 'via'; key: string; keyTok: Tok; values: Tok[]; family?: Tok } = { kind: 'via', key: 'via', keyTok: tok(k, o()), values: [tok(v, o())] };
            if (fam) a.family = tok(fam, o());
            return a;
          });
        },
      },
      {
        ALT: () => {
          const k = this.CONSUME1(t.MetricKey);
          const lock = this.OPTION1(() => this.CONSUME1(t.Lock));
          const v = this.CONSUME3(t.AnyWord);
          return this.ACTION(() => ({ kind: 'metric' as const, key: k.image, keyTok: tok(k, o()), values: [tok(v, o())], locked: lock !== undefined }));
        },
      },
      {
        ALT: () => {
          this.CONSUME2(t.Lock);
          const k = this.CONSUME2(t.MetricKey);
          const v = this.CONSUME4(t.AnyWord);
          return this.ACTION(() => ({ kind: 'metric' as const, key: k.image, keyTok: tok(k, o()), values: [tok(v, o())], locked: true }));
        },
      },
      {
        ALT: () => {
          const k = this.CONSUME(t.FlagKey);
          return this.ACTION(() => ({ kind: 'flag' as const, key: k.image, keyTok: tok(k, o()), values: [] }));
        },
      },
      {
        ALT: () => {
          const k = this.CONSUME(t.Encap);
          const vs: IToken[] = [this.CONSUME5(t.AnyWord)];
          this.MANY(() => vs.push(this.CONSUME1(t.Word)));
          return this.ACTION(() => ({ kind: 'encap' as const, key: 'encap', keyTok: tok(k, o()), values: vs.map((v) => tok(v, o())) }));
        },
      },
      {
        ALT: () => {
          const k = this.CONSUME2(t.Word);
          return this.ACTION(() => ({ kind: 'unknown' as const, key: k.image, keyTok: tok(k, o()), values: [] }));
        },
      },
    ]);
  });
}

let lexer: Lexer | undefined;
let parser: IpRouteLineParser | undefined;

function instances(): { lexer: Lexer; parser: IpRouteLineParser } {
  if (!lexer) lexer = new Lexer(t.allTokens, { positionTracking: 'onlyOffset', ensureOptimizations: true });
  if (!parser) parser = new IpRouteLineParser();
  return { lexer, parser };
}

/**
 * Parse one line (without its terminator). `offset` is the 0-based column of `text` in the
 * original line, so columns in the result refer to the original line.
 */
export function parseRouteLine(text: string, offset = 0): { node?: RouteLineNode; errors: LineSyntaxError[] } {
  const { lexer: lx, parser: p } = instances();
  const lexed = lx.tokenize(text);
  const errors: LineSyntaxError[] = lexed.errors.map((e) => ({
    column: e.offset + 1 + offset,
    message: `unexpected character ${JSON.stringify(text.slice(e.offset, e.offset + 1))}`,
    found: text.slice(e.offset, e.offset + e.length),
  }));
  if (errors.length) return { errors };
  p.offset = offset;
  p.input = lexed.tokens;
  const node = p.line();
  if (p.errors.length) {
    for (const e of p.errors) {
      const at = Number.isFinite(e.token.startOffset) ? e.token.startOffset + 1 + offset : text.replace(/\s+$/, '').length + 1 + offset;
      const found = e.token.tokenType === undefined || e.token.image === '' ? 'end of line' : e.token.image;
      errors.push({ column: at, message: e.message, expected: expectedOf(e), found });
    }
    return { errors };
  }
  return { node, errors };
}

function expectedOf(e: { name: string; context: { ruleStack: string[] } }): string {
  const rule = e.context.ruleStack[e.context.ruleStack.length - 1];
  if (rule === 'attr') return 'a value after the keyword';
  if (rule === 'route') return 'a route destination (`default`, an address or a prefix), optionally after a route type';
  return 'a route line';
}
