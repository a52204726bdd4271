/**
 * kube-proxy iptables mode → Service ports. Chains of one Service port share a hash suffix
 * (KUBE-SVC/SVL/EXT/FW/XLB-<hash>), so they are grouped by it; names come from comments when
 * kube-proxy wrote them, and are checked against the hash. Services without endpoints have
 * no chains, only filter-table REJECT/DROP rules, and are found from those.
 */
import type { Chain, Match, Rule, Ruleset, Table } from '../model/netfilter.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatCidr, formatIp } from '../model/addr.js';
import {
  chainOwner,
  isEndpointChain,
  kubeExternalServicesChain,
  kubeMarkDropChain,
  kubeMarkMasqChain,
  kubeNodePortsChain,
  kubeProxyFirewallChain,
  kubeServicesChain,
  perServiceChain,
} from './chains.js';
import { endpointFromComment, parseServiceComment, type CommentIdentity } from './comments.js';
import { endpointHash, portProtoHash, servicePortName } from './hash.js';
import { endpointLocality } from './locality.js';
import type { Endpoint, Evidence, ForeignObject, Protocol, Resolution, ServicePort, ServiceState } from './types.js';
import { compareServicePorts } from './types.js';

type EntryKind = 'cluster' | 'external' | 'loadbalancer' | 'nodeport';

interface Group {
  key: string;
  hash?: string;
  family: 4 | 6;
  chains: Map<string, Chain>;
  identity?: CommentIdentity;
  identitySource?: 'comment' | 'hash';
  protocol?: Protocol;
  port?: number;
  clusterIP?: string;
  clusterTarget?: string;
  nodePort?: number;
  externalIPs: Set<string>;
  loadBalancerIPs: Set<string>;
  sourceRanges: Set<string>;
  noEndpoints: boolean;
  noLocalEndpoints: boolean;
  internalLocal?: boolean;
  /** External addresses known only from REJECT/DROP rules, which are the same for externalIPs and LoadBalancer IPs. */
  ambiguousExternal?: boolean;
  externalLocal?: boolean;
  evidence: Evidence[];
  problems: string[];
}

// Evidence is built for rules chain by chain: the `table/chain` text is made once per chain.
let lastTable: string | undefined;
let lastChain: string | undefined;
let lastWhere = '';

export const evidenceOf = (r: Rule): Evidence => {
  if (r.chain !== lastChain || r.table !== lastTable) {
    lastTable = r.table;
    lastChain = r.chain;
    lastWhere = `${r.table}/${r.chain}`;
  }
  return { file: r.file, line: r.line, text: r.raw, where: lastWhere };
};

function pushEvidence(out: Evidence[], rules: readonly Rule[]): void {
  for (let i = 0; i < rules.length; i++) out.push(evidenceOf(rules[i]));
}

function first<K extends Match['kind']>(r: Rule, kind: K, pred?: (m: Extract<Match, { kind: K }>) => boolean): Extract<Match, { kind: K }> | undefined {
  for (const m of r.matches) if (m.kind === kind && (!pred || pred(m as Extract<Match, { kind: K }>))) return m as Extract<Match, { kind: K }>;
  return undefined;
}

function ruleProtocol(r: Rule): Protocol | undefined {
  const p = first(r, 'protocol', (m) => !m.negated)?.protocol;
  return p === 'tcp' || p === 'udp' || p === 'sctp' ? p : undefined;
}

function ruleDport(r: Rule): number | undefined {
  const m = first(r, 'port', (p) => p.dir === 'dst' && !p.negated && p.ranges.length === 1 && p.ranges[0].from === p.ranges[0].to);
  return m?.ranges[0].from;
}

function ruleDestination(r: Rule): string | undefined {
  const m = first(r, 'address', (a) => a.dir === 'dst' && !a.negated);
  if (!m?.cidr) return undefined;
  const host = m.cidr.prefix === (m.cidr.family === 4 ? 32 : 128);
  return host ? formatIp({ family: m.cidr.family, value: m.cidr.network }) : formatCidr(m.cidr);
}

