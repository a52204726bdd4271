/**
 * The one ServicePort builder: from the neutral facts a proxy-mode reader found (facts.ts), derive
 * what kpx says about a Service port — its id, protocol, addresses, endpoints with their locality,
 * hash checks (every kube-proxy generation), problems and state. Every mode's state rules live here:
 *
 *  - no endpoint and the dumps say why: `no-endpoints` (a REJECT, a virtual server without real
 *    servers), `no-local-endpoints` (a Local-policy DROP);
 *  - no endpoint and the evidence that would hold them is missing (endpoint chains cut out of a
 *    paste, a truncated table, a dispatch rule to an absent chain): `unknown`, never `no-endpoints`;
 *  - endpoints, a Local policy, and none of them on this node: `no-local-endpoints`;
 *  - otherwise `healthy`, or `partial` when a problem that degrades the Service was found.
 */
import { formatHostPort } from '../model/addr.js';
import { endpointHash, portProtoHash, servicePortName, servicePortNameGenerations } from './hash.js';
import type { HashClaim, Identity, OwnedObject, ServiceFacts, Target } from './facts.js';
import { degrades, problem, uniqueProblems, type ServiceProblem } from './problems.js';
import type { Endpoint, Protocol, ServicePort, ServiceState } from './types.js';

const PROTOCOLS: readonly Protocol[] = ['tcp', 'udp', 'sctp'];
const SEP_PREFIX = 'KUBE-SEP-';

export function buildServicePort(f: ServiceFacts, locality: (ip: string) => boolean | null): ServicePort {
  const problems: ServiceProblem[] = [...f.problems];
  const id = f.identity;
  const spn = id ? servicePortName(id.namespace, id.name, id.portName) : undefined;

  // Protocol: the rules' own matches; else the one protocol the chain hash was computed with.
  let protocol: Protocol | null = f.protocol ?? null;
  if (protocol === null && id) protocol = protocolFromHash(id, f.hashClaims);
  if (protocol === null) problems.push(problem('protocol-unknown', {}));

  const endpoints = f.targets.map((t) => endpointOf(t, locality));
  const hashVerified = f.hashVerified !== undefined ? f.hashVerified : id && protocol ? checkHashes(id, protocol, f.hashClaims, endpoints, problems) : null;

  for (const a of f.absences) problems.push(problem(a.code, a as never));

  // Addresses: every front end is kept (duplicate-service-vip compares them); the fields list them once.
  let clusterIP: string | null = null;
  let nodePort: number | null = null;
  const externalIPs = new Set<string>();
  const loadBalancerIPs = new Set<string>();
  for (const fe of f.frontEnds) {
    if (fe.kind === 'cluster-ip') clusterIP ??= fe.ip;
    else if (fe.kind === 'node-port') nodePort ??= fe.port;
    else if (fe.kind === 'load-balancer-ip' && fe.ip !== null) loadBalancerIPs.add(fe.ip);
    else if (fe.ip !== null) externalIPs.add(fe.ip);
  }
  for (const ip of loadBalancerIPs) externalIPs.delete(ip);

  const state = deriveState(f, endpoints, problems);
  const port = f.port ?? 0;
  return {
    // Without a name: the address, else the mode's own object (two unnamed Service ports never share an id).
    id: spn !== undefined ? `${spn}/${protocol ?? '?'}` : clusterIP !== null ? `${formatHostPort(clusterIP, port)}/${protocol ?? '?'}` : `${f.anchor}/${protocol ?? '?'}`,
    namespace: id?.namespace ?? null,
    name: id?.name ?? null,
    portName: id ? id.portName : null,
    protocol,
    port,
    clusterIP,
    nodePort,
    externalIPs: [...externalIPs].sort(),
    loadBalancerIPs: [...loadBalancerIPs].sort(),
    loadBalancerSourceRanges: [...f.sourceRanges],
    externalTrafficPolicy: f.externalTrafficPolicy,
    internalTrafficPolicy: f.internalTrafficPolicy,
    sessionAffinity: f.affinitySeconds !== undefined ? { timeoutSeconds: f.affinitySeconds } : null,
    state,
    endpoints,
    // undefined (one object shape for every Service port) unless the rules name endpoints the evidence does not hold.
    unresolvedEndpoints: f.unresolved?.length ? f.unresolved : undefined,
    mode: f.mode,
    family: f.family,
    identifiedBy: id ? id.by : 'address',
    chains: chainRecord(f.mode, f.owned),
    owned: f.owned,
    frontEnds: f.frontEnds,
    anchor: f.anchor,
    hashVerified,
    problems: uniqueProblems(problems),
    // Exactly its length (push() leaves room for more; 10k Services' lists stay in memory).
    evidence: f.evidence.slice(),
  };
}

// Endpoints are built as literals of a few fixed shapes, not with spreads: ~90k of them at 10k
// Services, and spread-built objects cost several times as much (and take more shapes).
function endpointOf(t: Target, locality: (ip: string) => boolean | null): Endpoint {
  const probability = t.share === null ? null : Math.round(t.share * 1e10) / 1e10;
  const local = t.local !== undefined ? t.local : locality(t.ip);
  const { ip, port, via, weight, evidence } = t;
  if (weight !== undefined) return via !== undefined ? { ip, port, probability, local, via, weight, evidence } : { ip, port, probability, local, weight, evidence };
  return via !== undefined ? { ip, port, probability, local, via, evidence } : { ip, port, probability, local, evidence };
}

