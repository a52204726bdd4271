/**
 * iptables balancing: a KUBE-SVC/SVL/XLB chain's probability ladder (`-m statistic`) to KUBE-SEP
 * endpoint chains, each ending in a DNAT; the shares it gives each endpoint, affinity (`-m recent`),
 * and its DROP/REJECT for traffic without (local) endpoints.
 */
import type { Chain, NatTo, Rule, Table } from '../../model/netfilter.js';
import { isEndpointChain, kubeMarkDropChain, kubeMarkMasqChain } from '../chains.js';
import { endpointFromComment, parseServiceComment } from '../comments.js';
import type { Absence, NoEndpointFact, Target, UnresolvedTarget } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { Evidence } from '../types.js';
import { evidenceOf, jumpTarget, recentCheck, residue, statistic } from './rules.js';

/** Build the ladder's shares: rule i takes p_i of what the rules before it left. */
export function ladderShares(probabilities: readonly (number | undefined)[]): { shares: number[]; leftover: number; unreachableFrom?: number } {
  let remaining = 1;
  const shares: number[] = [];
  let unreachableFrom: number | undefined;
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i];
    const take = p === undefined ? 1 : p;
    if (remaining === 0 && unreachableFrom === undefined) unreachableFrom = i;
    shares.push(remaining * take);
    remaining *= 1 - take;
  }
  return unreachableFrom === undefined ? { shares, leftover: remaining } : { shares, leftover: remaining, unreachableFrom };
}

/**
 * A chain's rules when they are one block repeated (a paste done twice, or a dump concatenated
 * with itself): the block once, and how many times it came. Otherwise the rules, once.
 */
export function unrepeated(rules: readonly Rule[]): { rules: readonly Rule[]; times: number } {
  const n = rules.length;
  for (let period = 1; period <= n / 2; period++) {
    if (n % period !== 0) continue;
    let same = true;
    for (let i = period; i < n && same; i++) same = rules[i].raw === rules[i - period].raw;
    if (same) return { rules: rules.slice(0, period), times: n / period };
  }
  return { rules, times: 1 };
}

interface EndpointRule {
  rule: Rule;
  /** Position of the rule in its chain. */
  index: number;
  sep: string;
  /** undefined: the rule takes everything that reaches it; null: the evidence hides it (`xt match statistic`). */
  probability: number | undefined | null;
}

export interface BalancingChain {
  endpoints: EndpointRule[];
  /** null: an affinity rule whose timeout the evidence hides (`xt match recent`). */
  affinity?: number | null;
  /** Matches of endpoint rules the evidence shows only as `xt` residue. */
  hidden: string[];
  /** A DROP/REJECT for traffic without (local) endpoints. */
  noEndpoints?: NoEndpointFact;
  /** The chain's rules are one block repeated this many times (1: not repeated); only the first block is read. */
  repeated: number;
  blockLength: number;
}

/** The endpoint rules of a SVC/SVL/XLB chain, the affinity timeout, and its drop/reject for no (local) endpoints. */
export function readBalancingChain(chain: Chain): BalancingChain {
  const endpoints: EndpointRule[] = [];
  let affinity: number | undefined | null;
  let noEndpoints: NoEndpointFact | undefined;
  const hidden: string[] = [];
  let affinityOnly: EndpointRule[] | undefined;
  const { rules, times } = unrepeated(chain.rules);
  // An XLB/SVL chain's drop (KUBE-MARK-DROP, kube-proxy ≤1.23: "has no local endpoints") is for
  // traffic without a local endpoint; a REJECT is for a Service without endpoints.
  const localChain = /^KUBE-(XLB|SVL)-/.test(chain.name);
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i];
    const target = jumpTarget(r);
    if (target === kubeMarkMasqChain) continue;
    if (target === kubeMarkDropChain || r.target?.kind === 'drop' || r.target?.kind === 'reject') {
      const reject = r.target?.kind === 'reject';
      const local = !reject && (localChain || r.comments.some((c) => c.includes('has no local endpoints')));
      noEndpoints ??= { scope: local ? 'local' : 'all', verdict: reject ? 'reject' : 'drop' };
      continue;
    }
    if (!target) continue;
    const xt = residue(r);
    if (xt && isEndpointChain(target)) {
      // kube-proxy's endpoint rules carry `-m recent --rcheck` (affinity) or `-m statistic`: nft shows
      // either only by name. An affinity check is not an endpoint rule; a share it hides is unknown.
      if (xt.module === 'recent') {
        affinity ??= null;
        (affinityOnly ??= []).push({ rule: r, index: i, sep: target, probability: null });
      } else {
        if (!hidden.includes(xt.text)) hidden.push(xt.text);
        endpoints.push({ rule: r, index: i, sep: target, probability: null });
      }
      continue;
    }
    const recent = recentCheck(r);
    if (recent) {
      affinity = recent.seconds ?? 10800;
      if (isEndpointChain(target)) (affinityOnly ??= []).push({ rule: r, index: i, sep: target, probability: null });
      continue;
    }
    if (isEndpointChain(target)) endpoints.push({ rule: r, index: i, sep: target, probability: endpointProbability(r) });
  }
  if (affinityOnly) addAffinityOnly(endpoints, affinityOnly);
  return { endpoints, hidden, repeated: times, blockLength: rules.length, ...(affinity !== undefined ? { affinity } : {}), ...(noEndpoints ? { noEndpoints } : {}) };
}

