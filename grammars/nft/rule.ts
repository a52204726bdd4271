/**
 * The meaning of an nft statement line: atoms (./parser.ts) → expressions and statements
 * (../common/nft-syntax.ts). Recursive descent over the atoms with nft's selector vocabulary (nftables
 * `src/parser_bison.y`, printers in `src/expression.c`, `src/statement.c`). Whatever is not
 * recognised becomes an `unsupported` expression that keeps its text and column.
 */
import { operandText } from '../common/nft-syntax.js';
import type { Atom, GroupAtom, TokenAtom } from './parser.js';
import type {
  SynElement,
  SynExpr,
  SynMapRef,
  SynNatTarget,
  SynOperand,
  SynRelOp,
  SynValue,
  SynVerdictName,
  SynBinaryOp,
} from '../common/nft-syntax.js';
import { appendAll } from '../common/source.js';

export interface RuleProblem {
  readonly severity: 'error' | 'warning' | 'info';
  readonly code: string;
  /** Absolute file line. */
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly expected?: string;
  readonly found?: string;
}

export interface ClassifiedRule {
  readonly exprs: SynExpr[];
  readonly comment?: string;
  readonly handle?: number;
  readonly counter?: { packets: number; bytes: number };
  /** A trailing `# …` that is not `# handle N` (user annotation). */
  readonly annotation?: string;
}

// ---- vocabulary -------------------------------------------------------------------------------

/** Payload protocols: `PROTO FIELD`. */
const PAYLOAD = new Set([
  'ip', 'ip6', 'tcp', 'udp', 'udplite', 'sctp', 'dccp', 'th', 'ether', 'vlan', 'arp', 'icmp', 'icmpv6',
  'igmp', 'ah', 'esp', 'comp', 'ipcomp', 'dst', 'hbh', 'frag', 'mh', 'srh', 'gre', 'geneve', 'vxlan', 'gretap',
]);
/** Meta keys nft prints without `meta` (`src/meta.c` meta_key_is_unqualified + common ones). */
const META_UNQUALIFIED = new Set([
  'mark', 'iif', 'oif', 'iifname', 'oifname', 'iiftype', 'oiftype', 'skuid', 'skgid', 'nftrace', 'rtclassid',
  'ibriport', 'obriport', 'ibrname', 'obrname', 'pkttype', 'cpu', 'iifgroup', 'oifgroup', 'cgroup',
]);
const VERDICTS = new Set(['accept', 'drop', 'continue', 'return']);
const NAT_FLAGS = new Set(['random', 'persistent', 'fully-random', 'netmap', 'prefix']);
/** Words that start a statement; used to end an unsupported run. */
const STMT_START = new Set([
  'accept', 'drop', 'continue', 'return', 'jump', 'goto', 'queue', 'counter', 'reject', 'dnat', 'snat',
  'masquerade', 'redirect', 'notrack', 'log', 'limit', 'xt', 'update', 'meter', 'quota', 'dup', 'fwd',
  'tproxy', 'synproxy', 'comment', 'flow',
]);
/** Statement words that cannot be a match's value (`ct status dnat` shows dnat/snat can). */
const NEVER_VALUE = new Set([
  'accept', 'drop', 'continue', 'return', 'jump', 'goto', 'queue', 'counter', 'reject', 'masquerade', 'log',
  'limit', 'xt', 'update', 'meter', 'quota', 'comment', 'vmap', 'set',
]);
const GENERIC_STATEMENTS = new Set(['notrack', 'meter', 'quota', 'dup', 'fwd', 'tproxy', 'synproxy', 'flow']);
const REL_WORDS: Record<string, SynRelOp> = { eq: '==', ne: '!=', lt: '<', gt: '>', le: '<=', ge: '>=' };
const REL_OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);
const BIN_WORDS: Record<string, SynBinaryOp> = { and: '&', or: '|', xor: '^', lshift: '<<', rshift: '>>' };
const BIN_OPS = new Set(['&', '|', '^', '<<', '>>']);
const SELECTOR_HEADS = new Set(['meta', 'ct', 'fib', 'numgen', 'jhash', 'symhash', 'rt', 'socket', 'osf', 'ipsec', 'exthdr']);
const TCP_OPTION_FIELDS = new Set(['kind', 'length', 'size', 'count', 'left', 'right', 'tsval', 'tsecr', 'value']);