function jumpTarget(r: Rule): string | undefined {
  return r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') ? r.target.chain : undefined;
}

function commentIdentity(r: Rule): CommentIdentity | undefined {
  for (const c of r.comments) {
    const id = parseServiceComment(c);
    if (id) return id;
  }
  return undefined;
}

/** Build the ladder's shares: rule i takes p_i of what the rules before it left. */
export function ladderShares(probabilities: readonly (number | undefined)[]): { shares: number[]; leftover: number; unreachableFrom?: number } {
  let remaining = 1;
  const shares: number[] = [];
  let unreachableFrom: number | undefined;
  probabilities.forEach((p, i) => {
    const take = p === undefined ? 1 : p;
    if (remaining === 0 && unreachableFrom === undefined) unreachableFrom = i;
    shares.push(remaining * take);
    remaining *= 1 - take;
  });
  return unreachableFrom === undefined ? { shares, leftover: remaining } : { shares, leftover: remaining, unreachableFrom };
}

interface EndpointRule {
  rule: Rule;
  sep: string;
  probability?: number;
}

/** The endpoint rules of a SVC/SVL chain, the affinity timeout, and what else the chain does. */
function readBalancingChain(chain: Chain): { endpoints: EndpointRule[]; affinity?: number; dropsNoLocal: boolean; masqCidr?: string } {
  const endpoints: EndpointRule[] = [];
  let affinity: number | undefined;
  let dropsNoLocal = false;
  let masqCidr: string | undefined;
  for (const r of chain.rules) {
    const target = jumpTarget(r);
    const recent = first(r, 'recent', (m) => m.op === 'rcheck' && !m.negated);
    if (target === kubeMarkMasqChain) {
      const src = first(r, 'address', (a) => a.dir === 'src' && a.negated);
      if (src?.cidr) masqCidr = formatCidr(src.cidr);
      continue;
    }
    if (target === kubeMarkDropChain || r.target?.kind === 'drop' || r.target?.kind === 'reject') {
      dropsNoLocal = true;
      continue;
    }
    if (recent && target) {
      affinity = recent.seconds ?? 10800;
      continue;
    }
    if (target && isEndpointChain(target)) {
      const stat = first(r, 'statistic');
      const probability = stat && stat.mode === 'random' && !stat.negated ? stat.probability : stat && stat.mode === 'nth' ? 1 / stat.every : undefined;
      endpoints.push(probability === undefined ? { rule: r, sep: target } : { rule: r, sep: target, probability });
    }
  }
  return { endpoints, dropsNoLocal, ...(affinity !== undefined ? { affinity } : {}), ...(masqCidr ? { masqCidr } : {}) };
}

function dnatOf(chain: Chain | undefined): { ip: string; port: number | null; rule: Rule } | undefined {
  if (!chain) return undefined;
  for (const r of chain.rules) {
    if (r.target?.kind === 'dnat' && r.target.to[0]?.ip) {
      const to = r.target.to[0];
      return { ip: to.ip!, port: to.port ?? null, rule: r };
    }
  }
  return undefined;
}

function classifyEntry(rest: string, targetRole: string | undefined): EntryKind | undefined {
  if (/^cluster IP/.test(rest)) return 'cluster';
  if (/^external IP/.test(rest)) return 'external';
  if (/^loadbalancer IP/.test(rest)) return 'loadbalancer';
  if (rest === '' && (targetRole === 'SVC' || targetRole === 'SVL')) return 'cluster';
  return undefined;
}

export function resolveIptables(snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const problems: Resolution['problems'][number][] = [];
  for (const rs of snapshot.rulesets) {
    const out = resolveRuleset(rs, snapshot);
    services.push(...out.services);
    others.push(...out.others);
    problems.push(...out.problems);
  }
  services.sort(compareServicePorts);
  return { services, others, problems };
}

