/**
 * Readers of one iptables rule as kube-proxy writes it: its protocol, destination port and address,
 * jump target, comment identity, statistic and recent matches, and the evidence line it becomes.
 * Plain loops, as they run for every dispatch and chain rule (no per-call closures).
 */
import type { Match, Rule, Ruleset } from '../../model/netfilter.js';
import { formatCidr, formatIp, type Cidr } from '../../model/addr.js';
import { parseServiceComment, type CommentIdentity } from '../comments.js';
import type { Evidence, Protocol } from '../types.js';

// Evidence is built for rules chain by chain: the `table/chain` text is made once per chain.
let lastTable: string | undefined;
let lastChain: string | undefined;
let lastWhere = '';

export const evidenceOf = (r: Rule): Evidence => {
  if (r.chain !== lastChain || r.table !== lastTable) {
    lastTable = r.table;
    lastChain = r.chain;
    lastWhere = `${r.table}/${r.chain}`;
  }
  return { file: r.file, line: r.line, text: r.raw, where: lastWhere };
};

export function pushEvidence(out: Evidence[], rules: readonly Rule[]): void {
  for (let i = 0; i < rules.length; i++) out.push(evidenceOf(rules[i]));
}

export function ruleProtocol(r: Rule): Protocol | undefined {
  for (const m of r.matches) {
    if (m.kind !== 'protocol' || m.negated) continue;
    const p = m.protocol;
    return p === 'tcp' || p === 'udp' || p === 'sctp' ? p : undefined;
  }
  return undefined;
}

/** The single destination port of a rule (`--dport 53`), not a range or a negation. */
export function ruleDport(r: Rule): number | undefined {
  for (const m of r.matches) {
    if (m.kind === 'port' && m.dir === 'dst' && !m.negated && m.ranges.length === 1 && m.ranges[0].from === m.ranges[0].to) return m.ranges[0].from;
  }
  return undefined;
}

/** The first address match of a direction and negation (`-d 10.96.0.10/32`, `! -s 10.244.0.0/16`). */
export function ruleAddress(r: Rule, dir: 'src' | 'dst', negated: boolean): Extract<Match, { kind: 'address' }> | undefined {
  for (const m of r.matches) if (m.kind === 'address' && m.dir === dir && m.negated === negated) return m;
  return undefined;
}

/** A host address without its /32 (/128), any other prefix as a CIDR. */
function cidrText(cidr: Cidr): string {
  const host = cidr.prefix === (cidr.family === 4 ? 32 : 128);
  return host ? formatIp({ family: cidr.family, value: cidr.network }) : formatCidr(cidr);
}

export function ruleDestination(r: Rule): string | undefined {
  const m = ruleAddress(r, 'dst', false);
  return m?.cidr ? cidrText(m.cidr) : undefined;
}

/** `-m addrtype --dst-type LOCAL`: the node-port rules of KUBE-EXTERNAL-SERVICES. */
export function matchesLocalDestination(r: Rule): boolean {
  for (const m of r.matches) if (m.kind === 'addrtype' && m.dir === 'dst' && !m.negated && m.types.includes('LOCAL')) return true;
  return false;
}

export function recentCheck(r: Rule): Extract<Match, { kind: 'recent' }> | undefined {
  for (const m of r.matches) if (m.kind === 'recent' && m.op === 'rcheck' && !m.negated) return m;
  return undefined;
}

/** A match nft shows only as `xt match NAME` (the nft view of iptables-nft): there, options unknown. */
export function residue(r: Rule): Extract<Match, { kind: 'unsupported' }> | undefined {
  for (const m of r.matches) if (m.kind === 'unsupported' && m.residue) return m;
  return undefined;
}

/**
 * In the nft view of iptables-nft, where kube-proxy's comments are not printed: a filter
 * KUBE-SERVICES / KUBE-EXTERNAL-SERVICES rule with a port and a REJECT (no endpoints) or DROP (no
 * local endpoints) is kube-proxy's rule for a Service port without (local) endpoints — the only
 * rules kube-proxy writes there with that shape. Undefined elsewhere (iptables-save prints comments).
 */
export function unnamedNoEndpointRule(rs: Ruleset, r: Rule): 'reject' | 'drop' | undefined {
  if (rs.viewOf !== 'nft' || r.comments.length > 0 || ruleDport(r) === undefined) return undefined;
  if (!ruleDestination(r) && !matchesLocalDestination(r)) return undefined;
  if (r.target?.kind === 'reject') return 'reject';
  if (r.target?.kind === 'drop') return 'drop';
  return undefined;
}

export function statistic(r: Rule): Extract<Match, { kind: 'statistic' }> | undefined {
  for (const m of r.matches) if (m.kind === 'statistic') return m;
  return undefined;
}

export function jumpTarget(r: Rule): string | undefined {
  return r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') ? r.target.chain : undefined;
}

export function commentIdentity(r: Rule): CommentIdentity | undefined {
  for (const c of r.comments) {
    const id = parseServiceComment(c);
    if (id) return id;
  }
  return undefined;
}
