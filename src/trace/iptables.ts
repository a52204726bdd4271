/**
 * The iptables dialect of the chain machine: a table's chains, which rules of a chain can match
 * (big dispatch chains are indexed by destination), and what one rule does — its matches ANDed
 * (`-m statistic` as a share, undecided matches asked of the scenario), then its target as effects.
 */
import { chainShownWhole, chainsPastCut, type Chain, type Match, type Rule, type Table } from '../model/netfilter.js';
import { parseIp } from '../model/addr.js';
import type { TraceContext } from './context.js';
import { certain, noMatch, type Alternative, type ChainDialect, type Effect, type StepRef } from './chain-machine.js';
import { evaluateMatch, type PathState, type Undecided } from './match.js';
import type { Question } from './scenario.js';

/** Rules of big chains indexed by exact destination, so a trace does not scan 10k dispatch rules. */
interface DispatchIndex {
  byDst: Map<string, number[]>;
  wildcard: number[];
}
const indexCache = new WeakMap<Chain, DispatchIndex | null>();

function dispatchIndex(chain: Chain): DispatchIndex | null {
  let idx = indexCache.get(chain);
  if (idx !== undefined) return idx;
  if (chain.rules.length < 64) {
    indexCache.set(chain, null);
    return null;
  }
  const byDst = new Map<string, number[]>();
  const wildcard: number[] = [];
  chain.rules.forEach((r, i) => {
    const m = r.matches.find((x) => x.kind === 'address' && x.dir === 'dst' && !x.negated && x.cidr && x.cidr.prefix === (x.cidr.family === 4 ? 32 : 128));
    if (m && m.kind === 'address' && m.cidr) {
      const key = `${m.cidr.family}:${m.cidr.network}`;
      const list = byDst.get(key);
      if (list) list.push(i);
      else byDst.set(key, [i]);
    } else wildcard.push(i);
  });
  idx = { byDst, wildcard };
  indexCache.set(chain, idx);
  return idx;
}

/** Rules that can match this destination, in chain order. */
function candidates(chain: Chain, st: PathState): readonly Rule[] {
  const idx = dispatchIndex(chain);
  if (!idx) return chain.rules;
  const exact = idx.byDst.get(`${st.dst.family}:${st.dst.value}`) ?? [];
  const out: Rule[] = [];
  let a = 0;
  let b = 0;
  while (a < exact.length || b < idx.wildcard.length) {
    if (b >= idx.wildcard.length || (a < exact.length && exact[a] < idx.wildcard[b])) out.push(chain.rules[exact[a++]]);
    else out.push(chain.rules[idx.wildcard[b++]]);
  }
  return out;
}

/** A match as iptables-save prints it, for the condition that names it. */
export function matchText(m: Match): string {
  const not = (n: boolean) => (n ? '! ' : '');
  switch (m.kind) {
    case 'interface':
      return `${not(m.negated)}-${m.dir === 'in' ? 'i' : 'o'} ${m.name}`;
    case 'address':
      return `${not(m.negated)}-${m.dir === 'src' ? 's' : 'd'} ${m.text}`;
    case 'addrtype':
      return `-m addrtype ${not(m.negated)}--${m.dir}-type ${m.types.join(',')}${m.limitIface ? ` --limit-iface-${m.limitIface}` : ''}`;
    case 'set':
      return `-m set ${not(m.negated)}--match-set ${m.name} ${m.flags.join(',')}`;
    case 'physdev':
      return `-m physdev ${not(m.negated)}${m.option}${m.value !== undefined ? ` ${m.value}` : ''}`;
    case 'socket':
      return `-m socket${m.options.length ? ' ' + m.options.join(' ') : ''}`;
    case 'iprange':
      return `-m iprange ${not(m.negated)}--${m.dir}-range ${m.from}-${m.to}`;
    case 'unsupported':
      return m.text;
    default:
      return m.kind;
  }
}

function question(m: Match, rule: Rule, u: Undecided): Question {
  return {
    code: u.code,
    // A match asked as written (a rate limit, an unknown module) is a fact of its own rule.
    key: u.key.startsWith('match:') ? `${rule.file}:${rule.line}:${u.key}` : u.key,
    ...(u.subject !== undefined ? { subject: u.subject } : {}),
    match: matchText(m),
    table: rule.table,
    chain: rule.chain,
    file: rule.file,
    line: rule.line,
    ...(m.kind === 'interface' ? { iface: { dir: m.dir, pattern: m.name } } : {}),
  };
}

