/**
 * nftables balancing, continued: the balancing chain's targets as endpoints (each endpoint-
 * chain's DNAT, checked against the address in its name), their shares and locality, and session
 * affinity from the affinity- sets.
 */
import { nftTimeToSeconds } from '../../model/nft.js';
import { parseIp } from '../../model/addr.js';
import { appendAll } from '../../source/index.js';
import type { Absence, Target } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { Evidence } from '../types.js';
import { dnatOf, type BalanceRead } from './balancing.js';
import type { HashCheck, NftObjectName } from './identity.js';
import { cachedName, chainEvidence, type Ctx } from './table.js';

type BalanceTarget = BalanceRead['targets'][number];

export interface EndpointsContext {
  ctx: Ctx;
  balancing: BalanceRead;
  svcRead?: BalanceRead;
  localRead?: BalanceRead;
  /** The Service port's own name, for endpoint chains of another Service port. */
  parsed?: NftObjectName;
  hashes: HashCheck;
  ownChains: Record<string, string>;
  absences: Absence[];
  problems: ServiceProblem[];
}

/** An endpoint chain's address: its DNAT, else the address in its name; mismatches are problems. */
function endpointOfChain(c: EndpointsContext, t: BalanceTarget, chainName: string, evidence: Evidence[]): { ip?: string; port: number | null } {
  const { ctx, balancing, problems } = c;
  let ip = t.ip;
  let epPort = t.port ?? null;
  const epChain = ctx.chains.get(chainName);
  const name = cachedName(ctx, chainName);
  if (name && name.role !== 'endpoint') problems.push(problem('nft-balancing-not-endpoint', { chain: balancing.chain.name, target: chainName }));
  if (!epChain) c.absences.push({ code: 'endpoint-chain-absent', chain: chainName, from: balancing.chain.name });
  else {
    appendAll(evidence, chainEvidence(ctx, epChain));
    const d = dnatOf(epChain);
    if (d) {
      ip = d.ip;
      epPort = d.port;
    } else problems.push(problem('nft-endpoint-no-dnat', { chain: chainName }));
  }
  if (!ip && name?.endpointIp) {
    ip = name.endpointIp;
    epPort = name.endpointPort ?? null;
  }
  c.hashes.verify(chainName, name);
  if (name?.endpointIp && ip && (name.endpointIp !== ip || (name.endpointPort ?? null) !== epPort)) {
    const a = parseIp(name.endpointIp);
    const b = parseIp(ip);
    if (!a || !b || a.value !== b.value || (name.endpointPort ?? null) !== epPort) problems.push(problem('nft-endpoint-dnat-mismatch', { chain: chainName, namedIp: name.endpointIp, namedPort: name.endpointPort ?? null, ip, port: epPort }));
  }
  if (name?.key && c.parsed && name.key !== c.parsed.key) problems.push(problem('nft-endpoint-other-service', { chain: balancing.chain.name, target: chainName }));
  return { ip, port: epPort };
}

/** The balancing chain's targets as endpoints with their shares; `local` from the local- chain when there is one. */
export function endpointsOf(c: EndpointsContext): Target[] {
  const { balancing, localRead } = c;
  const endpoints: Target[] = [];
  const localKeys = new Set<string>();
  if (localRead) {
    for (const t of localRead.targets) {
      if (t.chain) localKeys.add(t.chain);
      else if (t.ip) localKeys.add(`${t.ip}|${t.port}`);
    }
  }
  const n = balancing.mod ?? 0;
  balancing.targets.forEach((t, i) => {
    let ip = t.ip;
    let epPort = t.port ?? null;
    const epEvidence = [...t.evidence];
    if (t.chain) {
      c.ownChains[`endpoint${i}`] = t.chain;
      ({ ip, port: epPort } = endpointOfChain(c, t, t.chain, epEvidence));
    }
    if (!ip) return;
    const share = n > 0 ? t.keys / n : 0;
    // Membership in the local- chain says it; without one the locality module decides.
    const local = localRead ? (balancing === localRead ? true : localKeys.has(t.chain ?? `${t.ip}|${t.port}`)) : undefined;
    endpoints.push({ ip, port: epPort, share, ...(local !== undefined ? { local } : {}), ...(t.chain ? { via: t.chain } : {}), evidence: epEvidence });
  });
  if (balancing.targets.length === 0) c.problems.push(problem('nft-no-numgen', { chain: balancing.chain.name }));
  return endpoints;
}

/** Local endpoints the service- chain does not have. */
export function checkLocalInService(svcRead: BalanceRead, localRead: BalanceRead, problems: ServiceProblem[]): void {
  const svcKeys = new Set(svcRead.targets.map((t) => t.chain ?? `${t.ip}|${t.port}`));
  for (const t of localRead.targets) {
    const k = t.chain ?? `${t.ip}|${t.port}`;
    if (!svcKeys.has(k)) problems.push(problem('nft-local-endpoint-not-in-service', { chain: localRead.chain.name, endpoint: t.chain ?? `${t.ip}:${t.port}`, serviceChain: svcRead.chain.name }));
  }
}

/** Session affinity from the affinity- sets the balancing chains check (kube-proxy's default 10800 s when no timeout is read). */
export function affinityOf(ctx: Ctx, svcRead: BalanceRead | undefined, localRead: BalanceRead | undefined, hashes: HashCheck, ownChains: Record<string, string>, problems: ServiceProblem[]): number | undefined {
  let affinity: number | undefined;
  const affinityRules = [...(svcRead?.affinity ?? []), ...(localRead?.affinity ?? [])];
  const affinitySets = new Set<string>();
  for (const a of affinityRules) {
    affinitySets.add(a.set);
    const set = ctx.sets.get(a.set);
    if (!set) {
      problems.push(problem('nft-affinity-set-absent', { set: a.set }));
      continue;
    }
    const secs = set.timeout !== undefined ? nftTimeToSeconds(set.timeout) : undefined;
    if (secs === undefined) problems.push(problem('nft-affinity-no-timeout', { set: a.set }));
    else affinity ??= secs;
    const name = cachedName(ctx, a.set);
    hashes.verify(a.set, name);
    const epName = cachedName(ctx, a.endpointChain);
    if (name && epName && name.hashed !== epName.hashed) problems.push(problem('nft-affinity-other-endpoint', { set: a.set, chain: a.endpointChain }));
    if (!ctx.chains.has(a.endpointChain)) problems.push(problem('nft-affinity-target-absent', { chain: a.endpointChain }));
  }
  [...affinitySets].forEach((s, i) => (ownChains[`affinity${i}`] = s));
  if (affinityRules.length > 0 && affinity === undefined) affinity = 10800;
  return affinity;
}
