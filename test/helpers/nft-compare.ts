/**
 * A comparable projection of an NftRuleset: what `nft list ruleset` says about tables, chains
 * (hooks, priorities, policies, comments), sets and maps (types, flags, timeouts, elements) and
 * rules (their typed reading). Only differences of notation are removed, each one a way nft
 * prints what it was given: numbers in hex or decimal (`0x4000` / `0x00004000` / `16384`),
 * `==` printed as nothing, anonymous set and set/map elements in nft's sorted order, the packet
 * counters the kernel fills in, a priority's name (`dstnat - 10`) for its number.
 */
import { nftNumber, operandText, valueText, type NftElement, type NftExpr, type NftOperand, type NftRuleset } from '../../src/model/nft.js';

function lit(s: string): string {
  const n = nftNumber(s);
  return n === undefined ? s : String(n);
}

const sorted = <T>(xs: T[]): T[] => xs.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0));

function element(e: NftElement): unknown {
  return { key: e.key.map(lit), value: e.value && valueText(e.value), comment: e.comment, timeout: e.timeout };
}

function op(o: NftOperand): unknown {
  switch (o.kind) {
    case 'value':
      return lit(o.text);
    case 'concat':
      return { concat: o.parts.map(op) };
    case 'binop':
      return { [o.op]: [op(o.left), op(o.right)] };
    case 'set':
      return { set: sorted(o.elements.map(element)) };
    case 'map':
      return { map: [op(o.key), o.map.kind === 'ref' ? o.map.name : sorted(o.map.elements.map(element))] };
    case 'list':
      return { list: o.items };
    default:
      return operandText(o);
  }
}

function expr(e: NftExpr): unknown {
  switch (e.kind) {
    case 'match':
      return { match: [op(e.left), e.op === 'implicit' ? '==' : e.op, op(e.right)] };
    case 'vmap':
      return { vmap: [op(e.key), e.map.kind === 'ref' ? e.map.name : sorted(e.map.elements.map(element))] };
    case 'mark-set':
      return { markSet: [e.target, op(e.expr)] };
    case 'assign':
      return { assign: [op(e.left), op(e.expr)] };
    case 'update-set':
      return { update: [e.op, e.set, op(e.key), e.timeout] };
    case 'dnat':
    case 'snat':
      return {
        [e.kind]: e.map ? { map: [op(e.map.key), e.map.map.kind === 'inline' ? sorted(e.map.map.elements.map(element)) : e.map.map.name] } : e.to?.text,
        family: e.family,
        flags: e.flags,
      };
    case 'masquerade':
    case 'redirect':
      return { [e.kind]: e.to?.text ?? null, flags: e.flags };
    case 'counter':
      return { counter: e.name ?? null };
    case 'verdict':
      return { verdict: e.verdict, chain: e.chain };
    case 'reject':
      return { reject: e.with ?? null };
    case 'log':
      return { log: [e.prefix, e.group, e.level] };
    case 'limit':
      return { limit: [e.rate, e.over, e.burst] };
    case 'xt':
      return { xt: [e.match, e.name] };
    case 'statement':
      return { statement: e.name, text: e.text };
    case 'unsupported':
      return { unsupported: e.text };
  }
}

export function projectRuleset(r: NftRuleset): unknown {
  return r.tables.map((t) => ({
    table: `${t.family} ${t.name}`,
    comment: t.comment,
    flags: t.flags,
    chains: t.chains.map((c) => ({
      name: c.name,
      type: c.type,
      hook: c.hook,
      device: c.device,
      priority: c.priority,
      policy: c.policy,
      comment: c.comment,
      rules: c.rules.map((x) => ({ comment: x.comment, exprs: x.exprs.map(expr) })),
    })),
    sets: t.sets.map((s) => ({
      name: s.name,
      kind: s.kind,
      keyType: s.keyType,
      valueType: s.valueType,
      flags: [...s.flags].sort(),
      timeout: s.timeout,
      size: s.size,
      policy: s.policy,
      comment: s.comment,
      elements: sorted(s.elements.map(element)),
    })),
  }));
}