/** The target as effects (at most one: iptables rules have one target). */
function targetEffects(rule: Rule): Effect[] {
  const t = rule.target;
  if (!t) return [{ kind: 'matched' }];
  switch (t.kind) {
    case 'jump':
    case 'goto':
      return [{ kind: t.kind, chain: t.chain }];
    case 'return':
    case 'accept':
    case 'drop':
      return [{ kind: t.kind }];
    case 'reject':
      return [{ kind: 'reject', ...(t.with !== undefined ? { with: t.with } : {}) }];
    case 'queue':
      return [{ kind: 'unknown', reason: { code: 'userspace-verdict', target: 'QUEUE' } }];
    case 'dnat': {
      const to = t.to[0];
      const ip = to?.ip ? parseIp(to.ip) : undefined;
      return [{ kind: 'dnat', ...(ip ? { ip } : {}), ...(to?.port !== undefined ? { port: to.port } : {}), ...(t.to.length > 1 || to?.ipEnd || to?.portEnd ? { firstOfRange: true } : {}) }];
    }
    case 'redirect': {
      const port = t.toPorts ? Number(t.toPorts.split('-')[0]) : undefined;
      return [{ kind: 'redirect', ...(port !== undefined && Number.isFinite(port) ? { port } : {}), ...(t.toPorts !== undefined ? { ports: t.toPorts } : {}) }];
    }
    case 'snat': {
      const to = t.to[0]?.ip;
      return [{ kind: 'snat', ...(to ? { to } : {}), flags: t.randomFully ? ['random-fully'] : [] }];
    }
    case 'masquerade':
      return [{ kind: 'masquerade', flags: t.randomFully ? ['random-fully'] : [] }];
    case 'mark':
      return [{ kind: 'mark', which: t.connmark ? 'ct' : 'meta', value: t.value, mask: t.mask }];
    case 'log':
      return [{ kind: 'log', ...(t.prefix !== undefined ? { prefix: t.prefix } : {}) }];
    case 'extension':
      return t.terminating ? [{ kind: 'unknown', reason: { code: 'userspace-verdict', target: t.name } }] : [{ kind: 'extension', name: t.name }];
  }
}

/** What one rule does to this packet: no match, or its target, with statistic shares. */
export function evaluateRule(rule: Rule, st: PathState, ctx: TraceContext, ask: (q: Question) => boolean): readonly Alternative[] {
  let take = 1;
  for (const m of rule.matches) {
    if (m.kind === 'statistic') {
      const p = m.mode === 'random' ? m.probability : 1 / m.every;
      take *= m.negated ? 1 - p : p;
      continue;
    }
    if (!evaluateMatch(m, st, ctx, (u) => ask(question(m, rule, u)))) return noMatch;
  }
  const effects = targetEffects(rule);
  if (take >= 1) return certain(effects);
  return [
    { share: 1 - take, note: { kind: 'statistic', probability: 1 - take, taken: false }, effects: [] },
    { share: take, note: { kind: 'statistic', probability: take, taken: true }, effects },
  ];
}

/** One iptables table as a chain-machine dialect. */
export function iptablesDialect(table: Table, ctx: TraceContext): ChainDialect<Chain, Rule> {
  const past = chainsPastCut(table);
  return {
    findChain: (name) => table.chainsByName.get(name),
    cutAt: (c) => {
      if (past.chains.has(c)) return { ref: { dialect: 'iptables', table: table.name, chain: c.name, file: table.file, line: past.line }, reason: { code: 'chain-truncated', chain: c.name, table: table.name, line: past.line } };
      // A paste without *table (a grep): the chain's rules it left out may claim what its last rule did not.
      // A listing shows which chains it gives whole (`iptables -L` prints every rule of a listed chain).
      const last = c.rules[c.rules.length - 1];
      if (table.implicit && !chainShownWhole(table, c.name)) return { ref: { dialect: 'iptables', table: table.name, chain: c.name, file: table.file, line: last?.line ?? c.line ?? null }, reason: { code: 'chain-partial', chain: c.name, table: table.name, file: table.file } };
      return undefined;
    },
    rulesOf: candidates,
    evaluate: (_c, rule, st, ask) => evaluateRule(rule, st, ctx, ask),
    refOf: (_c, r): StepRef => ({ dialect: 'iptables', table: r.table, chain: r.chain, file: r.file, line: r.line, text: r.raw }),
  };
}

/** A chain's policy step reference: the chain's declaration line. */
export function chainRef(table: Table, chain: Chain, file: string): StepRef {
  return { dialect: 'iptables', table: table.name, chain: chain.name, file, line: chain.line ?? null };
}
