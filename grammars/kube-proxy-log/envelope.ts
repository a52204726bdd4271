/**
 * The wrappers a kube-proxy log line arrives in, peeled off one by one: a terminal UI's box
 * border (`│ … │`, or only the right-hand `│` on a frame's first line), a docker json-file record
 * (`{"log":"…","stream":"stderr","time":"…"}`), `kubectl logs --prefix` (`[pod/NAME/CONTAINER] `),
 * the CRI log-file prefix (`2024-03-12T14:02:11.118202345Z stderr F `, `P` for a partial line),
 * `kubectl logs --timestamps` (an RFC 3339 time and a space) and journald's formats in any locale
 * (`Mar 02 09:15:44 node-3 kube-proxy[2211]: `, `9月 06 14:15:54 m2 kube-proxy[896]: `,
 * `-o short-iso`, `-o short-full`, `-o short-unix`; the identifier is whatever ran kube-proxy:
 * `kube-proxy`, `rkt`, `snap`, `k3s`, `hyperkube`…). They stack (`--prefix --timestamps`, a
 * journald paste inside a TUI frame), so unwrapping repeats until no wrapper matches.
 *
 * A wrapper kpx does not know (a log shipper's columns, stern's `pod container `, a CI runner's
 * time, a quote `> `) is still found when a klog header follows it on the line: the text before
 * the header is kept as the envelope's `prefix`. Regular line shapes: no Chevrotain needed (see
 * README.md).
 */

export type EnvelopeKind = 'quote' | 'frame' | 'docker-json' | 'kubectl-prefix' | 'cri' | 'timestamp' | 'journald' | 'prefix';

export interface Envelope {
  /** The wrappers found, outermost first. */
  readonly kinds: readonly EnvelopeKind[];
  /** Wall-clock time the wrapper gives (journald's short format is without a year). */
  readonly time?: string;
  readonly host?: string;
  readonly pid?: number;
  /** journald's identifier (SYSLOG_IDENTIFIER): the program that wrote the line. */
  readonly ident?: string;
  readonly pod?: string;
  readonly stream?: string;
  /** CRI `P`: the runtime split this line; the next line of the same stream continues it. */
  readonly partial?: boolean;
  /** Text before a klog header that no known wrapper explains. */
  readonly prefix?: string;
  /** The JSON record could not be read: the line is kept as it was. */
  readonly badJson?: string;
}

export interface Unwrapped {
  readonly body: string;
  /** 1-based column of `body` in the file's line (0 when the body was decoded from JSON). */
  readonly column: number;
  readonly envelope: Envelope;
}

const FRAME_LEFT = /^\s*[│┃║]\s?/;
const BORDERS = '│┃║';

/**
 * A TUI frame's line (`│ … │`): the left border's width and what is inside, without the right
 * border and the padding. Done in steps: one regex, `^(\s*[│┃║]\s?)(.*?)\s*[│┃║]?\s*$`, was
 * cubic in a run of spaces not at the end (4,000 spaces: minutes; found by the fuzz run).
 */
