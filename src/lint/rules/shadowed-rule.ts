import type { Match, Rule } from '../../model/netfilter.js';
import { isTerminal } from '../../model/netfilter.js';
import { chainOwner } from '../../kube/chains.js';
import { createRule, type RuleContext } from '../rule.js';
import { ruleRelated } from '../context.js';
import { serviceLabelOf, serviceOfRule } from '../util.js';

/**
 * A condition key for a match whose meaning does not depend on state kpx cannot see, so two equal keys
 * match exactly the same packets. `null` = ignored (comments match everything); `undefined` = not
 * generic (statistic, recent, unknown modules…): a rule with such a match never shadows another.
 */
function keyOf(m: Match): string | null | undefined {
  const n = (neg: boolean) => (neg ? '!' : '');
  switch (m.kind) {
    case 'comment':
      return null;
    case 'address':
      return m.cidr ? `a${m.dir}${n(m.negated)}${m.cidr.family}/${m.cidr.network.toString(16)}/${m.cidr.prefix}` : `a${m.dir}${n(m.negated)}${m.text}`;
    case 'interface':
      return `i${m.dir}${n(m.negated)}${m.name}`;
    case 'protocol':
      return `p${n(m.negated)}${m.protocol.toLowerCase()}`;
    case 'port':
      return `P${m.dir}${n(m.negated)}${m.ranges.map((r) => `${r.from}-${r.to}`).sort().join(',')}`;
    case 'fragment':
      return `f${n(m.negated)}`;
    case 'addrtype':
      return `t${m.dir}${n(m.negated)}${[...m.types].sort().join(',')}${m.limitIface ?? ''}`;
    case 'ctstate':
      return `c${n(m.negated)}${[...m.states].map((s) => s.toUpperCase()).sort().join(',')}`;
    case 'mark':
      return `m${m.connmark ? 'c' : ''}${n(m.negated)}${m.value}/${m.mask}`;
    case 'set':
      return `s${n(m.negated)}${m.name}:${m.flags.join(',')}`;
    case 'tcp-flags':
      return `T${n(m.negated)}${[...m.mask].sort().join(',')}/${[...m.comp].sort().join(',')}`;
    case 'icmp':
      return `I${n(m.negated)}${m.type}`;
    case 'iprange':
      return `r${m.dir}${n(m.negated)}${m.from}-${m.to}`;
    case 'physdev':
      return `d${m.option}${n(m.negated)}${m.value ?? ''}`;
    default:
      return undefined; // statistic, recent, socket, unsupported
  }
}

/** Keys of a rule's conditions (sorted, unique), or undefined when a condition is not generic. */
function keysOf(r: Rule, strict: boolean): string[] | undefined {
  const out = new Set<string>();
  for (const m of r.matches) {
    const k = keyOf(m);
    if (k === null) continue;
    if (k === undefined) {
      if (strict) return undefined;
      continue;
    }
    out.add(k);
  }
  return [...out].sort();
}

/** Non-negated address matches of a rule, for prefix generalisation (an earlier `-d 10.0.0.0/8` covers `-d 10.1.2.3`). */
function addressAncestors(m: Match, prefixes: ReadonlySet<number> | undefined): string[] {
  if (m.kind !== 'address' || m.negated || !m.cidr || !prefixes) return [];
  const out: string[] = [];
  const bits = m.cidr.family === 4 ? 32 : 128;
  for (const q of prefixes) {
    if (q >= m.cidr.prefix) continue;
    const mask = ((1n << BigInt(q)) - 1n) << BigInt(bits - q);
    out.push(`a${m.dir}${m.cidr.family}/${(m.cidr.network & mask).toString(16)}/${q}`);
  }
  return out;
}

type Kind = 'terminal' | 'jump';

/** Same conditions (comments aside) and the same target. */
function isDuplicate(a: Rule, b: Rule): boolean {
  const ka = keysOf(a, false);
  const kb = keysOf(b, false);
  return ka !== undefined && kb !== undefined && ka.join('\u0001') === kb.join('\u0001') && JSON.stringify(a.target) === JSON.stringify(b.target) && a.matches.filter((m) => m.kind !== 'comment').length === b.matches.filter((m) => m.kind !== 'comment').length;
}

/** Upper bound on condition subsets tried per rule (keeps the check linear; beyond it, findings may be missed, never invented). */
const MAX_COMBINATIONS = 4096;

/** An earlier rule that covers a later one: it catches every packet (`terminal`), or is the same jump. */
interface Cover {
  readonly by: Rule;
  readonly kind: Kind;
}

/**
 * The rules of one chain that can shadow later ones, indexed by their condition signature and
 * what they do (`|T` terminal, `|J<chain>` a jump), with every condition key they use and the
 * prefix lengths of their addresses (to find a later rule's address inside an earlier one's).
 */
class ShadowIndex {
  private readonly index = new Map<string, Rule>();
  private readonly seenKeys = new Set<string>();
  /** `${dir}${family}` → prefix lengths used by indexed rules. */
  private readonly prefixes = new Map<string, Set<number>>();

  get size(): number {
    return this.index.size;
  }

  /** The earlier rule that covers `r`, if any. */
  coverOf(r: Rule): Cover | undefined {
    const term = this.earlierTerminal(this.optionsOf(r));
    if (term) return { by: term, kind: 'terminal' };
    // A jump is only reported as redundant when the earlier rule is the same rule (an agent that
    // appended its rules twice): a wider earlier jump to the same chain is a common, harmless pattern
    // (kube-proxy's KUBE-FW chains list load-balancer IPs inside the source ranges).
    const target = r.target && r.target.kind === 'jump' ? r.target.chain : undefined;
    if (!target) return undefined;
    const own = keysOf(r, true);
    const j = own ? this.index.get(`${own.join('\u0001')}|J${target}`) : undefined;
    return j ? { by: j, kind: 'jump' } : undefined;
  }

