/**
 * Balancing: which real servers a Service port's virtual servers send to, with the share of each
 * (from the weights), and whether each is on this node (KUBE-LOOP-BACK has the node's own
 * endpoints; the locality module knows the pod CIDRs and addresses of the dumps).
 */
import { formatIp, type Ip } from '../../model/addr.js';
import { realServerKey, realServerShares, type RealServer, type VirtualServer } from '../../model/ipvs.js';
import type { Target } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { Evidence, Protocol } from '../types.js';
import { memberEvidence, rsEvidence } from './evidence.js';
import type { FamilySets } from './sets.js';
import type { Group, MemberRef, Vs } from './types.js';

/** Whether a real server is on this node, as the dumps tell. */
export class LocalCheck {
  constructor(
    private readonly sets: FamilySets,
    private readonly protocol: Protocol,
    private readonly locality: (ip: string) => boolean | null,
  ) {}

  /** The KUBE-LOOP-BACK member (`ip,proto:port,ip`) that says the endpoint is local (for hairpin masquerade). */
  loopback(rs: RealServer): MemberRef | undefined {
    if (!rs.ip || rs.port === undefined) return undefined;
    return this.sets.ipPort('KUBE-LOOP-BACK', rs.ip, this.protocol, rs.port).find((r) => r.member.parts[2]?.kind === 'ip' && r.member.parts[2].cidr.network === rs.ip!.value);
  }

  byDumps(ip: Ip | undefined): boolean | null {
    return ip ? this.locality(formatIp(ip)) : null;
  }

  /** Known to be elsewhere: the dumps say remote and KUBE-LOOP-BACK does not say local. */
  remote(rs: RealServer): boolean {
    return this.byDumps(rs.ip) === false && !this.loopback(rs);
  }
}

/** The virtual server that holds the Cluster-policy endpoints: the one with the most real servers. */
export function fullServer(g: Group, all: readonly Vs[]): Vs {
  const a = g.anchor;
  const policyOf = (v: Vs) => (v === a ? (g.internalLocal ? 'Local' : 'Cluster') : g.items.find((i) => i.vss.includes(v))!.policy);
  let full: Vs = all[0];
  for (const v of all) if (v.rsKeys.length > full.rsKeys.length && policyOf(v) !== 'Local') full = v;
  if (full.rsKeys.length === 0) for (const v of all) if (v.rsKeys.length > full.rsKeys.length) full = v;
  return full;
}

/** Consistency between the virtual servers of one Service port. */
export function checkConsistency(g: Group, all: readonly Vs[], full: Vs, problems: ServiceProblem[]): void {
  const fullKeys = new Set(full.rsKeys);
  for (const it of g.items) {
    const sigs = new Set(it.vss.map((v) => v.sig));
    if (sigs.size > 1) problems.push(problem('ipvs-node-addresses-disagree', it.role === 'nodeport' ? { nodePort: it.port } : { vs: it.vss[0].key }));
    for (const v of it.vss) {
      const extra = v.rsKeys.filter((k) => !fullKeys.has(k));
      if (extra.length) problems.push(problem('ipvs-extra-real-servers', { vs: v.key, than: full.key, extra: extra.slice(0, 5) }));
    }
  }
  const a = g.anchor;
  if (a && a !== full && a.rsKeys.some((k) => !fullKeys.has(k))) problems.push(problem('ipvs-extra-real-servers', { vs: a.key, than: full.key, extra: [] }));
  const persistents = new Set(all.map((v) => v.vs.persistent ?? null));
  if (persistents.size > 1) problems.push(problem('ipvs-persistence-disagrees', { timeouts: [...persistents] }));
}

export interface Balance {
  readonly full: Vs;
  /** Whether the listing has weights (`-Ln`, not `--stats`). */
  readonly weightsKnown: boolean;
  /** Where a cut listing ends inside this Service port's virtual servers. */
  readonly cut?: { file: string; line: number };
  /** Real servers printed as names: no address kpx can call an endpoint. */
  readonly named: readonly RealServer[];
  readonly endpoints: Target[];
}

export interface BalanceContext {
  readonly cutAt: ReadonlyMap<VirtualServer, { file: string; line: number }>;
  readonly local: LocalCheck;
  /** Real servers behind Local-policy virtual servers, local by kube-proxy's design. */
  readonly localKeys: ReadonlySet<string>;
}

export function balanceOf(all: readonly Vs[], full: Vs, ctx: BalanceContext): Balance {
  const weightsKnown = full.vs.realServers.some((rs) => rs.weight !== undefined);
  // A virtual server of this Service port is the one a cut listing ends in: what it lists is a
  // beginning; the real servers (and shares) past the cut are unknown.
  const cut = all.map((v) => ctx.cutAt.get(v.vs)).find((x) => x !== undefined);
  const shares: readonly { realServer: RealServer; share: number | null }[] = cut
    ? full.vs.realServers.map((realServer) => ({ realServer, share: null }))
    : weightsKnown
      ? realServerShares(full.vs)
      : full.vs.realServers.map((realServer) => ({ realServer, share: 1 / full.vs.realServers.length }));
  const rsLines = realServerLines(all);
  // A real server printed as a name is no address kpx can call an endpoint: left out, and said
  // (an absence: the Service port's state is unknown rather than healthy or empty).
  const named = full.vs.realServers.filter((rs) => !rs.ip);
  const endpoints = shares.filter(({ realServer: rs }) => rs.ip).map(({ realServer, share }) => targetOf(realServer, share, full, rsLines, ctx));
  return { full, weightsKnown, ...(cut ? { cut } : {}), named, endpoints };
}

/** Every listing line of each real server, by key. */
function realServerLines(all: readonly Vs[]): Map<string, Evidence[]> {
  const rsLines = new Map<string, Evidence[]>();
  for (const v of all) {
    for (const vsx of [v.vs, ...v.copies]) {
      for (const r of vsx.realServers) {
        const k = realServerKey(r);
        const list = rsLines.get(k);
        if (list) list.push(rsEvidence(vsx, r));
        else rsLines.set(k, [rsEvidence(vsx, r)]);
      }
    }
  }
  return rsLines;
}

function targetOf(rs: RealServer, share: number | null, full: Vs, rsLines: ReadonlyMap<string, Evidence[]>, ctx: BalanceContext): Target {
  const key = realServerKey(rs);
  const ev: Evidence[] = [...(rsLines.get(key) ?? [])];
  const lb = ctx.local.loopback(rs);
  if (lb) ev.push(memberEvidence(lb));
  let local = lb ? true : ctx.local.byDumps(rs.ip);
  if (local === null && ctx.localKeys.has(key)) local = true;
  return {
    ip: rs.ip ? formatIp(rs.ip) : rs.address,
    port: rs.port ?? null,
    share,
    local,
    via: `${full.key} -> ${key}`,
    ...(rs.weight !== undefined ? { weight: rs.weight } : {}),
    evidence: ev,
  };
}