function frame(body: string): { left: number; inner: string } | undefined {
  const m = FRAME_LEFT.exec(body);
  if (!m) return undefined;
  let inner = body.slice(m[0].length).trimEnd();
  if (inner.length > 0 && BORDERS.includes(inner[inner.length - 1])) inner = inner.slice(0, -1).trimEnd();
  return { left: m[0].length, inner };
}
/** A frame's right-hand border alone (k9s pads the line to the frame's width). */
const RIGHT_BORDER = /\s[│┃║]\s*$/;
const PREFIX = /^\[pod\/([^/\]\s]+)\/([^\]\s]+)\] ?/;
const RFC3339 = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)`;
const CRI = new RegExp(String.raw`^(${RFC3339}) (stdout|stderr) ([FP]) ?`);
const TIMESTAMP = new RegExp(String.raw`^(${RFC3339}) `);

/**
 * journald's time, as `journalctl -o short*` prints it in any locale: strftime's `%b %d` gives
 * `Mar 02`, `mars 02`, `Mär 02`, `févr. 02`, ` 9月 06` (zh/ja), ` 9월 06` (ko); `short-iso`,
 * `short-full` (`Tue 2021-08-09 05:37:21 UTC`), `short-precise` (microseconds) and `short-unix`.
 */
const JOURNAL_TIME = String.raw`(?:(?:\p{L}[\p{L}.]{0,9}|\d{1,2} ?[月월]) +\d{1,2}日? \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[+-]\d\d:?\d\d|Z)?|\p{L}{2,4}\.? \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [\p{L}\d+:-]+|\d{9,11}\.\d+)`;
const JOURNAL = new RegExp(String.raw`^ ?(${JOURNAL_TIME}) (?![IWEF]\d{4} )(\S+) (\p{L}[^\s\[\]:]*)(?:\[(\d+)\])?: ?`, 'u');
/** A klog header anywhere early in the line, after a wrapper kpx does not know. */
const INNER_KLOG = /(?:^|[\s|>\]:])([IWEF]\d{4} +\d\d:\d\d:\d\d\.\d+ +\d+ [^\s\]]+:\d+\])/;
const LEADING_KLOG = /^\s*[IWEF]\d{4} +\d\d:\d\d:\d\d\.\d+ +\d+ [^\s\]]+:\d+\]/;

interface Fields {
  time?: string;
  host?: string;
  pid?: number;
  ident?: string;
  pod?: string;
  stream?: string;
  partial?: boolean;
  prefix?: string;
  badJson?: string;
}

export function unwrap(line: string): Unwrapped {
  const s: Peeling = { kinds: [], body: line, column: 1, env: {} };
  // A markdown blockquote (`> `) around the whole paste. klog's own block end is ` >`, after a space.
  const q = /^>(?:\s+|$)/.exec(s.body);
  if (q) {
    s.kinds.push('quote');
    cut(s, q[0].length);
  }
  for (let round = 0; round < 6; round++) {
    const step = peel(s);
    if (step === 'bad-json') return unwrapped(s);
    if (step === 'none') break;
  }
  if (RIGHT_BORDER.test(s.body)) {
    if (!s.kinds.includes('frame')) s.kinds.push('frame');
    s.body = s.body.trimEnd().slice(0, -1).trimEnd(); // the border RIGHT_BORDER found, and the padding around it
  }
  if (!LEADING_KLOG.test(s.body)) {
    const body = s.body;
    const k = INNER_KLOG.exec(body.length > 240 ? body.slice(0, 240) : body);
    if (k) {
      const at = k.index + k[0].length - k[1].length;
      s.kinds.push('prefix');
      s.env.prefix = body.slice(0, at);
      cut(s, at);
    }
  }
  return unwrapped(s);
}

/** A line while its wrappers are peeled off, outermost first. */
interface Peeling {
  readonly kinds: EnvelopeKind[];
  body: string;
  /** Column of `body` in the line; 0 once a JSON string was decoded (columns are lost). */
  column: number;
  readonly env: Fields;
}

function unwrapped(s: Peeling): Unwrapped {
  return { body: s.body, column: s.column, envelope: { kinds: s.kinds, ...s.env } };
}

function cut(s: Peeling, n: number): void {
  s.body = s.body.slice(n);
  if (s.column) s.column += n;
}

/** Peel one wrapper off the front of the body: `none` when there is none, `bad-json` on a broken docker JSON line. */
function peel(s: Peeling): 'peeled' | 'none' | 'bad-json' {
  const { kinds, env } = s;
  const f = frame(s.body);
  if (f) {
    kinds.push('frame');
    s.column += f.left;
    s.body = f.inner;
    return 'peeled';
  }
  if (/^\s*\{"log":/.test(s.body)) return dockerJson(s);
  const p = PREFIX.exec(s.body);
  if (p) {
    kinds.push('kubectl-prefix');
    env.pod = p[1];
    cut(s, p[0].length);
    return 'peeled';
  }
  const c = CRI.exec(s.body);
  if (c) {
    kinds.push('cri');
    env.time ??= c[1];
    env.stream = c[2];
    if (c[3] === 'P') env.partial = true;
    cut(s, c[0].length);
    return 'peeled';
  }
  const j = JOURNAL.exec(s.body);
  if (j) {
    kinds.push('journald');
    env.time ??= j[1];
    env.host = j[2];
    env.ident = j[3];
    if (j[4] !== undefined) env.pid = Number(j[4]);
    cut(s, j[0].length);
    return 'peeled';
  }
  const t = TIMESTAMP.exec(s.body);
  if (t) {
    kinds.push('timestamp');
    env.time ??= t[1];
    cut(s, t[0].length);
    return 'peeled';
  }
  return 'none';
}

/** Docker's json-file line `{"log":"…","stream":"stderr","time":"…"}`: the log string is the body. */
function dockerJson(s: Peeling): 'peeled' | 'bad-json' {
  s.kinds.push('docker-json');
  try {
    const j = JSON.parse(s.body) as { log?: unknown; stream?: unknown; time?: unknown };
    if (typeof j.log !== 'string') throw new Error('no log string');
    if (typeof j.stream === 'string') s.env.stream = j.stream;
    if (typeof j.time === 'string') s.env.time = j.time;
    s.body = j.log.replace(/\r?\n$/, '');
    s.column = 0;
  } catch (e) {
    s.env.badJson = (e as Error).message;
    return 'bad-json';
  }
  return 'peeled';
}

/**
 * The shape of a wrapper kpx has no name for, to peel it off the lines that continue an entry (they
 * carry the same wrapper, but no klog header to find it by): digits stand for any digits.
 */
export function prefixShape(prefix: string): RegExp {
  const esc = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\d+/g, '\\d+');
  return new RegExp(`^${esc}`);
}

/** Who wrote the line, as far as its wrapper says: lines of one writer continue each other's records. */
export function writerOf(e: Envelope): string {
  return `${e.ident ?? ''}[${e.pid ?? ''}]${e.pod ?? ''}${e.stream ?? ''}`;
}