  /** Per condition of `r` an earlier rule also has: the keys (its own, or a wider address) an earlier rule may have used. */
  private optionsOf(r: Rule): string[][] {
    const options: string[][] = [];
    const seenMatch = new Set<string>();
    for (const m of r.matches) {
      const k = keyOf(m);
      if (k === null || k === undefined || seenMatch.has(k)) continue;
      seenMatch.add(k);
      const opts: string[] = [];
      if (this.seenKeys.has(k)) opts.push(k);
      if (m.kind === 'address' && m.cidr) for (const a of addressAncestors(m, this.prefixes.get(`${m.dir}${m.cidr.family}`))) if (this.seenKeys.has(a)) opts.push(a);
      if (opts.length) options.push(opts);
    }
    return options;
  }

  /** An earlier terminal rule whose conditions are a subset of the options (each left out, or one picked), up to MAX_COMBINATIONS tries. */
  private earlierTerminal(options: readonly string[][]): Rule | undefined {
    let found: Rule | undefined;
    let budget = MAX_COMBINATIONS;
    const pick: string[] = [];
    const walk = (i: number): void => {
      if (found || budget <= 0) return;
      if (i === options.length) {
        budget--;
        const sig = [...pick].sort().join('\u0001');
        found = this.index.get(`${sig}|T`);
        return;
      }
      walk(i + 1); // condition not in the earlier rule
      for (const o of options[i]) {
        pick.push(o);
        walk(i + 1);
        pick.pop();
      }
    };
    walk(0);
    return found;
  }

  /** Index `r` when it can shadow later rules (it ends the packet's walk here, or jumps). */
  add(r: Rule): void {
    const t = r.target;
    if (!t) return;
    const kind: Kind | undefined = isTerminal(t) || t.kind === 'goto' || t.kind === 'return' ? 'terminal' : t.kind === 'jump' ? 'jump' : undefined;
    if (!kind) return;
    const keys = keysOf(r, true);
    if (!keys) return;
    const sig = `${keys.join('\u0001')}|${kind === 'terminal' ? 'T' : `J${(t as { chain: string }).chain}`}`;
    if (this.index.has(sig)) return;
    this.index.set(sig, r);
    for (const k of keys) this.seenKeys.add(k);
    for (const m of r.matches) {
      if (m.kind !== 'address' || m.negated || !m.cidr) continue;
      const pk = `${m.dir}${m.cidr.family}`;
      let s = this.prefixes.get(pk);
      if (!s) this.prefixes.set(pk, (s = new Set()));
      s.add(m.cidr.prefix);
    }
  }
}

function reportCover(ctx: RuleContext, chain: string, r: Rule, { by, kind }: Cover): void {
  const target = r.target && r.target.kind === 'jump' ? r.target.chain : undefined;
  const action = by.target?.kind === 'goto' ? `goto ${by.target.chain}` : (by.target?.kind ?? '').toUpperCase();
  ctx.report({
    messageId: kind === 'terminal' ? 'shadowed' : 'redundant',
    data: { line: by.line, chain, action, target: target ?? '' },
    file: r.file,
    line: r.line,
    column: r.column,
    text: r.raw,
    ...serviceLabelOf(ctx, serviceOfRule(ctx, r)),
    related: [ruleRelated(by)],
  });
}

export default createRule({
  id: 'shadowed-rule',
  meta: {
    description: 'A rule that can never match (or is redundant) because an earlier rule in the same chain catches every packet it would.',
    severity: 'warning',
    docs: [
      'iptables evaluates a chain top to bottom. When an earlier rule matches every packet a later rule',
      'matches (its conditions are a subset of the later rule\'s, e.g. the same conditions, or a wider `-d`',
      'prefix) and it ends the chain for those packets (ACCEPT, DROP, REJECT, DNAT, RETURN, `-g`…), the later',
      'rule never matches: an intended exception, Service or block is dead. When the same rule jumps to the',
      'same chain twice (`-j X` appended twice), the second is redundant: the packet walks X twice.',
      '',
      'kpx only compares conditions it can decide exactly (addresses, interfaces, protocols, ports, conntrack',
      'state, marks, sets, addrtype…); rules with `-m statistic`, `-m recent` or modules kpx does not model',
      'are never taken as shadowing, so every finding is certain.',
      '',
      'Exact duplicates inside kube-proxy\'s own chains are not reported: kube-proxy writes some by design (the',
      'health-check NodePort rule once per port of a multi-port Service).',
      '',
      '**Fix:** reorder the rules (the specific rule first) or delete the dead one. When both rules come from',
      'an agent (Docker, a CNI, firewalld), the agent probably appended its rules twice: restart it.',
    ].join('\n'),
    messages: {
      shadowed: 'this rule never matches: the earlier rule at line {{line}} in {{chain}} catches every packet it would ({{action}})',
      redundant: 'this rule is redundant: the earlier rule at line {{line}} in {{chain}} already jumps to {{target}} for every packet it would match',
    },
  },
  check(ctx) {
    for (const t of ctx.tables) {
      for (const c of t.table.chains) {
        if (c.rules.length < 2) continue;
        const kubeOwned = !c.builtin && chainOwner(c.name) === 'kube-proxy';
        const index = new ShadowIndex();
        for (const r of c.rules) {
          const found = index.size > 0 ? index.coverOf(r) : undefined;
          // kube-proxy itself writes exact duplicates in its own chains (the health-check NodePort ACCEPT
          // once per port of a multi-port Service): harmless, not reported there.
          if (found && !(kubeOwned && isDuplicate(found.by, r))) reportCover(ctx, c.name, r, found);
          index.add(r);
        }
      }
    }
  },
});
