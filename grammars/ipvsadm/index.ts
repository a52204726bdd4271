/**
 * `ipvsadm` output → line syntax (FORMATS.md §3). Syntax only: addresses, numbers and the
 * meaning of columns are interpreted by src/extract/ipvsadm.ts.
 *
 * Fixed title lines (`IP Virtual Server version …`, `Prot LocalAddress:Port …`,
 * `  -> RemoteAddress:Port …`, `IPVS connection entries`, `pro expire state …`) are recognised
 * with whitespace-normalised regular expressions; every other line is lexed and parsed with the
 * Chevrotain line grammar in ./parser.ts. One bad line gives one diagnostic; parsing continues.
 */
import { Lexer, type ILexingResult, type IRecognitionException } from '../common/chevrotain.js';
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind, splitInput } from '../common/text.js';
import { IpvsadmLineParser, type LineSyntax } from './parser.js';
import * as T from './tokens.js';

export type { LineSyntax, ServiceSyntax, RealServerSyntax, SaveSyntax, SaveOptionSyntax, ConnectionSyntax, Tok } from './parser.js';

/** Which listing a title announces. `tun-info` is the `-L --tun-info` variant of `list`. */
export type IpvsadmView = 'list' | 'stats' | 'rate' | 'thresholds' | 'persistent-conn' | 'tun-info' | 'connections' | 'save';

export type IpvsadmEntry =
  | { readonly kind: 'version'; readonly line: number; readonly version: string; readonly size?: number }
  | { readonly kind: 'title'; readonly line: number; readonly view: IpvsadmView }
  /** The second title line, `  -> RemoteAddress:Port [Forward [TunnelInfo] Weight ActiveConn InActConn]`. */
  | { readonly kind: 'title2'; readonly line: number; readonly tunnelInfo: boolean }
  /** A service, real-server, rule or connection line; `view` is the listing it appeared in (if a title was seen). */
  | { readonly kind: 'syntax'; readonly line: number; readonly text: string; readonly view?: IpvsadmView; readonly syntax: LineSyntax }
  /** A line that is not part of the model: noise, other ipvsadm output, stderr, or a line that failed to parse. */
  | {
      readonly kind: 'skipped';
      readonly line: number;
      readonly text: string;
      readonly reason: string;
      readonly noise: boolean;
    };

export interface IpvsadmSyntax {
  readonly entries: readonly IpvsadmEntry[];
  readonly diagnostics: readonly Diagnostic[];
  /** The file did not end with a newline: its last line may be cut. */
  readonly missingFinalNewline: boolean;
  /** Line number of the last non-blank line (0 for an empty file). */
  readonly lastLine: number;
}

