/**
 * Expressions of `nft -j` rules and set elements (libnftables JSON schema, `src/json.c`) → the same
 * expressions, operands and elements as the text listing gives.
 */
import { printable } from '../common/source.js';
import { formatNftTime } from '../common/nft-syntax.js';
import type { SynElement, SynExpr, SynMapRef, SynOperand, SynRelOp, SynValue, SynVerdictName, SynBinaryOp } from '../common/nft-syntax.js';

export type Json = unknown;
export type Obj = Record<string, Json>;
export type Mut<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

export const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const VERDICT_KEYS = new Set(['accept', 'drop', 'continue', 'return', 'jump', 'goto', 'queue']);
const BINOPS = new Set(['&', '|', '^', '<<', '>>']);

/** Scalar or simple expression → printed key part. */
function partText(v: Json): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isObj(v)) {
    if (isObj(v.prefix)) return `${String(v.prefix.addr)}/${String(v.prefix.len)}`;
    if (Array.isArray(v.range)) return `${partText(v.range[0])}-${partText(v.range[1])}`;
    if (Array.isArray(v.concat)) return v.concat.map(partText).join(' . ');
    if (isObj(v.elem)) return partText(v.elem.val);
  }
  return JSON.stringify(v);
}

function keyParts(v: Json): string[] {
  if (isObj(v) && isObj(v.elem)) return keyParts(v.elem.val);
  if (isObj(v) && Array.isArray(v.concat)) return v.concat.map(partText);
  return [partText(v)];
}

function verdictOf(v: Json): SynValue | undefined {
  if (!isObj(v)) return undefined;
  const k = Object.keys(v)[0];
  if (!k || !VERDICT_KEYS.has(k)) return undefined;
  const body = v[k];
  const chain = isObj(body) && typeof body.target === 'string' ? body.target : undefined;
  return chain !== undefined ? { kind: 'verdict', verdict: k as SynVerdictName, chain } : { kind: 'verdict', verdict: k as SynVerdictName };
}

export function element(item: Json, isMap: boolean, line: number, column: number): SynElement {
  const [k, v] = isMap && Array.isArray(item) ? [item[0], item[1]] : [item, undefined];
  const el: Mut<SynElement> = { key: keyParts(k), line, column };
  const meta = isObj(k) && isObj(k.elem) ? k.elem : undefined;
  if (meta) {
    if (typeof meta.comment === 'string') el.comment = meta.comment;
    if (typeof meta.timeout === 'number') el.timeout = formatNftTime(meta.timeout);
    if (typeof meta.expires === 'number') el.expires = formatNftTime(meta.expires);
    if (isObj(meta.counter)) el.counter = { packets: Number(meta.counter.packets), bytes: Number(meta.counter.bytes) };
  }
  if (v !== undefined) el.value = verdictOf(v) ?? { kind: 'data', parts: keyParts(v) };
  return el;
}

function operand(v: Json, line: number, column: number): SynOperand {
  if (typeof v === 'string') {
    if (v.startsWith('@')) return { kind: 'set-ref', name: v.slice(1) };
    return { kind: 'value', text: v };
  }
  if (typeof v === 'number' || typeof v === 'boolean') return { kind: 'value', text: String(v) };
  if (Array.isArray(v)) return { kind: 'list', items: v.map(partText) };
  if (!isObj(v)) return { kind: 'value', text: JSON.stringify(v) };
  const k = Object.keys(v)[0];
  const b = v[k];
  if (k === 'payload' && isObj(b)) {
    if (typeof b.protocol === 'string') return { kind: 'payload', protocol: b.protocol, field: String(b.field) };
    return { kind: 'selector', words: [`@${String(b.base)},${String(b.offset)},${String(b.len)}`] };
  }
  if (k === 'meta' && isObj(b)) return { kind: 'meta', key: String(b.key) };
  if (k === 'ct' && isObj(b)) {
    const key = typeof b.family === 'string' ? `${b.family} ${String(b.key)}` : String(b.key);
    return typeof b.dir === 'string' ? { kind: 'ct', key, dir: b.dir } : { kind: 'ct', key };
  }
  if (k === 'fib' && isObj(b)) return { kind: 'fib', flags: Array.isArray(b.flags) ? b.flags.map(String) : [String(b.flags)], result: String(b.result) };
  if (k === 'numgen' && isObj(b)) return { kind: 'numgen', mode: String(b.mode), mod: Number(b.mod), offset: Number(b.offset ?? 0) };
  if (k === 'concat' && Array.isArray(b)) return { kind: 'concat', parts: b.map((p) => operand(p, line, column)) };
  if (BINOPS.has(k) && Array.isArray(b)) {
    return { kind: 'binop', op: k as SynBinaryOp, left: operand(b[0], line, column), right: operand(b[1], line, column) };
  }
  if (k === 'set') {
    const items = Array.isArray(b) ? b : [b];
    return { kind: 'set', elements: items.map((it) => element(it, Array.isArray(it), line, column)) };
  }
  if (k === 'map' && isObj(b)) return { kind: 'map', key: operand(b.key, line, column), map: mapRef(b.data, line, column) };
  if (k === 'prefix' || k === 'range') return { kind: 'value', text: partText(v) };
  return { kind: 'selector', words: [k, ...(isObj(b) ? Object.values(b).map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))) : [])] };
}

function mapRef(v: Json, line: number, column: number): SynMapRef {
  if (typeof v === 'string' && v.startsWith('@')) return { kind: 'ref', name: v.slice(1) };
  const items = isObj(v) && Array.isArray(v.set) ? v.set : [];
  return { kind: 'inline', elements: items.map((it) => element(it, true, line, column)) };
}