// ---- cursor -----------------------------------------------------------------------------------

/** A position in one rule's atoms (the transaction reader's command lines use it too). */
export class Cursor {
  i = 0;
  constructor(
    readonly atoms: readonly Atom[],
    readonly baseLine: number,
    readonly problems: RuleProblem[],
  ) {}
  get done(): boolean {
    return this.i >= this.atoms.length;
  }
  peek(k = 0): Atom | undefined {
    return this.atoms[this.i + k];
  }
  word(k = 0): string | undefined {
    const a = this.atoms[this.i + k];
    return a && a.t === 'word' ? a.text : undefined;
  }
  isOp(text: string, k = 0): boolean {
    const a = this.atoms[this.i + k];
    return a !== undefined && a.t === 'op' && a.text === text;
  }
  next(): Atom {
    return this.atoms[this.i++];
  }
  lineOf(a: Atom | undefined): number {
    return this.baseLine + (a ? a.line : (this.atoms[this.atoms.length - 1]?.line ?? 0));
  }
  colOf(a: Atom | undefined): number {
    if (a) return a.column;
    const last = this.atoms[this.atoms.length - 1];
    return last ? last.column + atomText(last).length : 1;
  }
  error(at: Atom | undefined, message: string, expected?: string): void {
    this.problems.push({
      severity: 'error',
      code: 'parse/unexpected-token',
      line: this.lineOf(at),
      column: this.colOf(at),
      message,
      expected,
      found: at ? atomText(at) : 'end of line',
    });
  }
}

/** Atom text as printed (strings re-quoted, groups rendered). */
export function atomText(a: Atom): string {
  if (a.t === 'group') return `{ ${a.elements.map((e) => e.map(atomText).join(' ')).join(', ')} }`;
  if (a.t === 'string') return `"${a.text}"`;
  if (a.t === 'bad-string') return `"${a.text}`;
  return a.text;
}

export function atomsText(atoms: readonly Atom[]): string {
  return atoms.map(atomText).join(' ');
}


// ---- selectors and operands -------------------------------------------------------------------

function isPlainWord(a: Atom | undefined): a is TokenAtom {
  return a !== undefined && a.t === 'word';
}

