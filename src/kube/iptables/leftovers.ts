/**
 * iptables leftovers: Service chains no hook reaches (an earlier proxy mode's, on an IPVS or
 * nftables node) are no Service's state; they are listed as leftover objects with one problem.
 */
import type { Chain, Table } from '../../model/netfilter.js';
import { isEndpointChain, kubeNodePortsChain, kubeServicesChain } from '../chains.js';
import { problem } from '../problems.js';
import type { Resolution } from '../types.js';
import type { Group } from './group.js';
import { jumpTarget } from './rules.js';

export interface Reach {
  nat: ReadonlySet<string> | undefined;
  filter: ReadonlySet<string> | undefined;
}

/**
 * A Service port whose chains and rules no hook reaches, in tables whose reach is known: a leftover.
 * When a table's reach is not known (a grep, a restore payload, a cut table) its evidence counts as live.
 */
export function isLeftover(g: Group, reach: Reach): boolean {
  const natChains = [g.svc, g.svl, g.ext, g.xlb, ...(g.fw ?? []).filter((f) => f.table === 'nat').map((f) => f.chain)].filter((c): c is Chain => c !== undefined);
  const filterChains = [...(g.filterChains ?? []), ...(g.fw ?? []).filter((f) => f.table === 'filter').map((f) => f.chain.name)];
  if (natChains.length === 0 && !g.natDispatch && filterChains.length === 0) return false;
  if (natChains.length > 0 || g.natDispatch) {
    if (reach.nat === undefined) return false;
    if (natChains.some((c) => reach.nat!.has(c.name))) return false;
    if (g.natDispatch && (reach.nat.has(kubeServicesChain) || reach.nat.has(kubeNodePortsChain))) return false;
  }
  if (filterChains.length > 0) {
    if (reach.filter === undefined) return false;
    if (filterChains.some((c) => reach.filter!.has(c))) return false;
  }
  return true;
}

/** The chains of leftover Service ports (their own and their endpoint chains), not claimed by a live one. */
function leftoverChains(leftovers: readonly Group[], claimed: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const g of leftovers) {
    for (const c of [g.svc, g.svl, g.ext, g.xlb, ...(g.fw ?? []).map((f) => f.chain)]) {
      if (!c) continue;
      if (!claimed.has(c.name)) out.add(c.name);
      for (const r of c.rules) {
        const t = jumpTarget(r);
        if (t && isEndpointChain(t) && !claimed.has(t)) out.add(t);
      }
    }
  }
  return out;
}

/** Every leftover chain: the leftover Service ports', and kube-proxy's chains of no Service no hook reaches. */
export function allLeftoverChains(leftovers: readonly Group[], claimed: ReadonlySet<string>, nat: Table | undefined, filter: Table | undefined, reach: Reach): Set<string> {
  const left = leftoverChains(leftovers, claimed);
  // …and kube-proxy's per-Service or endpoint chains of no Service that no hook reaches either (an orphan KUBE-SEP).
  for (const [t, r] of [[nat, reach.nat], [filter, reach.filter]] as const) {
    if (!t || !r || leftovers.length === 0) continue;
    for (const c of t.chains) if (!claimed.has(c.name) && !r.has(c.name) && /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-/.test(c.name)) left.add(c.name);
  }
  return left;
}

/** One problem for all leftover chains, with the first as its example. */
export function leftoverProblems(file: string, leftovers: readonly Group[], left: ReadonlySet<string>, nat: Table | undefined, filter: Table | undefined): Resolution['problems'] {
  const first = leftovers.length ? [...left][0] : undefined;
  if (first === undefined) return [];
  const firstChain = nat?.chainsByName.get(first) ?? filter?.chainsByName.get(first);
  return [
    {
      problem: problem('leftover-service-chains', { table: nat ? 'nat' : 'filter', chains: left.size, servicePorts: leftovers.length, example: first, file }),
      evidence: firstChain ? [{ file, line: firstChain.line ?? firstChain.rules[0]?.line ?? 0, text: firstChain.line !== undefined ? `:${first} - [0:0]` : firstChain.rules[0]?.raw ?? first, where: `${firstChain.table}/${first}` }] : [],
    },
  ];
}
