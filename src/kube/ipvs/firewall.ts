/**
 * Firewall and policy: LoadBalancer source ranges (KUBE-LOAD-BALANCER-FW and -SOURCE-CIDR /
 * -SOURCE-IP, which kube-proxy's KUBE-* iptables chains match), the traffic policies (the -LOCAL
 * sets, or inferred from real-server subsets), and what the virtual servers say about traffic
 * without (local) endpoints.
 */
import { formatCidr } from '../../model/addr.js';
import { realServerKey } from '../../model/ipvs.js';
import type { NoEndpointFact } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { TrafficPolicy } from '../types.js';
import type { Balance, LocalCheck } from './balancing.js';
import { fmtId } from './identity.js';
import type { Group, Vs } from './types.js';

/** The source CIDRs of the group's LoadBalancer virtual servers (KUBE-LOAD-BALANCER-SOURCE-CIDR: `ip,proto:port,cidr`). */
export function sourceRangesOf(g: Group, problems: ServiceProblem[]): string[] {
  const lbs = g.items.filter((i) => i.role === 'lb');
  const ranges = lbs
    .flatMap((i) => i.vss[0].sourceCidrMembers)
    .map((r) => {
      const net = r.member.parts[2];
      return net?.kind === 'ip' ? formatCidr(net.cidr) : (r.member.text.split(',')[2] ?? '');
    })
    .filter((x) => x !== '');
  for (const i of lbs) {
    const v = i.vss[0];
    if (v.fwMembers.length && v.sourceCidrMembers.length === 0 && v.sourceIpMembers.length === 0) {
      problems.push(problem('ipvs-lb-no-source-ranges', { vs: fmtId(v.ipText, v.port, v.protocol) }));
    }
  }
  return [...new Set(ranges)];
}

export interface Policies {
  readonly externalTrafficPolicy: TrafficPolicy;
  readonly internalTrafficPolicy: TrafficPolicy;
}

export function trafficPolicies(g: Group, full: Vs, problems: ServiceProblem[]): Policies {
  const externalTrafficPolicy: TrafficPolicy = g.items.some((i) => i.policy === 'Local') ? 'Local' : 'Cluster';
  const internalTrafficPolicy: TrafficPolicy = g.internalLocal ? 'Local' : 'Cluster';
  if (g.inferredExternalLocal) problems.push(problem('ipvs-external-local-inferred', {}));
  if (g.internalLocal) problems.push(problem('ipvs-internal-local-inferred', { vs: String(g.anchor?.key), than: full.key }));
  return { externalTrafficPolicy, internalTrafficPolicy };
}

/** The virtual servers of the group's Local-policy items. */
export function localServers(g: Group): Vs[] {
  return g.items.filter((i) => i.policy === 'Local').flatMap((i) => i.vss);
}

/** What the virtual servers say about traffic without (local) endpoints; the builder derives the state. */
export function noEndpointFacts(g: Group, b: Balance, local: LocalCheck, problems: ServiceProblem[]): { noEndpoints: NoEndpointFact[]; allDraining: boolean } {
  const a = g.anchor;
  const noEndpoints: NoEndpointFact[] = [];
  const endpoints = b.endpoints;
  const zero = b.weightsKnown ? endpoints.filter((e) => (e.weight ?? 0) === 0) : [];
  if (b.cut || b.named.length > 0) {
    // Nothing certain about its real servers (past a cut, or printed as names): no "no real
    // servers", no draining, no locality verdict.
    return { noEndpoints, allDraining: false };
  }
  if (endpoints.length === 0 && !a && g.items.every((i) => i.policy === 'Local')) {
    noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
    problems.push(problem('ipvs-no-local-real-server', { policy: 'external' }));
  } else if (endpoints.length === 0) {
    noEndpoints.push({ scope: 'all', verdict: 'no-destination' });
    problems.push(problem('ipvs-no-real-servers', {}));
  } else if (zero.length === endpoints.length) {
    return { noEndpoints, allDraining: true };
  } else {
    if (zero.length) problems.push(problem('ipvs-some-draining', { zero: zero.length, of: endpoints.length }));
    const emptyLocal = localServers(g).filter((v) => v.rsKeys.length === 0 || v.vs.realServers.every((rs) => local.remote(rs)));
    if (emptyLocal.length) {
      noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
      problems.push(problem('ipvs-no-local-real-server', { policy: 'external', behind: emptyLocal.map((v) => v.key) }));
    } else if (g.internalLocal && a && a.rsKeys.length === 0) {
      noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
      problems.push(problem('ipvs-no-local-real-server', { policy: 'internal', behind: [a.key] }));
    }
  }
  return { noEndpoints, allDraining: false };
}

/** A Local-policy virtual server with real servers the dumps place elsewhere. */
export function checkLocalHasRemote(g: Group, local: LocalCheck, problems: ServiceProblem[]): void {
  for (const v of localServers(g)) {
    const remote = v.vs.realServers.filter((rs) => local.remote(rs));
    if (remote.length && remote.length < v.vs.realServers.length) problems.push(problem('ipvs-local-has-remote', { vs: v.key, remote: remote.map(realServerKey).slice(0, 5) }));
  }
}