/** A selector (left-hand expression) at the cursor, or undefined (cursor unchanged). */
function parseSelector(c: Cursor, strict: boolean): SynOperand | undefined {
  const w = c.word();
  if (w === undefined) return undefined;
  const w1 = c.word(1);
  if (/^@(ll|nh|th|ih),\d+,\d+$/.test(w)) {
    c.i++;
    return { kind: 'selector', words: [w] };
  }
  if (PAYLOAD.has(w)) {
    if (w1 === undefined || STMT_START.has(w1) || w1 === 'set' || w1 === 'vmap' || w1 === 'map') return undefined;
    if (!strict && (/^[\d@]/.test(w1) || w1.includes(','))) return undefined;
    if (w === 'tcp' && w1 === 'option') {
      const words = ['tcp', 'option'];
      c.i += 2;
      const name = c.word();
      if (name !== undefined) {
        words.push(name);
        c.i++;
        const f = c.word();
        if (f !== undefined && TCP_OPTION_FIELDS.has(f)) {
          words.push(f);
          c.i++;
        }
      }
      return { kind: 'selector', words };
    }
    if ((w === 'ip6' || w === 'ip') && (w1 === 'exthdr' || w1 === 'option')) {
      const words = [w, w1];
      c.i += 2;
      for (let k = 0; k < 2 && c.word() !== undefined && !STMT_START.has(c.word()!); k++) {
        words.push(c.word()!);
        c.i++;
      }
      return { kind: 'selector', words };
    }
    c.i += 2;
    return { kind: 'payload', protocol: w, field: w1 };
  }
  if (w === 'meta') {
    if (w1 === undefined) return undefined;
    c.i += 2;
    return { kind: 'meta', key: w1 };
  }
  if (META_UNQUALIFIED.has(w)) {
    c.i += 1;
    return { kind: 'meta', key: w };
  }
  if (!SELECTOR_HEADS.has(w)) return undefined;
  const start = c.i;
  switch (w) {
    case 'ct': {
      if (w1 === undefined) return undefined;
      if (w1 === 'original' || w1 === 'reply') {
        let key = c.word(2);
        if (key === undefined) return undefined;
        c.i += 3;
        if ((key === 'ip' || key === 'ip6') && c.word() !== undefined) {
          key = `${key} ${c.word()!}`;
          c.i++;
        }
        return { kind: 'ct', key, dir: w1 };
      }
      c.i += 2;
      return { kind: 'ct', key: w1 };
    }
    case 'fib': {
      c.i++;
      const flags: string[] = [];
      while (c.word() !== undefined) {
        flags.push(c.word()!);
        c.i++;
        if (c.isOp('.') && c.word(1) !== undefined) c.i++;
        else break;
      }
      const result = c.word();
      if (flags.length === 0 || result === undefined) {
        c.i = start;
        return undefined;
      }
      c.i++;
      return { kind: 'fib', flags, result };
    }
    case 'numgen': {
      const mode = w1;
      if (mode === undefined || c.word(2) !== 'mod' || c.word(3) === undefined || !/^\d+$/.test(c.word(3)!)) return undefined;
      const mod = Number(c.word(3));
      c.i += 4;
      let offset = 0;
      if (c.word() === 'offset' && /^\d+$/.test(c.word(1) ?? '')) {
        offset = Number(c.word(1));
        c.i += 2;
      }
      return { kind: 'numgen', mode, mod, offset };
    }
    default: {
      // jhash EXPR mod N [seed X] [offset M] | symhash mod N [offset M] | rt [ip|ip6] KEY |
      // socket KEY [level N] | osf [ttl X] name|version | ipsec in|out [spnum N] KEY | exthdr NAME FIELD
      const words: string[] = [w];
      c.i++;
      if (w === 'jhash' || w === 'symhash') {
        while (!c.done && c.word() !== 'mod') words.push(atomText(c.next()));
        for (const kw of ['mod', 'seed', 'offset']) {
          if (c.word() === kw && c.word(1) !== undefined) {
            words.push(kw, c.word(1)!);
            c.i += 2;
          }
        }
        return { kind: 'selector', words };
      }
      const take = (n: number) => {
        for (let k = 0; k < n && c.word() !== undefined; k++) {
          words.push(c.word()!);
          c.i++;
        }
      };
      if (w === 'rt') take(c.word() === 'ip' || c.word() === 'ip6' ? 2 : 1);
      else if (w === 'socket') {
        take(1);
        if (c.word() === 'level') take(2);
      } else if (w === 'osf') {
        if (c.word() === 'ttl') take(2);
        take(1);
      } else if (w === 'ipsec') {
        take(1);
        if (c.word() === 'spnum') take(2);
        take(1);
      } else take(2);
      return words.length > 1 ? { kind: 'selector', words } : (c.i = start, undefined);
    }
  }
}

/** One value atom: word (set-ref `@x`, comma list), string, or `{ … }` anonymous set. */
function parseValueAtom(c: Cursor): SynOperand | undefined {
  const a = c.peek();
  if (!a) return undefined;
  if (a.t === 'word') {
    c.i++;
    if (a.text.startsWith('@') && a.text.length > 1) return { kind: 'set-ref', name: a.text.slice(1) };
    if (a.text.includes(',')) return { kind: 'list', items: a.text.split(',') };
    return { kind: 'value', text: a.text };
  }
  if (a.t === 'string' || a.t === 'bad-string') {
    c.i++;
    if (a.t === 'bad-string') c.error(a, 'unterminated string', '"');
    return { kind: 'value', text: a.text, quoted: true };
  }
  if (a.t === 'group') {
    c.i++;
    return { kind: 'set', elements: parseGroupElements(a, c.baseLine, c.problems) };
  }
  return undefined;
}

type Mode = 'lhs' | 'value' | 'rhs';

function parsePrimary(c: Cursor, mode: Mode): SynOperand | undefined {
  if (mode === 'lhs') return parseSelector(c, true);
  if (mode === 'value') {
    const s = parseSelector(c, false);
    if (s) return s;
  }
  return parseValueAtom(c);
}