/**
 * kube-proxy writes an affinity check and a ladder rule for every endpoint. An endpoint chain only an
 * affinity check names (a grep that kept the `--rcheck` lines, not the ladder) is still an endpoint:
 * its share is not in the evidence.
 */
function addAffinityOnly(endpoints: EndpointRule[], affinityOnly: readonly EndpointRule[]): void {
  const inLadder = new Set(endpoints.map((e) => e.sep));
  for (const a of affinityOnly) {
    if (inLadder.has(a.sep)) continue;
    inLadder.add(a.sep);
    endpoints.push(a);
  }
}

/** `-m statistic --mode random --probability p` or `--mode nth --every n`; undefined when the rule takes all. */
function endpointProbability(r: Rule): number | undefined {
  const stat = statistic(r);
  if (!stat) return undefined;
  if (stat.mode === 'random') return stat.negated ? undefined : stat.probability;
  return 1 / stat.every;
}

/** The DNAT destination of a SEP chain: its first DNAT rule's first address. */
function dnatOf(chain: Chain | undefined): NatTo | undefined {
  if (!chain) return undefined;
  for (const r of chain.rules) {
    if (r.target?.kind === 'dnat' && r.target.to[0]?.ip) return r.target.to[0];
  }
  return undefined;
}

/** `-> 10.244.0.3:53` in the endpoint rule's comment, for SEP chains without a DNAT rule. */
function endpointFromRuleComment(r: Rule): { ip: string; port: number } | undefined {
  for (const c of r.comments) {
    const id = parseServiceComment(c);
    const text = id ? endpointFromComment(id.rest) : undefined;
    if (!text) continue;
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(text);
    return m ? { ip: m[1], port: Number(m[2]) } : undefined;
  }
  return undefined;
}

/** A SEP chain of nat as its endpoint uses it. */
export interface EndpointChain {
  chain: Chain;
  dnat: NatTo | undefined;
  /** Evidence for its endpoint: a first slot for the balancing rule that jumps here, then the chain's rules. */
  evidence: Evidence[];
}

/**
 * Every SEP chain of nat, read in one pass in table order. Looking each up and reading it when its
 * endpoint comes (in Service order, i.e. all over the heap) misses the CPU caches at every step:
 * several times slower with ~90k of them at 10k Services.
 */
export function readEndpointChains(nat: Table | undefined): Map<string, EndpointChain> {
  const out = new Map<string, EndpointChain>();
  // forEach, not for…of: no [name, chain] pair per chain.
  nat?.chainsByName.forEach((chain, name) => {
    if (!isEndpointChain(name)) return;
    const rules = chain.rules;
    const evidence = new Array<Evidence>(rules.length + 1);
    for (let i = 0; i < rules.length; i++) evidence[i + 1] = evidenceOf(rules[i]);
    out.set(name, { chain, dnat: dnatOf(chain), evidence });
  });
  return out;
}

/**
 * An endpoint's evidence: its rule in the balancing chain (the Service's own evidence object for
 * that line, shared), then its SEP chain's rules; an array of exactly that length, as ~90k of them
 * stay in memory at 10k Services.
 */
function endpointEvidence(ruleEvidence: Evidence, sep: EndpointChain | undefined): Evidence[] {
  if (!sep) return [ruleEvidence];
  // The SEP chain's first endpoint takes its list; another one (a chain used twice) gets a copy.
  const list = sep.evidence[0] === undefined ? sep.evidence : sep.evidence.slice();
  list[0] = ruleEvidence;
  return list;
}

