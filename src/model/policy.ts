/**
 * Policy routing (`ip rule`): which routing table answers for a packet, by priority, source,
 * destination, firewall mark and interfaces — as fib_rules.c walks them.
 */
import { cidrContains, parseCidr, type Cidr, type Ip } from './addr.js';
import { lookupRoute, normalizeTable, type Route } from './route.js';

export interface PolicyRule {
  readonly priority: number;
  readonly family: 4 | 6;
  readonly not: boolean;
  /** undefined = `all`. */
  readonly from?: Cidr;
  readonly to?: Cidr;
  readonly fwmark?: number;
  readonly fwmask?: number;
  readonly iif?: string;
  readonly oif?: string;
  readonly action: 'lookup' | 'goto' | 'unreachable' | 'blackhole' | 'prohibit' | 'nop';
  readonly table?: string;
  readonly goto?: number;
  /** Selectors kpx keeps but does not evaluate (tos, uidrange, ipproto, ports…). */
  readonly other: Readonly<Record<string, string>>;
  readonly line: number;
  readonly file: string;
  readonly text: string;
}

export interface PolicyRuleDump {
  readonly rules: readonly PolicyRule[];
  readonly unsupported: readonly { readonly line: number; readonly text: string; readonly reason: string }[];
}

export interface RoutingQuery {
  readonly dst: Ip;
  readonly src?: Ip;
  readonly mark?: number;
  readonly iif?: string;
}

export interface PolicyDecision {
  /** The route that answered (undefined when the rules end in no route). */
  readonly route?: Route;
  /** The rule whose action decided (lookup that found a route, or unreachable/blackhole/prohibit). */
  readonly rule?: PolicyRule;
  /** Rules that could not be decided for this packet (a selector kpx does not evaluate). */
  readonly undecided: readonly PolicyRule[];
}

export function policyRuleFromFields(f: Readonly<Record<string, string>>, priority: number, not: boolean, family: 4 | 6, meta: { line: number; file: string; text: string }): PolicyRule | string {
  const cidr = (v: string | undefined) => (v === undefined || v === 'all' ? undefined : parseCidr(v));
  const from = cidr(f.from);
  const to = cidr(f.to);
  if (f.from !== undefined && f.from !== 'all' && !from) return `cannot read source ${f.from}`;
  if (f.to !== undefined && f.to !== 'all' && !to) return `cannot read destination ${f.to}`;
  let fwmark: number | undefined;
  let fwmask: number | undefined;
  if (f.fwmark !== undefined) {
    const [v, m] = f.fwmark.split('/');
    fwmark = Number(v);
    fwmask = m === undefined ? 0xffffffff : Number(m);
    if (!Number.isFinite(fwmark) || !Number.isFinite(fwmask)) return `cannot read fwmark ${f.fwmark}`;
  }
  const action: PolicyRule['action'] =
    'unreachable' in f ? 'unreachable' : 'blackhole' in f ? 'blackhole' : 'prohibit' in f ? 'prohibit' : 'goto' in f ? 'goto' : 'lookup' in f || 'table' in f ? 'lookup' : 'nop';
  const known = new Set(['from', 'to', 'fwmark', 'iif', 'oif', 'lookup', 'table', 'goto', 'unreachable', 'blackhole', 'prohibit', 'nop', 'proto']);
  const other: Record<string, string> = {};
  for (const [k, v] of Object.entries(f)) if (!known.has(k)) other[k] = v;
  return {
    priority,
    family,
    not,
    action,
    other,
    ...meta,
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(fwmark !== undefined ? { fwmark, fwmask } : {}),
    ...(f.iif !== undefined ? { iif: f.iif } : {}),
    ...(f.oif !== undefined ? { oif: f.oif } : {}),
    ...(action === 'lookup' ? { table: normalizeTable(f.lookup ?? f.table) } : {}),
    ...(action === 'goto' ? { goto: Number(f.goto) } : {}),
  };
}

/** true/false when decidable; undefined when a selector needs what the query lacks or kpx does not evaluate. */
function ruleMatches(r: PolicyRule, q: RoutingQuery): boolean | undefined {
  let m: boolean | undefined = true;
  const and = (v: boolean | undefined) => {
    if (v === false) m = false;
    else if (v === undefined && m !== false) m = undefined;
  };
  if (r.from) and(q.src ? cidrContains(r.from, q.src) : undefined);
  if (r.to) and(cidrContains(r.to, q.dst));
  if (r.fwmark !== undefined) and((((q.mark ?? 0) & r.fwmask!) >>> 0) === r.fwmark >>> 0);
  if (r.iif !== undefined) and(q.iif === undefined ? (r.iif === 'lo' ? undefined : false) : q.iif === r.iif);
  if (r.oif !== undefined) and(undefined);
  if (Object.keys(r.other).some((k) => k !== 'proto')) and(undefined);
  if (m === undefined) return undefined;
  return r.not ? !m : m;
}

/**
 * The kernel's policy walk: rules by priority; `lookup T` answers when T has a route that is not
 * `throw`; `goto` skips ahead; unreachable/blackhole/prohibit end it. With no rules of the family,
 * the default rules (local, main, default) apply.
 */
export function policyLookup(rules: readonly PolicyRule[], routes: readonly Route[], q: RoutingQuery): PolicyDecision {
  const mine = rules.filter((r) => r.family === q.dst.family).sort((a, b) => a.priority - b.priority);
  if (mine.length === 0) {
    const route = lookupRoute(routes, q.dst);
    return route ? { route, undecided: [] } : { undecided: [] };
  }
  const undecided: PolicyRule[] = [];
  let skipTo = -1;
  for (const r of mine) {
    if (r.priority < skipTo) continue;
    const m = ruleMatches(r, q);
    if (m === undefined) {
      undecided.push(r);
      continue;
    }
    if (!m) continue;
    switch (r.action) {
      case 'lookup': {
        const route = lookupRoute(routes, q.dst, { tables: [r.table!] });
        if (route && route.type !== 'throw') return { route, rule: r, undecided };
        break;
      }
      case 'goto':
        skipTo = r.goto ?? -1;
        break;
      case 'nop':
        break;
      default:
        return { rule: r, undecided };
    }
  }
  return { undecided };
}
