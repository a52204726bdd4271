/**
 * One iptables Service port group → the mode-neutral facts (../facts.ts) the one builder turns
 * into a ServicePort: identity, policies and source ranges, endpoints and shares, and what the dump
 * does not show (a truncated table, a cut paste, a grep).
 */
import type { Chain, Table } from '../../model/netfilter.js';
import type { Absence, HashClaim, NoEndpointFact, OwnedObject, ServiceFacts, Target, UnresolvedTarget } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import { uniqueAbsences, uniqueInOrder } from '../shared/unique.js';
import type { Evidence } from '../types.js';
import { readBalancingChain, readTargets, type BalancingChain, type EndpointChain } from './balancing.js';
import { readSourceRanges, trafficPolicies } from './firewall.js';
import type { Group } from './group.js';
import { anchorOf, identityFromChains, protocolFromChains } from './identity.js';
import { jumpTarget, pushEvidence } from './rules.js';

/** What every group of a ruleset is read against. */
export interface FactsContext {
  endpointChains: ReadonlyMap<string, EndpointChain>;
  /** Where nat was cut (no COMMIT), if it was. */
  truncation: Absence | undefined;
  /** Chains that may have lost rules at the cut. */
  cutChains: ReadonlySet<Chain>;
  /** A grep, or a listing of some chains: chains not shown are unknown, not absent. */
  fragment: boolean;
  /** Names of the chains the Service ports own; each group adds its own. */
  claimed: Set<string>;
}

/** Where a table without COMMIT was cut: its last line read. */
export function truncationOf(t: Table | undefined): Absence | undefined {
  if (!t || t.committed || t.implicit) return undefined;
  let line = t.line;
  for (const c of t.chains) {
    if (c.line !== undefined && c.line > line) line = c.line;
    const last = c.rules[c.rules.length - 1];
    if (last && last.line > line) line = last.line;
  }
  return { code: 'table-truncated', table: t.name, file: t.file, line };
}

interface Balancing {
  /** The chain the endpoints come from: SVC (all endpoints), else SVL (internalTrafficPolicy Local), else XLB. */
  chain?: Chain;
  read?: BalancingChain;
  localRead?: BalancingChain;
  targets: Target[];
  unresolved?: UnresolvedTarget[];
  seps: string[];
}

/** The balancing chains read, their rules added to the evidence, and their endpoints. */
function readBalancing(g: Group, c: FactsContext, evidence: Evidence[], absences: Absence[], problems: ServiceProblem[]): Balancing {
  const { svc, svl, ext, xlb } = g;
  const balancing = svc ?? svl ?? xlb;
  const read = balancing ? readBalancingChain(balancing) : undefined;
  const localRead = svl ? (svl === balancing ? read : readBalancingChain(svl)) : undefined;
  const localSeps = svl ? new Set(localRead!.endpoints.map((e) => e.sep)) : undefined;
  // In a truncated table the chain holding the last rule read may have lost its tail at the cut:
  // its ladder and its rules say nothing certain about what followed.
  // Chains after it (iptables-save prints rules in chain order) lost all their rules.
  const cutShort = (x: Chain | undefined) => x !== undefined && c.cutChains.has(x);
  const balancingCut = cutShort(balancing);
  if ([svc, svl, ext, xlb].some(cutShort)) absences.push(c.truncation!);
  if (read && read.repeated > 1) problems.push(problem('repeated-rules', { chain: balancing!.name, times: read.repeated, rules: read.blockLength }));
  const balancingEvidence = evidence.length;
  if (balancing) pushEvidence(evidence, balancing.rules);
  if (svl && svl !== balancing) pushEvidence(evidence, svl.rules);
  if (!read) return { chain: balancing, read, localRead, targets: [], seps: [] };
  const t = readTargets({ balancing: balancing!, read, endpointChains: c.endpointChains, evidence, balancingEvidence, localSeps, balancingCut, truncation: c.truncation, fragment: c.fragment, absences, problems });
  return { chain: balancing, read, localRead, targets: t.targets, unresolved: t.unresolved, seps: uniqueInOrder(t.seps) };
}

/** Dispatch rules (or an EXT/FW chain) to a Service chain the dump does not hold, or past a cut. */
function serviceChainAbsences(g: Group, balancing: Chain | undefined, fwChains: readonly Chain[], truncation: Absence | undefined, absences: Absence[]): void {
  // Dispatch rules to a Service chain the dump does not hold (a grep, a cut paste).
  // …or its EXT/FW chain goes to a Service chain the dump does not hold (a grep of the EXT chain).
  const absentFromExt = balancing ? undefined : [g.ext, ...fwChains].flatMap((c) => c?.rules ?? []).map(jumpTarget).find((t) => t !== undefined && /^KUBE-(SVC|SVL)-/.test(t));
  if (!balancing && (g.absentChain ?? absentFromExt) !== undefined) absences.push(truncation ?? { code: 'service-chain-absent', chain: (g.absentChain ?? absentFromExt)! });
  else if (balancing && balancing.rules.length === 0 && truncation) absences.push(truncation);
  // Chains of this Service were read (an EXT or FW chain declared before the cut) but no Service
  // chain: in a truncated table it may simply be past the cut, unless a rule says there are none.
  else if (!balancing && truncation && !g.noEndpoints && !g.noLocalEndpoints) absences.push(truncation);
}

