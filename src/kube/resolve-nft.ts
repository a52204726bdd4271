/**
 * kube-proxy nftables mode → Service ports (kubernetes pkg/proxy/nftables/proxier.go), every layout
 * from 1.29 to 1.37 (src/generate/nft-layout.ts says what changed when): the names of maps, sets and
 * per-Service chains never changed; what a service chain holds did (a numgen vmap to endpoint chains,
 * from 1.36 a numgen DNAT map, from 1.37 a plain DNAT for a lone endpoint), and 1.29 has no cluster-ips.
 *
 * Each `table ip kube-proxy` / `table ip6 kube-proxy` (and a pasted fragment without a table
 * header that holds kube-proxy objects) is read on its own:
 *  - dispatch maps: `service-ips` (`VIP . proto . port : goto service-|local-|external-…`),
 *    `service-nodeports` (`proto . nodePort : goto external-…`), `no-endpoint-services` /
 *    `no-endpoint-nodeports` (`… comment "ns/svc:port" : goto reject-chain | drop`) and
 *    `firewall-ips` (`LBIP . proto . port : goto firewall-…`);
 *  - per Service port chains `service-|local-|external-|firewall-<HASH8>-ns/svc/proto/portname`
 *    and per endpoint chains `endpoint-<HASH8>-ns/svc/proto/portname__IP/PORT` (IPv6 `:` → `.`);
 *    HASH8 = base32(sha256(the name after the hash))[:8] (hashAndTruncate()).
 *
 * Reading choices (what the rules say and do not say):
 *  - The cluster IP is the `service-ips` key that goes to the service-/local- chain, else an IP of
 *    the `cluster-ips` set (≥1.31), else one inside the `cluster-ips-check` drop prefix, else the
 *    daddr of the service chain's masquerade rule, else the only IP a Service port has.
 *  - Other IPs go to the external- chain. kube-proxy writes no "external IP"/"loadbalancer IP"
 *    comment in nftables mode: an IP listed in `firewall-ips` is a LoadBalancer IP; otherwise kpx
 *    guesses LoadBalancer when the port has a NodePort (type=LoadBalancer allocates one) and
 *    externalIP when it has none. Element comments saying `external`/`loadbalancer` win.
 *  - Endpoints come from the service- chain (all endpoints, Cluster policy) else the local- chain;
 *    `local` is membership in the local- chain when there is one, else endpointLocality().
 *  - Probabilities are exact: (numgen keys mapping to the endpoint) / N.
 */
import type { NftChain, NftElement, NftExpr, NftMapRef, NftOperand, NftRule, NftRuleset, NftSet, NftTable } from '../model/nft.js';
import { nftTimeToSeconds, valueText } from '../model/nft.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { cidrContains, formatCidr, parseCidr, parseIp, type Cidr } from '../model/addr.js';
import { parseServiceComment } from './comments.js';
import { base32, servicePortName, sha256 } from './hash.js';
import { endpointLocalityLookup } from './locality.js';
import { nftTableOwner } from './owner.js';
import { problem, uniqueProblems, type ServiceProblem } from './problems.js';
import type { Absence, FrontEnd, NoEndpointFact, OwnedObject, ServiceFacts, Target } from './facts.js';
import { buildServicePort } from './service-builder.js';
import type { Evidence, ForeignObject, Protocol, Resolution, ServicePort } from './types.js';
import { compareServicePorts } from './types.js';

type Problem = Resolution['problems'][number];

/** kube-proxy's nftables object names (proxier.go constants). */
export const nftNames = {
  table: 'kube-proxy',
  servicesChain: 'services',
  serviceIPsMap: 'service-ips',
  serviceNodePortsMap: 'service-nodeports',
  nodePortIPsSet: 'nodeport-ips',
  clusterIPsSet: 'cluster-ips',
  clusterIPsCheckChain: 'cluster-ips-check',
  noEndpointServicesMap: 'no-endpoint-services',
  noEndpointNodePortsMap: 'no-endpoint-nodeports',
  rejectChain: 'reject-chain',
  firewallIPsMap: 'firewall-ips',
  markMasqChain: 'mark-for-masquerade',
} as const;

export type NftChainRole = 'service' | 'local' | 'external' | 'firewall' | 'endpoint' | 'affinity';

export interface NftObjectName {
  readonly role: NftChainRole;
  readonly hash: string;
  /** Everything after `<role>-<HASH>-`: what the hash is computed over. */
  readonly hashed: string;
  /** `ns/svc/proto/portname` (the Service port part), when the name parses. */
  readonly key: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly protocol?: Protocol;
  readonly portName?: string | null;
  /** Endpoint / affinity names: the endpoint from the name (IPv6 `.` turned back into `:`). */
  readonly endpointIp?: string;
  readonly endpointPort?: number;
  /** The name was cut by hashAndTruncate (ends with `...`). */
  readonly truncated: boolean;
}

const OBJECT_NAME = /^(service|local|external|firewall|endpoint|affinity)-([A-Z2-7]+)-(.+)$/;
const NAME_PROTOCOL = /^(tcp|udp|sctp)$/;
const NAME_ENDPOINT = /^(.+)\/(\d{1,5})$/;
/** A dotted-quad IPv4 address as parseIp() accepts it (no leading zeros, octets ≤ 255). */
const DOTTED_QUAD = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** parseIp(text) !== undefined, without parsing the common IPv4 case into a BigInt. */
function isIpText(text: string): boolean {
  return DOTTED_QUAD.test(text) || parseIp(text) !== undefined;
}

/**
 * Parse a per-Service-port / per-endpoint chain or set name. Called for every chain and map
 * target (200k names at 10k Services): each result is one object literal, never a spread of
 * another object plus fields (V8 builds those through a slow path, microseconds apiece).
 */
