/**
 * The nftables dialect of the chain machine: a table's chains, and what one rule does — its
 * expressions left to right (a failing match ends it; statements become effects; a verdict map
 * looks the key up, and `numgen random mod N` maps become shares with the exact weight of each
 * key). A fact the evidence does not give is asked of the scenario, as for iptables.
 */
import { cidrContains, parseCidr, parseIp, type Ip } from '../model/addr.js';
import { mapRefText, nftNumber, operandText, resolveMap, type NftChain, type NftElement, type NftExpr, type NftOperand, type NftRule, type NftTable } from '../model/nft.js';
import type { TraceContext } from './context.js';
import { noMatch, type Alternative, type ChainDialect, type Effect, type StepRef } from './chain-machine.js';
import { isLocal, type Ask, type PathState } from './match.js';
import type { Question } from './scenario.js';

/** A value computed from the packet: text (addresses, names), a number, or unknown with a reason. */
type Val = { readonly kind: 'ip'; readonly ip: Ip } | { readonly kind: 'num'; readonly n: number } | { readonly kind: 'str'; readonly s: string } | { readonly kind: 'concat'; readonly parts: readonly Val[] };
interface Unknown {
  readonly unknown: string;
}
type Eval = Val | Unknown;
function isUnknown(v: Eval): v is Unknown {
  return (v as Unknown).unknown !== undefined;
}

const PROTO_NUM: Record<string, number> = { tcp: 6, udp: 17, sctp: 132, icmp: 1 };

function evalOperand(o: NftOperand, st: PathState, ctx: TraceContext, ask: Ask): Eval {
  switch (o.kind) {
    case 'payload': {
      const f = o.field;
      if ((o.protocol === 'ip' && st.family === 4) || (o.protocol === 'ip6' && st.family === 6)) {
        if (f === 'saddr') return { kind: 'ip', ip: st.src };
        if (f === 'daddr') return { kind: 'ip', ip: st.dst };
      }
      if ((o.protocol === 'ip' && st.family === 6) || (o.protocol === 'ip6' && st.family === 4)) return { unknown: `${o.protocol} ${f} on an IPv${st.family} packet` };
      if (o.protocol === 'th' || o.protocol === st.protocol) {
        if (f === 'dport') return { kind: 'num', n: st.dport };
        if (f === 'sport') return { kind: 'num', n: st.sport };
      }
      if (o.protocol === 'tcp' || o.protocol === 'udp' || o.protocol === 'sctp') return { kind: 'str', s: '\u0000other-protocol' };
      return { unknown: `${operandText(o)} is not evaluated by kpx` };
    }
    case 'meta':
      switch (o.key) {
        case 'l4proto':
        case 'protocol':
          return o.key === 'l4proto' ? { kind: 'num', n: PROTO_NUM[st.protocol] } : { kind: 'str', s: st.family === 4 ? 'ip' : 'ip6' };
        case 'nfproto':
          return { kind: 'str', s: st.family === 4 ? 'ipv4' : 'ipv6' };
        case 'mark':
          return { kind: 'num', n: st.mark };
        case 'iifname':
        case 'iif':
          return st.inInterface !== undefined ? { kind: 'str', s: st.inInterface } : { unknown: 'the input interface is not known' };
        case 'oifname':
        case 'oif':
          return st.outInterface !== undefined ? { kind: 'str', s: st.outInterface } : { unknown: 'the output interface is not known' };
      }
      return { unknown: `meta ${o.key} is not evaluated by kpx` };
    case 'ct':
      if (o.key === 'state') return { kind: 'str', s: ctx.assumptions.established ? 'established' : 'new' };
      if (o.key === 'mark') return { kind: 'num', n: st.connmark };
      if (o.key === 'status') return { kind: 'str', s: st.dnatDone ? 'dnat' : '' };
      return { unknown: `ct ${o.key} depends on connection state kpx does not model` };
    case 'fib':
      if (o.result === 'type' && (o.flags.includes('daddr') || o.flags.includes('saddr'))) {
        const ip = o.flags.includes('daddr') ? st.dst : st.src;
        return { kind: 'str', s: isLocal(ctx, ip, ask) ? 'local' : 'unicast' };
      }
      return { unknown: `${operandText(o)} is not evaluated by kpx` };
    case 'concat': {
      const parts: Val[] = [];
      for (const p of o.parts) {
        const v = evalOperand(p, st, ctx, ask);
        if (isUnknown(v)) return v;
        parts.push(v);
      }
      return { kind: 'concat', parts };
    }
    case 'binop': {
      const l = evalOperand(o.left, st, ctx, ask);
      if (isUnknown(l)) return l;
      const r = o.right.kind === 'value' ? nftNumber(o.right.text) : undefined;
      if (l.kind !== 'num' || r === undefined) return { unknown: `${operandText(o)} is not evaluated by kpx` };
      const n = o.op === '&' ? l.n & r : o.op === '|' ? l.n | r : o.op === '^' ? l.n ^ r : o.op === '<<' ? l.n << r : l.n >>> r;
      return { kind: 'num', n: n >>> 0 };
    }
    default:
      return { unknown: `${operandText(o)} is not evaluated by kpx` };
  }
}