const VERSION = /^IP Virtual Server version (\S+?)(?: \(size=(\d+)\))?$/;
const TITLE: readonly [RegExp, IpvsadmView][] = [
  [/^Prot LocalAddress:Port Scheduler Flags$/, 'list'],
  [/^Prot LocalAddress:Port Conns InPkts OutPkts InBytes OutBytes$/, 'stats'],
  [/^Prot LocalAddress:Port CPS InPPS OutPPS InBPS OutBPS$/, 'rate'],
  [/^Prot LocalAddress:Port Uthreshold Lthreshold ActiveConn InActConn$/, 'thresholds'],
  [/^Prot LocalAddress:Port Weight PersistConn ActiveConn InActConn$/, 'persistent-conn'],
];
const TITLE2 = /^-> RemoteAddress:Port(?: Forward( TunnelInfo)? Weight ActiveConn InActConn)?$/;
const CONN_BANNER = /^IPVS connection entries$/;
const CONN_TITLE = /^pro expire state source virtual destination( pe name pe_data)?$/;
/** Other things `ipvsadm` prints that kpx does not model. */
const OTHER_OUTPUT: readonly [RegExp, string][] = [
  [/^Timeout \(tcp tcpfin udp\):/, 'ipvsadm --timeout output'],
  [/^(master|backup) sync daemon \(/, 'ipvsadm --daemon output'],
  [/^ipvsadm v\d/, 'ipvsadm --version output'],
];
/** ipvsadm / shell error messages interleaved from stderr. */
const STDERR =
  /^(Can't initialize ipvs|Are you sure that IP Virtual Server|Memory allocation problem|Could not open|ipvsadm: |Service not defined|No such (service|destination)|Protocol not available|Permission denied|Warning: IPVS version mismatch|\S*ipvsadm: command not found|sudo: |bash: |sh: )/;
const EXPIRE = /^\d+:\d\d$/;

let lexer: Lexer | undefined;
let parser: IpvsadmLineParser | undefined;

function tools(): { lexer: Lexer; parser: IpvsadmLineParser } {
  if (!lexer) lexer = new Lexer(T.allTokens, { positionTracking: 'onlyOffset', ensureOptimizations: true });
  if (!parser) parser = new IpvsadmLineParser();
  return { lexer, parser };
}

function normalise(line: string): string {
  return line.trim().split(/\s+/).join(' ');
}

function expectedOf(err: IRecognitionException): string {
  if (err.name === 'NotAllInputParsedException') return 'end of line';
  const arrows = /-->\s*(.*?)\s*<--/.exec(err.message);
  if (arrows && !err.message.startsWith('Expecting: one of')) return arrows[1];
  const seqs = [...new Set([...err.message.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1].split(',')[0].trim()))];
  // Where any word is acceptable, the keyword alternatives only add noise.
  if (seqs.includes('word') && seqs.length > 2) return 'a word (address, name or value)';
  if (seqs.length > 0) return seqs.join(' or ');
  return err.message.split('\n')[0];
}

const RULE_WHAT: Record<string, string> = {
  serviceLine: 'virtual service line',
  realServerLine: 'real server line',
  realServerTunLine: 'real server line',
  saveLine: 'ipvsadm rule',
  connectionLine: 'connection entry',
};

type LineRule = 'serviceLine' | 'realServerLine' | 'realServerTunLine' | 'saveLine' | 'connectionLine';

/** Parse ipvsadm output into per-line syntax. Never throws on user input. */
export function parseIpvsadmSyntax(text: string, file: string): IpvsadmSyntax {
  const input = splitInput(text);
  let lastLine = 0;
  for (let i = 0; i < input.lines.length; i++) if (input.lines[i].trim() !== '') lastLine = i + 1;
  const r = new IpvsadmReader(file, lastLine, input.missingFinalNewline);
  for (let i = 0; i < input.lines.length; i++) {
    const raw = input.lines[i];
    const line = i + 1;
    if (raw.trim() === '') continue;
    const firstCol = raw.length - raw.trimStart().length + 1;
    if (r.noise(raw, line, firstCol)) continue;
    const norm = normalise(raw);
    if (r.title(norm, line) || r.unmodelled(norm, raw, line, firstCol)) continue;
    r.syntaxLine(raw, line);
  }
  return { entries: r.entries, diagnostics: r.diagnostics, missingFinalNewline: input.missingFinalNewline, lastLine };
}

/** The lines of one ipvsadm output, with the listing (view) the titles announce. */
class IpvsadmReader {
  readonly entries: IpvsadmEntry[] = [];
  readonly diagnostics: Diagnostic[] = [];
  private view: IpvsadmView | undefined;
  /** The second title announced a TunnelInfo column (`-L --tun-info`). */
  private tunMode = false;
  private readonly tools = tools();

  constructor(
    private readonly file: string,
    private readonly lastLine: number,
    private readonly missingFinalNewline: boolean,
  ) {}

  private skip(line: number, raw: string, reason: string, noise: boolean): void {
    this.entries.push({ kind: 'skipped', line, text: raw, reason, noise });
  }

  noise(raw: string, line: number, firstCol: number): boolean {
    const noise = noiseKind(raw) ?? (/^\s*#/.test(raw) ? 'comment' : undefined);
    if (!noise) return false;
    this.skip(line, raw, `noise: ${noise}`, true);
    this.diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise} line: ${printable(raw.trim())}`, this.file, line, firstCol));
    return true;
  }

  /** The version line and the title lines of each listing: they set the view of the lines below. */
  title(norm: string, line: number): boolean {
    const version = VERSION.exec(norm);
    if (version) {
      this.entries.push(version[2] ? { kind: 'version', line, version: version[1], size: Number(version[2]) } : { kind: 'version', line, version: version[1] });
      if (this.view === 'connections' || this.view === 'save') this.view = undefined;
      this.tunMode = false;
      return true;
    }
    const title = TITLE.find(([re]) => re.test(norm));
    if (title) {
      this.view = title[1];
      this.tunMode = false;
      this.entries.push({ kind: 'title', line, view: this.view });
      return true;
    }
    const title2 = TITLE2.exec(norm);
    if (title2) {
      this.tunMode = title2[1] !== undefined;
      if (this.tunMode && this.view === 'list') this.view = 'tun-info';
      this.entries.push({ kind: 'title2', line, tunnelInfo: this.tunMode });
      return true;
    }
    if (CONN_BANNER.test(norm)) {
      this.view = 'connections';
      this.entries.push({ kind: 'title', line, view: this.view });
      return true;
    }
    if (CONN_TITLE.test(norm)) {
      if (this.view !== 'connections') this.entries.push({ kind: 'title', line, view: 'connections' });
      else this.entries.push({ kind: 'title2', line, tunnelInfo: false });
      this.view = 'connections';
      return true;
    }
    return false;
  }

  /** Other ipvsadm output and error messages: skipped with a warning. */
  unmodelled(norm: string, raw: string, line: number, firstCol: number): boolean {
    const other = OTHER_OUTPUT.find(([re]) => re.test(norm));
    if (other) {
      this.skip(line, raw, other[1], false);
      this.diagnostics.push(
        diagnostic('warning', 'ipvsadm/unsupported-output', `${other[1]} is not modelled; line skipped: ${printable(norm)}`, this.file, line, firstCol),
      );
      return true;
    }
    if (STDERR.test(norm)) {
      this.skip(line, raw, 'error message (stderr)', false);
      this.diagnostics.push(diagnostic('warning', 'input/stderr', `error output pasted into the dump: ${printable(norm)}`, this.file, line, firstCol));
      return true;
    }
    return false;
  }

  /** A service, real-server, rule or connection line, through the lexer and the line grammar. */
  syntaxLine(raw: string, line: number): void {
    const { lexer, parser } = this.tools;
    const lexed: ILexingResult = lexer.tokenize(raw);
    if (lexed.errors.length > 0) {
      const e = lexed.errors[0];
      this.skip(line, raw, 'lexing error', false);
      this.diagnostics.push(
        diagnostic('error', 'parse/unexpected-character', `unexpected character ${printable(raw.substr(e.offset, 1))}`, this.file, line, e.offset + 1, {
          found: printable(raw.substr(e.offset, 10)),
        }),
      );
      return;
    }
    const tokens = lexed.tokens;
    const rule = this.ruleFor(tokens, raw, line);
    if (!rule) return;
    parser.input = tokens;
    const syntax = parser[rule]();
    if (parser.errors.length > 0) {
      this.malformed(parser.errors[0], rule, raw, line);
      return;
    }
    if (rule === 'saveLine' && this.view === undefined) this.view = 'save';
    const view = this.view;
    this.entries.push(view ? { kind: 'syntax', line, text: raw, view, syntax } : { kind: 'syntax', line, text: raw, syntax });
  }

  /** Which line grammar reads these tokens, or undefined (reported) when none does. */
  private ruleFor(tokens: ILexingResult['tokens'], raw: string, line: number): LineRule | undefined {
    const first = tokens[0];
    const second = tokens[1];
    if (first.tokenType === T.Arrow) return this.tunMode ? 'realServerTunLine' : 'realServerLine';
    if (first.tokenType === T.AddService || first.tokenType === T.AddServer) return 'saveLine';
    if (this.view === 'connections' || (second !== undefined && EXPIRE.test(second.image) && tokens.length >= 6)) return 'connectionLine';
    if (first.tokenType === T.Tcp || first.tokenType === T.Udp || first.tokenType === T.Sctp || first.tokenType === T.Fwm) return 'serviceLine';
    this.skip(line, raw, 'not ipvsadm output', false);
    this.diagnostics.push(
      diagnostic(
        'error',
        'parse/unexpected-token',
        `expected a virtual service (TCP|UDP|SCTP|FWM …), a real server ('-> …') or a rule (-A|-a …), found ${printable(first.image, 40)}`,
        this.file,
        line,
        first.startOffset + 1,
        { expected: "TCP|UDP|SCTP|FWM, '->', -A or -a", found: printable(first.image, 40) },
      ),
    );
    return undefined;
  }

  private malformed(err: IRecognitionException, rule: LineRule, raw: string, line: number): void {
    const atEnd = Number.isNaN(err.token.startOffset) || err.token.tokenType.name === 'EOF';
    const column = atEnd ? raw.trimEnd().length + 1 : err.token.startOffset + 1;
    const found = atEnd ? 'end of line' : printable(err.token.image, 40);
    const expected = expectedOf(err);
    const cut = line === this.lastLine && this.missingFinalNewline;
    const what = RULE_WHAT[rule];
    this.skip(line, raw, cut ? `truncated ${what}` : `malformed ${what}`, false);
    this.diagnostics.push(
      diagnostic(
        cut ? 'warning' : 'error',
        cut ? 'parse/truncated-line' : 'parse/unexpected-token',
        `${cut ? 'truncated' : 'malformed'} ${what}: expected ${expected}, found ${found}`,
        this.file,
        line,
        column,
        { expected, found },
      ),
    );
  }
}