export function parseNftObjectName(text: string): NftObjectName | undefined {
  const m = OBJECT_NAME.exec(text);
  if (!m) return undefined;
  const role = m[1] as NftChainRole;
  const hash = m[2];
  const hashed = m[3];
  const truncated = hashed.endsWith('...');
  const perEndpoint = role === 'endpoint' || role === 'affinity';
  const sep = perEndpoint ? hashed.lastIndexOf('__') : -1;
  const key = sep >= 0 ? hashed.slice(0, sep) : hashed;
  const parts = key.split('/');
  if (parts.length !== 4 || !NAME_PROTOCOL.test(parts[2]) || !parts[0] || !parts[1]) return { role, hash, hashed, truncated, key };
  const namespace = parts[0];
  const name = parts[1];
  const protocol = parts[2] as Protocol;
  const portName = parts[3] === '' ? null : parts[3];
  if (sep >= 0) {
    const ep = NAME_ENDPOINT.exec(hashed.slice(sep + 2));
    if (ep) {
      const ipText = ep[1].split('.').length === 4 && /^[\d.]+$/.test(ep[1]) ? ep[1] : ep[1].replaceAll('.', ':');
      if (isIpText(ipText)) return { role, hash, hashed, truncated, key, namespace, name, protocol, portName, endpointIp: ipText, endpointPort: Number(ep[2]) };
    }
  }
  return { role, hash, hashed, truncated, key, namespace, name, protocol, portName };
}

/** base32(sha256(name))[:8], kube-proxy's hashAndTruncate() prefix. */
export function nftNameHash(name: string): string {
  // Only the 8 characters kept are encoded (base32 of the whole digest is 52).
  return base32(sha256(name), 8);
}

/** A table kube-proxy's nftables proxier wrote (or a pasted fragment of one). */
export function isKubeProxyNftTable(t: NftTable): boolean {
  if (t.fromIptablesNft) return false;
  if (t.name === nftNames.table && (t.family === 'ip' || t.family === 'ip6')) return true;
  if (!t.implicit) return false;
  return t.sets.some((s) => s.name === nftNames.serviceIPsMap || s.name === nftNames.serviceNodePortsMap) || t.chains.some((c) => parseNftObjectName(c.name)?.role === 'service');
}

// ---------------------------------------------------------------------------------------------

interface IpEntry {
  ip: string;
  /** Where this IP was seen going: the chain role of service-ips, or only the no-endpoint map. */
  target?: NftChainRole;
  noEndpointVerdict?: string;
  comment?: string;
  /** The map element that claims the address. */
  evidence?: Evidence;
}

interface Group {
  key: string;
  parsed?: NftObjectName;
  commentId?: { namespace: string; name: string; portName: string | null };
  protocol?: Protocol;
  port?: number;
  ips: Map<string, IpEntry>;
  lbIPs: Set<string>;
  nodePort?: number;
  nodePortEvidence?: Evidence;
  nodePortNoEndpoint?: string;
  chains: Partial<Record<'service' | 'local' | 'external' | 'firewall', NftChain>>;
  /** Endpoint chains a service-ips element goes to directly (no service chain in between). */
  directEndpoints: { chain: string; element: Evidence }[];
  /** Map elements go to these chains, which the dump does not have. */
  absentTargets: string[];
  /** Reached from a dispatch map element (or from another reached chain). */
  referenced: boolean;
  evidence: Evidence[];
  problems: ServiceProblem[];
}

interface Ctx {
  table: NftTable;
  family: 4 | 6;
  where: string;
  chains: Map<string, NftChain>;
  sets: Map<string, NftSet>;
  snapshot: NodeSnapshot;
  problems: Problem[];
  /** parseNftObjectName results (names are looked at many times); null: not a kube-proxy name. */
  names: Map<string, NftObjectName | null>;
  locality: (ip: string) => boolean | null;
}

function cachedName(ctx: Ctx, text: string): NftObjectName | undefined {
  let n = ctx.names.get(text);
  if (n === undefined) {
    n = parseNftObjectName(text) ?? null;
    ctx.names.set(text, n);
  }
  return n ?? undefined;
}

const elementText = (e: NftElement): string =>
  `${e.key.join(' . ')}${e.comment !== undefined ? ` comment "${e.comment}"` : ''}${e.value ? ` : ${valueText(e.value)}` : ''}`;

function elementEvidence(ctx: Ctx, set: string, e: NftElement): Evidence {
  return { file: ctx.table.file, line: e.line, text: elementText(e), where: `${ctx.where}/${set}` };
}

function ruleEvidence(ctx: Ctx, chain: NftChain, r: NftRule): Evidence {
  return { file: ctx.table.file, line: r.line, text: r.raw, where: `${ctx.where}/${chain.name}` };
}

function chainEvidence(ctx: Ctx, chain: NftChain): Evidence[] {
  if (chain.rules.length === 0) return [{ file: ctx.table.file, line: chain.line, text: `chain ${chain.name} {`, where: ctx.where }];
  // One `where` string per chain, not one per rule (a chain's rules are read for several Service ports).
  const where = `${ctx.where}/${chain.name}`;
  const file = ctx.table.file;
  return chain.rules.map((r) => ({ file, line: r.line, text: r.raw, where }));
}

function tableFamily(t: NftTable): 4 | 6 {
  if (t.family === 'ip6') return 6;
  if (t.family === 'ip') return 4;
  for (const s of t.sets) {
    if (s.keyType.includes('ipv6_addr')) return 6;
    if (s.keyType.includes('ipv4_addr')) return 4;
  }
  for (const s of t.sets) for (const e of s.elements) for (const k of e.key) if (parseIp(k)) return parseIp(k)!.family;
  return 4;
}

const verdictTarget = (e: NftElement): string | undefined =>
  e.value?.kind === 'verdict' && (e.value.verdict === 'goto' || e.value.verdict === 'jump') ? e.value.chain : undefined;

function asProtocol(text: string | undefined): Protocol | undefined {
  return text === 'tcp' || text === 'udp' || text === 'sctp' ? text : undefined;
}

function asPort(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,5}$/.test(text) ? Number(text) : undefined;
}