/** What the balancing chain's endpoints are read against. */
export interface TargetContext {
  balancing: Chain;
  read: BalancingChain;
  endpointChains: ReadonlyMap<string, EndpointChain>;
  /** The Service port's evidence, and where the balancing chain's rules start in it. */
  evidence: readonly Evidence[];
  balancingEvidence: number;
  /** SEP chains of the SVL chain: local endpoints (undefined: no SVL chain says). */
  localSeps: ReadonlySet<string> | undefined;
  /** The balancing chain may have lost its tail at a truncation. */
  balancingCut: boolean;
  truncation: Absence | undefined;
  fragment: boolean;
  absences: Absence[];
  problems: ServiceProblem[];
}

/** Shares of the ladder; every share unknown when one is hidden (each is what the earlier rules leave). */
function ladderOf(c: TargetContext): (number | null)[] {
  const { read, balancing } = c;
  const hidden = read.endpoints.some((e) => e.probability === null);
  const ladder = ladderShares(read.endpoints.map((e) => e.probability ?? undefined));
  const shares: (number | null)[] = hidden ? ladder.shares.map(() => null) : ladder.shares;
  const { leftover, unreachableFrom } = hidden ? { leftover: 0, unreachableFrom: undefined } : ladder;
  for (const match of read.hidden) c.problems.push(problem('share-hidden', { chain: balancing.name, match }));
  if (read.endpoints.length > 0 && leftover > 1e-6 && !c.balancingCut) c.problems.push(problem('ladder-leftover', { chain: balancing.name, share: leftover }));
  if (unreachableFrom !== undefined && !c.balancingCut) c.problems.push(problem('ladder-unreachable-rule', { chain: balancing.name, rule: unreachableFrom + 1 }));
  return shares;
}

/** What the evidence does not show, or shows wrong, about an endpoint's SEP chain. */
function checkEndpointChain(c: TargetContext, sepName: string, sep: EndpointChain | undefined): void {
  const sepChain = sep?.chain;
  // A chain with neither a declaration nor rules is not in the evidence: cut out of a paste or
  // past a truncation, which says nothing about the endpoint.
  if (!sepChain || (sepChain.line === undefined && sepChain.rules.length === 0)) c.absences.push(c.truncation ?? { code: 'endpoint-chain-absent', chain: sepName, from: c.balancing.name });
  else if (sepChain.rules.length === 0 && c.truncation) c.absences.push(c.truncation);
  else if (sepChain.line === undefined && !c.fragment) c.problems.push(problem('endpoint-chain-undeclared', { chain: c.balancing.name, target: sepName }));
  else if (!sep?.dnat) c.problems.push(problem('endpoint-chain-without-dnat', { chain: sepName }));
}

/** The balancing chain's endpoints with their shares, those whose address is unknown, and the SEP chains named. */
export function readTargets(c: TargetContext): { targets: Target[]; unresolved?: UnresolvedTarget[]; seps: string[] } {
  const { read } = c;
  const shares = ladderOf(c);
  const targets: Target[] = [];
  let unresolved: UnresolvedTarget[] | undefined;
  const seps: string[] = [];
  const n = read.endpoints.length;
  let noZeroShares: boolean | undefined;
  for (let i = 0; i < n; i++) {
    const e = read.endpoints[i];
    const sep = c.endpointChains.get(e.sep);
    seps.push(e.sep);
    const dnat = sep?.dnat;
    const epEvidence = endpointEvidence(c.evidence[c.balancingEvidence + e.index], sep);
    let ip = dnat?.ip;
    let port = dnat?.port ?? null;
    checkEndpointChain(c, e.sep, sep);
    if (!ip) {
      const fromComment = endpointFromRuleComment(e.rule);
      if (fromComment) ({ ip, port } = fromComment);
    }
    if (!ip) {
      // An endpoint chain the rules name but the evidence does not hold: an endpoint whose address is unknown.
      (unresolved ??= []).push({ via: e.sep, share: shares[i], evidence: epEvidence });
      continue;
    }
    const share = shares[i];
    if (!c.balancingCut && share !== null && Math.abs(share - 1 / n) > 1e-6 && (noZeroShares ??= read.endpoints.every((x) => x.probability === undefined || (x.probability !== null && x.probability > 0)))) {
      c.problems.push(problem('unequal-share', { endpoint: `${ip}:${port}`, share, equal: 1 / n }));
    }
    // One shape for every target (no spread): ~90k of them at 10k Services.
    targets.push({ ip, port, share: shares[i], via: e.sep, local: c.localSeps ? c.localSeps.has(e.sep) : undefined, evidence: epEvidence });
  }
  return unresolved ? { targets, unresolved, seps } : { targets, seps };
}