/** Does a packet value equal one element key part as printed (address, prefix, range, number, name)? */
function partMatches(v: Val, text: string): boolean | undefined {
  const t = text.replace(/^"|"$/g, '');
  switch (v.kind) {
    case 'ip': {
      const range = /^([^-]+)-([^-]+)$/.exec(t);
      if (range) {
        const a = parseIp(range[1]);
        const b = parseIp(range[2]);
        return !!a && !!b && a.family === v.ip.family && v.ip.value >= a.value && v.ip.value <= b.value;
      }
      const c = parseCidr(t);
      return c ? cidrContains(c, v.ip) : undefined;
    }
    case 'num': {
      const named = PROTO_NUM[t];
      if (named !== undefined) return named === v.n;
      const range = /^(\w+)-(\w+)$/.exec(t);
      if (range) {
        const a = nftNumber(range[1]);
        const b = nftNumber(range[2]);
        return a !== undefined && b !== undefined ? v.n >= a && v.n <= b : undefined;
      }
      const n = nftNumber(t);
      return n === undefined ? undefined : n === v.n;
    }
    case 'str':
      return t.split(',').includes(v.s) || (t.endsWith('*') && v.s.startsWith(t.slice(0, -1)));
    case 'concat':
      return undefined;
  }
}

function keyMatches(v: Val, key: readonly string[]): boolean | undefined {
  if (v.kind === 'concat') {
    if (v.parts.length !== key.length) return false;
    let all: boolean | undefined = true;
    for (let i = 0; i < key.length; i++) {
      const m = partMatches(v.parts[i], key[i]);
      if (m === false) return false;
      if (m === undefined) all = undefined;
    }
    return all;
  }
  return key.length === 1 ? partMatches(v, key[0]) : false;
}

function lookup(elements: readonly NftElement[], v: Val): { element?: NftElement; unknown?: string } {
  let unsure = false;
  for (const e of elements) {
    const m = keyMatches(v, e.key);
    if (m === true) return { element: e };
    if (m === undefined) unsure = true;
  }
  return unsure ? { unknown: 'a set element could not be compared' } : {};
}

/** An expression as written, for conditions and unknown ends. */
function exprText(e: NftExpr): string {
  switch (e.kind) {
    case 'match':
      return `${operandText(e.left)}${e.op === 'implicit' ? '' : ` ${e.op}`} ${operandText(e.right)}`;
    case 'vmap':
      return `${operandText(e.key)} vmap ${e.map.kind === 'ref' ? `@${e.map.name}` : '{ … }'}`;
    case 'limit':
    case 'unsupported':
      return e.text;
    case 'xt':
      return `xt ${e.match ? 'match' : 'target'} ${e.name}`;
    default:
      return e.kind;
  }
}