/** Count the integers an nft key stands for (`3`, `0-2`). */
function keyNumbers(text: string): number[] | undefined {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = m[2] !== undefined ? Number(m[2]) : a;
  if (b < a || b - a > 65536) return undefined;
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

function isMatch(e: NftExpr): e is Extract<NftExpr, { kind: 'match' }> {
  return e.kind === 'match';
}

/** The goto/jump verdict of a rule, if any. */
function ruleTarget(r: NftRule): { verdict: 'goto' | 'jump'; chain: string } | undefined {
  for (const e of r.exprs) if (e.kind === 'verdict' && (e.verdict === 'goto' || e.verdict === 'jump') && e.chain) return { verdict: e.verdict, chain: e.chain };
  return undefined;
}

const payloadIs = (o: NftOperand, field: string) => o.kind === 'payload' && (o.protocol === 'ip' || o.protocol === 'ip6') && o.field === field;

/** Every chain a rule can send a packet to (verdicts, inline vmaps, named verdict maps). */
function ruleChainRefs(r: NftRule, sets: Map<string, NftSet>): string[] {
  const out: string[] = [];
  const fromMap = (m: NftMapRef) => {
    const els = m.kind === 'inline' ? m.elements : (sets.get(m.name)?.elements ?? []);
    for (const e of els) {
      const t = verdictTarget(e);
      if (t) out.push(t);
    }
  };
  for (const e of r.exprs) {
    if (e.kind === 'verdict' && e.chain) out.push(e.chain);
    else if (e.kind === 'vmap') fromMap(e.map);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export function resolveNft(snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const problems: Problem[] = [];
  for (const rs of snapshot.nft) {
    const out = resolveRuleset(rs, snapshot);
    services.push(...out.services);
    others.push(...out.others);
    problems.push(...out.problems);
  }
  services.sort(compareServicePorts);
  return { services, others, problems };
}

function resolveRuleset(rs: NftRuleset, snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const problems: Problem[] = [];
  for (const t of rs.tables) {
    if (isKubeProxyNftTable(t)) {
      const out = resolveTable(t, snapshot);
      services.push(...out.services);
      others.push(...out.others);
      problems.push(...out.problems);
      continue;
    }
    const owner = nftTableOwner(t);
    for (const c of t.chains) others.push({ kind: 'nft-chain', table: tableLabel(t), name: c.name, owner, file: t.file, line: c.line });
  }
  return { services, others, problems };
}

const tableLabel = (t: NftTable) => (t.implicit ? '(fragment)' : `${t.family} ${t.name}`);

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
  const groups = new Map<string, Group>();
  const groupFor = (key: string): Group => {
    let g = groups.get(key);
    if (!g) {
      g = { key, ips: new Map(), lbIPs: new Set(), chains: {}, directEndpoints: [], absentTargets: [], referenced: false, evidence: [], problems: [] };
      groups.set(key, g);
    }
    return g;
  };
  const adoptName = (g: Group, n: NftObjectName) => {
    if (!g.parsed || (g.parsed.namespace === undefined && n.namespace !== undefined)) g.parsed = n;
    if (n.protocol) g.protocol ??= n.protocol;
  };

  // 1. Per-Service-port chains, grouped by the `ns/svc/proto/portname` in their names.
  for (const c of t.chains) {
    const n = cachedName(ctx, c.name);
    if (!n || n.role === 'endpoint' || n.role === 'affinity') continue;
    const g = groupFor(n.key);
    adoptName(g, n);
    if (g.chains[n.role]) g.problems.push(problem('nft-two-chains', { role: n.role, chain: g.chains[n.role]!.name, other: c.name }));
    else g.chains[n.role] = c;
  }

  /** The group a map element's target chain belongs to (problems when it does not exist). */
  const targetGroup = (set: string, e: NftElement): { g: Group; role: NftChainRole } | undefined => {
    const target = verdictTarget(e);
    const ev = elementEvidence(ctx, set, e);
    if (!target) return undefined;
    const n = cachedName(ctx, target);
    if (!n) {
      ctx.problems.push({ problem: problem('nft-element-not-service-chain', { set, element: e.key.join(' . '), target }), evidence: [ev] });
      return undefined;
    }
    const g = groupFor(n.key);
    adoptName(g, n);
    g.referenced = true;
    g.evidence.push(ev);
    if (!ctx.chains.has(target)) g.absentTargets.push(target);
    if (n.role === 'endpoint') {
      g.problems.push(problem('nft-element-to-endpoint-chain', { set, element: e.key.join(' . '), chain: target }));
      if (set === nftNames.serviceIPsMap) g.directEndpoints.push({ chain: target, element: ev });
    }
    return { g, role: n.role };
  };

  const commentGroup = (set: string, e: NftElement, protocol: Protocol | undefined): Group | undefined => {
    const id = e.comment !== undefined ? parseServiceComment(e.comment) : undefined;
    if (!id || !protocol) return undefined;
    const g = groupFor(`${id.namespace}/${id.name}/${protocol}/${id.portName ?? ''}`);
    g.commentId ??= { namespace: id.namespace, name: id.name, portName: id.portName };
    g.protocol ??= protocol;
    g.referenced = true;
    g.evidence.push(elementEvidence(ctx, set, e));
    return g;
  };
  const commentKind = (e: NftElement): 'external' | 'loadbalancer' | undefined =>
    e.comment && /load ?balancer/i.test(e.comment) ? 'loadbalancer' : e.comment && /external/i.test(e.comment) ? 'external' : undefined;
  const kindHints = new Map<Group, Map<string, 'external' | 'loadbalancer'>>();
  const hint = (g: Group, ip: string, e: NftElement) => {
    const k = commentKind(e);
    if (!k) return;
    if (!kindHints.has(g)) kindHints.set(g, new Map());
    kindHints.get(g)!.set(ip, k);
  };

  // 2. service-ips: VIP . proto . port : goto service-|local-|external-…
  for (const e of ctx.sets.get(nftNames.serviceIPsMap)?.elements ?? []) {
    const [ip, proto, port] = e.key;
    const tg = targetGroup(nftNames.serviceIPsMap, e);
    if (!tg) {
      if (!verdictTarget(e)) ctx.problems.push({ problem: problem('nft-element-no-goto', { set: nftNames.serviceIPsMap, element: elementText(e) }), evidence: [elementEvidence(ctx, nftNames.serviceIPsMap, e)] });
      continue;
    }
    const { g, role } = tg;
    g.protocol ??= asProtocol(proto);
    const p = asPort(port);
    if (p !== undefined) {
      if (g.port !== undefined && g.port !== p) g.problems.push(problem('nft-ports-disagree', { set: nftNames.serviceIPsMap, port: p, other: g.port }));
      g.port ??= p;
    }
    const entry = g.ips.get(ip) ?? { ip };
    entry.target = role === 'endpoint' ? 'service' : role;
    entry.evidence ??= elementEvidence(ctx, nftNames.serviceIPsMap, e);
    if (e.comment) entry.comment = e.comment;
    g.ips.set(ip, entry);
    hint(g, ip, e);
  }

  // 3. service-nodeports: proto . nodePort : goto external-…
  for (const e of ctx.sets.get(nftNames.serviceNodePortsMap)?.elements ?? []) {
    const tg = targetGroup(nftNames.serviceNodePortsMap, e);
    if (!tg) continue;
    tg.g.protocol ??= asProtocol(e.key[0]);
    const np = asPort(e.key[1]);
    if (np !== undefined) {
      tg.g.nodePort = np;
      tg.g.nodePortEvidence ??= elementEvidence(ctx, nftNames.serviceNodePortsMap, e);
    }
    if (tg.role !== 'external' && tg.role !== 'endpoint') tg.g.problems.push(problem('nft-nodeport-not-external', { element: e.key.join(' . '), target: verdictTarget(e) }));
  }

  // 4. no-endpoint-services / no-endpoint-nodeports: comment "ns/svc:port" : goto reject-chain | drop
  const groupsByAddress = new Map<string, Group>();
  for (const g of groups.values()) for (const ip of g.ips.keys()) if (g.protocol && g.port !== undefined) groupsByAddress.set(`${ip}|${g.protocol}|${g.port}`, g);
  for (const e of ctx.sets.get(nftNames.noEndpointServicesMap)?.elements ?? []) {
    const [ip, proto, port] = e.key;
    const protocol = asProtocol(proto);
    let g = commentGroup(nftNames.noEndpointServicesMap, e, protocol) ?? groupsByAddress.get(`${ip}|${protocol}|${asPort(port)}`);
    if (!g) {
      g = groupFor(`${ip}:${port}/${proto}`);
      g.referenced = true;
      g.evidence.push(elementEvidence(ctx, nftNames.noEndpointServicesMap, e));
    }
    g.protocol ??= protocol;
    g.port ??= asPort(port);
    const entry = g.ips.get(ip) ?? { ip };
    entry.noEndpointVerdict = e.value ? valueText(e.value) : '';
    entry.evidence ??= elementEvidence(ctx, nftNames.noEndpointServicesMap, e);
    g.ips.set(ip, entry);
    hint(g, ip, e);
    checkNoEndpointVerdict(ctx, g, nftNames.noEndpointServicesMap, e);
  }
  for (const e of ctx.sets.get(nftNames.noEndpointNodePortsMap)?.elements ?? []) {
    const protocol = asProtocol(e.key[0]);
    let g = commentGroup(nftNames.noEndpointNodePortsMap, e, protocol);
    if (!g) {
      g = [...groups.values()].find((x) => x.nodePort === asPort(e.key[1]) && x.protocol === protocol);
      if (!g) {
        ctx.problems.push({ problem: problem('nft-element-names-no-service', { set: nftNames.noEndpointNodePortsMap, element: elementText(e) }), evidence: [elementEvidence(ctx, nftNames.noEndpointNodePortsMap, e)] });
        continue;
      }
      g.evidence.push(elementEvidence(ctx, nftNames.noEndpointNodePortsMap, e));
    }
    const np = asPort(e.key[1]);
    if (np !== undefined && g.nodePort === undefined) {
      g.nodePort = np;
      g.nodePortEvidence ??= elementEvidence(ctx, nftNames.noEndpointNodePortsMap, e);
    }
    g.nodePortNoEndpoint = e.value ? valueText(e.value) : '';
    checkNoEndpointVerdict(ctx, g, nftNames.noEndpointNodePortsMap, e);
  }

  // 5. firewall-ips: LBIP . proto . port : goto firewall-…
  for (const e of ctx.sets.get(nftNames.firewallIPsMap)?.elements ?? []) {
    const tg = targetGroup(nftNames.firewallIPsMap, e);
    if (!tg) continue;
    tg.g.lbIPs.add(e.key[0]);
    if (tg.role !== 'firewall') tg.g.problems.push(problem('nft-firewall-element-not-firewall', { set: nftNames.firewallIPsMap, element: e.key.join(' . '), target: verdictTarget(e) }));
  }

  // 6. Reachability from the base chains: which chains can any packet get to?
  const reachable = reachableChains(ctx);

  // 7. Build the Service ports.
  const claimed = new Set<string>();
  const services: ServicePort[] = [];
  const clusterRanges = clusterIPRanges(ctx);
  const clusterIPSet = new Set(ctx.sets.get(nftNames.clusterIPsSet)?.elements.map((e) => e.key[0]) ?? []);
  // 1.29 wrote neither the cluster-ips set nor cluster-ips-check: the cluster IPs it dispatches bound a range.
  const inferredRange = clusterIPSet.size === 0 && clusterRanges.length === 0 ? dispatchedClusterRange(groups.values()) : undefined;
  for (const g of groups.values()) {
    const chainsOfGroup = Object.values(g.chains).filter((c): c is NftChain => c !== undefined);
    const live = g.referenced || (reachable !== undefined && chainsOfGroup.some((c) => reachable.has(c.name)));
    if (!live) continue;
    const sp = servicePortOf(ctx, g, { clusterIPSet, clusterRanges, inferredRange, hints: kindHints.get(g) });
    for (const name of Object.values(sp.chains)) claimed.add(name);
    services.push(sp);
  }

  // 8. Orphans: chains no packet can reach (stale chains kube-proxy flushed, or hand edits). Not in a
  // listing cut mid-way: what reaches them may be past the cut.
  if (reachable && !t.truncated) {
    for (const c of t.chains) {
      if (c.hook || reachable.has(c.name)) continue;
      ctx.problems.push({ problem: problem('chain-unreached', { chain: c.name, empty: c.rules.length === 0 }), evidence: chainEvidence(ctx, c).slice(0, 5) });
    }
  }

  // 9. Everything else in the table is kube-proxy's infrastructure.
  const others: ForeignObject[] = [];
  for (const c of t.chains) {
    if (claimed.has(c.name)) continue;
    others.push({ kind: 'nft-chain', table: ctx.where, name: c.name, owner: 'kube-proxy', file: t.file, line: c.line });
  }
  return { services, others, problems: ctx.problems };
}

function checkNoEndpointVerdict(ctx: Ctx, g: Group, set: string, e: NftElement): void {
  const v = e.value;
  if (!v || v.kind !== 'verdict') {
    g.problems.push(problem('nft-element-no-verdict', { set, element: e.key.join(' . ') }));
    return;
  }
  if (v.verdict === 'drop') return;
  if ((v.verdict === 'goto' || v.verdict === 'jump') && v.chain) {
    if (!ctx.chains.has(v.chain)) g.problems.push(problem('nft-element-target-absent', { set, element: e.key.join(' . '), chain: v.chain }));
    return;
  }
  g.problems.push(problem('nft-no-endpoint-verdict-passes', { set, element: e.key.join(' . '), verdict: valueText(v) }));
}

/** Chains reachable from the table's base chains; undefined when the table has none (a fragment). */
function reachableChains(ctx: Ctx): Set<string> | undefined {
  const bases = ctx.table.chains.filter((c) => c.hook);
  if (bases.length === 0) return undefined;
  const seen = new Set<string>();
  const todo = bases.map((c) => c.name);
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const c = ctx.chains.get(name);
    if (!c) continue;
    for (const r of c.rules) for (const ref of ruleChainRefs(r, ctx.sets)) if (!seen.has(ref)) todo.push(ref);
  }
  return seen;
}

/** The smallest prefix holding every address a service-ips element sends to a service-/local- chain (≥ 2 of one family). */
function dispatchedClusterRange(groups: Iterable<Group>): Cidr | undefined {
  let lo: bigint | undefined;
  let hi: bigint | undefined;
  let family: 4 | 6 | undefined;
  let n = 0;
  for (const g of groups) {
    for (const e of g.ips.values()) {
      if (e.target !== 'service' && e.target !== 'local') continue;
      const ip = parseIp(e.ip);
      if (!ip || (family !== undefined && ip.family !== family)) return undefined;
      family = ip.family;
      lo = lo === undefined || ip.value < lo ? ip.value : lo;
      hi = hi === undefined || ip.value > hi ? ip.value : hi;
      n++;
    }
  }
  if (n < 2 || lo === undefined || hi === undefined || family === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  let prefix = bits;
  while (prefix > 0 && lo >> BigInt(bits - prefix) !== hi >> BigInt(bits - prefix)) prefix--;
  const network = (lo >> BigInt(bits - prefix)) << BigInt(bits - prefix);
  return { family, network, prefix };
}

/** `ip daddr 10.96.0.0/16 drop` in cluster-ips-check: the Service CIDR(s). */
function clusterIPRanges(ctx: Ctx): Cidr[] {
  const out: Cidr[] = [];
  for (const r of ctx.chains.get(nftNames.clusterIPsCheckChain)?.rules ?? []) {
    if (!r.exprs.some((e) => e.kind === 'verdict' && e.verdict === 'drop')) continue;
    for (const e of r.exprs) {
      if (!isMatch(e) || !payloadIs(e.left, 'daddr') || e.op === '!=') continue;
      const values = e.right.kind === 'value' ? [e.right.text] : e.right.kind === 'set' ? e.right.elements.map((x) => x.key[0]) : [];
      for (const v of values) {
        const c = parseCidr(v);
        if (c) out.push(c);
      }
    }
  }
  return out;
}

interface BalanceRead {
  chain: NftChain;
  /** Endpoint targets in first-key order with how many numgen keys map to each. */
  targets: { chain?: string; ip?: string; port?: number | null; keys: number; evidence: Evidence[] }[];
  mod?: number;
  affinity: { set: string; endpointChain: string; rule: NftRule }[];
  masq?: { ip?: string; port?: number; protocol?: Protocol; rule: NftRule };
  problems: ServiceProblem[];
}

/** Read a service-/local- chain: masquerade rule, affinity gotos, numgen vmap or numgen dnat map. */
function readBalancing(ctx: Ctx, chain: NftChain): BalanceRead {
  const out: BalanceRead = { chain, targets: [], affinity: [], problems: [] };
  const numgens: { mod: number; offset: number; elements: readonly NftElement[]; rule: NftRule; kind: 'vmap' | 'dnat' }[] = [];
  for (const r of chain.rules) {
    const target = ruleTarget(r);
    if (target?.chain === nftNames.markMasqChain) {
      let ip: string | undefined;
      let port: number | undefined;
      let protocol: Protocol | undefined;
      for (const e of r.exprs) {
        if (!isMatch(e) || e.op === '!=') continue;
        if (payloadIs(e.left, 'daddr') && e.right.kind === 'value') ip = e.right.text;
        if (e.left.kind === 'payload' && e.left.field === 'dport' && e.right.kind === 'value') {
          port = asPort(e.right.text);
          protocol = asProtocol(e.left.protocol);
        }
      }
      out.masq = { rule: r, ...(ip ? { ip } : {}), ...(port !== undefined ? { port } : {}), ...(protocol ? { protocol } : {}) };
      continue;
    }
    const setMatch = r.exprs.find((e): e is Extract<NftExpr, { kind: 'match' }> => isMatch(e) && payloadIs(e.left, 'saddr') && e.right.kind === 'set-ref');
    if (setMatch && target && setMatch.right.kind === 'set-ref') {
      out.affinity.push({ set: setMatch.right.name, endpointChain: target.chain, rule: r });
      continue;
    }
    for (const e of r.exprs) {
      if (e.kind === 'vmap' && e.key.kind === 'numgen' && e.map.kind === 'inline') numgens.push({ mod: e.key.mod, offset: e.key.offset, elements: e.map.elements, rule: r, kind: 'vmap' });
      else if (e.kind === 'dnat' && e.map && e.map.key.kind === 'numgen' && e.map.map.kind === 'inline') numgens.push({ mod: e.map.key.mod, offset: e.map.key.offset, elements: e.map.map.elements, rule: r, kind: 'dnat' });
      else if (e.kind === 'vmap' && e.key.kind === 'numgen') out.problems.push(problem('nft-numgen-named-map', { chain: chain.name, map: e.map.kind === 'ref' ? e.map.name : null }));
    }
  }
  if (numgens.length > 1) out.problems.push(problem('nft-numgen-several', { chain: chain.name, rules: numgens.length }));
  const ng = numgens[0];
  if (!ng) {
    // 1.37+ (PR #140723): a lone endpoint without affinity is a plain `dnat to IP:PORT` in the service chain.
    const d = out.affinity.length === 0 ? dnatOf(chain) : undefined;
    if (d) {
      out.mod = 1;
      out.targets = [{ ip: d.ip, port: d.port, keys: 1, evidence: [ruleEvidence(ctx, chain, d.rule)] }];
    }
    return out;
  }
  out.mod = ng.mod;
  const ruleEv = ruleEvidence(ctx, chain, ng.rule);
  const byTarget = new Map<string, BalanceRead['targets'][number]>();
  const covered = new Set<number>();
  const outOfRange: string[] = [];
  for (const el of ng.elements) {
    const nums = keyNumbers(el.key[0] ?? '');
    if (!nums) {
      out.problems.push(problem('nft-numgen-key-not-number', { chain: chain.name, key: el.key.join(' . ') }));
      continue;
    }
    let id: string;
    let entry: BalanceRead['targets'][number];
    if (ng.kind === 'vmap') {
      const t = verdictTarget(el);
      if (!t) {
        out.problems.push(problem('nft-numgen-not-endpoint-goto', { chain: chain.name, key: el.key[0] ?? '', verdict: el.value ? valueText(el.value) : null }));
        continue;
      }
      id = t;
      entry = byTarget.get(id) ?? { chain: t, keys: 0, evidence: [ruleEv] };
    } else {
      const parts = el.value?.kind === 'data' ? el.value.parts : [];
      const ip = parts[0]?.replace(/^\[|\]$/g, '');
      const port = parts.length > 1 ? (asPort(parts[1]) ?? null) : null;
      if (!ip || !isIpText(ip)) {
        out.problems.push(problem('nft-numgen-not-address', { chain: chain.name, key: el.key[0] ?? '', value: el.value ? valueText(el.value) : null }));
        continue;
      }
      id = `${ip}|${port}`;
      entry = byTarget.get(id) ?? { ip, port, keys: 0, evidence: [ruleEv] };
    }
    let inRange = 0;
    for (const n of nums) {
      const k = n - ng.offset;
      if (k < 0 || k >= ng.mod) outOfRange.push(String(n));
      else if (!covered.has(k)) {
        covered.add(k);
        inRange++;
      }
    }
    entry.keys += inRange;
    byTarget.set(id, entry);
  }
  out.targets = [...byTarget.values()];
  if (outOfRange.length > 0) out.problems.push(problem('nft-numgen-dead-keys', { chain: chain.name, mod: ng.mod, offset: ng.offset, keys: outOfRange }));
  if (covered.size < ng.mod) {
    const missing = Array.from({ length: ng.mod }, (_, i) => i).filter((i) => !covered.has(i));
    out.problems.push(problem('nft-numgen-gap', { chain: chain.name, mod: ng.mod, missing: missing.map((i) => i + ng.offset) }));
  }
  return out;
}

function dnatOf(chain: NftChain): { ip: string; port: number | null; rule: NftRule } | undefined {
  for (const r of chain.rules) {
    for (const e of r.exprs) {
      if (e.kind === 'dnat' && e.to?.addr && isIpText(e.to.addr)) return { ip: e.to.addr, port: asPort(e.to.port) ?? null, rule: r };
    }
  }
  return undefined;
}

/** `ip saddr != { a, b } drop` → the listed sources. */
function firewallSources(chain: NftChain): string[] {
  const out: string[] = [];
  for (const r of chain.rules) {
    if (!r.exprs.some((e) => e.kind === 'verdict' && e.verdict === 'drop')) continue;
    for (const e of r.exprs) {
      if (!isMatch(e) || !payloadIs(e.left, 'saddr') || e.op !== '!=') continue;
      if (e.right.kind === 'value') out.push(e.right.text);
      else if (e.right.kind === 'set') out.push(...e.right.elements.map((x) => x.key.join(' . ')));
      else if (e.right.kind === 'list') out.push(...e.right.items);
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

interface BuildOpts {
  clusterIPSet: Set<string>;
  clusterRanges: Cidr[];
  /** The smallest prefix holding every cluster IP the table dispatches (tables without cluster-ips). */
  inferredRange?: Cidr;
  hints?: Map<string, 'external' | 'loadbalancer'>;
}

/** Read a Service port group into neutral facts and build it (service-builder.ts). */
function servicePortOf(ctx: Ctx, g: Group, opts: BuildOpts): ServicePort {
  const problems = [...g.problems];
  const evidence = [...g.evidence];
  const { service: svcChain, local: localChain, external: extChain, firewall: fwChain } = g.chains;
  for (const c of [svcChain, localChain, extChain, fwChain]) if (c) evidence.push(...chainEvidence(ctx, c));

  // Identity: chain names first, then element comments.
  const parsed = g.parsed && g.parsed.namespace !== undefined ? g.parsed : undefined;
  const identity = parsed
    ? { namespace: parsed.namespace!, name: parsed.name!, portName: parsed.portName ?? null }
    : g.commentId;
  // Chain names carry the name in clear behind their hash: 'hash' is the closest schema value.
  const identifiedBy: ServicePort['identifiedBy'] = parsed ? 'hash' : g.commentId ? 'set-comment' : 'address';
  if (parsed && g.commentId) {
    const c = g.commentId;
    if (c.namespace !== parsed.namespace || c.name !== parsed.name || c.portName !== (parsed.portName ?? null)) {
      problems.push(problem('nft-comment-disagrees', { comment: servicePortName(c.namespace, c.name, c.portName), chains: servicePortName(parsed.namespace!, parsed.name!, parsed.portName ?? null) }));
    }
  }
  const protocol: Protocol = g.protocol ?? parsed?.protocol ?? 'tcp';

  // Balancing chains.
  const svcRead = svcChain ? readBalancing(ctx, svcChain) : undefined;
  const localRead = localChain ? readBalancing(ctx, localChain) : undefined;
  let balancing = svcRead ?? localRead;
  if (!balancing && g.directEndpoints.length > 0) {
    // An element straight to an endpoint chain: that endpoint takes every new connection to that VIP.
    const first = g.directEndpoints[0];
    balancing = { chain: ctx.chains.get(first.chain) ?? { name: first.chain, rules: [], line: first.element.line }, targets: [{ chain: first.chain, keys: 1, evidence: [first.element] }], mod: 1, affinity: [], problems: [] };
  }
  for (const r of [svcRead, localRead]) if (r) problems.push(...r.problems);

  // Cluster IP and port.
  const entries = [...g.ips.values()];
  let clusterIP: string | undefined = entries.find((e) => e.target === 'service' || e.target === 'local')?.ip;
  const internalTarget = clusterIP ? g.ips.get(clusterIP)!.target : undefined;
  clusterIP ??= entries.find((e) => opts.clusterIPSet.has(e.ip))?.ip;
  clusterIP ??= entries.find((e) => {
    const ip = parseIp(e.ip);
    return ip && opts.clusterRanges.some((c) => cidrContains(c, ip));
  })?.ip;
  if (clusterIP === undefined && opts.inferredRange && entries.length > 1) {
    const range = opts.inferredRange;
    const inside = entries.filter((e) => {
      const ip = parseIp(e.ip);
      return e.target === undefined && ip && cidrContains(range, ip);
    });
    if (inside.length === 1) {
      clusterIP = inside[0].ip;
      problems.push(problem('nft-cluster-ip-inferred', { address: clusterIP, range: formatCidr(range), others: entries.filter((e) => e.ip !== clusterIP).map((e) => e.ip) }));
    }
  }
  const masq = svcRead?.masq ?? localRead?.masq;
  if (masq?.ip && clusterIP && masq.ip !== clusterIP) problems.push(problem('nft-masquerade-address', { chain: (svcRead?.masq ? svcChain : localChain)!.name, address: masq.ip, clusterIP }));
  clusterIP ??= masq?.ip;
  if (clusterIP === undefined && entries.length === 1 && entries[0].target !== 'external') clusterIP = entries[0].ip;
  const port = g.port ?? masq?.port;
  if (masq?.port !== undefined && g.port !== undefined && masq.port !== g.port) problems.push(problem('nft-masquerade-port', { port: masq.port, mapPort: g.port }));

  // External IPs and LoadBalancer IPs.
  const externalIPs = new Set<string>();
  const loadBalancerIPs = new Set<string>(g.lbIPs);
  for (const e of entries) {
    if (e.ip === clusterIP || loadBalancerIPs.has(e.ip)) continue;
    const h = opts.hints?.get(e.ip);
    if (h === 'loadbalancer' || (h === undefined && g.nodePort !== undefined)) loadBalancerIPs.add(e.ip);
    else externalIPs.add(e.ip);
  }
  for (const e of entries) {
    if (e.ip !== clusterIP && e.target && e.target !== 'external' && e.target !== 'firewall') problems.push(problem('nft-address-internal-chain', { address: e.ip, role: e.target, clusterIP }));
    if (e.ip === clusterIP && e.target === 'external') problems.push(problem('nft-cluster-ip-external-chain', { address: e.ip }));
  }

  // Traffic policies.
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
  const externalDrop = g.nodePortNoEndpoint === 'drop' || entries.some((e) => e.ip !== clusterIP && e.noEndpointVerdict === 'drop');
  if (externalDrop) externalTrafficPolicy = 'Local';
  const internalDrop = clusterIP !== undefined && g.ips.get(clusterIP)?.noEndpointVerdict === 'drop';
  const internalTrafficPolicy: 'Cluster' | 'Local' = internalTarget === 'local' || internalDrop ? 'Local' : 'Cluster';
  if (extChain && !extChain.rules.some((r) => !r.exprs.some(isMatch) && ruleTarget(r)?.verdict === 'goto') && !externalDrop) {
    problems.push(problem('nft-external-no-goto', { chain: extChain.name }));
  }

  // Source ranges.
  const sourceRanges = new Set<string>();
  if (fwChain) {
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
  }

  // Endpoints.
  const endpoints: Target[] = [];
  const targets = endpoints;
  const absences: Absence[] = [];
  const ownChains: Record<string, string> = {};
  if (svcChain) ownChains.service = svcChain.name;
  if (localChain) ownChains.local = localChain.name;
  if (extChain) ownChains.external = extChain.name;
  if (fwChain) ownChains.firewall = fwChain.name;
  let hashVerified: boolean | null = null;
  const verify = (chainName: string, n: NftObjectName | undefined) => {
    if (!n || n.truncated) return;
    const want = nftNameHash(n.hashed);
    if (n.hash === want) hashVerified ??= true;
    else {
      hashVerified = false;
      problems.push(problem('nft-hash-mismatch', { chain: chainName, hash: n.hash, expected: want }));
    }
  };
  for (const c of [svcChain, localChain, extChain, fwChain]) if (c) verify(c.name, cachedName(ctx, c.name));

  const localKeys = new Set<string>();
  if (localRead) {
    for (const t of localRead.targets) {
      if (t.chain) localKeys.add(t.chain);
      else if (t.ip) localKeys.add(`${t.ip}|${t.port}`);
    }
  }
  if (balancing) {
    const n = balancing.mod ?? 0;
    balancing.targets.forEach((t, i) => {
      let ip = t.ip;
      let epPort = t.port ?? null;
      const epEvidence = [...t.evidence];
      if (t.chain) {
        ownChains[`endpoint${i}`] = t.chain;
        const epChain = ctx.chains.get(t.chain);
        const name = cachedName(ctx, t.chain);
        if (name && name.role !== 'endpoint') problems.push(problem('nft-balancing-not-endpoint', { chain: balancing.chain.name, target: t.chain }));
        if (!epChain) absences.push({ code: 'endpoint-chain-absent', chain: t.chain, from: balancing.chain.name });
        else {
          epEvidence.push(...chainEvidence(ctx, epChain));
          const d = dnatOf(epChain);
          if (d) {
            ip = d.ip;
            epPort = d.port;
          } else problems.push(problem('nft-endpoint-no-dnat', { chain: t.chain }));
        }
        if (!ip && name?.endpointIp) {
          ip = name.endpointIp;
          epPort = name.endpointPort ?? null;
        }
        verify(t.chain, name);
        if (name?.endpointIp && ip && (name.endpointIp !== ip || (name.endpointPort ?? null) !== epPort)) {
          const a = parseIp(name.endpointIp);
          const b = parseIp(ip);
          if (!a || !b || a.value !== b.value || (name.endpointPort ?? null) !== epPort) problems.push(problem('nft-endpoint-dnat-mismatch', { chain: t.chain, namedIp: name.endpointIp, namedPort: name.endpointPort ?? null, ip, port: epPort }));
        }
        if (name?.key && parsed && name.key !== parsed.key) problems.push(problem('nft-endpoint-other-service', { chain: balancing.chain.name, target: t.chain }));
      }
      if (!ip) return;
      const share = n > 0 ? t.keys / n : 0;
      // Membership in the local- chain says it; without one the locality module decides.
      const local = localRead ? (balancing === localRead ? true : localKeys.has(t.chain ?? `${t.ip}|${t.port}`)) : undefined;
      endpoints.push({ ip, port: epPort, share, ...(local !== undefined ? { local } : {}), ...(t.chain ? { via: t.chain } : {}), evidence: epEvidence });
    });
    if (balancing.targets.length === 0) problems.push(problem('nft-no-numgen', { chain: balancing.chain.name }));
  }
  if (localRead && svcRead) {
    const svcKeys = new Set(svcRead.targets.map((t) => t.chain ?? `${t.ip}|${t.port}`));
    for (const t of localRead.targets) {
      const k = t.chain ?? `${t.ip}|${t.port}`;
      if (!svcKeys.has(k)) problems.push(problem('nft-local-endpoint-not-in-service', { chain: localChain!.name, endpoint: t.chain ?? `${t.ip}:${t.port}`, serviceChain: svcChain!.name }));
    }
  }

  // Session affinity.
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
    verify(a.set, name);
    const epName = cachedName(ctx, a.endpointChain);
    if (name && epName && name.hashed !== epName.hashed) problems.push(problem('nft-affinity-other-endpoint', { set: a.set, chain: a.endpointChain }));
    if (!ctx.chains.has(a.endpointChain)) problems.push(problem('nft-affinity-target-absent', { chain: a.endpointChain }));
  }
  [...affinitySets].forEach((s, i) => (ownChains[`affinity${i}`] = s));
  if (affinityRules.length > 0 && affinity === undefined) affinity = 10800;

  // What the dumps say about traffic without endpoints; the builder derives the state.
  const rejects = entries.some((e) => e.noEndpointVerdict !== undefined && e.noEndpointVerdict !== 'drop') || (g.nodePortNoEndpoint !== undefined && g.nodePortNoEndpoint !== 'drop');
  const noEndpoints: NoEndpointFact[] = [];
  if (rejects) noEndpoints.push({ scope: 'all', verdict: 'reject' });
  if (internalDrop || externalDrop) noEndpoints.push({ scope: 'local', verdict: 'drop' });
  if (rejects && (internalDrop || externalDrop)) {
    problems.push(problem('nft-no-endpoint-reject-and-drop', {}));
  }
  if (rejects && endpoints.length > 0) problems.push(problem('nft-no-endpoint-reject-with-endpoints', {}));
  for (const chain of g.absentTargets) absences.push({ code: 'service-chain-absent', chain });
  // A listing cut mid-way: this Service port's chains, map elements and endpoints may go on past the cut.
  if (ctx.table.truncated && !rejects && !internalDrop && !externalDrop) absences.push({ code: 'table-truncated', table: ctx.where, file: ctx.table.file, line: ctx.table.endLine, listing: 'nft' });
  if (!balancing && !rejects && !internalDrop && !externalDrop && g.absentTargets.length === 0 && !ctx.table.truncated) {
    problems.push(problem('nft-nothing-delivers', {}));
  }

  const frontEnds = nftFrontEnds(g, clusterIP, externalIPs, loadBalancerIPs);
  // A cluster IP known only from the masquerade rule (no map element names it).
  if (clusterIP !== undefined && !frontEnds.some((f) => f.kind === 'cluster-ip')) {
    const masqChain = svcRead?.masq ? svcChain : localChain;
    const ev = masq && masqChain ? ruleEvidence(ctx, masqChain, masq.rule) : evidence[0];
    if (ev) frontEnds.unshift({ kind: 'cluster-ip', ip: clusterIP, port: port ?? null, evidence: ev });
  }
  const facts: ServiceFacts = {
    mode: 'nftables',
    family: ctx.family,
    anchor: g.key,
    ...(identity ? { identity: { ...identity, by: identifiedBy === 'hash' ? ('hash' as const) : ('set-comment' as const) } } : {}),
    ...(protocol ? { protocol } : {}),
    ...(port !== undefined ? { port } : {}),
    frontEnds,
    sourceRanges: [...sourceRanges].sort(),
    externalTrafficPolicy,
    internalTrafficPolicy,
    ...(affinity !== undefined ? { affinitySeconds: affinity } : {}),
    targets,
    noEndpoints,
    absences,
    problems: uniqueProblems(problems),
    owned: Object.entries(ownChains).map(([key, name]): OwnedObject => ({ role: key.replace(/\d+$/, '') as OwnedObject['role'], name })),
    hashClaims: [],
    hashVerified,
    evidence,
  };
  return buildServicePort(facts, ctx.locality);
}

/** Every address (and the NodePort) that dispatches to the Service port, with its map element. */
function nftFrontEnds(g: Group, clusterIP: string | undefined, externalIPs: ReadonlySet<string>, loadBalancerIPs: ReadonlySet<string>): FrontEnd[] {
  const out: FrontEnd[] = [];
  const fallback = g.evidence[0];
  for (const e of g.ips.values()) {
    const evidence = e.evidence ?? fallback;
    if (!evidence) continue;
    const kind = e.ip === clusterIP ? 'cluster-ip' : loadBalancerIPs.has(e.ip) ? 'load-balancer-ip' : externalIPs.has(e.ip) ? 'external-ip' : undefined;
    if (kind) out.push({ kind, ip: e.ip, port: g.port ?? null, evidence });
  }
  if (g.nodePort !== undefined && fallback) out.push({ kind: 'node-port', ip: null, port: g.nodePort, evidence: g.nodePortEvidence ?? fallback });
  return out;
}
