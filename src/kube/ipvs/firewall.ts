/**
 * Firewall and policy: LoadBalancer source ranges (KUBE-LOAD-BALANCER-FW and -SOURCE-CIDR /
 * -SOURCE-IP, which kube-proxy's KUBE-* iptables chains match), the traffic policies (the -LOCAL
 * sets, or inferred from real-server subsets), and what the virtual servers say about traffic
 * without (local) endpoints.
 */
import { formatCidr } from '../../model/addr.js';
import { realServerKey } from '../../model/ipvs.js';
import type { Absence, NoEndpointFact } from '../facts.js';
import { problem, type ServiceProblem } from '../problems.js';
import type { TrafficPolicy } from '../types.js';
import type { EmptyClusterIPDecider } from './api.js';
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

export interface NoEndpointsSaid {
  readonly noEndpoints: NoEndpointFact[];
  readonly allDraining: boolean;
  /** What the dumps cannot tell about the endpoints (the state is then unknown). */
  readonly absences: Absence[];
  /** The API's objects say internalTrafficPolicy Local (api.ts). */
  readonly internalLocal: boolean;
}

export interface NoEndpointsContext {
  readonly local: LocalCheck;
  /** Real servers local because a Local virtual server narrowed the list to them (balancing.ts). */
  readonly localKeys: ReadonlySet<string>;
  readonly decide: EmptyClusterIPDecider;
}

/**
 * What the virtual servers say about traffic without (local) endpoints; the builder derives the
 * state. A claim of absence rests on whole evidence: an empty ClusterIP virtual server is "no
 * endpoints" only when an external one kube-proxy fills with the Cluster-policy endpoints is empty
 * too, or the API's objects say so; otherwise it is undecided (an absence).
 */
export function noEndpointFacts(g: Group, b: Balance, ctx: NoEndpointsContext, problems: ServiceProblem[]): NoEndpointsSaid {
  const out = { noEndpoints: [] as NoEndpointFact[], allDraining: false, absences: [] as Absence[], internalLocal: false };
  const endpoints = b.endpoints;
  const zero = b.weightsKnown ? endpoints.filter((e) => (e.weight ?? 0) === 0) : [];
  // Nothing certain about its real servers (past a cut, or printed as names): no "no real
  // servers", no draining, no locality verdict.
  if (b.cut || b.named.length > 0) return out;
  if (endpoints.length === 0) {
    noRealServers(g, ctx.decide, out, problems);
    return out;
  }
  if (zero.length === endpoints.length) return { ...out, allDraining: true };
  if (zero.length) problems.push(problem('ipvs-some-draining', { zero: zero.length, of: endpoints.length }));
  const a = g.anchor;
  const locals = localServers(g);
  const emptyLocal = locals.filter((v) => v.rsKeys.length === 0 || v.vs.realServers.every((rs) => ctx.local.remote(rs)));
  if (emptyLocal.length) {
    out.noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
    problems.push(problem('ipvs-no-local-real-server', { policy: 'external', behind: emptyLocal.map((v) => v.key) }));
  } else if (g.internalLocal && a && a.rsKeys.length === 0) {
    out.noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
    problems.push(problem('ipvs-no-local-real-server', { policy: 'internal', behind: [a.key] }));
  } else {
    // Local virtual servers with every endpoint (not narrowed to fewer than the Cluster-policy one),
    // none of them known to be here: all local, or none (the fallback).
    const everyEndpoint = (v: Vs) => locals.includes(b.full) || v.rsKeys.length >= b.full.rsKeys.length;
    const undecided = locals.filter((v) => everyEndpoint(v) && !v.vs.realServers.some((rs) => ctx.localKeys.has(realServerKey(rs)) || ctx.local.here(rs)));
    if (undecided.length) out.absences.push({ code: 'ipvs-local-real-servers-unknown', vs: undecided.map((v) => v.key) });
  }
  return out;
}

/** No virtual server of the group has a real server. */
function noRealServers(g: Group, decide: EmptyClusterIPDecider, out: { noEndpoints: NoEndpointFact[]; absences: Absence[]; internalLocal: boolean }, problems: ServiceProblem[]): void {
  const a = g.anchor;
  if (!a && g.items.every((i) => i.policy === 'Local')) {
    out.noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
    problems.push(problem('ipvs-no-local-real-server', { policy: 'external' }));
    return;
  }
  // A Cluster-policy external virtual server (its -LOCAL set says so) holds every endpoint kube-proxy knows, whatever the ClusterIP's policy.
  const why = a && !g.items.some((i) => i.policy === 'Cluster') ? decide(a) : 'no-endpoints';
  problems.push(problem('ipvs-no-real-servers', {}));
  if (why === 'undecided') out.absences.push({ code: 'ipvs-no-real-servers-undecided', vs: a!.key });
  else if (why === 'no-endpoints') out.noEndpoints.push({ scope: 'all', verdict: 'no-destination' });
  else {
    out.internalLocal = true;
    out.noEndpoints.push({ scope: 'local', verdict: 'no-destination' });
    problems.push(problem('ipvs-no-local-real-server', { policy: 'internal', behind: [a!.key] }));
  }
}

/** A Local-policy virtual server with real servers the dumps place elsewhere. */
export function checkLocalHasRemote(g: Group, local: LocalCheck, problems: ServiceProblem[]): void {
  for (const v of localServers(g)) {
    const remote = v.vs.realServers.filter((rs) => local.remote(rs));
    if (remote.length && remote.length < v.vs.realServers.length) problems.push(problem('ipvs-local-has-remote', { vs: v.key, remote: remote.map(realServerKey).slice(0, 5) }));
  }
}