function noEndpointFacts(g: Group, read: BalancingChain | undefined): NoEndpointFact[] {
  const noEndpoints: NoEndpointFact[] = [];
  if (g.noEndpoints) noEndpoints.push({ scope: 'all', verdict: 'reject' });
  if (g.noLocalEndpoints) noEndpoints.push({ scope: 'local', verdict: 'drop' });
  if (read?.noEndpoints) noEndpoints.push(read.noEndpoints);
  return noEndpoints;
}

/** The chains the Service port owns (claimed, so they are not listed as other objects). */
function ownedChains(g: Group, fwChains: readonly Chain[], seps: readonly string[], claimed: Set<string>): OwnedObject[] {
  const owned: OwnedObject[] = [];
  const own = (role: OwnedObject['role'], name: string) => {
    owned.push({ role, name });
    claimed.add(name);
  };
  if (g.svc) own('svc', g.svc.name);
  if (g.svl) own('svl', g.svl.name);
  if (g.ext) own('ext', g.ext.name);
  if (g.xlb) own('xlb', g.xlb.name);
  for (const fw of fwChains) own('fw', fw.name);
  for (const sep of seps) own('endpoint', sep);
  return owned;
}

export function readFacts(g: Group, c: FactsContext): ServiceFacts | undefined {
  const { svc, svl, ext, xlb } = g;
  const fwChains = g.fw ? g.fw.map((f) => f.chain) : [];
  const problems: ServiceProblem[] = [];
  const absences: Absence[] = [];
  // The group's evidence so far (dispatch and filter rules), then its chains'.
  const evidence = g.evidence;

  if (!g.identity) g.identity = identityFromChains([svc, svl, ext, xlb, ...fwChains]);
  if (!g.protocol) g.protocol = protocolFromChains([svc, svl, ext]);
  const { externalTrafficPolicy, internalTrafficPolicy } = trafficPolicies(g);
  if (ext) pushEvidence(evidence, ext.rules);
  readSourceRanges(g, fwChains, evidence);

  const b = readBalancing(g, c, evidence, absences, problems);
  const { read, localRead } = b;
  const balancing = b.chain;
  // No protocol in the dispatch or Service chains (a grep, no comments): the DNAT rules say it.
  if (!g.protocol) g.protocol = protocolFromChains(b.seps.map((s) => c.endpointChains.get(s)?.chain));

  if (g.ambiguousExternal && g.externalIPs && g.externalIPs.size > 0 && !g.inNat) {
    problems.push(problem('external-kind-ambiguous', { addresses: [...g.externalIPs] }));
  }
  const hasChains = Boolean(svc || svl || ext || xlb || fwChains.length);
  if (!hasChains && !g.noEndpoints && !g.noLocalEndpoints && g.clusterIP === undefined && g.nodePort === undefined) return undefined;
  serviceChainAbsences(g, balancing, fwChains, c.truncation, absences);
  const noEndpoints = noEndpointFacts(g, read);
  const owned = ownedChains(g, fwChains, b.seps, c.claimed);

  const hashClaims: HashClaim[] = [];
  if (g.identity) hashClaims.push({ kind: 'service-chain', hash: g.hash });
  const affinity = read?.affinity !== undefined ? read.affinity : localRead?.affinity;
  if (affinity === null) problems.push(problem('affinity-hidden', { chain: (read?.affinity === null ? balancing : svl)!.name }));
  const id = g.identity;
  return {
    mode: 'iptables',
    family: g.family,
    anchor: anchorOf(g, svc ?? svl),
    // Fixed-shape literals (undefined rather than absent fields): one per Service port.
    identity: id ? { namespace: id.namespace, name: id.name, portName: id.portName, by: 'comment' } : undefined,
    protocol: g.protocol,
    port: g.port,
    frontEnds: g.frontEnds ?? [],
    sourceRanges: g.sourceRanges ? [...g.sourceRanges] : [],
    externalTrafficPolicy,
    internalTrafficPolicy,
    affinitySeconds: affinity,
    targets: b.targets,
    ...(b.unresolved ? { unresolved: b.unresolved } : {}),
    emptyBalancing: balancing && read && read.endpoints.length === 0 && !g.noEndpoints && !read.noEndpoints ? balancing.name : undefined,
    noEndpoints,
    absences: uniqueAbsences(absences),
    problems,
    owned,
    hashClaims,
    evidence,
  };
}