const IFACE_KEYS: Record<string, 'in' | 'out'> = { iifname: 'in', iif: 'in', oifname: 'out', oif: 'out' };

/** The interface names a match compares with: its value(s) or a named set's elements. */
function ifaceNames(r: NftOperand, table: NftTable): string[] | undefined {
  if (r.kind === 'value') return [r.text.replace(/^"|"$/g, '')];
  if (r.kind === 'list') return r.items.map((x) => x.replace(/^"|"$/g, ''));
  if (r.kind === 'set') return r.elements.map((x) => x.key.join(' . ').replace(/^"|"$/g, ''));
  if (r.kind === 'set-ref') return table.sets.find((x) => x.name === r.name)?.elements.map((x) => x.key.join(' . ').replace(/^"|"$/g, ''));
  return undefined;
}

/** Does a match hold? Facts the evidence lacks are asked: interfaces by name, anything else as written. */
function evalMatch(e: Extract<NftExpr, { kind: 'match' }>, st: PathState, ctx: TraceContext, table: NftTable, ask: Ask): boolean {
  const negate = e.op === '!=';
  const asWritten = () => ask({ code: 'not-evaluated', key: `expr:${exprText(e)}`, subject: exprText(e) });
  const left = evalOperand(e.left, st, ctx, ask);
  if (isUnknown(left)) {
    const dir = e.left.kind === 'meta' ? IFACE_KEYS[e.left.key] : undefined;
    const names = dir ? ifaceNames(e.right, table) : undefined;
    if (dir && names && (e.op === '==' || e.op === '!=' || e.op === 'implicit')) {
      // One question per name: does the packet arrive on (leave by) it? The first "yes" binds the interface.
      const on = names.some((n) => ask({ code: dir === 'in' ? 'in-interface' : 'out-interface', key: `iface:${dir}:${n.replace(/\*$/, '+')}`, subject: n }));
      return on !== negate;
    }
    return asWritten();
  }
  let hit: boolean;
  const r = e.right;
  if (r.kind === 'set-ref') {
    const set = table.sets.find((s) => s.name === r.name);
    if (!set) return asWritten();
    // Dynamic sets (session affinity) hold runtime state: decided by the stated assumption.
    if (set.flags.includes('dynamic') || (set.timeout && set.elements.every((x) => x.expires))) hit = ctx.assumptions.affinityHit;
    else {
      const l = lookup(set.elements, left);
      if (l.unknown && !l.element) return asWritten();
      hit = l.element !== undefined;
    }
  } else if (r.kind === 'set') {
    const l = lookup(r.elements, left);
    if (l.unknown && !l.element) return asWritten();
    hit = l.element !== undefined;
  } else if (r.kind === 'value' || r.kind === 'list') {
    const items = r.kind === 'value' ? [r.text] : r.items;
    if (e.op === '<' || e.op === '>' || e.op === '<=' || e.op === '>=') {
      const n = nftNumber(items[0]);
      if (left.kind !== 'num' || n === undefined) return asWritten();
      return e.op === '<' ? left.n < n : e.op === '>' ? left.n > n : e.op === '<=' ? left.n <= n : left.n >= n;
    }
    let any: boolean | undefined = false;
    for (const it of items) {
      const m = partMatches(left, it);
      if (m === true) {
        any = true;
        break;
      }
      if (m === undefined) any = undefined;
    }
    if (any === undefined) return asWritten();
    hit = any;
  } else return asWritten();
  return hit !== negate;
}

