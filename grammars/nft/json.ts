/**
 * `nft -j list ruleset` (libnftables JSON schema, `src/json.c`) → the same syntax document as the
 * text listing (expressions: ./json-expr.ts). Positions: the line/column where each top-level
 * object of the `nftables` array starts (nft prints everything on one line, so usually line 1 with
 * distinct columns).
 */
import { diagnostic, printable, type Diagnostic, appendAll } from '../common/source.js';
import { formatNftTime } from '../common/nft-syntax.js';
import type { SynChain, SynDocument, SynRule, SynSet, SynTable, SynUnsupported } from '../common/nft-syntax.js';
import { element, expr, flagsOf, isObj, type Json, type Mut, type Obj } from './json-expr.js';

type MutTable = Mut<SynTable> & { chains: Mut<SynChain>[]; sets: Mut<SynSet>[] };
type MutChain = Mut<SynChain> & { rules: SynRule[] };

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

export function parseNftJsonSyntax(text: string, file: string): { doc: SynDocument; diagnostics: Diagnostic[] } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let json: Json;
  try {
    json = JSON.parse(body);
  } catch (e) {
    const m = /position (\d+)/.exec(String(e));
    const starts = lineStarts(body);
    const at = m ? lineCol(body, Number(m[1]), starts) : { line: 1, column: 1 };
    const diagnostics = [diagnostic('error', 'parse/bad-json', `not valid JSON: ${printable((e as Error).message)}`, file, at.line, at.column)];
    return { doc: { tables: [], unsupported: [], iptablesNftWarnings: [] }, diagnostics };
  }
  const list = isObj(json) && Array.isArray(json.nftables) ? json.nftables : undefined;
  if (!list) {
    const diagnostics = [diagnostic('error', 'parse/bad-json', 'expected {"nftables": [ … ]}', file, 1, 1, { expected: 'nftables array' })];
    return { doc: { tables: [], unsupported: [], iptablesNftWarnings: [] }, diagnostics };
  }
  const starts = lineStarts(body);
  const offsets = elementOffsets(body);
  const reader = new NftJsonReader(file);
  list.forEach((item, idx) => {
    const pos = offsets[idx] !== undefined ? lineCol(body, offsets[idx], starts) : { line: 1, column: 1 };
    reader.read(item, pos.line, pos.column);
  });
  const { tables, unsupported, nftVersion, diagnostics } = reader;
  return { doc: { tables, unsupported, iptablesNftWarnings: [], ...(nftVersion ? { nftVersion } : {}) }, diagnostics };
}

/** The objects of the `nftables` array, read in order into tables. */
class NftJsonReader {
  readonly diagnostics: Diagnostic[] = [];
  readonly unsupported: SynUnsupported[] = [];
  readonly tables: MutTable[] = [];
  nftVersion: { version: string; line: number } | undefined;
  private readonly chainsByKey = new Map<string, MutChain>();

  constructor(private readonly file: string) {}

  read(item: Json, line: number, column: number): void {
    if (!isObj(item)) return;
    const kind = Object.keys(item)[0];
    const o = item[kind];
    if (!isObj(o)) return;
    const family = String(o.family ?? '');
    const tname = String(kind === 'table' ? o.name : o.table);
    switch (kind) {
      case 'metainfo':
        if (typeof o.version === 'string') this.nftVersion = { version: o.version, line };
        return;
      case 'table': {
        const t = this.findTable(family, tname, line);
        if (typeof o.comment === 'string') t.comment = o.comment;
        appendAll(t.flags, flagsOf(o.flags));
        if (typeof o.handle === 'number') t.handle = o.handle;
        t.line = line;
        t.endLine = line;
        return;
      }
      case 'chain':
        this.chain(o, family, tname, line);
        return;
      case 'set':
      case 'map':
        this.set(o, kind, family, tname, line, column);
        return;
      case 'rule':
        this.rule(o, family, tname, line, column);
        return;
      default:
        this.unsupported.push({ line, text: printable(JSON.stringify(item), 200), reason: `unsupported object: ${kind}` });
        this.diagnostics.push(diagnostic('warning', 'nft/unsupported-object', `${kind} objects are not modelled; kept as unsupported`, this.file, line, column));
    }
  }

  private findTable(family: string, name: string, line: number): MutTable {
    let t = this.tables.find((x) => x.family === family && x.name === name);
    if (!t) {
      t = { family, name, implicit: false, flags: [], chains: [], sets: [], line, endLine: line };
      this.tables.push(t);
    }
    return t;
  }

  private chain(o: Obj, family: string, tname: string, line: number): void {
    const t = this.findTable(family, tname, line);
    const c: MutChain = { name: String(o.name), rules: [], line };
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
    this.chainsByKey.set(`${family}\u0000${tname}\u0000${c.name}`, c);
    t.endLine = Math.max(t.endLine, line);
  }

  private set(o: Obj, kind: 'set' | 'map', family: string, tname: string, line: number, column: number): void {
    const t = this.findTable(family, tname, line);
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
  }

  private rule(o: Obj, family: string, tname: string, line: number, column: number): void {
    const c = this.chainsByKey.get(`${family}\u0000${tname}\u0000${String(o.chain)}`);
    const exprs = Array.isArray(o.expr) ? o.expr.map((e) => expr(e, column, line)) : [];
    const rule: Mut<SynRule> = { exprs, raw: printable(JSON.stringify(o), 400), line, column };
    if (typeof o.comment === 'string') rule.comment = o.comment;
    if (typeof o.handle === 'number') rule.handle = o.handle;
    const counter = exprs.find((e) => e.kind === 'counter' && e.packets !== undefined);
    if (counter && counter.kind === 'counter' && counter.packets !== undefined && counter.bytes !== undefined) rule.counter = { packets: counter.packets, bytes: counter.bytes };
    for (const e of exprs) {
      if (e.kind === 'unsupported') this.diagnostics.push(diagnostic('info', 'nft/unsupported-expression', `kept as unsupported: ${printable(e.text)}`, this.file, line, column));
    }
    if (!c) {
      this.unsupported.push({ line, text: rule.raw, reason: 'rule for an unknown chain' });
      this.diagnostics.push(diagnostic('error', 'nft/unknown-chain', `rule refers to chain ${printable(String(o.chain))} which was not listed before it`, this.file, line, column));
      return;
    }
    c.rules.push(rule);
  }
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}
