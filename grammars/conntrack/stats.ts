/**
 * `conntrack -S` and `conntrack -C` output → per-line syntax.
 *
 *   per-CPU form (conntrack-tools ≥ 1.4, ctnetlink `IPCTNL_MSG_CT_GET_STATS_CPU`):
 *       cpu=0   \tfound=0 invalid=1 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 search_restart=3
 *   old form (one counter per line, the sums of /proc/net/stat/nf_conntrack):
 *       entries                 \t1456
 *       insert_failed           \t0
 *   `conntrack -C` (and `cat /proc/sys/net/netfilter/nf_conntrack_count`): one number.
 *
 *   statsLine := cpuLine | counterLine | countLine
 *   cpuLine   := 'cpu=N' (key=N)*
 *   counterLine := NAME N
 *   countLine := N
 */
import { createToken, EmbeddedActionsParser, Lexer, type IToken, type TokenType } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';

const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });
const Cpu = createToken({ name: 'Cpu', label: 'cpu=N', pattern: /cpu=\S*/ });
const Counter = createToken({ name: 'Counter', label: 'counter=N', pattern: /[a-z][a-z_]*=\S*/ });
const Integer = createToken({ name: 'Integer', label: 'number', pattern: /\d+(?![^\s])/ });
const Name = createToken({ name: 'Name', label: 'counter name', pattern: /[a-z][a-z_]*(?![^\s])/ });
const allTokens: TokenType[] = [WhiteSpace, Cpu, Counter, Integer, Name];

export interface Field {
  readonly name: string;
  readonly value: number;
  readonly column: number;
}
export type StatsLine =
  | { readonly kind: 'cpu'; readonly line: number; readonly cpu: number; readonly fields: readonly Field[] }
  | { readonly kind: 'counter'; readonly line: number; readonly field: Field }
  | { readonly kind: 'count'; readonly line: number; readonly value: number };

export interface StatsSyntax {
  readonly lines: readonly StatsLine[];
  readonly diagnostics: readonly Diagnostic[];
}

type Parsed = { kind: 'cpu'; cpu: IToken; fields: IToken[] } | { kind: 'counter'; name: IToken; value: IToken } | { kind: 'count'; value: IToken };

class StatsParser extends EmbeddedActionsParser {
  constructor() {
    super(allTokens, { recoveryEnabled: false });
    this.performSelfAnalysis();
  }
  public statsLine = this.RULE('statsLine', (): Parsed => {
    return this.OR([
      {
        ALT: (): Parsed => {
          const cpu = this.CONSUME(Cpu);
          const fields: IToken[] = [];
          this.MANY(() => {
            const f = this.CONSUME(Counter);
            this.ACTION(() => fields.push(f));
          });
          return { kind: 'cpu', cpu, fields };
        },
      },
      {
        ALT: (): Parsed => {
          const name = this.CONSUME(Name);
          const value = this.CONSUME(Integer);
          return { kind: 'counter', name, value };
        },
      },
      { ALT: (): Parsed => ({ kind: 'count', value: this.CONSUME1(Integer) }) },
    ]);
  });
}

let lexer: Lexer | undefined;
let parser: StatsParser | undefined;

const DIGITS = /^\d+$/;

/** Parse `conntrack -S` / `-C` output. Never throws on user input. */
export function parseConntrackStats(text: string, file: string): StatsSyntax {
  lexer ??= new Lexer(allTokens, { positionTracking: 'onlyOffset' });
  parser ??= new StatsParser();
  const lines: StatsLine[] = [];
  const diagnostics: Diagnostic[] = [];
  const input = splitInput(text);
  for (let i = 0; i < input.lines.length; i++) {
    const raw = input.lines[i];
    const line = i + 1;
    if (raw.trim() === '') continue;
    const noise = noiseKind(raw);
    if (noise) {
      diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise} line: ${printable(raw.trim())}`, file, line, 1));
      continue;
    }
    const lexed = lexer.tokenize(raw);
    if (lexed.errors.length > 0) {
      const e = lexed.errors[0];
      diagnostics.push(
        diagnostic('error', 'parse/unexpected-character', `unexpected character ${printable(raw.substr(e.offset, 1))} in conntrack statistics`, file, line, e.offset + 1, {
          expected: 'cpu=N key=N …, NAME N, or N',
          found: printable(raw.substr(e.offset, 20)),
        }),
      );
      continue;
    }
    parser.input = lexed.tokens;
    const p = parser.statsLine();
    if (parser.errors.length > 0) {
      const err = parser.errors[0];
      const atEnd = Number.isNaN(err.token.startOffset);
      diagnostics.push(
        diagnostic('error', 'parse/unexpected-token', `malformed conntrack statistics line: expected cpu=N key=N …, NAME N, or N, found ${atEnd ? 'end of line' : printable(err.token.image, 40)}`, file, line, atEnd ? raw.trimEnd().length + 1 : err.token.startOffset + 1, {
          expected: 'cpu=N key=N …, NAME N, or N',
          found: atEnd ? 'end of line' : printable(err.token.image, 40),
        }),
      );
      continue;
    }
    const field = (t: IToken): Field | undefined => {
      const eq = t.image.indexOf('=');
      const v = t.image.slice(eq + 1);
      // Newer kernels print some counters in hex in /proc; conntrack -S prints decimal.
      if (!DIGITS.test(v)) {
        diagnostics.push(diagnostic('error', 'parse/bad-number', `${printable(t.image.slice(0, eq), 40)} is not a number`, file, line, t.startOffset + eq + 2, { expected: 'a number', found: printable(v, 40) }));
        return undefined;
      }
      return { name: t.image.slice(0, eq), value: Number(v), column: t.startOffset + 1 };
    };
    if (p.kind === 'cpu') {
      const cpu = field(p.cpu);
      const fields = p.fields.map(field).filter((f): f is Field => f !== undefined);
      if (cpu) lines.push({ kind: 'cpu', line, cpu: cpu.value, fields });
    } else if (p.kind === 'counter') {
      lines.push({ kind: 'counter', line, field: { name: p.name.image, value: Number(p.value.image), column: p.name.startOffset + 1 } });
    } else {
      lines.push({ kind: 'count', line, value: Number(p.value.image) });
    }
  }
  return { lines, diagnostics };
}