/** A verdict (of a rule or a map element) as an effect. */
function verdictEffect(v: { readonly verdict: string; readonly chain?: string }): Effect | undefined {
  switch (v.verdict) {
    case 'accept':
    case 'drop':
    case 'return':
      return { kind: v.verdict };
    case 'jump':
    case 'goto':
      return v.chain ? { kind: v.verdict, chain: v.chain } : { kind: 'unknown', reason: { code: 'not-evaluated', what: `${v.verdict} without a chain` } };
    case 'queue':
      return { kind: 'unknown', reason: { code: 'userspace-verdict', target: 'queue' } };
    default:
      return undefined; // continue
  }
}

/** numgen random mod N: how many of the N equally likely values each element takes, and how many none does. */
function numgenShares(elements: readonly NftElement[], mod: number, offset: number): { entries: [NftElement, number][]; missing: number } {
  const counts = new Map<NftElement, number>();
  let missing = 0;
  for (let k = 0; k < mod; k++) {
    const el = elements.find((x) => keyMatches({ kind: 'num', n: k + offset }, x.key) === true);
    if (el) counts.set(el, (counts.get(el) ?? 0) + 1);
    else missing++;
  }
  return { entries: [...counts.entries()], missing };
}

const natTo = (kind: 'dnat' | 'snat', addr: string | undefined, port: string | undefined): Effect => {
  if (kind === 'snat') return { kind: 'snat', ...(addr ? { to: addr } : {}), flags: [] };
  const ip = addr ? parseIp(addr.split('-')[0]) : undefined;
  const p = port ? Number(port.split('-')[0]) : undefined;
  return { kind: 'dnat', ...(ip ? { ip } : {}), ...(p !== undefined && Number.isFinite(p) ? { port: p } : {}) };
};

type ExprOf<K extends NftExpr['kind']> = Extract<NftExpr, { readonly kind: K }>;

/**
 * One rule being evaluated: the packet as its statements so far left it (`local`: marks set
 * earlier in the rule are seen by later matches), the effects so far, and where to ask what the
 * dumps cannot decide.
 */
interface RuleEval {
  readonly rule: NftRule;
  readonly local: PathState;
  readonly effects: Effect[];
  readonly ctx: TraceContext;
  readonly table: NftTable;
  readonly chain: NftChain;
  readonly ask: (q: Question) => boolean;
}

/** The scenario's question for an undecided match of expression `e`, located at the rule. */
function askFor(r: RuleEval, e: NftExpr): Ask {
  return (u) =>
    r.ask({
      code: u.code,
      key: u.key.startsWith('expr:') ? `${r.table.file}:${r.rule.line}:${u.key}` : u.key,
      ...(u.subject !== undefined ? { subject: u.subject } : {}),
      match: exprText(e),
      table: nftTableName(r.table),
      chain: r.chain.name,
      file: r.table.file,
      line: r.rule.line,
      ...(u.code === 'in-interface' || u.code === 'out-interface' ? { iface: { dir: u.code === 'in-interface' ? 'in' : 'out', pattern: u.key.split(':')[2] } } : {}),
    });
}

/** The rule ends here, certainly, with its effects so far and `last`. */
const finish = (r: RuleEval, last: Effect | undefined): Alternative[] => [{ share: 1, effects: last ? [...r.effects, last] : r.effects }];

/**
 * A `numgen random mod N` map: one alternative per element, its share the values of the modulus it
 * covers; values no element covers take no road (`missing`). `then`: the effects of an element,
 * undefined for one that gives no alternative.
 */
function numgenAlternatives(elements: readonly NftElement[], key: { mod: number; offset: number }, then: (el: NftElement) => Effect[] | undefined): Alternative[] {
  const mod = key.mod;
  const { entries, missing } = numgenShares(elements, mod, key.offset);
  const alts: Alternative[] = [];
  if (missing > 0) alts.push({ share: missing / mod, note: { kind: 'numgen', key: '', probability: missing / mod }, missing: { values: missing, of: mod }, effects: [] });
  for (const [el, n] of [...entries].reverse()) {
    const effects = then(el);
    if (effects === undefined) continue;
    alts.push({ share: n / mod, note: { kind: 'numgen', key: el.key.join(' . '), probability: n / mod }, effects });
  }
  return alts;
}

