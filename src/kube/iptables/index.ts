/**
 * kube-proxy iptables mode reader: chains, dispatch and filter rules → neutral facts per Service
 * port (../facts.ts), built into ServicePorts by the one builder (../service-builder.ts). Chains of
 * one Service port share a hash suffix (KUBE-SVC/SVL/EXT/FW/XLB-<hash>), so they are grouped by it
 * (group.ts); names come from kube-proxy's comments (identity.ts). Services without endpoints have
 * no chains, only filter-table REJECT/DROP rules, and are found from those (firewall.ts). What a
 * cut paste or a truncated table leaves out is said as absence facts, not read as "no endpoints".
 *
 * By concern: dispatch.ts (KUBE-SERVICES / KUBE-NODEPORTS front ends), balancing.ts (probability
 * ladders, KUBE-SEP DNATs), firewall.ts (REJECT/DROP, source ranges, traffic policies),
 * identity.ts (comments, anchors), leftovers.ts (chains no hook reaches), facts.ts (a group → facts).
 */
import { chainsPastCut, tableShownWhole, type Ruleset } from '../../model/netfilter.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { appendAll } from '../../source/index.js';
import { kubeExternalServicesChain, kubeNodePortsChain, kubeServicesChain } from '../chains.js';
import { endpointLocalityLookup } from '../locality.js';
import { chainOwner } from '../owner.js';
import { reachableChains } from '../reach.js';
import { buildServicePort } from '../service-builder.js';
import { sortServicePorts } from '../shared/sort.js';
import type { ForeignObject, Resolution, ServicePort } from '../types.js';
import { readEndpointChains } from './balancing.js';
import { groupPerServiceChains, readDispatch } from './dispatch.js';
import { readFacts, truncationOf } from './facts.js';
import { readNoEndpointRules, readProxyFirewall } from './firewall.js';
import { Groups, type Group } from './group.js';
import { allLeftoverChains, isLeftover, leftoverProblems, type Reach } from './leftovers.js';

export { ladderShares, unrepeated } from './balancing.js';
export { evidenceOf } from './rules.js';

export function resolveIptables(snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const locality = endpointLocalityLookup(snapshot);
  const problems: Resolution['problems'][number][] = [];
  for (const rs of snapshot.rulesets) {
    const out = resolveRuleset(rs, locality);
    for (const s of out.services) services.push(s);
    for (const o of out.others) others.push(o);
    appendAll(problems, out.problems);
  }
  sortServicePorts(services);
  return { services, others, problems };
}

function resolveRuleset(rs: Ruleset, locality: (ip: string) => boolean | null): Resolution {
  const nat = rs.tables.find((t) => t.name === 'nat');
  const filter = rs.tables.find((t) => t.name === 'filter');
  const groups = new Groups(rs.family);
  // 1. Per-Service chains in every table, grouped by hash.
  groupPerServiceChains(rs, groups);
  // 2. KUBE-SERVICES and KUBE-NODEPORTS dispatch (nat).
  readDispatch(nat, kubeServicesChain, false, groups);
  readDispatch(nat, kubeNodePortsChain, true, groups);
  // 3. Filter-table REJECT/DROP for Services without (local) endpoints; firewall for source ranges.
  readNoEndpointRules(rs, filter, kubeServicesChain, groups);
  readNoEndpointRules(rs, filter, kubeExternalServicesChain, groups);
  readProxyFirewall(filter, groups);

  // 4. Read each group's chains into facts; the builder makes the Service ports.
  const claimed = new Set<string>();
  const context = {
    endpointChains: readEndpointChains(nat),
    truncation: truncationOf(nat),
    cutChains: chainsPastCut(nat).chains,
    // A grep, or a listing of some chains (issue 30): chains not shown are unknown, not absent.
    fragment: nat ? !tableShownWhole(nat) : false,
    claimed,
  };
  const results: ServicePort[] = [];
  // Service chains no hook reaches are leftovers (an earlier proxy mode's): no Service's state.
  const reach: Reach = { nat: nat ? reachableChains(nat) : undefined, filter: filter ? reachableChains(filter) : undefined };
  const leftovers: Group[] = [];
  for (const g of groups.byHash.values()) {
    if (isLeftover(g, reach)) {
      leftovers.push(g);
      continue;
    }
    const facts = readFacts(g, context);
    if (facts) results.push(buildServicePort(facts, locality));
  }
  const left = allLeftoverChains(leftovers, claimed, nat, filter, reach);
  return { services: results, others: othersOf(rs, claimed, left), problems: leftoverProblems(rs.file, leftovers, left, nat, filter) };
}

/** 5. Everything else: kube-proxy infrastructure or other agents. */
function othersOf(rs: Ruleset, claimed: ReadonlySet<string>, left: ReadonlySet<string>): ForeignObject[] {
  const others: ForeignObject[] = [];
  for (const t of rs.tables) {
    const chains = t.chains;
    for (let i = 0; i < chains.length; i++) {
      const c = chains[i];
      if (c.builtin || claimed.has(c.name)) continue;
      const o: ForeignObject = { kind: 'chain', table: t.name, name: c.name, owner: chainOwner(c.name), file: rs.file, ...(c.line !== undefined ? { line: c.line } : {}), ...(left.has(c.name) ? { leftover: true as const } : {}) };
      others.push(o);
    }
  }
  return others;
}