const OPS: Record<string, SynRelOp> = { '==': '==', '!=': '!=', '<': '<', '>': '>', '<=': '<=', '>=': '>=', in: 'implicit' };

export function flagsOf(v: Json): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.map(String);
  return [];
}

function natTarget(b: Obj): { text: string; addr?: string; port?: string } | undefined {
  const addr = b.addr !== undefined ? partText(b.addr) : undefined;
  const port = b.port !== undefined ? partText(b.port) : undefined;
  if (addr === undefined && port === undefined) return undefined;
  const a = addr !== undefined && addr.includes(':') && port !== undefined ? `[${addr}]` : (addr ?? '');
  const text = port !== undefined ? `${a}:${port}` : a;
  const t: { text: string; addr?: string; port?: string } = { text };
  if (addr !== undefined) t.addr = addr;
  if (port !== undefined) t.port = port;
  return t;
}

/** One statement or match of a rule's `expr` array. */
export function expr(e: Json, column: number, line: number): SynExpr {
  if (!isObj(e)) return { kind: 'unsupported', text: JSON.stringify(e), column };
  const k = Object.keys(e)[0];
  const b = e[k];
  const body: Obj = isObj(b) ? b : {};
  const v = verdictOf(e);
  if (v && v.kind === 'verdict') return v.chain !== undefined ? { kind: 'verdict', verdict: v.verdict, chain: v.chain, column } : { kind: 'verdict', verdict: v.verdict, column };
  switch (k) {
    case 'match':
      return { kind: 'match', left: operand(body.left, line, column), op: OPS[String(body.op)] ?? '==', right: operand(body.right, line, column), column };
    case 'vmap':
      return { kind: 'vmap', key: operand(body.key, line, column), map: mapRef(body.data, line, column), column };
    case 'counter':
      if (typeof b === 'string') return { kind: 'counter', name: b, column };
      return body.packets !== undefined ? { kind: 'counter', packets: Number(body.packets), bytes: Number(body.bytes), column } : { kind: 'counter', column };
    case 'mangle':
      return mangleExpr(body, column, line);
    case 'masquerade':
    case 'redirect': {
      const to = natTarget(body);
      return to ? { kind: k, to, flags: flagsOf(body.flags), column } : { kind: k, flags: flagsOf(body.flags), column };
    }
    case 'dnat':
    case 'snat':
      return natExpr(k, body, column, line);
    default:
      return otherExpr(e, k, b, body, column, line);
  }
}

function mangleExpr(body: Obj, column: number, line: number): SynExpr {
  const left = operand(body.key, line, column);
  const value = operand(body.value, line, column);
  if ((left.kind === 'meta' || left.kind === 'ct') && left.key === 'mark') return { kind: 'mark-set', target: left.kind, expr: value, column };
  return { kind: 'assign', left, expr: value, column };
}

function natExpr(k: 'dnat' | 'snat', body: Obj, column: number, line: number): SynExpr {
  const out: Record<string, unknown> = { kind: k, flags: flagsOf(body.flags), column };
  if (typeof body.family === 'string') out.family = body.family;
  if (isObj(body.addr) && isObj(body.addr.map)) {
    out.map = { key: operand(body.addr.map.key, line, column), map: mapRef(body.addr.map.data, line, column) };
  } else {
    const to = natTarget(body);
    if (to) out.to = to;
  }
  return out as SynExpr;
}

/** The statements that only record what they are (reject, set updates, xt, log, limit, the generic ones). */
function otherExpr(e: Obj, k: string, b: Json, body: Obj, column: number, line: number): SynExpr {
  switch (k) {
    case 'reject': {
      const type = typeof body.type === 'string' ? body.type : undefined;
      const ex = typeof body.expr === 'string' ? body.expr : undefined;
      // plain `reject` is listed as icmp(v6)/icmpx port-unreachable in JSON
      if (!type || (ex === 'port-unreachable' && /^icmp/.test(type))) return { kind: 'reject', column };
      return { kind: 'reject', with: ex ? `${type} ${ex}` : type, column };
    }
    case 'set':
      return {
        kind: 'update-set',
        op: (['update', 'add', 'delete'].includes(String(body.op)) ? body.op : 'update') as 'update' | 'add' | 'delete',
        set: String(body.set ?? '').replace(/^@/, ''),
        key: operand(body.elem, line, column),
        column,
      };
    case 'xt':
      return { kind: 'xt', match: body.type === 'match', name: String(body.name), column };
    case 'log':
      return logExpr(body, column);
    case 'limit': {
      const rate = `${String(body.rate)}/${String(body.per)}`;
      const over = body.inv === true;
      const text = `limit rate ${over ? 'over ' : ''}${rate}`;
      return body.burst !== undefined ? { kind: 'limit', rate, over, burst: `${String(body.burst)} ${String(body.burst_unit ?? 'packets')}`, text, column } : { kind: 'limit', rate, over, text, column };
    }
    case 'notrack':
    case 'meter':
    case 'quota':
    case 'dup':
    case 'fwd':
    case 'tproxy':
    case 'synproxy':
    case 'flow':
      return { kind: 'statement', name: k, text: `${k} ${JSON.stringify(b)}`, column };
    default:
      return { kind: 'unsupported', text: printable(JSON.stringify(e), 200), column };
  }
}

function logExpr(body: Obj, column: number): SynExpr {
  const out: Record<string, unknown> = { kind: 'log', text: `log${Object.entries(body).map(([a, x]) => ` ${a} ${JSON.stringify(x)}`).join('')}`, column };
  if (typeof body.prefix === 'string') out.prefix = body.prefix;
  if (typeof body.group === 'number') out.group = body.group;
  if (typeof body.level === 'string') out.level = body.level;
  return out as SynExpr;
}
