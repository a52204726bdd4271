/**
 * nftables firewall and policy: the firewall- chain's source ranges (`ip saddr != { … } drop`),
 * the traffic policies the external- chain and the no-endpoint maps say, and what the no-endpoint
 * maps say about traffic without (local) endpoints.
 */
import type { NftChain } from '../../model/nft.js';
import { formatCidr, parseCidr, parseIp } from '../../model/addr.js';
import { appendAll } from '../../source/index.js';
import type { NoEndpointFact } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import { cachedName, isMatch, payloadIs, ruleTarget, type Ctx, type Group } from './table.js';

/** `ip saddr != { a, b } drop` → the listed sources. */
function firewallSources(chain: NftChain): string[] {
  const out: string[] = [];
  for (const r of chain.rules) {
    if (!r.exprs.some((e) => e.kind === 'verdict' && e.verdict === 'drop')) continue;
    for (const e of r.exprs) {
      if (!isMatch(e) || !payloadIs(e.left, 'saddr') || e.op !== '!=') continue;
      if (e.right.kind === 'value') out.push(e.right.text);
      else if (e.right.kind === 'set') appendAll(out, e.right.elements.map((x) => x.key.join(' . ')));
      else if (e.right.kind === 'list') appendAll(out, e.right.items);
    }
  }
  return out;
}

/** A source-range entry as [first, last] addresses (prefix, bare address or `a-b`). */
function rangeBounds(text: string): { family: 4 | 6; first: bigint; last: bigint } | undefined {
  const dash = text.indexOf('-');
  if (dash > 0 && !text.includes('/')) {
    const a = parseIp(text.slice(0, dash));
    const b = parseIp(text.slice(dash + 1));
    return a && b && a.family === b.family ? { family: a.family, first: a.value, last: b.value } : undefined;
  }
  const c = parseCidr(text);
  if (!c) return undefined;
  const bits = c.family === 4 ? 32 : 128;
  return { family: c.family, first: c.network, last: c.network + (1n << BigInt(bits - c.prefix)) - 1n };
}

/** Printed source → CIDR text as the Service spec has it (a bare address is a host prefix). */
function sourceRangeText(text: string): string {
  if (text.includes('-') && !text.includes('/')) return text;
  const c = parseCidr(text);
  return c ? formatCidr(c) : text;
}

/** The firewall- chain's allowed sources, less the LoadBalancer IPs kube-proxy adds for the node itself. */
export function sourceRangesOf(fwChain: NftChain | undefined, loadBalancerIPs: ReadonlySet<string>, problems: ServiceProblem[]): Set<string> {
  const sourceRanges = new Set<string>();
  if (!fwChain) return sourceRanges;
  const lbValues = [...loadBalancerIPs].map((x) => parseIp(x)).filter((x) => x !== undefined);
  for (const s of firewallSources(fwChain)) {
    // kube-proxy appends the LB IPs themselves when a range contains the node IP (allowFromNode).
    const b = rangeBounds(s);
    if (b && b.last - b.first < 65536n) {
      const inside = lbValues.filter((ip) => ip.family === b.family && ip.value >= b.first && ip.value <= b.last).length;
      if (BigInt(inside) === b.last - b.first + 1n) continue;
    }
    sourceRanges.add(sourceRangeText(s));
  }
  if (firewallSources(fwChain).length === 0) problems.push(problem('nft-firewall-no-drop', { chain: fwChain.name }));
  return sourceRanges;
}

export interface Policies {
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  /** A no-endpoint map drops (not rejects) external traffic / cluster-IP traffic: no local endpoints. */
  externalDrop: boolean;
  internalDrop: boolean;
}

/** Local policies from the external- chain's targets and the no-endpoint maps' drops. */
export function trafficPolicies(ctx: Ctx, g: Group, clusterIP: string | undefined, internalTarget: string | undefined, problems: ServiceProblem[]): Policies {
  const extChain = g.chains.external;
  let externalTrafficPolicy: 'Cluster' | 'Local' = 'Cluster';
  if (extChain) {
    for (const r of extChain.rules) {
      const t = ruleTarget(r);
      const tn = t ? cachedName(ctx, t.chain) : undefined;
      if (tn?.role === 'local') externalTrafficPolicy = 'Local';
      // Local policy short-circuits pod and host traffic with a conditional goto to service-.
      if (tn?.role === 'service' && r.exprs.some(isMatch)) externalTrafficPolicy = 'Local';
      if (t && !ctx.chains.has(t.chain)) problems.push(problem('nft-chain-target-absent', { chain: extChain.name, target: t.chain }));
    }
  }
  const externalDrop = g.nodePortNoEndpoint === 'drop' || [...g.ips.values()].some((e) => e.ip !== clusterIP && e.noEndpointVerdict === 'drop');
  if (externalDrop) externalTrafficPolicy = 'Local';
  const internalDrop = clusterIP !== undefined && g.ips.get(clusterIP)?.noEndpointVerdict === 'drop';
  const internalTrafficPolicy: 'Cluster' | 'Local' = internalTarget === 'local' || internalDrop ? 'Local' : 'Cluster';
  if (extChain && !extChain.rules.some((r) => !r.exprs.some(isMatch) && ruleTarget(r)?.verdict === 'goto') && !externalDrop) {
    problems.push(problem('nft-external-no-goto', { chain: extChain.name }));
  }
  return { externalTrafficPolicy, internalTrafficPolicy, externalDrop, internalDrop };
}

/** What the no-endpoint maps say (reject: no endpoints; drop: no local endpoints); the builder derives the state. */
export function noEndpointFacts(g: Group, p: Policies, endpoints: number, problems: ServiceProblem[]): { noEndpoints: NoEndpointFact[]; rejects: boolean } {
  const rejects = [...g.ips.values()].some((e) => e.noEndpointVerdict !== undefined && e.noEndpointVerdict !== 'drop') || (g.nodePortNoEndpoint !== undefined && g.nodePortNoEndpoint !== 'drop');
  const noEndpoints: NoEndpointFact[] = [];
  if (rejects) noEndpoints.push({ scope: 'all', verdict: 'reject' });
  if (p.internalDrop || p.externalDrop) noEndpoints.push({ scope: 'local', verdict: 'drop' });
  if (rejects && (p.internalDrop || p.externalDrop)) {
    problems.push(problem('nft-no-endpoint-reject-and-drop', {}));
  }
  if (rejects && endpoints > 0) problems.push(problem('nft-no-endpoint-reject-with-endpoints', {}));
  return { noEndpoints, rejects };
}