/** A verdict map: the element the packet's key finds gives the verdict (a numgen key: shares of them). */
function vmapAlternatives(r: RuleEval, e: ExprOf<'vmap'>): readonly Alternative[] {
  const elements = resolveMap(r.table, e.map);
  if (!elements) return finish(r, { kind: 'unknown', reason: { code: 'map-missing', map: mapRefText(e.map) } });
  if (e.key.kind === 'numgen' && e.key.mode === 'random') {
    return numgenAlternatives(elements, e.key, (el) => {
      const v = el.value?.kind === 'verdict' ? verdictEffect(el.value) : undefined;
      return v ? [...r.effects, v] : r.effects;
    });
  }
  const key = evalOperand(e.key, r.local, r.ctx, askFor(r, e));
  if (isUnknown(key)) return finish(r, { kind: 'unknown', reason: { code: 'not-evaluated', what: exprText(e) } });
  const found = lookup(elements, key);
  if (!found.element) {
    if (found.unknown && !askFor(r, e)({ code: 'not-evaluated', key: `expr:${exprText(e)}`, subject: exprText(e) })) return noMatch;
    if (found.unknown) return finish(r, { kind: 'unknown', reason: { code: 'not-evaluated', what: exprText(e) } });
    return noMatch;
  }
  const v = found.element.value?.kind === 'verdict' ? verdictEffect(found.element.value) : undefined;
  if (!v) return noMatch;
  const note = { kind: 'map' as const, map: e.map.kind === 'ref' ? e.map.name : null, key: found.element.key.join(' . '), ...(found.element.comment ? { comment: found.element.comment } : {}) };
  return [{ share: 1, note, effects: [...r.effects, v] }];
}

/** dnat/snat, to a fixed address or through a map (a miss there lets the packet on, untranslated). */
function natAlternatives(r: RuleEval, e: ExprOf<'dnat' | 'snat'>): readonly Alternative[] {
  if (!e.map) {
    const eff = natTo(e.kind, e.to?.addr, e.to?.port);
    return finish(r, eff.kind === 'snat' ? { ...eff, flags: e.flags } : eff);
  }
  const elements = resolveMap(r.table, e.map.map);
  if (!elements) return finish(r, { kind: 'unknown', reason: { code: 'map-missing', map: mapRefText(e.map.map) } });
  if (e.map.key.kind === 'numgen') {
    return numgenAlternatives(elements, e.map.key, (el) => (el.value?.kind === 'data' ? [...r.effects, natTo(e.kind, el.value.parts[0], el.value.parts[1])] : undefined));
  }
  const key = evalOperand(e.map.key, r.local, r.ctx, askFor(r, e));
  const found = isUnknown(key) ? undefined : lookup(elements, key).element;
  if (!found || found.value?.kind !== 'data') {
    r.effects.push({ kind: 'nat-map-miss', nat: e.kind });
    return [{ share: 1, effects: r.effects }];
  }
  return finish(r, natTo(e.kind, found.value.parts[0], found.value.parts[1]));
}

/** `meta|ct mark set V`: the mark the rest of the rule (and the walk) sees; undefined to go on, else the rule's end. */
function setMark(r: RuleEval, e: ExprOf<'mark-set'>): readonly Alternative[] | undefined {
  const v = evalOperand(e.expr, r.local, r.ctx, askFor(r, e));
  const value = !isUnknown(v) && v.kind === 'num' ? v.n : e.expr.kind === 'value' ? nftNumber(e.expr.text) : undefined;
  if (value === undefined) return finish(r, { kind: 'unknown', reason: { code: 'not-evaluated', what: `${e.target} mark set ${operandText(e.expr)}` } });
  // mark = value: the machine's (mark & ~mask) ^ value with every bit masked.
  const eff: Effect = { kind: 'mark', which: e.target, value: value >>> 0, mask: 0xffffffff };
  if (e.target === 'ct') r.local.connmark = value >>> 0;
  else r.local.mark = value >>> 0;
  r.effects.push(eff);
  return undefined;
}