function resolveRuleset(rs: Ruleset, snapshot: NodeSnapshot): Resolution {
  const nat = rs.tables.find((t) => t.name === 'nat');
  const filter = rs.tables.find((t) => t.name === 'filter');
  const groups = new Map<string, Group>();
  const family = rs.family;

  const groupFor = (key: string, hash?: string): Group => {
    let g = groups.get(key);
    if (!g) {
      g = { key, family, chains: new Map(), externalIPs: new Set(), loadBalancerIPs: new Set(), sourceRanges: new Set(), noEndpoints: false, noLocalEndpoints: false, evidence: [], problems: [] };
      if (hash) g.hash = hash;
      groups.set(key, g);
    }
    return g;
  };

  // 1. Per-Service chains in every table, grouped by hash.
  for (const t of rs.tables) {
    for (const c of t.chains) {
      const ps = perServiceChain(c.name);
      if (!ps) continue;
      const g = groupFor(ps.hash, ps.hash);
      g.chains.set(`${t.name}/${ps.role}`, c);
    }
  }

  // 2. KUBE-SERVICES and KUBE-NODEPORTS dispatch (nat).
  const dispatch = (chainName: string, isNodePorts: boolean) => {
    const chain = nat?.chainsByName.get(chainName);
    if (!chain) return;
    for (const r of chain.rules) {
      const target = jumpTarget(r);
      const ps = target ? perServiceChain(target) : undefined;
      if (!ps) continue;
      const g = groupFor(ps.hash, ps.hash);
      const id = commentIdentity(r);
      if (!g.identity && id) {
        g.identity = id;
        g.identitySource = 'comment';
      }
      g.evidence.push(evidenceOf(r));
      const proto = ruleProtocol(r);
      const port = ruleDport(r);
      if (proto) g.protocol ??= proto;
      if (isNodePorts) {
        if (port !== undefined) g.nodePort = port;
        continue;
      }
      const dst = ruleDestination(r);
      let kind = classifyEntry(id?.rest ?? '', ps.role);
      if (!kind) kind = ps.role === 'SVC' || ps.role === 'SVL' ? (g.clusterIP === undefined ? 'cluster' : 'external') : g.chains.has('nat/FW') || ps.role === 'FW' ? 'loadbalancer' : 'external';
      if (kind === 'cluster') {
        if (dst) g.clusterIP = dst;
        if (port !== undefined) g.port = port;
        g.clusterTarget = ps.role;
      } else if (dst) (kind === 'external' ? g.externalIPs : g.loadBalancerIPs).add(dst);
      if (port !== undefined && kind !== 'cluster') g.port ??= port;
    }
  };
  dispatch(kubeServicesChain, false);
  dispatch(kubeNodePortsChain, true);

  // 3. Filter-table REJECT/DROP for Services without (local) endpoints; firewall for source ranges.
  const filterEntry = (chainName: string) => {
    const chain = filter?.chainsByName.get(chainName);
    if (!chain) return;
    for (const r of chain.rules) {
      const id = commentIdentity(r);
      if (!id) continue;
      const noEp = /has no endpoints/.test(id.rest);
      const noLocal = /has no local endpoints/.test(id.rest);
      if (!noEp && !noLocal) continue;
      const proto = ruleProtocol(r) ?? 'tcp';
      const spn = servicePortName(id.namespace, id.name, id.portName);
      const hash = portProtoHash(spn, proto);
      const g = groupFor(hash, hash);
      if (!g.identity) {
        g.identity = id;
        g.identitySource = 'comment';
      }
      g.protocol ??= proto;
      g.evidence.push(evidenceOf(r));
      if (noEp) g.noEndpoints = true;
      if (noLocal) {
        g.noLocalEndpoints = true;
        // A DROP for the cluster IP (filter KUBE-SERVICES) is internalTrafficPolicy: Local; for
        // external addresses and node ports (KUBE-EXTERNAL-SERVICES) externalTrafficPolicy: Local.
        if (chainName === kubeServicesChain) g.internalLocal = true;
        else g.externalLocal = true;
      }
      const dst = ruleDestination(r);
      const port = ruleDport(r);
      const localDst = first(r, 'addrtype', (a) => a.dir === 'dst' && !a.negated && a.types.includes('LOCAL'));
      if (localDst && port !== undefined) g.nodePort = port;
      else if (dst && chainName === kubeServicesChain) {
        g.clusterIP ??= dst;
        if (port !== undefined) g.port ??= port;
      } else if (dst) {
        if (!g.loadBalancerIPs.has(dst)) {
          g.externalIPs.add(dst);
          g.ambiguousExternal = true;
        }
        if (port !== undefined) g.port ??= port;
      }
    }
  };
  filterEntry(kubeServicesChain);
  filterEntry(kubeExternalServicesChain);
  const fwChain = filter?.chainsByName.get(kubeProxyFirewallChain);
  for (const r of fwChain?.rules ?? []) {
    const target = jumpTarget(r);
    const ps = target ? perServiceChain(target) : undefined;
    const id = commentIdentity(r);
    const viaComment = id && /traffic not accepted by (KUBE-FW-[A-Z2-7]{16})/.exec(id.rest);
    const hash = ps?.hash ?? (viaComment ? perServiceChain(viaComment[1])?.hash : undefined);
    if (!hash) continue;
    const g = groupFor(hash, hash);
    g.evidence.push(evidenceOf(r));
    const dst = ruleDestination(r);
    if (dst) {
      g.externalIPs.delete(dst);
      g.loadBalancerIPs.add(dst);
    }
  }

  // 4. Read each group's chains.
  const results: ServicePort[] = [];
  // Without addresses and routes no endpoint's locality can be known (endpointLocality says null).
  const locality = snapshot.interfaces.length === 0 && snapshot.routes.length === 0 ? () => null : (ip: string) => endpointLocality(snapshot, ip);
  for (const g of groups.values()) {
    const sp = buildServicePort(g, nat, locality);
    if (sp) results.push(sp);
  }

  // 5. Everything else: kube-proxy infrastructure or other agents.
  const claimed = new Set<string>();
  for (const s of results) for (const name of Object.values(s.chains)) claimed.add(name);
  const others: ForeignObject[] = [];
  for (const t of rs.tables) {
    for (const c of t.chains) {
      if (c.builtin || claimed.has(c.name)) continue;
      const o: ForeignObject = { kind: 'chain', table: t.name, name: c.name, owner: chainOwner(c.name), file: rs.file, ...(c.line !== undefined ? { line: c.line } : {}) };
      others.push(o);
    }
  }
  return { services: results, others, problems: [] };
}

