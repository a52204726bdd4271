/**
 * klog's structured message (klog.InfoS/ErrorS, logr): `"msg" key="value" key=value key=<`, and the
 * pairs klog writes on a block's closing line (` > key="value"`, README.md). A Chevrotain lexer and
 * parser (grammars/common/chevrotain.ts); only the record parser loads it, never the sniffer.
 *
 *   message   := Quoted pairs
 *   pairs     := (WS pair)* WS?
 *   pair      := key '=' value
 *   key       := Ident (WS Ident)?          (two words only after a quoted value: `primary ipFamily="IPv4"`)
 *   value     := Quoted | '<' WS?            (a block: the value is on the lines that follow, up to ` >`)
 *              | bare
 *   bare      := (plain nonWS*)? (WS nonWS+)* (up to the next ` key=`: `[10.0.0.1 10.0.0.2]`, `&{…}`, `<nil>`;
 *                                           plain: not a quote, which starts a quoted value)
 *
 * A quoted value is a Go quoted string (klog.ts readQuoted() decodes it). Anything that does not parse
 * (a cut quote, a message that is free text) gives undefined: the caller keeps the message as text.
 */
import { EOF, EmbeddedActionsParser, Lexer, createToken, type IToken, type TokenType } from '../common/chevrotain.js';
import { LOGRUS, readQuoted, type KeyValue, type Structured } from './klog.js';