/** primary (binop primary)* ('.' …)* ('map' MAPREF)? */
function parseOperand(c: Cursor, mode: Mode): SynOperand | undefined {
  const parseTerm = (m: Mode): SynOperand | undefined => {
    let left = parsePrimary(c, m);
    if (!left) return undefined;
    for (;;) {
      const a = c.peek();
      let op: SynBinaryOp | undefined;
      if (a && a.t === 'op' && BIN_OPS.has(a.text)) op = a.text as SynBinaryOp;
      else if (a && a.t === 'word' && BIN_WORDS[a.text] && mode !== 'rhs') op = BIN_WORDS[a.text];
      if (!op) break;
      const save = c.i;
      c.i++;
      const right = parsePrimary(c, 'value');
      if (!right) {
        c.i = save;
        break;
      }
      left = { kind: 'binop', op, left, right };
    }
    if (mode === 'rhs' && c.isOp('/')) {
      // `tcp flags syn / syn,rst`: value under mask, kept as printed
      const save = c.i;
      c.i++;
      const mask = parseValueAtom(c);
      if (mask) left = { kind: 'value', text: `${operandText(left)} / ${operandText(mask)}` };
      else c.i = save;
    }
    return left;
  };
  const first = parseTerm(mode);
  if (!first) return undefined;
  let result: SynOperand = first;
  if (c.isOp('.')) {
    const parts: SynOperand[] = [first];
    while (c.isOp('.')) {
      const save = c.i;
      c.i++;
      const p = parseTerm(mode === 'lhs' ? 'lhs' : mode);
      if (!p) {
        c.i = save;
        break;
      }
      parts.push(p);
    }
    if (parts.length > 1) result = { kind: 'concat', parts };
  }
  if (mode !== 'rhs' && c.word() === 'map') {
    const at = c.peek(1);
    c.i++;
    const map = parseMapRef(c);
    if (!map) c.error(at, 'expected @map or { … } after map', '@name or {');
    else result = { kind: 'map', key: result, map };
  }
  return result;
}

function parseMapRef(c: Cursor): SynMapRef | undefined {
  const a = c.peek();
  if (a && a.t === 'word' && a.text.startsWith('@')) {
    c.i++;
    return { kind: 'ref', name: a.text.slice(1) };
  }
  if (a && a.t === 'group') {
    c.i++;
    return { kind: 'inline', elements: parseGroupElements(a, c.baseLine, c.problems) };
  }
  return undefined;
}

// ---- elements ---------------------------------------------------------------------------------

export function parseGroupElements(g: GroupAtom, baseLine: number, problems: RuleProblem[]): SynElement[] {
  if (g.unclosed) {
    problems.push({
      severity: 'error',
      code: 'parse/unclosed-brace',
      line: baseLine + g.line,
      column: g.column,
      message: '`{` is never closed',
      expected: '}',
      found: 'end of input',
    });
  }
  // after an unclosed `{` the last element swallows the rest of the line: one error is enough
  const sink: RuleProblem[] = g.unclosed ? [] : problems;
  return g.elements.map((atoms) => parseElement(atoms, baseLine, sink));
}

function parseVerdictValue(c: Cursor): SynValue | undefined {
  const w = c.word();
  if (w === undefined) return undefined;
  if (VERDICTS.has(w) || w === 'queue') {
    c.i++;
    return { kind: 'verdict', verdict: w as SynVerdictName };
  }
  if (w === 'jump' || w === 'goto') {
    const t = c.peek(1);
    if (t && (t.t === 'word' || t.t === 'string')) {
      c.i += 2;
      return { kind: 'verdict', verdict: w, chain: t.text };
    }
  }
  return undefined;
}

