/**
 * `nft -j list ruleset` (libnftables JSON schema, `src/json.c`) → the same syntax document as the
 * text listing. Positions: the line/column where each top-level object of the `nftables` array
 * starts (nft prints everything on one line, so usually line 1 with distinct columns).
 */
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { formatNftTime } from '../common/nft-syntax.js';
import type {
  SynChain,
  SynDocument,
  SynElement,
  SynExpr,
  SynMapRef,
  SynOperand,
  SynRelOp,
  SynRule,
  SynSet,
  SynTable,
  SynUnsupported,
  SynValue,
  SynVerdictName,
  SynBinaryOp,
} from '../common/nft-syntax.js';

type Json = unknown;
type Obj = Record<string, Json>;
type Mut<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Offsets where each element of the top-level `nftables` array starts. */
function elementOffsets(text: string): number[] {
  const out: number[] = [];
  let depth = 0;
  let inStr = false;
  let arrayDepth = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inStr) {
      if (ch === '\\') i++;
      else if (ch === '"') inStr = false;
      continue;
    }
    if (ch === '"') inStr = true;
    else if (ch === '{' || ch === '[') {
      if (depth === arrayDepth + 1 && arrayDepth >= 0 && ch === '{') out.push(i);
      if (ch === '[' && depth === 1 && arrayDepth < 0) arrayDepth = depth;
      depth++;
    } else if (ch === '}' || ch === ']') depth--;
  }
  return out;
}

function lineCol(text: string, offset: number, starts: number[]): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo] + 1 };
}


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

