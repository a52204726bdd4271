/**
 * Walking one nftables base chain for a packet: rules in order, expressions left to right,
 * `jump` pushes, `goto` replaces, `return` pops (a base chain's end applies its policy), verdict
 * maps look the key up (no element: the rule does not match), `numgen random mod N` branches with
 * the exact share of each key, NAT statements end the chain. An expression kpx cannot evaluate
 * splits the walk in two labelled branches, as for iptables.
 */
import { cidrContains, formatHostPort, formatIp, parseCidr, parseIp, type Ip } from '../model/addr.js';
import { nftNumber, operandText, resolveMap, type NftChain, type NftElement, type NftExpr, type NftOperand, type NftRule, type NftTable, type NftValue } from '../model/nft.js';
import { isLocalAddress, type TraceContext } from './context.js';
import { cloneBranch, formatPct, type Branch, type MasqueradeSource, type TableResult } from './iptables.js';
import type { PathState } from './match.js';
import type { TraceStep } from './types.js';

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

function evalOperand(o: NftOperand, st: PathState, ctx: TraceContext): Eval {
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
        if (!ctx.knowsLocal) return { unknown: "fib … type local needs the node's addresses (ip addr or --node-ip)" };
        return { kind: 'str', s: isLocalAddress(ctx, ip) ? 'local' : 'unicast' };
      }
      return { unknown: `${operandText(o)} is not evaluated by kpx` };
    case 'concat': {
      const parts: Val[] = [];
      for (const p of o.parts) {
        const v = evalOperand(p, st, ctx);
        if (isUnknown(v)) return v;
        parts.push(v);
      }
      return { kind: 'concat', parts };
    }
    case 'binop': {
      const l = evalOperand(o.left, st, ctx);
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

type MatchOutcome = boolean | { unknown: string };

function evalMatch(e: Extract<NftExpr, { kind: 'match' }>, st: PathState, ctx: TraceContext, table: NftTable): MatchOutcome {
  const left = evalOperand(e.left, st, ctx);
  if (isUnknown(left)) return left;
  const negate = e.op === '!=';
  let hit: boolean | undefined;
  const r = e.right;
  if (r.kind === 'set-ref') {
    const set = table.sets.find((s) => s.name === r.name);
    if (!set) return { unknown: `set @${r.name} is not defined in table ${table.name}` };
    // Dynamic sets (session affinity) hold runtime state: decided by the stated assumption.
    if (set.flags.includes('dynamic') || (set.timeout && set.elements.every((x) => x.expires))) hit = ctx.assumptions.affinityHit;
    else {
      const l = lookup(set.elements, left);
      if (l.unknown && !l.element) return { unknown: l.unknown };
      hit = l.element !== undefined;
    }
  } else if (r.kind === 'set') {
    const l = lookup(r.elements, left);
    if (l.unknown && !l.element) return { unknown: l.unknown };
    hit = l.element !== undefined;
  } else if (r.kind === 'value' || r.kind === 'list') {
    const items = r.kind === 'value' ? [r.text] : r.items;
    if (e.op === '<' || e.op === '>' || e.op === '<=' || e.op === '>=') {
      const n = nftNumber(items[0]);
      if (left.kind !== 'num' || n === undefined) return { unknown: `cannot compare ${operandText(e.left)}` };
      hit = e.op === '<' ? left.n < n : e.op === '>' ? left.n > n : e.op === '<=' ? left.n <= n : left.n >= n;
      return hit;
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
    if (any === undefined) return { unknown: `cannot compare ${operandText(e.left)} with ${items.join(',')}` };
    hit = any;
  } else return { unknown: `cannot evaluate ${operandText(e.left)} ${e.op} ${operandText(r)}` };
  return hit !== negate;
}

interface Frame {
  chain: NftChain;
  pos: number;
}

interface Work {
  b: Branch;
  stack: Frame[];
  /** Index of the next expression within the current rule when resuming after a branch. */
  resumeExpr: number;
}

const step = (table: NftTable, chain: NftChain, r: NftRule | undefined, action: string): TraceStep => ({
  table: `${table.family} ${table.name}`,
  chain: chain.name,
  rule: r ? r.line : chain.line,
  file: table.file,
  action,
  ...(r ? { text: r.raw } : {}),
});

export function walkNftChain(table: NftTable, base: NftChain, start: Branch, ctx: TraceContext, masqSource: MasqueradeSource): TableResult[] {
  const results: TableResult[] = [];
  const chains = new Map(table.chains.map((c) => [c.name, c]));
  const work: Work[] = [{ b: start, stack: [{ chain: base, pos: 0 }], resumeExpr: 0 }];
  let branches = 1;

  const policy = (w: Work) => {
    const p = base.policy === 'drop' ? 'drop' : 'accept';
    w.b.steps.push(step(table, base, undefined, `end of base chain: policy ${p}`));
    results.push({ branch: w.b, verdict: p });
  };

  /** Apply a verdict; returns true when the walk of this branch is over. */
  const verdict = (w: Work, rule: NftRule, v: NftValue & { kind: 'verdict' }, note: string): boolean => {
    const frame = w.stack[w.stack.length - 1];
    switch (v.verdict) {
      case 'accept':
        w.b.steps.push(step(table, frame.chain, rule, `accept${note}`));
        w.b.claimed = true;
        results.push({ branch: w.b, verdict: 'accept' });
        return true;
      case 'drop':
        w.b.steps.push(step(table, frame.chain, rule, `drop${note}`));
        results.push({ branch: w.b, verdict: 'drop' });
        return true;
      case 'return':
        w.b.steps.push(step(table, frame.chain, rule, `return${note}`));
        w.stack.pop();
        if (w.stack.length === 0) {
          policy(w);
          return true;
        }
        return false;
      case 'continue':
        return false;
      case 'queue':
        w.b.steps.push(step(table, frame.chain, rule, `queue: userspace decides${note}`));
        w.b.conditions.push('queue: userspace decides the verdict');
        results.push({ branch: w.b, verdict: 'accept' });
        return true;
      case 'jump':
      case 'goto': {
        const target = v.chain ? chains.get(v.chain) : undefined;
        if (!target) {
          w.b.steps.push(step(table, frame.chain, rule, `${v.verdict} ${v.chain}: chain is not defined${note}`));
          w.b.conditions.push(`dangling ${v.verdict} to ${v.chain}`);
          return false;
        }
        if (w.stack.length >= 64) {
          w.b.conditions.push('chain loop');
          results.push({ branch: w.b, verdict: 'drop' });
          return true;
        }
        w.b.steps.push(step(table, frame.chain, rule, `${v.verdict} ${v.chain}${note}`));
        const f = { chain: target, pos: 0 };
        if (v.verdict === 'goto') w.stack[w.stack.length - 1] = f;
        else w.stack.push(f);
        return false;
      }
    }
  };

  const nat = (w: Work, rule: NftRule, kind: 'dnat' | 'snat' | 'masquerade' | 'redirect', addr: string | undefined, port: string | undefined, note: string) => {
    const frame = w.stack[w.stack.length - 1];
    if (kind === 'dnat' || kind === 'redirect') {
      const ip = addr ? parseIp(addr.split('-')[0]) : undefined;
      if (ip && ip.family === w.b.st.family) w.b.st.dst = ip;
      const p = port ? Number(port.split('-')[0]) : undefined;
      if (p !== undefined && Number.isFinite(p)) w.b.st.dport = p;
      w.b.st.dnatDone = true;
      w.b.claimed = true;
      w.b.steps.push(step(table, frame.chain, rule, `${kind === 'dnat' ? 'dnat' : 'redirect'} to ${formatHostPort(formatIp(w.b.st.dst), w.b.st.dport)}${note}`));
    } else {
      w.b.st.snatDone = true;
      w.b.masquerade = true;
      const to = kind === 'snat' ? addr : masqSource(w.b.st);
      if (to) w.b.snatTo = to;
      w.b.steps.push(step(table, frame.chain, rule, `${kind}${to ? ` to ${to}` : ''}${note}`));
    }
    results.push({ branch: w.b, verdict: 'accept' });
  };

  while (work.length > 0) {
    const w = work.pop()!;
    let over = false;
    while (!over) {
      const frame = w.stack[w.stack.length - 1];
      if (!frame) {
        policy(w);
        break;
      }
      const rule = frame.chain.rules[frame.pos];
      if (!rule) {
        w.stack.pop();
        if (w.stack.length === 0) {
          policy(w);
          over = true;
        }
        continue;
      }
      let matched = true;
      let note = '';
      for (let i = w.resumeExpr; i < rule.exprs.length && matched && !over; i++) {
        const e = rule.exprs[i];
        const fork = (reason: string) => {
          if (branches++ > 4096) return;
          const skip = cloneBranch(w.b);
          skip.conditions.push(`if not: ${reason}`);
          skip.steps.push(step(table, frame.chain, rule, `undecided expression assumed false: ${reason}`));
          work.push({ b: skip, stack: w.stack.map((f) => ({ ...f, pos: f === frame ? f.pos + 1 : f.pos })), resumeExpr: 0 });
          w.b.conditions.push(`if: ${reason}`);
        };
        switch (e.kind) {
          case 'match': {
            const r = evalMatch(e, w.b.st, ctx, table);
            if (r === false) matched = false;
            else if (r !== true) fork(r.unknown);
            break;
          }
          case 'vmap': {
            if (e.key.kind === 'numgen' && e.key.mode === 'random') {
              const elements = resolveMap(table, e.map) ?? [];
              const mod = e.key.mod;
              const offset = e.key.offset;
              // Each key value 0..mod-1 (plus offset) is equally likely; group them by element.
              const counts = new Map<NftElement, number>();
              let missing = 0;
              for (let k = 0; k < mod; k++) {
                const el = elements.find((x) => keyMatches({ kind: 'num', n: k + offset }, x.key) === true);
                if (el) counts.set(el, (counts.get(el) ?? 0) + 1);
                else missing++;
              }
              const resumeStack = w.stack.map((f) => ({ ...f }));
              const entries = [...counts.entries()];
              for (let j = entries.length - 1; j >= 1; j--) {
                const [el, n] = entries[j];
                const nb = cloneBranch(w.b);
                nb.probability *= n / mod;
                branches++;
                const nw: Work = { b: nb, stack: resumeStack.map((f) => ({ ...f })), resumeExpr: 0 };
                nw.stack[nw.stack.length - 1].pos++;
                if (el.value?.kind === 'verdict') {
                  const done = verdict(nw, rule, el.value, ` (numgen ${el.key.join(' . ')}: ${formatPct(n / mod)})`);
                  if (!done) work.push(nw);
                }
              }
              if (missing > 0) {
                const nb = cloneBranch(w.b);
                nb.probability *= missing / mod;
                nb.steps.push(step(table, frame.chain, rule, `numgen: ${missing} of ${mod} values have no map element (${formatPct(missing / mod)}): the rule does not match`));
                const nw: Work = { b: nb, stack: resumeStack.map((f) => ({ ...f })), resumeExpr: 0 };
                nw.stack[nw.stack.length - 1].pos++;
                work.push(nw);
              }
              if (entries.length === 0) {
                matched = false;
                w.b.probability *= 0;
                over = true;
                break;
              }
              const [el0, n0] = entries[0];
              w.b.probability *= n0 / mod;
              frame.pos++;
              w.resumeExpr = 0;
              if (el0.value?.kind === 'verdict') over = verdict(w, rule, el0.value, ` (numgen ${el0.key.join(' . ')}: ${formatPct(n0 / mod)})`);
              matched = false; // handled
              note = 'handled';
              break;
            }
            const key = evalOperand(e.key, w.b.st, ctx);
            if (isUnknown(key)) {
              fork(key.unknown);
              matched = false;
              note = 'undecided-vmap';
              break;
            }
            const elements = resolveMap(table, e.map);
            if (!elements) {
              w.b.conditions.push(`map ${e.map.kind === 'ref' ? '@' + e.map.name : ''} is not defined`);
              matched = false;
              break;
            }
            const found = lookup(elements, key);
            if (!found.element) {
              if (found.unknown) fork(found.unknown);
              matched = false;
              break;
            }
            if (found.element.value?.kind === 'verdict') {
              frame.pos++;
              w.resumeExpr = 0;
              over = verdict(w, rule, found.element.value, ` (${e.map.kind === 'ref' ? '@' + e.map.name : 'map'}: ${found.element.key.join(' . ')}${found.element.comment ? ` "${found.element.comment}"` : ''})`);
              matched = false;
              note = 'handled';
            }
            break;
          }
          case 'verdict':
            frame.pos++;
            w.resumeExpr = 0;
            over = verdict(w, rule, { kind: 'verdict', verdict: e.verdict, ...(e.chain ? { chain: e.chain } : {}) }, '');
            matched = false;
            note = 'handled';
            break;
          case 'reject':
            w.b.steps.push(step(table, frame.chain, rule, `reject${e.with ? ` with ${e.with}` : ''}`));
            results.push({ branch: w.b, verdict: 'reject' });
            over = true;
            break;
          case 'dnat':
          case 'snat': {
            if (e.map) {
              const elements = resolveMap(table, e.map.map) ?? [];
              if (e.map.key.kind === 'numgen') {
                const mod = e.map.key.mod;
                const off = e.map.key.offset;
                const targets = new Map<string, { el: NftElement; n: number }>();
                for (let k = 0; k < mod; k++) {
                  const el = elements.find((x) => keyMatches({ kind: 'num', n: k + off }, x.key) === true);
                  if (!el || el.value?.kind !== 'data') continue;
                  const key = el.value.parts.join(' . ');
                  const prev = targets.get(key);
                  targets.set(key, { el, n: (prev?.n ?? 0) + 1 });
                }
                const list = [...targets.values()];
                for (let j = list.length - 1; j >= 0; j--) {
                  const { el, n } = list[j];
                  const nb = j === 0 ? w.b : cloneBranch(w.b);
                  nb.probability *= n / mod;
                  const parts = (el.value as { parts: readonly string[] }).parts;
                  nat({ ...w, b: nb }, rule, e.kind, parts[0], parts[1], ` (numgen ${el.key.join(' . ')}: ${formatPct(n / mod)})`);
                }
                over = true;
                break;
              }
              const key = evalOperand(e.map.key, w.b.st, ctx);
              const found = isUnknown(key) ? undefined : lookup(elements, key).element;
              if (!found || found.value?.kind !== 'data') {
                w.b.steps.push(step(table, frame.chain, rule, `${e.kind} map: no element for this packet`));
                matched = false;
                break;
              }
              nat(w, rule, e.kind, found.value.parts[0], found.value.parts[1], '');
              over = true;
              break;
            }
            nat(w, rule, e.kind, e.to?.addr, e.to?.port, '');
            over = true;
            break;
          }
          case 'masquerade':
          case 'redirect':
            nat(w, rule, e.kind, e.kind === 'redirect' ? undefined : undefined, e.to?.port, e.flags.length ? ` ${e.flags.join(',')}` : '');
            over = true;
            break;
          case 'mark-set': {
            const v = evalOperand(e.expr, w.b.st, ctx);
            const value = !isUnknown(v) && v.kind === 'num' ? v.n : e.expr.kind === 'value' ? nftNumber(e.expr.text) : undefined;
            if (value === undefined) {
              w.b.conditions.push(`mark set ${operandText(e.expr)}: not evaluated`);
              break;
            }
            const before = e.target === 'ct' ? w.b.st.connmark : w.b.st.mark;
            if (e.target === 'ct') w.b.st.connmark = value >>> 0;
            else w.b.st.mark = value >>> 0;
            w.b.steps.push(step(table, frame.chain, rule, `${e.target} mark 0x${before.toString(16)} → 0x${(value >>> 0).toString(16)}`));
            break;
          }
          case 'counter':
          case 'update-set':
          case 'log':
            break;
          case 'limit':
            fork(`limit ${e.rate}`);
            break;
          case 'xt':
            fork(`xt ${e.match ? 'match' : 'target'} ${e.name} (iptables-nft residue) is not evaluated by kpx`);
            break;
          case 'assign':
          case 'statement':
            break;
          case 'unsupported':
            fork(`${e.text} is not evaluated by kpx`);
            break;
        }
      }
      if (over) break;
      if (note === 'handled' || note === 'undecided-vmap') {
        if (note === 'undecided-vmap') {
          frame.pos++;
          w.resumeExpr = 0;
        }
        continue;
      }
      // The rule ran to its end without a verdict: continue with the next rule.
      if (matched && rule.exprs.some((x) => x.kind === 'match')) w.b.steps.push(step(table, frame.chain, rule, 'matched (no verdict)'));
      frame.pos++;
      w.resumeExpr = 0;
    }
  }
  return results;
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