/** KEY ('.' KEY)* [comment S | timeout T | expires T | counter packets N bytes M]* [':' VALUE] */
export function parseElement(atoms: readonly Atom[], baseLine: number, problems: RuleProblem[]): SynElement {
  const c = new Cursor(atoms, baseLine, problems);
  const first = atoms[0];
  const key: string[] = [];
  const keyPart = (): boolean => {
    const a = c.peek();
    if (!a || a.t === 'op' || a.t === 'handle' || a.t === 'comment') return false;
    if (a.t === 'word' && ['comment', 'timeout', 'expires', 'counter'].includes(a.text) && key.length > 0) return false;
    c.i++;
    key.push(a.t === 'group' ? atomText(a) : a.text);
    return true;
  };
  if (keyPart()) {
    while (c.isOp('.')) {
      c.i++;
      if (!keyPart()) {
        c.error(c.peek(), 'expected a key part after `.`', 'value');
        break;
      }
    }
  }
  let comment: string | undefined;
  let timeout: string | undefined;
  let expires: string | undefined;
  let counter: { packets: number; bytes: number } | undefined;
  for (;;) {
    const w = c.word();
    const a1 = c.peek(1);
    if (w === 'comment' && a1 && (a1.t === 'string' || a1.t === 'word')) {
      comment = a1.text;
      c.i += 2;
    } else if (w === 'timeout' && isPlainWord(a1)) {
      timeout = a1.text;
      c.i += 2;
    } else if (w === 'expires' && isPlainWord(a1)) {
      expires = a1.text;
      c.i += 2;
    } else if (w === 'counter' && c.word(1) === 'packets' && c.word(3) === 'bytes') {
      counter = { packets: Number(c.word(2)), bytes: Number(c.word(4)) };
      c.i += 5;
    } else break;
  }
  let value: SynValue | undefined;
  if (c.isOp(':')) {
    const colon = c.next();
    value = parseVerdictValue(c);
    if (!value) {
      const parts: string[] = [];
      const part = (): boolean => {
        const a = c.peek();
        if (!a || a.t === 'op' || a.t === 'handle' || a.t === 'comment') return false;
        c.i++;
        parts.push(a.t === 'group' ? atomText(a) : a.text);
        return true;
      };
      if (part()) while (c.isOp('.') && (c.i++, part()));
      if (parts.length) value = { kind: 'data', parts };
      else c.error(c.peek() ?? undefined, 'expected a value after `:`', 'verdict or value');
      void colon;
    }
  }
  if (!c.done) {
    const rest = atoms.slice(c.i);
    c.error(rest[0], `unexpected ${JSON.stringify(atomsText(rest))} in set element`, ', or }');
  }
  if (key.length === 0 && first) c.error(first, 'empty set element', 'value');
  const el: { -readonly [K in keyof SynElement]: SynElement[K] } = {
    // exact-size copies: arrays grown by push keep room for seventeen items, and the model keeps them
    key: key.slice(),
    line: baseLine + (first?.line ?? 0),
    column: first?.column ?? 1,
  };
  if (value) el.value = value;
  if (comment !== undefined) el.comment = comment;
  if (expires !== undefined) el.expires = expires;
  if (timeout !== undefined) el.timeout = timeout;
  if (counter) el.counter = counter;
  return el;
}

// ---- statements -------------------------------------------------------------------------------

function splitHostPort(text: string): SynNatTarget {
  let m = /^\[([^\]]+)\](?::(.+))?$/.exec(text);
  if (m) return m[2] !== undefined ? { text, addr: m[1], port: m[2] } : { text, addr: m[1] };
  if (text.startsWith(':')) return { text, port: text.slice(1) };
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    m = /^(.*):(.*)$/.exec(text)!;
    return { text, addr: m[1], port: m[2] };
  }
  return { text, addr: text };
}

function takeFlags(c: Cursor, flags: string[]): void {
  while (c.word() !== undefined && c.word()!.split(',').every((f) => NAT_FLAGS.has(f))) {
    appendAll(flags, c.word()!.split(','));
    c.i++;
  }
}

function parseNat(c: Cursor, kind: 'dnat' | 'snat', column: number): SynExpr {
  c.i++;
  let family: string | undefined;
  if ((c.word() === 'ip' || c.word() === 'ip6') && ['to', 'addr', 'prefix', 'interval'].includes(c.word(1) ?? '')) {
    family = c.word();
    c.i++;
  }
  // `dnat ip addr . port to …`, `snat ip prefix to …`, `dnat interval to …` (type flags)
  while (['addr', 'port', 'prefix', 'interval'].includes(c.word() ?? '') || (c.isOp('.') && c.word(1) === 'port')) c.i++;
  const flags: string[] = [];
  let to: SynNatTarget | undefined;
  let map: { key: SynOperand; map: SynMapRef } | undefined;
  if (c.word() === 'to') c.i++;
  const a = c.peek();
  const save = c.i;
  const sel = a && a.t === 'word' ? parseSelector(c, false) : undefined;
  if (sel) {
    c.i = save;
    const op = parseOperand(c, 'value');
    if (op && op.kind === 'map') map = { key: op.key, map: op.map };
    else if (op) to = { text: operandText(op) };
  } else if (a && a.t === 'word' && !NAT_FLAGS.has(a.text.split(',')[0])) {
    c.i++;
    to = splitHostPort(a.text);
  }
  if (!to && !map) c.error(c.peek(), `expected an address after ${kind} to`, 'address[:port]');
  takeFlags(c, flags);
  const e: { -readonly [K in string]: unknown } = { kind, flags, column };
  if (family) e.family = family;
  if (to) e.to = to;
  if (map) e.map = map;
  return e as SynExpr;
}