function element(item: Json, isMap: boolean, line: number, column: number): SynElement {
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

function flagsOf(v: Json): string[] {
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

function expr(e: Json, column: number, line: number): SynExpr {
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
    case 'mangle': {
      const left = operand(body.key, line, column);
      const value = operand(body.value, line, column);
      if ((left.kind === 'meta' || left.kind === 'ct') && left.key === 'mark') return { kind: 'mark-set', target: left.kind, expr: value, column };
      return { kind: 'assign', left, expr: value, column };
    }
    case 'masquerade':
    case 'redirect': {
      const to = natTarget(body);
      return to ? { kind: k, to, flags: flagsOf(body.flags), column } : { kind: k, flags: flagsOf(body.flags), column };
    }
    case 'dnat':
    case 'snat': {
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
    case 'log': {
      const out: Record<string, unknown> = { kind: 'log', text: `log${Object.entries(body).map(([a, x]) => ` ${a} ${JSON.stringify(x)}`).join('')}`, column };
      if (typeof body.prefix === 'string') out.prefix = body.prefix;
      if (typeof body.group === 'number') out.group = body.group;
      if (typeof body.level === 'string') out.level = body.level;
      return out as SynExpr;
    }
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

export function parseNftJsonSyntax(text: string, file: string): { doc: SynDocument; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const unsupported: SynUnsupported[] = [];
  const tables: (Mut<SynTable> & { chains: Mut<SynChain>[]; sets: Mut<SynSet>[] })[] = [];
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let json: Json;
  try {
    json = JSON.parse(body);
  } catch (e) {
    const m = /position (\d+)/.exec(String(e));
    const starts = lineStarts(body);
    const at = m ? lineCol(body, Number(m[1]), starts) : { line: 1, column: 1 };
    diagnostics.push(diagnostic('error', 'parse/bad-json', `not valid JSON: ${printable((e as Error).message)}`, file, at.line, at.column));
    return { doc: { tables: [], unsupported, iptablesNftWarnings: [] }, diagnostics };
  }
  const list = isObj(json) && Array.isArray(json.nftables) ? json.nftables : undefined;
  if (!list) {
    diagnostics.push(diagnostic('error', 'parse/bad-json', 'expected {"nftables": [ … ]}', file, 1, 1, { expected: 'nftables array' }));
    return { doc: { tables: [], unsupported, iptablesNftWarnings: [] }, diagnostics };
  }
  const starts = lineStarts(body);
  const offsets = elementOffsets(body);
  const findTable = (family: string, name: string, line: number) => {
    let t = tables.find((x) => x.family === family && x.name === name);
    if (!t) {
      t = { family, name, implicit: false, flags: [], chains: [], sets: [], line, endLine: line };
      tables.push(t);
    }
    return t;
  };
  const chainsByKey = new Map<string, Mut<SynChain> & { rules: SynRule[] }>();
  let nftVersion: { version: string; line: number } | undefined;
  list.forEach((item, idx) => {
    const pos = offsets[idx] !== undefined ? lineCol(body, offsets[idx], starts) : { line: 1, column: 1 };
    const { line, column } = pos;
    if (!isObj(item)) return;
    const kind = Object.keys(item)[0];
    const o = item[kind];
    if (!isObj(o)) return;
    const family = String(o.family ?? '');
    const tname = String(kind === 'table' ? o.name : o.table);
    switch (kind) {
      case 'metainfo':
        if (typeof o.version === 'string') nftVersion = { version: o.version, line };
        return;
      case 'table': {
        const t = findTable(family, tname, line);
        if (typeof o.comment === 'string') t.comment = o.comment;
        t.flags.push(...flagsOf(o.flags));
        if (typeof o.handle === 'number') t.handle = o.handle;
        t.line = line;
        t.endLine = line;
        return;
      }
      case 'chain': {
        const t = findTable(family, tname, line);
        const c: Mut<SynChain> & { rules: SynRule[] } = { name: String(o.name), rules: [], line };
        if (typeof o.type === 'string') c.type = o.type;
        if (typeof o.hook === 'string') c.hook = o.hook;
        if (typeof o.dev === 'string') c.device = o.dev;
        else if (Array.isArray(o.dev)) c.device = o.dev.join(',');
        if (o.prio !== undefined) {
          c.priorityText = String(o.prio);
          c.priorityBase = String(o.prio);
          c.priorityOffset = 0;
        }
        if (typeof o.policy === 'string') c.policy = o.policy;
        if (typeof o.comment === 'string') c.comment = o.comment;
        if (typeof o.handle === 'number') c.handle = o.handle;
        t.chains.push(c);
        chainsByKey.set(`${family}\u0000${tname}\u0000${c.name}`, c);
        t.endLine = Math.max(t.endLine, line);
        return;
      }
      case 'set':
      case 'map': {
        const t = findTable(family, tname, line);
        const s: Mut<SynSet> = { name: String(o.name), kind, keyType: flagsOf(o.type), flags: flagsOf(o.flags), elements: [], line };
        if (isObj(o.type) || (Array.isArray(o.type) && o.type.some(isObj))) s.keyType = [JSON.stringify(o.type)];
        if (kind === 'map' && o.map !== undefined) s.valueType = Array.isArray(o.map) ? o.map.join(' . ') : String(o.map);
        if (typeof o.timeout === 'number') s.timeout = formatNftTime(o.timeout);
        if (typeof o['gc-interval'] === 'number') s.gcInterval = formatNftTime(o['gc-interval'] as number);
        if (typeof o.size === 'number') s.size = o.size;
        if (typeof o.policy === 'string') s.policy = o.policy;
        if (typeof o.comment === 'string') s.comment = o.comment;
        if (typeof o.handle === 'number') s.handle = o.handle;
        if (o.stmt !== undefined || o.counter !== undefined) s.counter = true;
        if (Array.isArray(o.elem)) s.elements = o.elem.map((it) => element(it, kind === 'map', line, column));
        t.sets.push(s);
        t.endLine = Math.max(t.endLine, line);
        return;
      }
      case 'rule': {
        const c = chainsByKey.get(`${family}\u0000${tname}\u0000${String(o.chain)}`);
        const exprs = Array.isArray(o.expr) ? o.expr.map((e) => expr(e, column, line)) : [];
        const rule: Mut<SynRule> = { exprs, raw: printable(JSON.stringify(o), 400), line, column };
        if (typeof o.comment === 'string') rule.comment = o.comment;
        if (typeof o.handle === 'number') rule.handle = o.handle;
        const counter = exprs.find((e) => e.kind === 'counter' && e.packets !== undefined);
        if (counter && counter.kind === 'counter' && counter.packets !== undefined && counter.bytes !== undefined) rule.counter = { packets: counter.packets, bytes: counter.bytes };
        for (const e of exprs) {
          if (e.kind === 'unsupported') diagnostics.push(diagnostic('info', 'nft/unsupported-expression', `kept as unsupported: ${printable(e.text)}`, file, line, column));
        }
        if (!c) {
          unsupported.push({ line, text: rule.raw, reason: 'rule for an unknown chain' });
          diagnostics.push(diagnostic('error', 'nft/unknown-chain', `rule refers to chain ${printable(String(o.chain))} which was not listed before it`, file, line, column));
          return;
        }
        c.rules.push(rule);
        return;
      }
      default:
        unsupported.push({ line, text: printable(JSON.stringify(item), 200), reason: `unsupported object: ${kind}` });
        diagnostics.push(diagnostic('warning', 'nft/unsupported-object', `${kind} objects are not modelled; kept as unsupported`, file, line, column));
    }
  });
  return { doc: { tables, unsupported, iptablesNftWarnings: [], ...(nftVersion ? { nftVersion } : {}) }, diagnostics };
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}