function deriveState(f: ServiceFacts, endpoints: readonly Endpoint[], problems: ServiceProblem[]): ServiceState {
  const saysNone = f.noEndpoints.some((n) => n.scope === 'all');
  const saysNoLocal = f.noEndpoints.some((n) => n.scope === 'local');
  let state: ServiceState;
  if (endpoints.length === 0) {
    if (saysNoLocal && !saysNone) state = 'no-local-endpoints';
    else if (saysNone) state = 'no-endpoints';
    // Nothing says there are no endpoints, and evidence is missing: kpx cannot tell.
    else if (f.absences.length > 0) return 'unknown';
    else if (f.emptyBalancing !== undefined) {
      problems.push(problem('balancing-chain-empty', { chain: f.emptyBalancing }));
      return 'partial';
    } else state = 'no-endpoints';
  } else if (saysNoLocal) state = 'no-local-endpoints';
  else if ((f.externalTrafficPolicy === 'Local' || f.internalTrafficPolicy === 'Local') && endpoints.every((e) => e.local === false)) {
    // No endpoint read is local, but evidence is missing (a local endpoint's chain may be the part not shown).
    if (f.absences.length > 0) return 'unknown';
    state = 'no-local-endpoints';
  }
  else state = 'healthy';
  if (state === 'healthy' && problems.some(degrades)) state = 'partial';
  return state;
}

/** The protocol whose hash (in any kube-proxy generation) gives the Service chain's name. */
function protocolFromHash(id: Identity, claims: readonly HashClaim[]): Protocol | null {
  for (const c of claims) {
    if (c.kind !== 'service-chain') continue;
    for (const p of PROTOCOLS) for (const name of servicePortNameGenerations(id.namespace, id.name, id.portName)) if (portProtoHash(name, p) === c.hash) return p;
  }
  return null;
}

/**
 * Do the chain names match kube-proxy's hashes of the Service port (and of each endpoint)? Any
 * generation's ServicePortName form is kube-proxy's own; a mismatch names the current form.
 */
function checkHashes(id: Identity, protocol: Protocol, claims: readonly HashClaim[], endpoints: readonly Endpoint[], problems: ServiceProblem[]): boolean | null {
  if (claims.length === 0) return null;
  const names = servicePortNameGenerations(id.namespace, id.name, id.portName);
  let verified = true;
  // The generation the Service chain was named with names its endpoint chains too.
  let generation = names[0];
  for (const c of claims) {
    if (c.kind !== 'service-chain') continue;
    const match = names.find((n) => portProtoHash(n, protocol) === c.hash);
    if (match !== undefined) generation = match;
    else {
      verified = false;
      problems.push(problem('service-hash-mismatch', { hash: c.hash, servicePort: names[0], protocol, expected: portProtoHash(names[0], protocol) }));
    }
  }
  for (const ep of endpoints) {
    if (!ep.via || ep.port === null || !ep.via.startsWith(SEP_PREFIX)) continue;
    const endpoint = `${ep.ip.includes(':') ? `[${ep.ip}]` : ep.ip}:${ep.port}`;
    const hashOf = (n: string) => endpointHash(n, protocol, endpoint);
    const via = ep.via;
    if (isChainOf(via, hashOf(generation)) || names.some((n) => n !== generation && isChainOf(via, hashOf(n)))) continue;
    verified = false;
    problems.push(problem('endpoint-hash-mismatch', { chain: ep.via, endpoint: `${ep.ip}:${ep.port}`, servicePort: names[0], expected: `${SEP_PREFIX}${hashOf(names[0])}` }));
  }
  return verified;
}

/** name === `KUBE-SEP-${hash}`, without building that string for each of ~90k endpoints. */
function isChainOf(name: string, hash: string): boolean {
  return name.length === SEP_PREFIX.length + hash.length && name.endsWith(hash);
}

// `chains` keys, made once rather than per Service port.
const indexedKeys: Record<string, string[]> = { sep: [], endpoint: [], affinity: [], fw: [] };
const indexedKey = (base: 'sep' | 'endpoint' | 'affinity' | 'fw', i: number): string => (indexedKeys[base][i] ??= `${base}${i}`);

/**
 * The `chains` record of the JSON schema, from the typed roles: one key per role, numbered from 0
 * for per-endpoint objects (`sep0`, `endpoint0`, `affinity0`), from 1 for a second FW chain (`fw1`),
 * IPVS virtual servers by role and address (`load-balancer/IP`).
 */
export function chainRecord(mode: ServiceFacts['mode'], owned: readonly OwnedObject[]): Record<string, string> {
  const out: Record<string, string> = {};
  // Only the numbered roles need counting (no Map per Service port: this runs for every one).
  let endpoints = 0;
  let affinities = 0;
  let fws = 0;
  for (const o of owned) {
    let key: string;
    if (o.address !== undefined) key = `${o.role === 'load-balancer-ip' ? 'load-balancer' : o.role}/${o.address}`;
    else if (o.role === 'endpoint') key = indexedKey(mode === 'iptables' ? 'sep' : 'endpoint', endpoints++);
    else if (o.role === 'affinity') key = indexedKey('affinity', affinities++);
    else if (o.role === 'fw') key = fws++ === 0 ? 'fw' : indexedKey('fw', fws - 1);
    else key = o.role;
    out[key] = o.name;
  }
  return out;
}