/** Consume atoms up to the next statement keyword; returns their text. */
function takeUntilStatement(c: Cursor): string {
  const from = c.i;
  while (!c.done) {
    const w = c.word();
    if (w !== undefined && STMT_START.has(w)) break;
    if (c.peek()!.t === 'handle' || c.peek()!.t === 'comment') break;
    c.i++;
  }
  return atomsText(c.atoms.slice(from, c.i));
}

function parseStatement(c: Cursor): SynExpr | undefined {
  const a = c.peek()!;
  const column = a.column;
  const w = a.t === 'word' ? a.text : undefined;
  if (w !== undefined) {
    if (VERDICTS.has(w)) {
      c.i++;
      return { kind: 'verdict', verdict: w as SynVerdictName, column };
    }
    if (w === 'jump' || w === 'goto') {
      const t = c.peek(1);
      if (t && (t.t === 'word' || t.t === 'string')) {
        c.i += 2;
        return { kind: 'verdict', verdict: w, chain: t.text, column };
      }
      c.i++;
      c.error(t, `expected a chain name after ${w}`, 'chain name');
      return { kind: 'unsupported', text: w, column };
    }
    if (w === 'queue') {
      c.i++;
      const from = c.i;
      while (c.word() !== undefined && (['num', 'flags', 'bypass', 'fanout', 'to'].includes(c.word()!) || /^[\d,-]+$/.test(c.word()!) || c.word()!.split(',').every((x) => ['bypass', 'fanout'].includes(x)))) c.i++;
      const text = atomsText(c.atoms.slice(from - 1, c.i));
      return { kind: 'verdict', verdict: 'queue', text, column };
    }
    if (w === 'counter') {
      c.i++;
      if (c.word() === 'packets' && c.word(2) === 'bytes' && /^\d+$/.test(c.word(1) ?? '') && /^\d+$/.test(c.word(3) ?? '')) {
        const e = { kind: 'counter' as const, packets: Number(c.word(1)), bytes: Number(c.word(3)), column };
        c.i += 4;
        return e;
      }
      if (c.word() === 'name' && c.peek(1) && (c.peek(1)!.t === 'word' || c.peek(1)!.t === 'string')) {
        const name = (c.peek(1) as TokenAtom).text;
        c.i += 2;
        return { kind: 'counter', name, column };
      }
      return { kind: 'counter', column };
    }
    if (w === 'reject') {
      c.i++;
      if (c.word() !== 'with') return { kind: 'reject', column };
      c.i++;
      const words: string[] = [];
      const w1 = c.word();
      if (w1 !== undefined) {
        words.push(w1);
        c.i++;
        if (w1 === 'icmp' || w1 === 'icmpv6' || w1 === 'icmpx' || w1 === 'tcp') {
          if (c.word() === 'type' || c.word() === 'code') {
            words.push(c.word()!);
            c.i++;
          }
          if (c.word() !== undefined && !STMT_START.has(c.word()!)) {
            words.push(c.word()!);
            c.i++;
          }
        }
      } else c.error(c.peek(), 'expected a reject type after with', 'icmp/tcp reset');
      return { kind: 'reject', with: words.join(' '), column };
    }
    if (w === 'dnat' || w === 'snat') return parseNat(c, w, column);
    if (w === 'masquerade' || w === 'redirect') {
      c.i++;
      const flags: string[] = [];
      let to: SynNatTarget | undefined;
      takeFlags(c, flags);
      if (c.word() === 'to' && c.word(1) !== undefined) {
        to = splitHostPort(c.word(1)!);
        c.i += 2;
      }
      takeFlags(c, flags);
      return to ? { kind: w, to, flags, column } : { kind: w, flags, column };
    }
    if (w === 'log') {
      c.i++;
      const from = c.i;
      let prefix: string | undefined;
      let group: number | undefined;
      let level: string | undefined;
      for (;;) {
        const k = c.word();
        const v = c.peek(1);
        if (!k || !v || !['prefix', 'level', 'group', 'snaplen', 'queue-threshold', 'flags'].includes(k) || (v.t !== 'word' && v.t !== 'string')) break;
        if (k === 'prefix') prefix = v.text;
        if (k === 'group') group = Number(v.text);
        if (k === 'level') level = v.text;
        c.i += 2;
      }
      const e: { -readonly [K in string]: unknown } = { kind: 'log', text: atomsText(c.atoms.slice(from - 1, c.i)), column };
      if (prefix !== undefined) e.prefix = prefix;
      if (group !== undefined) e.group = group;
      if (level !== undefined) e.level = level;
      return e as SynExpr;
    }
    if (w === 'limit') {
      c.i++;
      const from = c.i;
      let over = false;
      let rate = '';
      let burst: string | undefined;
      if (c.word() === 'rate') {
        c.i++;
        if (c.word() === 'over') {
          over = true;
          c.i++;
        }
        if (c.word() !== undefined) {
          rate = c.word()!;
          c.i++;
          if (!rate.includes('/') && c.word()?.includes('/')) {
            rate += ` ${c.word()!}`;
            c.i++;
          }
        }
        if (c.word() === 'burst' && c.word(1) !== undefined) {
          burst = c.word(1)!;
          c.i += 2;
          if (['packets', 'bytes', 'kbytes', 'mbytes'].includes(c.word() ?? '')) {
            burst += ` ${c.word()!}`;
            c.i++;
          }
        }
      } else c.error(c.peek(), 'expected rate after limit', 'rate');
      const text = atomsText(c.atoms.slice(from - 1, c.i));
      return burst !== undefined ? { kind: 'limit', rate, over, burst, text, column } : { kind: 'limit', rate, over, text, column };
    }
    if (w === 'xt' && (c.word(1) === 'match' || c.word(1) === 'target')) {
      const isMatch = c.word(1) === 'match';
      const n = c.peek(2);
      const name = n && (n.t === 'word' || n.t === 'string') ? n.text : '';
      c.i += name ? 3 : 2;
      if (!name) c.error(c.peek(), 'expected an extension name', 'name');
      return { kind: 'xt', match: isMatch, name, column };
    }
    if ((w === 'update' || w === 'add' || w === 'delete') && c.word(1)?.startsWith('@')) {
      const set = c.word(1)!.slice(1);
      const g = c.peek(2);
      c.i += 2;
      if (!g || g.t !== 'group') {
        c.error(g, `expected { key } after ${w} @${set}`, '{');
        return { kind: 'unsupported', text: `${w} @${set}`, column };
      }
      c.i++;
      const inner = new Cursor(g.elements[0] ?? [], c.baseLine, c.problems);
      const key = parseOperand(inner, 'value') ?? { kind: 'value', text: '' };
      let timeout: string | undefined;
      while (!inner.done) {
        if (inner.word() === 'timeout' && inner.word(1) !== undefined) {
          timeout = inner.word(1);
          inner.i += 2;
        }
        else inner.i++;
      }
      return timeout !== undefined ? { kind: 'update-set', op: w, set, key, timeout, column } : { kind: 'update-set', op: w, set, key, column };
    }
    if (GENERIC_STATEMENTS.has(w)) {
      c.i++;
      const rest = takeUntilStatement(c);
      return { kind: 'statement', name: w, text: rest ? `${w} ${rest}` : w, column };
    }
  }
  // expression statement: SELECTOR … (set EXPR | vmap MAPREF | [relop] RHS)
  const start = c.i;
  const lhs = parseOperand(c, 'lhs');
  if (!lhs) {
    if (a.t === 'op' || a.t === 'bad-string') c.error(a, `unexpected ${JSON.stringify(atomText(a))}`, 'expression or statement');
    c.i = start + 1;
    const text = atomsText(c.atoms.slice(start, c.i));
    const more = takeUntilStatement(c);
    return { kind: 'unsupported', text: more ? `${text} ${more}` : text, column };
  }
  const nw = c.word();
  if (nw === 'set') {
    const at = c.peek(1);
    c.i++;
    const expr = parseOperand(c, 'value');
    if (!expr) {
      c.error(at, `expected a value after ${operandText(lhs)} set`, 'expression');
      return { kind: 'unsupported', text: `${operandText(lhs)} set`, column };
    }
    if ((lhs.kind === 'meta' || lhs.kind === 'ct') && lhs.key === 'mark' && !(lhs.kind === 'ct' && lhs.dir)) {
      return { kind: 'mark-set', target: lhs.kind, expr, column };
    }
    return { kind: 'assign', left: lhs, expr, column };
  }
  if (nw === 'vmap') {
    const at = c.peek(1);
    c.i++;
    const map = parseMapRef(c);
    if (!map) {
      c.error(at, 'expected @map or { … } after vmap', '@name or {');
      return { kind: 'unsupported', text: `${operandText(lhs)} vmap`, column };
    }
    return { kind: 'vmap', key: lhs, map, column };
  }
  let op: SynRelOp = 'implicit';
  const o = c.peek();
  if (o && o.t === 'op' && REL_OPS.has(o.text)) {
    op = o.text as SynRelOp;
    c.i++;
  } else if (o && o.t === 'word' && REL_WORDS[o.text] && c.peek(1)) {
    op = REL_WORDS[o.text];
    c.i++;
  }
  const rhsAt = c.peek();
  const rhsOk = rhsAt !== undefined && rhsAt.t !== 'handle' && rhsAt.t !== 'comment' && !(rhsAt.t === 'word' && NEVER_VALUE.has(rhsAt.text));
  const right = rhsOk ? parseOperand(c, 'rhs') : undefined;
  if (!right) {
    c.error(rhsAt, `expected a value after ${operandText(lhs)}${op === 'implicit' ? '' : ` ${op}`}`, 'value');
    if (rhsAt && rhsAt.t !== 'handle' && rhsAt.t !== 'comment') c.i++;
    return { kind: 'unsupported', text: atomsText(c.atoms.slice(start, c.i)), column };
  }
  return { kind: 'match', left: lhs, op, right, column };
}