function hasChainsFor(g: Group): boolean {
  return [...g.chains.keys()].some((k) => k.startsWith('nat/'));
}

function buildServicePort(g: Group, nat: Table | undefined, locality: (ip: string) => boolean | null): ServicePort | undefined {
  const chainIn = (table: Table | undefined, role: string) => (table ? g.chains.get(`${table.name}/${role}`) : undefined);
  const svc = chainIn(nat, 'SVC');
  const svl = chainIn(nat, 'SVL');
  const ext = chainIn(nat, 'EXT');
  const xlb = chainIn(nat, 'XLB');
  const fwChains = [...g.chains.entries()].filter(([k]) => k.endsWith('/FW')).map(([, c]) => c);
  const problems = [...g.problems];
  const evidence = [...g.evidence];

  // Identity from any rule of the group when dispatch rules had no comment.
  for (const c of [svc, svl, ext, xlb, ...fwChains]) {
    if (g.identity || !c) continue;
    for (const r of c.rules) {
      const id = commentIdentity(r);
      if (id) {
        g.identity = id;
        g.identitySource = 'comment';
        break;
      }
    }
  }
  if (!g.protocol) {
    for (const c of [svc, svl, ext]) for (const r of c?.rules ?? []) g.protocol ??= ruleProtocol(r);
  }

  // Local policies from the chain shapes.
  let externalTrafficPolicy: 'Cluster' | 'Local' = 'Cluster';
  if (xlb) externalTrafficPolicy = 'Local';
  if (ext) {
    const targets = ext.rules.map(jumpTarget);
    if (targets.some((t) => t && perServiceChain(t)?.role === 'SVL')) externalTrafficPolicy = 'Local';
    pushEvidence(evidence, ext.rules);
  }
  if (g.externalLocal) externalTrafficPolicy = 'Local';
  const internalTrafficPolicy: 'Cluster' | 'Local' = g.clusterTarget === 'SVL' || g.internalLocal ? 'Local' : 'Cluster';

  // Source ranges from the firewall chains (nat ≤1.24, filter ≥1.25).
  for (const fw of fwChains) {
    for (const r of fw.rules) {
      evidence.push(evidenceOf(r));
      const src = first(r, 'address', (a) => a.dir === 'src' && !a.negated);
      const t = jumpTarget(r) ?? r.target?.kind;
      if (!src?.cidr || t === kubeMarkDropChain || t === 'drop') continue;
      // kube-proxy also lets the LoadBalancer IPs themselves through (hairpin via the LB): not a user range.
      const host = src.cidr.prefix === (src.cidr.family === 4 ? 32 : 128) ? formatIp({ family: src.cidr.family, value: src.cidr.network }) : undefined;
      if (host && g.loadBalancerIPs.has(host)) continue;
      g.sourceRanges.add(formatCidr(src.cidr));
    }
  }

  // Endpoints: from SVC (all endpoints), else SVL (internalTrafficPolicy Local).
  const balancing = svc ?? svl ?? xlb;
  const read = balancing ? readBalancingChain(balancing) : undefined;
  const localRead = svl ? readBalancingChain(svl) : undefined;
  const localSeps = new Set((localRead?.endpoints ?? []).map((e) => e.sep));
  if (balancing) pushEvidence(evidence, balancing.rules);
  if (svl && svl !== balancing) pushEvidence(evidence, svl.rules);

  const endpoints: Endpoint[] = [];
  let seps: string[] = [];
  if (read) {
    const { shares, leftover, unreachableFrom } = ladderShares(read.endpoints.map((e) => e.probability));
    if (read.endpoints.length > 0 && leftover > 1e-6) problems.push(`the probability ladder leaves ${(leftover * 100).toFixed(2)}% of new connections without an endpoint`);
    if (unreachableFrom !== undefined) problems.push(`endpoint rule ${unreachableFrom + 1} of ${balancing!.name} can never be reached (an earlier rule takes every packet)`);
    const n = read.endpoints.length;
    let noZeroShares: boolean | undefined;
    for (let i = 0; i < n; i++) {
      const e = read.endpoints[i];
      seps.push(e.sep);
      const sepChain = nat?.chainsByName.get(e.sep);
      const dnat = dnatOf(sepChain);
      const epEvidence: Evidence[] = [evidenceOf(e.rule)];
      if (sepChain) pushEvidence(epEvidence, sepChain.rules);
      let ip = dnat?.ip;
      let port = dnat?.port ?? null;
      if (!sepChain || sepChain.line === undefined) problems.push(`${balancing!.name} jumps to ${e.sep}, which is not declared`);
      else if (!dnat) problems.push(`${e.sep} has no DNAT rule`);
      if (!ip) {
        const fromComment = e.rule.comments.map((c) => parseServiceComment(c)).map((id) => (id ? endpointFromComment(id.rest) : undefined)).find(Boolean);
        if (fromComment) {
          const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(fromComment);
          if (m) {
            ip = m[1];
            port = Number(m[2]);
          }
        }
      }
      if (!ip) continue;
      if (Math.abs(shares[i] - 1 / n) > 1e-6 && (noZeroShares ??= read.endpoints.every((x) => x.probability === undefined || x.probability > 0))) {
        problems.push(`endpoint ${ip}:${port} gets ${(shares[i] * 100).toFixed(4)}% of new connections, not its equal share ${(100 / n).toFixed(4)}%`);
      }
      const local = svl ? localSeps.has(e.sep) : locality(ip);
      endpoints.push({ ip, port, probability: Math.round(shares[i] * 1e10) / 1e10, local, via: e.sep, evidence: epEvidence.slice() });
    }
  }
  seps = [...new Set(seps)];

  if (g.ambiguousExternal && g.externalIPs.size > 0 && !hasChainsFor(g)) {
    problems.push(`the dump does not say whether ${[...g.externalIPs].join(', ')} ${g.externalIPs.size > 1 ? 'are externalIPs or LoadBalancer ingress IPs' : 'is an externalIP or a LoadBalancer ingress IP'} (kube-proxy writes the same REJECT/DROP rule for both); listed as externalIPs`);
  }
  const hasChains = Boolean(svc || svl || ext || xlb || fwChains.length);
  if (!hasChains && !g.noEndpoints && !g.noLocalEndpoints && g.clusterIP === undefined && g.nodePort === undefined) return undefined;

  const protocol: Protocol = g.protocol ?? 'tcp';
  const id = g.identity;
  let hashVerified: boolean | null = null;
  if (id && g.hash) {
    const spn = servicePortName(id.namespace, id.name, id.portName);
    hashVerified = portProtoHash(spn, protocol) === g.hash;
    if (!hashVerified) problems.push(`chain hash ${g.hash} does not match ${spn}/${protocol} (expected ${portProtoHash(spn, protocol)}): renamed or hand-edited rules?`);
    for (const ep of endpoints) {
      if (!ep.via || ep.port === null) continue;
      const want = `KUBE-SEP-${endpointHash(spn, protocol, `${ep.ip.includes(':') ? `[${ep.ip}]` : ep.ip}:${ep.port}`)}`;
      if (want !== ep.via) {
        hashVerified = false;
        problems.push(`${ep.via} does not match endpoint ${ep.ip}:${ep.port} of ${spn} (expected ${want})`);
      }
    }
  }

  let state: ServiceState = 'healthy';
  if (endpoints.length === 0) state = g.noLocalEndpoints && !g.noEndpoints ? 'no-local-endpoints' : 'no-endpoints';
  // A "has no local endpoints" DROP, or a Local policy (external or internal) with every endpoint elsewhere.
  else if (g.noLocalEndpoints) state = 'no-local-endpoints';
  else if ((externalTrafficPolicy === 'Local' || internalTrafficPolicy === 'Local') && endpoints.every((e) => e.local === false)) state = 'no-local-endpoints';
  if (state === 'healthy' && problems.length > 0) state = 'partial';
  if (balancing && read && read.endpoints.length === 0 && !g.noEndpoints && !read.dropsNoLocal) {
    problems.push(`${balancing.name} has no endpoint rules`);
    state = 'partial';
  }

  const chains: Record<string, string> = {};
  if (svc) chains.svc = svc.name;
  if (svl) chains.svl = svl.name;
  if (ext) chains.ext = ext.name;
  if (xlb) chains.xlb = xlb.name;
  fwChains.forEach((c, i) => (chains[i === 0 ? 'fw' : `fw${i}`] = c.name));
  seps.forEach((s, i) => (chains[`sep${i}`] = s));
  const port = g.port ?? 0;
  const serviceId = id ? `${servicePortName(id.namespace, id.name, id.portName)}/${protocol}` : `${g.clusterIP ?? '?'}:${port}/${protocol}`;
  const affinity = read?.affinity ?? localRead?.affinity;
  return {
    id: serviceId,
    namespace: id?.namespace ?? null,
    name: id?.name ?? null,
    portName: id ? id.portName : null,
    protocol,
    port,
    clusterIP: g.clusterIP ?? null,
    nodePort: g.nodePort ?? null,
    externalIPs: [...g.externalIPs].sort(),
    loadBalancerIPs: [...g.loadBalancerIPs].sort(),
    loadBalancerSourceRanges: [...g.sourceRanges],
    externalTrafficPolicy,
    internalTrafficPolicy,
    sessionAffinity: affinity !== undefined ? { timeoutSeconds: affinity } : null,
    state,
    endpoints,
    mode: 'iptables',
    family: g.family,
    identifiedBy: id ? 'comment' : 'address',
    chains,
    hashVerified,
    problems: [...new Set(problems)],
    // Exactly its length (push() leaves room for more; 10k Services' lists stay in memory).
    evidence: evidence.slice(),
  };
}
