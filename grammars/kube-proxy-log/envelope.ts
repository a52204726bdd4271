/**
 * The wrappers a kube-proxy log line arrives in, peeled off one by one: a terminal UI's box
 * border (`│ … │`), a docker json-file record (`{"log":"…","stream":"stderr","time":"…"}`),
 * `kubectl logs --prefix` (`[pod/NAME/CONTAINER] `), the CRI log-file prefix
 * (`2024-03-12T14:02:11.118202345Z stderr F `), `kubectl logs --timestamps` (an RFC 3339 time
 * and a space) and journald's short formats (`Mar 02 09:15:44 node-3 kube-proxy[2211]: `,
 * `-o short-iso`). They stack (`--prefix --timestamps`, a journald paste inside a TUI frame),
 * so unwrapping repeats until no wrapper matches. Regular line shapes: no Chevrotain needed.
 */

export type EnvelopeKind = 'frame' | 'docker-json' | 'kubectl-prefix' | 'cri' | 'timestamp' | 'journald';

export interface Envelope {
  /** The wrappers found, outermost first. */
  readonly kinds: readonly EnvelopeKind[];
  /** Wall-clock time the wrapper gives (journald's is without a year). */
  readonly time?: string;
  readonly host?: string;
  readonly pid?: number;
  readonly pod?: string;
  readonly stream?: string;
  /** The JSON record could not be read: the line is kept as it was. */
  readonly badJson?: string;
}

export interface Unwrapped {
  readonly body: string;
  /** 1-based column of `body` in the file's line (0 when the body was decoded from JSON). */
  readonly column: number;
  readonly envelope: Envelope;
}

const FRAME = /^(\s*[│┃║]\s?)(.*?)\s*[│┃║]?\s*$/;
const PREFIX = /^\[pod\/([^/\]\s]+)\/([^\]\s]+)\] ?/;
const RFC3339 = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)`;
const CRI = new RegExp(String.raw`^(${RFC3339}) (stdout|stderr) ([FP]) ?`);
const TIMESTAMP = new RegExp(String.raw`^(${RFC3339}) `);
const JOURNAL = /^([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d{4}|Z)?) (\S+) ([\w.@/-]+)\[(\d+)\]: ?/;

export function unwrap(line: string): Unwrapped {
  const kinds: EnvelopeKind[] = [];
  let body = line;
  let column = 1;
  const env: { time?: string; host?: string; pid?: number; pod?: string; stream?: string; badJson?: string } = {};
  for (let round = 0; round < 6; round++) {
    const f = /^\s*[│┃║]/.test(body) ? FRAME.exec(body) : null;
    if (f) {
      kinds.push('frame');
      column += f[1].length;
      body = f[2];
      continue;
    }
    if (/^\s*\{"log":/.test(body)) {
      kinds.push('docker-json');
      try {
        const j = JSON.parse(body) as { log?: unknown; stream?: unknown; time?: unknown };
        if (typeof j.log !== 'string') throw new Error('no log string');
        if (typeof j.stream === 'string') env.stream = j.stream;
        if (typeof j.time === 'string') env.time = j.time;
        body = j.log.replace(/\r?\n$/, '');
        column = 0;
      } catch (e) {
        env.badJson = (e as Error).message;
        return { body, column, envelope: { kinds, ...env } };
      }
      continue;
    }
    const p = PREFIX.exec(body);
    if (p) {
      kinds.push('kubectl-prefix');
      env.pod = p[1];
      body = body.slice(p[0].length);
      if (column) column += p[0].length;
      continue;
    }
    const c = CRI.exec(body);
    if (c) {
      kinds.push('cri');
      env.time ??= c[1];
      env.stream = c[2];
      body = body.slice(c[0].length);
      if (column) column += c[0].length;
      continue;
    }
    const j = JOURNAL.exec(body);
    if (j) {
      kinds.push('journald');
      env.time ??= j[1];
      env.host = j[2];
      env.pid = Number(j[4]);
      body = body.slice(j[0].length);
      if (column) column += j[0].length;
      continue;
    }
    const t = TIMESTAMP.exec(body);
    if (t) {
      kinds.push('timestamp');
      env.time ??= t[1];
      body = body.slice(t[0].length);
      if (column) column += t[0].length;
      continue;
    }
    break;
  }
  return { body, column, envelope: { kinds, ...env } };
}