/** Classify a rule line's atoms. `baseLine` is the file line of the logical line's first line. */
export function classifyRule(atoms: readonly Atom[], baseLine: number, problems: RuleProblem[]): ClassifiedRule {
  let end = atoms.length;
  let handle: number | undefined;
  let annotation: string | undefined;
  // trailing `# handle N` and/or `# annotation`
  while (end > 0) {
    const last = atoms[end - 1];
    if (last.t === 'handle') handle = Number(last.text);
    else if (last.t === 'comment') annotation = last.text;
    else break;
    end--;
  }
  const c = new Cursor(atoms.slice(0, end), baseLine, problems);
  const exprs: SynExpr[] = [];
  let comment: string | undefined;
  let counter: { packets: number; bytes: number } | undefined;
  while (!c.done) {
    const a = c.peek()!;
    if (a.t === 'word' && a.text === 'comment' && c.peek(1) && (c.peek(1)!.t === 'string' || c.peek(1)!.t === 'bad-string')) {
      const s = c.peek(1) as TokenAtom;
      if (s.t === 'bad-string') c.error(s, 'unterminated string', '"');
      comment = s.text;
      c.i += 2;
      continue;
    }
    if (a.t === 'handle' || a.t === 'comment') {
      c.i++;
      continue;
    }
    const before = c.i;
    const e = parseStatement(c);
    if (c.i === before) c.i++; // never loop forever
    if (!e) continue;
    if (e.kind === 'counter' && e.packets !== undefined && e.bytes !== undefined) counter = { packets: e.packets, bytes: e.bytes };
    if (e.kind === 'unsupported') {
      problems.push({
        severity: 'info',
        code: 'nft/unsupported-expression',
        line: c.lineOf(a),
        column: e.column,
        message: `kept as unsupported: ${e.text}`,
        found: e.text,
      });
    }
    exprs.push(e);
  }
  const out: { -readonly [K in keyof ClassifiedRule]: ClassifiedRule[K] } = { exprs: exprs.slice() };
  if (comment !== undefined) out.comment = comment;
  if (handle !== undefined) out.handle = handle;
  if (counter) out.counter = counter;
  if (annotation !== undefined) out.annotation = annotation;
  return out;
}

/** Parse a value/type run like `ipv4_addr . inet_proto . inet_service` into parts. */
export function dotParts(atoms: readonly Atom[]): string[] {
  const parts: string[] = [];
  let cur: string[] = [];
  for (const a of atoms) {
    if (a.t === 'op' && a.text === '.') {
      parts.push(cur.join(' '));
      cur = [];
    } else cur.push(atomText(a));
  }
  if (cur.length) parts.push(cur.join(' '));
  return parts;
}
