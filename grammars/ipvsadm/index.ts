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

/** Parse ipvsadm output into per-line syntax. Never throws on user input. */
export function parseIpvsadmSyntax(text: string, file: string): IpvsadmSyntax {
  const input = splitInput(text);
  const { lexer, parser } = tools();
  const entries: IpvsadmEntry[] = [];
  const diagnostics: Diagnostic[] = [];
  let view: IpvsadmView | undefined;
  let tunMode = false;
  let lastLine = 0;
  for (let i = 0; i < input.lines.length; i++) if (input.lines[i].trim() !== '') lastLine = i + 1;

  const skip = (line: number, raw: string, reason: string, noise: boolean): void => {
    entries.push({ kind: 'skipped', line, text: raw, reason, noise });
  };

  for (let i = 0; i < input.lines.length; i++) {
    const raw = input.lines[i];
    const line = i + 1;
    if (raw.trim() === '') continue;
    const firstCol = raw.length - raw.trimStart().length + 1;
    const noise = noiseKind(raw) ?? (/^\s*#/.test(raw) ? 'comment' : undefined);
    if (noise) {
      skip(line, raw, `noise: ${noise}`, true);
      diagnostics.push(diagnostic('info', 'input/noise', `ignored ${noise} line: ${printable(raw.trim())}`, file, line, firstCol));
      continue;
    }
    const norm = normalise(raw);
    const version = VERSION.exec(norm);
    if (version) {
      entries.push(version[2] ? { kind: 'version', line, version: version[1], size: Number(version[2]) } : { kind: 'version', line, version: version[1] });
      if (view === 'connections' || view === 'save') view = undefined;
      tunMode = false;
      continue;
    }
    const title = TITLE.find(([re]) => re.test(norm));
    if (title) {
      view = title[1];
      tunMode = false;
      entries.push({ kind: 'title', line, view });
      continue;
    }
    const title2 = TITLE2.exec(norm);
    if (title2) {
      tunMode = title2[1] !== undefined;
      if (tunMode && view === 'list') view = 'tun-info';
      entries.push({ kind: 'title2', line, tunnelInfo: tunMode });
      continue;
    }
    if (CONN_BANNER.test(norm)) {
      view = 'connections';
      entries.push({ kind: 'title', line, view });
      continue;
    }
    if (CONN_TITLE.test(norm)) {
      if (view !== 'connections') entries.push({ kind: 'title', line, view: 'connections' });
      else entries.push({ kind: 'title2', line, tunnelInfo: false });
      view = 'connections';
      continue;
    }
    const other = OTHER_OUTPUT.find(([re]) => re.test(norm));
    if (other) {
      skip(line, raw, other[1], false);
      diagnostics.push(
        diagnostic('warning', 'ipvsadm/unsupported-output', `${other[1]} is not modelled; line skipped: ${printable(norm)}`, file, line, firstCol),
      );
      continue;
    }
    if (STDERR.test(norm)) {
      skip(line, raw, 'error message (stderr)', false);
      diagnostics.push(diagnostic('warning', 'input/stderr', `error output pasted into the dump: ${printable(norm)}`, file, line, firstCol));
      continue;
    }

    const lexed: ILexingResult = lexer.tokenize(raw);
    if (lexed.errors.length > 0) {
      const e = lexed.errors[0];
      skip(line, raw, 'lexing error', false);
      diagnostics.push(
        diagnostic('error', 'parse/unexpected-character', `unexpected character ${printable(raw.substr(e.offset, 1))}`, file, line, e.offset + 1, {
          found: printable(raw.substr(e.offset, 10)),
        }),
      );
      continue;
    }
    const tokens = lexed.tokens;
    const first = tokens[0];
    const second = tokens[1];
    let rule: 'serviceLine' | 'realServerLine' | 'realServerTunLine' | 'saveLine' | 'connectionLine';
    if (first.tokenType === T.Arrow) rule = tunMode ? 'realServerTunLine' : 'realServerLine';
    else if (first.tokenType === T.AddService || first.tokenType === T.AddServer) rule = 'saveLine';
    else if (view === 'connections' || (second !== undefined && EXPIRE.test(second.image) && tokens.length >= 6)) rule = 'connectionLine';
    else if (first.tokenType === T.Tcp || first.tokenType === T.Udp || first.tokenType === T.Sctp || first.tokenType === T.Fwm) rule = 'serviceLine';
    else {
      skip(line, raw, 'not ipvsadm output', false);
      diagnostics.push(
        diagnostic(
          'error',
          'parse/unexpected-token',
          `expected a virtual service (TCP|UDP|SCTP|FWM …), a real server ('-> …') or a rule (-A|-a …), found ${printable(first.image, 40)}`,
          file,
          line,
          first.startOffset + 1,
          { expected: "TCP|UDP|SCTP|FWM, '->', -A or -a", found: printable(first.image, 40) },
        ),
      );
      continue;
    }
    parser.input = tokens;
    const syntax = parser[rule]();
    if (parser.errors.length > 0) {
      const err = parser.errors[0];
      const atEnd = Number.isNaN(err.token.startOffset) || err.token.tokenType.name === 'EOF';
      const column = atEnd ? raw.trimEnd().length + 1 : err.token.startOffset + 1;
      const found = atEnd ? 'end of line' : printable(err.token.image, 40);
      const expected = expectedOf(err);
      const cut = line === lastLine && input.missingFinalNewline;
      const what = RULE_WHAT[rule];
      skip(line, raw, cut ? `truncated ${what}` : `malformed ${what}`, false);
      diagnostics.push(
        diagnostic(
          cut ? 'warning' : 'error',
          cut ? 'parse/truncated-line' : 'parse/unexpected-token',
          `${cut ? 'truncated' : 'malformed'} ${what}: expected ${expected}, found ${found}`,
          file,
          line,
          column,
          { expected, found },
        ),
      );
      continue;
    }
    if (rule === 'saveLine' && view === undefined) view = 'save';
    entries.push(view ? { kind: 'syntax', line, text: raw, view, syntax } : { kind: 'syntax', line, text: raw, syntax });
  }
  return { entries, diagnostics, missingFinalNewline: input.missingFinalNewline, lastLine };
}