/** What one nft rule does: its expressions left to right. */
export function evaluateNftRule(rule: NftRule, st: PathState, ctx: TraceContext, table: NftTable, chain: NftChain, ask: (q: Question) => boolean): readonly Alternative[] {
  const r: RuleEval = { rule, local: { ...st }, effects: [], ctx, table, chain, ask };
  let sawMatch = false;
  for (const e of rule.exprs) {
    switch (e.kind) {
      case 'match':
        sawMatch = true;
        if (!evalMatch(e, r.local, ctx, table, askFor(r, e))) return noMatch;
        break;
      case 'vmap':
        return vmapAlternatives(r, e);
      case 'verdict':
        return finish(r, verdictEffect(e));
      case 'reject':
        return finish(r, { kind: 'reject', ...(e.with !== undefined ? { with: e.with } : {}) });
      case 'dnat':
      case 'snat':
        return natAlternatives(r, e);
      case 'masquerade':
        return finish(r, { kind: 'masquerade', flags: e.flags });
      case 'redirect': {
        const p = e.to?.port ? Number(e.to.port.split('-')[0]) : undefined;
        return finish(r, { kind: 'redirect', ...(p !== undefined && Number.isFinite(p) ? { port: p } : {}), flags: e.flags });
      }
      case 'mark-set': {
        const end = setMark(r, e);
        if (end) return end;
        break;
      }
      case 'counter':
      case 'update-set':
      case 'log':
      case 'assign':
      case 'statement':
        break;
      case 'limit':
        if (!askFor(r, e)({ code: 'limit', key: `expr:${e.text}`, subject: e.rate })) return noMatch;
        break;
      case 'xt':
      case 'unsupported':
        if (!askFor(r, e)({ code: 'not-evaluated', key: `expr:${exprText(e)}`, subject: exprText(e) })) return noMatch;
        break;
    }
  }
  // The rule ran to its end without a verdict: its effects apply and the walk goes on.
  if (sawMatch) r.effects.push({ kind: 'matched' });
  return r.effects.length ? [{ share: 1, effects: r.effects }] : noMatch;
}

/** `family name` as nft prints a table; a pasted fragment without a `table` line is `(no table)`. */
export function nftTableName(t: NftTable): string {
  return `${t.family} ${t.name}`.trim() || '(no table)';
}

/** One nft table as a chain-machine dialect. */
export function nftDialect(table: NftTable, ctx: TraceContext): ChainDialect<NftChain, NftRule> {
  const chains = new Map(table.chains.map((c) => [c.name, c]));
  const tableName = nftTableName(table);
  return {
    findChain: (name) => chains.get(name),
    rulesOf: (c) => c.rules,
    evaluate: (c, rule, st, ask) => evaluateNftRule(rule, st, ctx, table, c, ask),
    refOf: (c, r): StepRef => ({ dialect: 'nft', table: tableName, chain: c.name, file: table.file, line: r.line, text: r.raw }),
  };
}

/** Base chains of nft tables at a hook, for a packet family, with their priorities. */
export function nftBaseChains(tables: readonly NftTable[], hook: string, family: 4 | 6): { table: NftTable; chain: NftChain; priority: number }[] {
  const out: { table: NftTable; chain: NftChain; priority: number }[] = [];
  for (const t of tables) {
    if (t.fromIptablesNft) continue; // the same rules are traced from iptables-save
    const fam = t.family;
    if (!(fam === 'inet' || (fam === 'ip' && family === 4) || (fam === 'ip6' && family === 6))) continue;
    for (const c of t.chains) if (c.hook === hook) out.push({ table: t, chain: c, priority: c.priority ?? 0 });
  }
  return out;
}
