/**
 * The typed reading of one rule's syntax (as the grammar read it): what it matches and what it
 * does. The modules' readers are in iptables-match.ts, the targets' in iptables-target.ts, the
 * argument values in iptables-values.ts; kube-proxy's own lines are also read without the grammar
 * (iptables-kube-lines.ts) into the same objects.
 */
import type { OptionSyntax, RuleItem } from '../../grammars/common/iptables-syntax.js';
import type { Match, Target } from '../model/netfilter.js';
import { interpretModule, protocolMatch } from './iptables-match.js';
import { interpretTarget, type ChainTarget } from './iptables-target.js';
import { AddressMatch, normalizeProtocol } from './iptables-values.js';

export { normalizeProtocol, parseNatTo } from './iptables-values.js';
export { chainJump, clearSharedTargets, looksLikeExtensionTarget, type ChainTarget } from './iptables-target.js';

export interface RuleMeaning {
  readonly matches: Match[];
  readonly target?: Target;
  readonly comments: string[];
}

/** The order iptables-save prints generic options in (`-s -d -i -o -p -f`), for the reading's order. */
const GENERIC_RANK: Record<string, number> = { source: 0, destination: 1, 'in-interface': 2, 'out-interface': 3, protocol: 4, fragment: 5 };

/** Does any option belong to another item, or carry an abbreviation? (restore input in its own order) */
function scattered(items: readonly RuleItem[]): boolean {
  for (const item of items) {
    if (item.kind !== 'match' && item.kind !== 'target') continue;
    for (const o of item.options) if (o.owner !== undefined || o.canonical !== undefined) return true;
  }
  return false;
}

/**
 * Each match and target with all its options, by their full names, in the order iptables
 * loaded them: the rule as iptables-save would print it. Blocks that only held options of
 * earlier items go.
 */
function regroup(items: readonly RuleItem[]): RuleItem[] {
  const owned = new Map<number, OptionSyntax[]>();
  items.forEach((item) => {
    if (item.kind !== 'match' && item.kind !== 'target') return;
    for (const o of item.options) {
      if (o.owner === undefined) continue;
      let list = owned.get(o.owner);
      if (list === undefined) owned.set(o.owner, (list = []));
      list.push(o);
    }
  });
  const full = (o: OptionSyntax): OptionSyntax => (o.canonical === undefined ? o : { ...o, name: o.canonical });
  const out: RuleItem[] = [];
  items.forEach((item, k) => {
    if (item.kind !== 'match' && item.kind !== 'target') {
      out.push(item);
      return;
    }
    const own = item.options.filter((o) => o.owner === undefined);
    if (item.kind === 'match' && item.spelled === undefined && own.length === 0) return;
    out.push({ ...item, options: [...own, ...(owned.get(k) ?? [])].map(full) });
  });
  return out;
}

/** The match `-p PROTO` loads implicitly (`-p icmpv6 --icmpv6-type …` is icmp6's). */
function implicitModule(protocol: string | undefined): string {
  return protocol === 'ipv6-icmp' ? 'icmp6' : (protocol ?? '');
}

export function interpretRule(written: readonly RuleItem[], chainTarget: ChainTarget): RuleMeaning {
  const items = scattered(written) ? regroup(written) : written;
  // Generic options' matches first, in iptables-save's order, then the modules' in load order:
  // the same reading whatever order the line was written in.
  const generic: Match[] = [];
  const matches: Match[] = [];
  let rank = -1;
  let sortGeneric = false;
  const comments: string[] = [];
  let target: Target | undefined;
  let protocol: string | undefined;
  for (const item of items) {
    switch (item.kind) {
      case 'generic': {
        const r = GENERIC_RANK[item.option] ?? 6;
        if (r < rank) sortGeneric = true;
        rank = r;
        const arg = item.args[0] ?? '';
        switch (item.option) {
          case 'source':
          case 'destination': {
            generic.push(new AddressMatch(item.option === 'source' ? 'src' : 'dst', item.negated, arg));
            break;
          }
          case 'in-interface':
          case 'out-interface':
            generic.push({ kind: 'interface', dir: item.option === 'in-interface' ? 'in' : 'out', negated: item.negated, name: arg });
            break;
          case 'protocol': {
            const p = normalizeProtocol(arg);
            if (!(p === 'all' || p === '0') || item.negated) {
              protocol = p;
              generic.push(item.negated ? { kind: 'protocol', negated: true, protocol: p } : protocolMatch(p));
            }
            break;
          }
          case 'fragment':
            generic.push({ kind: 'fragment', negated: item.negated });
            break;
          case 'ipv4':
          case 'ipv6':
            break;
          default:
            generic.push({ kind: 'unsupported', module: '', text: `${item.negated ? '! ' : ''}${item.spelled} ${item.args.join(' ')}`.trim(), known: false });
        }
        break;
      }
      case 'match':
        interpretModule(item.module === '' ? implicitModule(protocol) : item.module, item.options, matches, comments);
        break;
      case 'target':
        target = interpretTarget(item.name, item.options, item.goto, chainTarget);
        break;
      case 'set-counters':
        break;
    }
  }
  if (sortGeneric) generic.sort((a, b) => genericRank(a) - genericRank(b));
  // Arrays of exactly their length: an array grown by push() keeps room for more (V8), which for
  // 300k rules is a real share of the model.
  const m = generic.length === 0 ? (matches.length === 0 ? matches : matches.slice()) : generic.concat(matches);
  const c = comments.length === 0 ? NO_COMMENTS : comments.slice();
  return target ? { matches: m, target, comments: c } : { matches: m, comments: c };
}

function genericRank(m: Match): number {
  switch (m.kind) {
    case 'address':
      return m.dir === 'src' ? 0 : 1;
    case 'interface':
      return m.dir === 'in' ? 2 : 3;
    case 'protocol':
      return 4;
    case 'fragment':
      return 5;
    default:
      return 6;
  }
}

/** Shared by every rule without a comment (the model is read-only). */
export const NO_COMMENTS: string[] = Object.freeze([]) as unknown as string[];
