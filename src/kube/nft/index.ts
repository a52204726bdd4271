/**
 * kube-proxy nftables mode → Service ports (kubernetes pkg/proxy/nftables/proxier.go), every layout
 * from 1.29 to 1.37 (src/generate/nft-layout.ts says what changed when): the names of maps, sets and
 * per-Service chains never changed; what a service chain holds did (a numgen vmap to endpoint chains,
 * from 1.36 a numgen DNAT map, from 1.37 a plain DNAT for a lone endpoint), and 1.29 has no cluster-ips.
 *
 * Each `table ip kube-proxy` / `table ip6 kube-proxy` (and a pasted fragment without a table
 * header that holds kube-proxy objects) is read on its own, by concern:
 *  - dispatch.ts: the dispatch maps (`service-ips`, `service-nodeports`, `no-endpoint-services` /
 *    `no-endpoint-nodeports`, `firewall-ips`) → groups; addresses.ts: which address is what;
 *  - identity.ts: per Service port chains `service-|local-|external-|firewall-<HASH8>-ns/svc/proto/portname`
 *    and per endpoint chains `endpoint-<HASH8>-ns/svc/proto/portname__IP/PORT` (IPv6 `:` → `.`);
 *    HASH8 = base32(sha256(the name after the hash))[:8] (hashAndTruncate());
 *  - balancing.ts, endpoints.ts: numgen shares, endpoint DNATs, affinity;
 *  - firewall.ts: source ranges, traffic policies, no-endpoint verdicts;
 *  - facts.ts: a group → neutral facts → the one builder.
 */
import type { NftChain, NftRuleset, NftTable } from '../../model/nft.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { appendAll } from '../../source/index.js';
import { endpointLocalityLookup } from '../locality.js';
import { nftTableOwner } from '../owner.js';
import { problem } from '../problems.js';
import { sortServicePorts } from '../shared/sort.js';
import type { ForeignObject, Resolution, ServicePort } from '../types.js';
import { clusterIPHints } from './addresses.js';
import { groupChains, NftGroups, readFirewallIPs, readNoEndpointNodePorts, readNoEndpointServices, readServiceIPs, readServiceNodePorts } from './dispatch.js';
import { servicePortOf } from './facts.js';
import { isKubeProxyNftTable } from './identity.js';
import { chainEvidence, reachableChains, tableFamily, tableLabel, type Ctx, type Problem } from './table.js';

export { isKubeProxyNftTable, nftNameHash, nftNames, parseNftObjectName, type NftChainRole, type NftObjectName } from './identity.js';

export function resolveNft(snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const problems: Problem[] = [];
  for (const rs of snapshot.nft) {
    const out = resolveRuleset(rs, snapshot);
    appendAll(services, out.services);
    appendAll(others, out.others);
    appendAll(problems, out.problems);
  }
  sortServicePorts(services);
  return { services, others, problems };
}

function resolveRuleset(rs: NftRuleset, snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const problems: Problem[] = [];
  for (const t of rs.tables) {
    if (isKubeProxyNftTable(t)) {
      const out = resolveTable(t, snapshot);
      appendAll(services, out.services);
      appendAll(others, out.others);
      appendAll(problems, out.problems);
      continue;
    }
    const owner = nftTableOwner(t);
    for (const c of t.chains) others.push({ kind: 'nft-chain', table: tableLabel(t), name: c.name, owner, file: t.file, line: c.line });
  }
  return { services, others, problems };
}

function resolveTable(t: NftTable, snapshot: NodeSnapshot): Resolution {
  const ctx: Ctx = {
    table: t,
    family: tableFamily(t),
    where: tableLabel(t),
    chains: new Map(t.chains.map((c) => [c.name, c])),
    sets: new Map(t.sets.map((s) => [s.name, s])),
    snapshot,
    problems: [],
    names: new Map(),
    locality: endpointLocalityLookup(snapshot),
  };
  const groups = new NftGroups(ctx);
  groupChains(groups);
  readServiceIPs(groups);
  readServiceNodePorts(groups);
  readNoEndpointServices(groups);
  readNoEndpointNodePorts(groups);
  readFirewallIPs(groups);

  // Reachability from the base chains: which chains can any packet get to?
  const reachable = reachableChains(ctx);
  const claimed = new Set<string>();
  const services: ServicePort[] = [];
  const hints = clusterIPHints(ctx, groups.byKey.values());
  for (const g of groups.byKey.values()) {
    const chainsOfGroup = Object.values(g.chains).filter((c): c is NftChain => c !== undefined);
    const live = g.referenced || (reachable !== undefined && chainsOfGroup.some((c) => reachable.has(c.name)));
    if (!live) continue;
    const sp = servicePortOf(ctx, g, hints, groups.kindHints.get(g));
    for (const name of Object.values(sp.chains)) claimed.add(name);
    services.push(sp);
  }

  // Orphans: chains no packet can reach (stale chains kube-proxy flushed, or hand edits). Not in a
  // listing cut mid-way: what reaches them may be past the cut.
  if (reachable && !t.truncated) {
    for (const c of t.chains) {
      if (c.hook || reachable.has(c.name)) continue;
      ctx.problems.push({ problem: problem('chain-unreached', { chain: c.name, empty: c.rules.length === 0 }), evidence: chainEvidence(ctx, c).slice(0, 5) });
    }
  }

  // Everything else in the table is kube-proxy's infrastructure.
  const others: ForeignObject[] = [];
  for (const c of t.chains) {
    if (claimed.has(c.name)) continue;
    others.push({ kind: 'nft-chain', table: ctx.where, name: c.name, owner: 'kube-proxy', file: t.file, line: c.line });
  }
  return { services, others, problems: ctx.problems };
}