const WS = createToken({ name: 'WS', pattern: /[ \t\f\v\r]+/ });
const Quoted = createToken({ name: 'Quoted', pattern: /"(?:[^"\\]|\\.)*"/ });
/** A quote never closed (the line was cut): lexed so the message is refused as structured, not mis-split. */
const Unclosed = createToken({ name: 'Unclosed', pattern: /"(?:[^"\\]|\\.)*\\?/ });
const Eq = createToken({ name: 'Eq', pattern: /=/ });
const Lt = createToken({ name: 'Lt', pattern: /</ });
const Gt = createToken({ name: 'Gt', pattern: />/ });
const Ident = createToken({ name: 'Ident', pattern: /[A-Za-z_][\w.-]*/ });
const Other = createToken({ name: 'Other', pattern: /[^\sA-Za-z_="<>]+/ });
const TOKENS = [WS, Quoted, Unclosed, Eq, Lt, Gt, Ident, Other];

class StructuredParser extends EmbeddedActionsParser {
  constructor() {
    super(TOKENS, { recoveryEnabled: false, maxLookahead: 4 });
    this.performSelfAnalysis();
  }

  private is(k: number, t: TokenType): boolean {
    return this.LA(k).tokenType === t;
  }

  /** `WS key=` ahead: the current value ends here. */
  private keyAhead(): boolean {
    return this.is(1, WS) && this.is(2, Ident) && this.is(3, Eq);
  }

  public message = this.RULE('message', (): Structured => {
    const msg = this.CONSUME(Quoted);
    const pairs = this.SUBRULE(this.pairs);
    return { msg: this.ACTION(() => readQuoted(msg.image, 0)?.value ?? ''), pairs };
  });

  public pairs = this.RULE('pairs', (): KeyValue[] => {
    const out: KeyValue[] = [];
    let afterQuoted = true;
    this.MANY({
      GATE: () => this.is(1, WS) && this.is(2, Ident),
      DEF: () => {
        this.CONSUME(WS);
        const p = this.SUBRULE(this.pair, { ARGS: [afterQuoted] });
        out.push(p.kv);
        afterQuoted = p.quoted;
      },
    });
    this.OPTION(() => this.CONSUME2(WS));
    this.CONSUME(EOF);
    return out;
  });

  private pair = this.RULE('pair', (afterQuoted: boolean): { kv: KeyValue; quoted: boolean } => {
    let key = this.CONSUME(Ident).image;
    this.OPTION({
      GATE: () => afterQuoted && this.is(1, WS) && this.is(2, Ident) && this.is(3, Eq),
      DEF: () => {
        this.CONSUME(WS);
        key += ' ' + this.CONSUME2(Ident).image;
      },
    });
    this.CONSUME(Eq);
    return this.OR([
      {
        ALT: () => {
          const q = this.CONSUME(Quoted);
          return { kv: { key, value: this.ACTION(() => readQuoted(q.image, 0)?.value ?? ''), block: false }, quoted: true };
        },
      },
      {
        // `key=<` at the end of the line opens a block; `key=<nil>` is a bare value.
        GATE: () => this.is(1, Lt) && (this.is(2, EOF) || (this.is(2, WS) && this.is(3, EOF))),
        ALT: () => {
          this.CONSUME(Lt);
          return { kv: { key, value: '', block: true }, quoted: false };
        },
      },
      { ALT: () => ({ kv: { key, value: this.SUBRULE(this.bare), block: false }, quoted: false }) },
    ]);
  });

  /** A token of a bare value; a value starting with `"` is a quoted one (never bare). */
  private plain = this.RULE('plain', (): string =>
    this.OR([
      { ALT: () => this.CONSUME(Ident).image },
      { ALT: () => this.CONSUME(Other).image },
      { ALT: () => this.CONSUME(Eq).image },
      { ALT: () => this.CONSUME(Lt).image },
      { ALT: () => this.CONSUME(Gt).image },
    ]),
  );

  private nonWs = this.RULE('nonWs', (): string => this.OR([{ ALT: () => this.SUBRULE(this.plain) }, { ALT: () => this.CONSUME(Quoted).image }]));

  /** A bare value: runs to the next ` key=` or the end of the line (trailing blanks not kept). */
  private bare = this.RULE('bare', (): string => {
    let v = '';
    this.OPTION(() => {
      v += this.SUBRULE(this.plain);
      this.MANY(() => (v += this.SUBRULE(this.nonWs)));
    });
    this.MANY2({
      GATE: () => this.is(1, WS) && !this.is(2, EOF) && !this.keyAhead(),
      DEF: () => {
        v += this.CONSUME(WS).image;
        this.AT_LEAST_ONE(() => (v += this.SUBRULE2(this.nonWs)));
      },
    });
    return v;
  });

  read<T>(tokens: IToken[], rule: () => T): T | undefined {
    this.input = tokens;
    const out = rule();
    return this.errors.length ? undefined : out;
  }
}

let lexer: Lexer | undefined;
let parser: StructuredParser | undefined;

function tokens(text: string): IToken[] | undefined {
  lexer ??= new Lexer(TOKENS, { positionTracking: 'onlyOffset', ensureOptimizations: false });
  const r = lexer.tokenize(text);
  return r.errors.length || r.tokens.some((t) => t.tokenType === Unclosed) ? undefined : r.tokens;
}

/**
 * `"msg" k="v" k=v k=<`: the structured form, or undefined when the message is free text (it does not
 * start with a quoted string, or what follows is not key=value pairs).
 */
export function readStructured(message: string): Structured | undefined {
  if (!message.startsWith('"')) return undefined;
  const t = tokens(message);
  if (!t) return undefined;
  parser ??= new StructuredParser();
  return parser.read(t, () => parser!.message());
}

/** ` key="value" key=value key=<`: the pairs klog writes after a block's closing ` >`. */
export function readPairs(text: string): readonly KeyValue[] | undefined {
  const t = tokens(/^\s/.test(text) ? text : ` ${text}`);
  if (!t) return undefined;
  parser ??= new StructuredParser();
  return parser.read(t, () => parser!.pairs());
}

/** `time="…" level=warning msg="…" k=v`: logrus' text format, read with the same key=value grammar. */
export function readLogrus(body: string): { time: string; level: string; msg: string; pairs: readonly KeyValue[] } | undefined {
  const m = LOGRUS.exec(body);
  if (!m) return undefined;
  let rest = body.slice(m[0].length);
  // slog and logrus quote msg only when it holds spaces or quotes.
  if (!rest.startsWith('"')) {
    const w = /^\S*/.exec(rest)![0];
    rest = JSON.stringify(w) + rest.slice(w.length);
  }
  const s = readStructured(rest);
  if (!s) return undefined;
  return { time: m[1] ?? m[2], level: m[3], msg: s.msg, pairs: s.pairs };
}
