/**
 * kube-proxy iptables mode reader: chains, dispatch and filter rules → neutral facts per Service
 * port (facts.ts), built into ServicePorts by the one builder (service-builder.ts). Chains of one
 * Service port share a hash suffix (KUBE-SVC/SVL/EXT/FW/XLB-<hash>), so they are grouped by it;
 * names come from kube-proxy's comments. Services without endpoints have no chains, only
 * filter-table REJECT/DROP rules, and are found from those. What a cut paste or a truncated table
 * leaves out is said as absence facts, not read as "no endpoints".
 */
import { chainsPastCut, tableShownWhole, type Chain, type Match, type NatTo, type Rule, type Ruleset, type Table } from '../model/netfilter.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { formatCidr, formatHostPort, formatIp, type Cidr } from '../model/addr.js';
import {
  isEndpointChain,
  kubeExternalServicesChain,
  kubeMarkDropChain,
  kubeMarkMasqChain,
  kubeNodePortsChain,
  kubeProxyFirewallChain,
  kubeServicesChain,
  perServiceChain,
  servicePortPolicyLocalChainNamePrefix,
  type PerServiceRole,
} from './chains.js';
import { endpointFromComment, parseServiceComment, type CommentIdentity } from './comments.js';
import { portProtoHash, servicePortName } from './hash.js';
import { endpointLocalityLookup } from './locality.js';
import { chainOwner } from './owner.js';
import { reachableChains } from './reach.js';
import { problem, type ServiceProblem } from './problems.js';
import { buildServicePort } from './service-builder.js';
import type { Absence, FrontEnd, HashClaim, NoEndpointFact, OwnedObject, ServiceFacts, Target, UnresolvedTarget } from './facts.js';
import type { Evidence, ForeignObject, Protocol, Resolution, ServicePort } from './types.js';
import { compareServicePorts } from './types.js';

type EntryKind = 'cluster' | 'external' | 'loadbalancer' | 'nodeport';

interface Group {
  hash: string;
  /** For a group without kube-proxy chains or a name (a REJECT/DROP read by its shape): what names it. */
  anchor?: string;
  family: 4 | 6;
  // The nat table's chains of this Service port by role (a later chain of the same role wins).
  svc?: Chain;
  svl?: Chain;
  ext?: Chain;
  xlb?: Chain;
  /** Whether any of its chains (FW included) is in nat. */
  inNat: boolean;
  /** FW chains, in nat (≤1.24) or filter (≥1.25): one per table, in the order the tables come. */
  fw?: { table: string; chain: Chain }[];
  identity?: CommentIdentity;
  protocol?: Protocol;
  port?: number;
  clusterIP?: string;
  clusterTarget?: string;
  nodePort?: number;
  /** Every dispatch claim, in rule order (made on first use). */
  frontEnds?: FrontEnd[];
  /** Dispatch rules jump to a per-Service chain of this group that the dump does not hold. */
  absentChain?: string;
  // Address sets are made on first use: most Service ports have none.
  externalIPs?: Set<string>;
  loadBalancerIPs?: Set<string>;
  sourceRanges?: Set<string>;
  noEndpoints: boolean;
  noLocalEndpoints: boolean;
  internalLocal?: boolean;
  /** External addresses known only from REJECT/DROP rules, which are the same for externalIPs and LoadBalancer IPs. */
  ambiguousExternal?: boolean;
  /** Dispatch rules in nat KUBE-SERVICES / KUBE-NODEPORTS name this Service port. */
  natDispatch?: boolean;
  /** Filter chains whose rules name this Service port (KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL). */
  filterChains?: Set<string>;
  externalLocal?: boolean;
  /** Evidence so far; buildServicePort appends the chains' rules and hands it to the ServicePort. */
  evidence: Evidence[];
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

// Match readers: plain loops, as they run for every dispatch and chain rule (no per-call closures).

function ruleProtocol(r: Rule): Protocol | undefined {
  for (const m of r.matches) {
    if (m.kind !== 'protocol' || m.negated) continue;
    const p = m.protocol;
    return p === 'tcp' || p === 'udp' || p === 'sctp' ? p : undefined;
  }
  return undefined;
}

/** The single destination port of a rule (`--dport 53`), not a range or a negation. */
function ruleDport(r: Rule): number | undefined {
  for (const m of r.matches) {
    if (m.kind === 'port' && m.dir === 'dst' && !m.negated && m.ranges.length === 1 && m.ranges[0].from === m.ranges[0].to) return m.ranges[0].from;
  }
  return undefined;
}

/** The first address match of a direction and negation (`-d 10.96.0.10/32`, `! -s 10.244.0.0/16`). */
function ruleAddress(r: Rule, dir: 'src' | 'dst', negated: boolean): Extract<Match, { kind: 'address' }> | undefined {
  for (const m of r.matches) if (m.kind === 'address' && m.dir === dir && m.negated === negated) return m;
  return undefined;
}

/** A host address without its /32 (/128), any other prefix as a CIDR. */
function cidrText(cidr: Cidr): string {
  const host = cidr.prefix === (cidr.family === 4 ? 32 : 128);
  return host ? formatIp({ family: cidr.family, value: cidr.network }) : formatCidr(cidr);
}

function ruleDestination(r: Rule): string | undefined {
  const m = ruleAddress(r, 'dst', false);
  return m?.cidr ? cidrText(m.cidr) : undefined;
}

/** `-m addrtype --dst-type LOCAL`: the node-port rules of KUBE-EXTERNAL-SERVICES. */
function matchesLocalDestination(r: Rule): boolean {
  for (const m of r.matches) if (m.kind === 'addrtype' && m.dir === 'dst' && !m.negated && m.types.includes('LOCAL')) return true;
  return false;
}

function recentCheck(r: Rule): Extract<Match, { kind: 'recent' }> | undefined {
  for (const m of r.matches) if (m.kind === 'recent' && m.op === 'rcheck' && !m.negated) return m;
  return undefined;
}

/** A match nft shows only as `xt match NAME` (the nft view of iptables-nft): there, options unknown. */
function residue(r: Rule): Extract<Match, { kind: 'unsupported' }> | undefined {
  for (const m of r.matches) if (m.kind === 'unsupported' && m.residue) return m;
  return undefined;
}

/**
 * What names a Service port the rules do not name and that has no cluster IP (the builder uses the
 * cluster IP when there is one): its balancing chain, else — like a Service known only by its
 * REJECT/DROP rules — its node port (`nodeport-30302`) or external address (`203.0.113.3:80`);
 * only then the chain that holds it (a KUBE-EXT/FW/XLB chain with neither, e.g. a grep).
 */
function anchorOf(g: Group, balancing: Chain | undefined): string {
  if (balancing) return balancing.name;
  if (g.anchor) return g.anchor;
  if (g.nodePort !== undefined) return `nodeport-${g.nodePort}`;
  const ip = g.loadBalancerIPs?.values().next().value ?? g.externalIPs?.values().next().value;
  if (ip !== undefined && g.port !== undefined) return formatHostPort(ip.replace(/\/(32|128)$/, ''), g.port);
  return g.ext?.name ?? g.xlb?.name ?? g.fw?.[0]?.chain.name ?? `KUBE-SVC-${g.hash}`;
}

/**
 * In the nft view of iptables-nft, where kube-proxy's comments are not printed: a filter
 * KUBE-SERVICES / KUBE-EXTERNAL-SERVICES rule with a port and a REJECT (no endpoints) or DROP (no
 * local endpoints) is kube-proxy's rule for a Service port without (local) endpoints — the only
 * rules kube-proxy writes there with that shape. Undefined elsewhere (iptables-save prints comments).
 */
function unnamedNoEndpointRule(rs: Ruleset, r: Rule): 'reject' | 'drop' | undefined {
  if (rs.viewOf !== 'nft' || r.comments.length > 0 || ruleDport(r) === undefined) return undefined;
  if (!ruleDestination(r) && !matchesLocalDestination(r)) return undefined;
  if (r.target?.kind === 'reject') return 'reject';
  if (r.target?.kind === 'drop') return 'drop';
  return undefined;
}

function statistic(r: Rule): Extract<Match, { kind: 'statistic' }> | undefined {
  for (const m of r.matches) if (m.kind === 'statistic') return m;
  return undefined;
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
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i];
    const take = p === undefined ? 1 : p;
    if (remaining === 0 && unreachableFrom === undefined) unreachableFrom = i;
    shares.push(remaining * take);
    remaining *= 1 - take;
  }
  return unreachableFrom === undefined ? { shares, leftover: remaining } : { shares, leftover: remaining, unreachableFrom };
}

interface EndpointRule {
  rule: Rule;
  /** Position of the rule in its chain. */
  index: number;
  sep: string;
  /** undefined: the rule takes everything that reaches it; null: the evidence hides it (`xt match statistic`). */
  probability: number | undefined | null;
}

interface BalancingChain {
  endpoints: EndpointRule[];
  /** null: an affinity rule whose timeout the evidence hides (`xt match recent`). */
  affinity?: number | null;
  /** Matches of endpoint rules the evidence shows only as `xt` residue. */
  hidden: string[];
  /** A DROP/REJECT for traffic without (local) endpoints. */
  noEndpoints?: NoEndpointFact;
  /** The chain's rules are one block repeated this many times (1: not repeated); only the first block is read. */
  repeated: number;
  blockLength: number;
}

/** The endpoint rules of a SVC/SVL/XLB chain, the affinity timeout, and its drop/reject for no (local) endpoints. */
function readBalancingChain(chain: Chain): BalancingChain {
  const endpoints: EndpointRule[] = [];
  let affinity: number | undefined | null;
  let noEndpoints: NoEndpointFact | undefined;
  const hidden: string[] = [];
  let affinityOnly: EndpointRule[] | undefined;
  const { rules, times } = unrepeated(chain.rules);
  // An XLB/SVL chain's drop (KUBE-MARK-DROP, kube-proxy ≤1.23: "has no local endpoints") is for
  // traffic without a local endpoint; a REJECT is for a Service without endpoints.
  const localChain = /^KUBE-(XLB|SVL)-/.test(chain.name);
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i];
    const target = jumpTarget(r);
    if (target === kubeMarkMasqChain) continue;
    if (target === kubeMarkDropChain || r.target?.kind === 'drop' || r.target?.kind === 'reject') {
      const reject = r.target?.kind === 'reject';
      const local = !reject && (localChain || r.comments.some((c) => c.includes('has no local endpoints')));
      noEndpoints ??= { scope: local ? 'local' : 'all', verdict: reject ? 'reject' : 'drop' };
      continue;
    }
    if (!target) continue;
    const xt = residue(r);
    if (xt && isEndpointChain(target)) {
      // kube-proxy's endpoint rules carry `-m recent --rcheck` (affinity) or `-m statistic`: nft shows
      // either only by name. An affinity check is not an endpoint rule; a share it hides is unknown.
      if (xt.module === 'recent') {
        affinity ??= null;
        (affinityOnly ??= []).push({ rule: r, index: i, sep: target, probability: null });
      } else {
        if (!hidden.includes(xt.text)) hidden.push(xt.text);
        endpoints.push({ rule: r, index: i, sep: target, probability: null });
      }
      continue;
    }
    const recent = recentCheck(r);
    if (recent) {
      affinity = recent.seconds ?? 10800;
      if (isEndpointChain(target)) (affinityOnly ??= []).push({ rule: r, index: i, sep: target, probability: null });
      continue;
    }
    if (isEndpointChain(target)) endpoints.push({ rule: r, index: i, sep: target, probability: endpointProbability(r) });
  }
  // kube-proxy writes an affinity check and a ladder rule for every endpoint. An endpoint chain only an
  // affinity check names (a grep that kept the `--rcheck` lines, not the ladder) is still an endpoint:
  // its share is not in the evidence.
  if (affinityOnly) {
    const inLadder = new Set(endpoints.map((e) => e.sep));
    for (const a of affinityOnly) {
      if (inLadder.has(a.sep)) continue;
      inLadder.add(a.sep);
      endpoints.push(a);
    }
  }
  return { endpoints, hidden, repeated: times, blockLength: rules.length, ...(affinity !== undefined ? { affinity } : {}), ...(noEndpoints ? { noEndpoints } : {}) };
}

/** `-m statistic --mode random --probability p` or `--mode nth --every n`; undefined when the rule takes all. */
function endpointProbability(r: Rule): number | undefined {
  const stat = statistic(r);
  if (!stat) return undefined;
  if (stat.mode === 'random') return stat.negated ? undefined : stat.probability;
  return 1 / stat.every;
}

/** The DNAT destination of a SEP chain: its first DNAT rule's first address. */
function dnatOf(chain: Chain | undefined): NatTo | undefined {
  if (!chain) return undefined;
  for (const r of chain.rules) {
    if (r.target?.kind === 'dnat' && r.target.to[0]?.ip) return r.target.to[0];
  }
  return undefined;
}

/** `-> 10.244.0.3:53` in the endpoint rule's comment, for SEP chains without a DNAT rule. */
function endpointFromRuleComment(r: Rule): { ip: string; port: number } | undefined {
  for (const c of r.comments) {
    const id = parseServiceComment(c);
    const text = id ? endpointFromComment(id.rest) : undefined;
    if (!text) continue;
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(text);
    return m ? { ip: m[1], port: Number(m[2]) } : undefined;
  }
  return undefined;
}

function classifyEntry(rest: string, targetRole: string | undefined): EntryKind | undefined {
  if (rest.startsWith('cluster IP')) return 'cluster';
  if (rest.startsWith('external IP')) return 'external';
  if (rest.startsWith('loadbalancer IP')) return 'loadbalancer';
  if (rest === '' && (targetRole === 'SVC' || targetRole === 'SVL')) return 'cluster';
  return undefined;
}

function frontEnd(g: Group, kind: FrontEnd['kind'], ip: string | null, port: number | null, evidence: Evidence): void {
  (g.frontEnds ??= []).push({ kind, ip, port, evidence });
}

function added(set: Set<string> | undefined, value: string): Set<string> {
  return (set ?? new Set<string>()).add(value);
}

export function resolveIptables(snapshot: NodeSnapshot): Resolution {
  const services: ServicePort[] = [];
  const others: ForeignObject[] = [];
  const locality = endpointLocalityLookup(snapshot);
  const problems: Resolution['problems'][number][] = [];
  for (const rs of snapshot.rulesets) {
    const out = resolveRuleset(rs, locality);
    for (const s of out.services) services.push(s);
    for (const o of out.others) others.push(o);
    problems.push(...out.problems);
  }
  sortServicePorts(services);
  return { services, others, problems };
}

/**
 * Sort as compareServicePorts does. It builds both sort keys on every comparison (~200k at 10k
 * Services, ~40 MB of garbage), so sort first on keys built once per Service port, then let it
 * sort that: on sorted input it compares each neighbour once. Its order decides in any case, and
 * ties keep their order either way, since equal keys stay in input order in both (stable) sorts.
 */
function sortServicePorts(services: ServicePort[]): void {
  const keyed = services.map((s) => ({ s, key: [s.namespace ?? '\uffff', s.name ?? '\uffff', s.portName ?? '', s.protocol ?? '\uffff', String(s.port).padStart(5, '0'), s.clusterIP ?? ''] }));
  keyed.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i] < b.key[i] ? -1 : 1;
    return 0;
  });
  for (let i = 0; i < keyed.length; i++) services[i] = keyed[i].s;
  services.sort(compareServicePorts);
}

function resolveRuleset(rs: Ruleset, locality: (ip: string) => boolean | null): { services: ServicePort[]; others: ForeignObject[]; problems: Resolution['problems'] } {
  const nat = rs.tables.find((t) => t.name === 'nat');
  const filter = rs.tables.find((t) => t.name === 'filter');
  const groups = new Map<string, Group>();
  const family = rs.family;

  const groupFor = (hash: string): Group => {
    let g = groups.get(hash);
    if (!g) {
      g = { hash, family, inNat: false, noEndpoints: false, noLocalEndpoints: false, evidence: [] };
      groups.set(hash, g);
    }
    return g;
  };

  // 1. Per-Service chains in every table, grouped by hash. (Index loops over the ~100k chains:
  // this runs once, unoptimised, where for…of allocates a step object per chain.)
  for (const t of rs.tables) {
    const chains = t.chains;
    for (let i = 0; i < chains.length; i++) {
      const ps = perServiceChain(chains[i].name);
      if (ps) addChain(groupFor(ps.hash), t.name, ps.role, chains[i]);
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
      const g = groupFor(ps.hash);
      const id = commentIdentity(r);
      if (!g.identity && id) g.identity = id;
      const ev = evidenceOf(r);
      g.evidence.push(ev);
      g.natDispatch = true;
      if (!nat?.chainsByName.has(target!)) g.absentChain ??= target;
      const proto = ruleProtocol(r);
      const port = ruleDport(r);
      if (proto) g.protocol ??= proto;
      if (isNodePorts) {
        if (port !== undefined) {
          g.nodePort = port;
          frontEnd(g, 'node-port', null, port, ev);
        }
        continue;
      }
      const dst = ruleDestination(r);
      let kind = classifyEntry(id?.rest ?? '', ps.role);
      if (!kind) kind = ps.role === 'SVC' || ps.role === 'SVL' ? (g.clusterIP === undefined ? 'cluster' : 'external') : hasNatFirewall(g) || ps.role === 'FW' ? 'loadbalancer' : 'external';
      if (kind === 'cluster') {
        // The first claim is the Service's own; a later one (another address to the same chain) is
        // kept as a front end, which duplicate-service-vip compares with the other Services' claims.
        if (g.clusterIP === undefined) {
          if (dst) g.clusterIP = dst;
          if (port !== undefined) g.port = port;
          g.clusterTarget = ps.role;
        }
      } else if (dst) {
        if (kind === 'external') g.externalIPs = added(g.externalIPs, dst);
        else g.loadBalancerIPs = added(g.loadBalancerIPs, dst);
      }
      if (dst) frontEnd(g, kind === 'cluster' ? 'cluster-ip' : kind === 'external' ? 'external-ip' : 'load-balancer-ip', dst, port ?? null, ev);
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
      const shape = id ? undefined : unnamedNoEndpointRule(rs, r);
      if (!id && !shape) continue;
      const noEp = id ? id.rest.includes('has no endpoints') : shape === 'reject';
      const noLocal = id ? id.rest.includes('has no local endpoints') : shape === 'drop';
      if (!noEp && !noLocal) continue;
      let g: Group;
      if (id) {
        const proto = ruleProtocol(r) ?? 'tcp';
        g = groupFor(portProtoHash(servicePortName(id.namespace, id.name, id.portName), proto));
        if (!g.identity) g.identity = id;
        g.protocol ??= proto;
      } else {
        // Without its comment the rule does not say which Service it is for: one Service port per
        // address (or node port), named by it; its protocol is the rule's own.
        // A Service port whose chains name it (by hash) and that claims the same address or node port is the one.
        const dst = ruleDestination(r);
        const port = ruleDport(r)!;
        const proto = ruleProtocol(r);
        const nodePort = matchesLocalDestination(r);
        const same = (x: Group) =>
          x.protocol === proto && (nodePort ? x.nodePort === port : x.port === port && (x.clusterIP === dst || x.externalIPs?.has(dst!) || x.loadBalancerIPs?.has(dst!)));
        const known = [...groups.values()].find(same);
        if (known) g = known;
        else {
          const anchor = dst && !nodePort ? formatHostPort(dst.replace(/\/(32|128)$/, ''), port) : `nodeport-${port}`;
          g = groupFor(`unnamed ${proto ?? '?'} ${anchor}`);
          g.anchor = anchor;
          if (proto) g.protocol ??= proto;
        }
      }
      const ev = evidenceOf(r);
      g.evidence.push(ev);
      (g.filterChains ??= new Set()).add(chainName);
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
      if (port !== undefined && matchesLocalDestination(r)) {
        g.nodePort = port;
        frontEnd(g, 'node-port', null, port, ev);
      } else if (dst && chainName === kubeServicesChain) {
        g.clusterIP ??= dst;
        frontEnd(g, 'cluster-ip', dst, port ?? null, ev);
        if (port !== undefined) g.port ??= port;
      } else if (dst) {
        if (!g.loadBalancerIPs?.has(dst)) {
          g.externalIPs = added(g.externalIPs, dst);
          g.ambiguousExternal = true;
          frontEnd(g, 'external-ip', dst, port ?? null, ev);
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
    const g = groupFor(hash);
    const ev = evidenceOf(r);
    g.evidence.push(ev);
    (g.filterChains ??= new Set()).add(kubeProxyFirewallChain);
    const dst = ruleDestination(r);
    if (dst) {
      g.externalIPs?.delete(dst);
      g.loadBalancerIPs = added(g.loadBalancerIPs, dst);
      frontEnd(g, 'load-balancer-ip', dst, ruleDport(r) ?? null, ev);
    }
  }

  // 4. Read each group's chains into facts; the builder makes the Service ports.
  const endpointChains = readEndpointChains(nat);
  const truncation = truncationOf(nat);
  const cutChains = chainsPastCut(nat).chains;
  // A grep, or a listing of some chains (issue 30): chains not shown are unknown, not absent.
  const fragment = nat ? !tableShownWhole(nat) : false;
  const results: ServicePort[] = [];
  // Names of the chains the Service ports own (their `chains`).
  const claimed = new Set<string>();
  // Service chains no hook reaches are leftovers (an earlier proxy mode's): no Service's state.
  const reach = { nat: nat ? reachableChains(nat) : undefined, filter: filter ? reachableChains(filter) : undefined };
  const leftovers: Group[] = [];
  for (const g of groups.values()) {
    if (isLeftover(g, reach)) {
      leftovers.push(g);
      continue;
    }
    const facts = readFacts(g, endpointChains, truncation, cutChains, fragment, claimed);
    if (facts) results.push(buildServicePort(facts, locality));
  }
  const left = leftoverChains(leftovers, claimed);
  // …and kube-proxy's per-Service or endpoint chains of no Service that no hook reaches either (an orphan KUBE-SEP).
  for (const [t, r] of [[nat, reach.nat], [filter, reach.filter]] as const) {
    if (!t || !r || leftovers.length === 0) continue;
    for (const c of t.chains) if (!claimed.has(c.name) && !r.has(c.name) && /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-/.test(c.name)) left.add(c.name);
  }

  // 5. Everything else: kube-proxy infrastructure or other agents.
  const others: ForeignObject[] = [];
  for (const t of rs.tables) {
    const chains = t.chains;
    for (let i = 0; i < chains.length; i++) {
      const c = chains[i];
      if (c.builtin || claimed.has(c.name)) continue;
      const o: ForeignObject = { kind: 'chain', table: t.name, name: c.name, owner: chainOwner(c.name), file: rs.file, ...(c.line !== undefined ? { line: c.line } : {}), ...(left.has(c.name) ? { leftover: true as const } : {}) };
      others.push(o);
    }
  }
  const first = leftovers.length ? [...left][0] : undefined;
  const firstChain = first !== undefined ? nat?.chainsByName.get(first) ?? filter?.chainsByName.get(first) : undefined;
  const problems: Resolution['problems'] =
    first !== undefined
      ? [
          {
            problem: problem('leftover-service-chains', { table: nat ? 'nat' : 'filter', chains: left.size, servicePorts: leftovers.length, example: first, file: rs.file }),
            evidence: firstChain ? [{ file: rs.file, line: firstChain.line ?? firstChain.rules[0]?.line ?? 0, text: firstChain.line !== undefined ? `:${first} - [0:0]` : firstChain.rules[0]?.raw ?? first, where: `${firstChain.table}/${first}` }] : [],
          },
        ]
      : [];
  return { services: results, others, problems };
}

/**
 * A Service port whose chains and rules no hook reaches, in tables whose reach is known: a leftover.
 * When a table's reach is not known (a grep, a restore payload, a cut table) its evidence counts as live.
 */
function isLeftover(g: Group, reach: { nat: ReadonlySet<string> | undefined; filter: ReadonlySet<string> | undefined }): boolean {
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

function addChain(g: Group, table: string, role: PerServiceRole, c: Chain): void {
  if (table === 'nat') g.inNat = true;
  if (role === 'FW') {
    const fw = (g.fw ??= []);
    const same = fw.find((f) => f.table === table);
    if (same) same.chain = c;
    else fw.push({ table, chain: c });
    return;
  }
  if (table !== 'nat') return;
  if (role === 'SVC') g.svc = c;
  else if (role === 'SVL') g.svl = c;
  else if (role === 'EXT') g.ext = c;
  else g.xlb = c;
}

function hasNatFirewall(g: Group): boolean {
  return g.fw?.some((f) => f.table === 'nat') ?? false;
}

/** Identity from any rule of the group's chains, when the dispatch rules had no comment. */
function identityFromChains(chains: readonly (Chain | undefined)[]): CommentIdentity | undefined {
  for (const c of chains) {
    if (!c) continue;
    for (const r of c.rules) {
      const id = commentIdentity(r);
      if (id) return id;
    }
  }
  return undefined;
}

function protocolFromChains(chains: readonly (Chain | undefined)[]): Protocol | undefined {
  for (const c of chains) {
    if (!c) continue;
    for (const r of c.rules) {
      const p = ruleProtocol(r);
      if (p) return p;
    }
  }
  return undefined;
}

/** EXT chains of externalTrafficPolicy: Local send to the SVL chain. */
function jumpsToLocalChain(chain: Chain): boolean {
  for (const r of chain.rules) {
    const t = jumpTarget(r);
    if (t && t.startsWith(servicePortPolicyLocalChainNamePrefix) && perServiceChain(t)?.role === 'SVL') return true;
  }
  return false;
}

/** A SEP chain of nat as its endpoint uses it. */
interface EndpointChain {
  chain: Chain;
  dnat: NatTo | undefined;
  /** Evidence for its endpoint: a first slot for the balancing rule that jumps here, then the chain's rules. */
  evidence: Evidence[];
}

/**
 * Every SEP chain of nat, read in one pass in table order. Looking each up and reading it when its
 * endpoint comes (in Service order, i.e. all over the heap) misses the CPU caches at every step:
 * several times slower with ~90k of them at 10k Services.
 */
function readEndpointChains(nat: Table | undefined): Map<string, EndpointChain> {
  const out = new Map<string, EndpointChain>();
  // forEach, not for…of: no [name, chain] pair per chain.
  nat?.chainsByName.forEach((chain, name) => {
    if (!isEndpointChain(name)) return;
    const rules = chain.rules;
    const evidence = new Array<Evidence>(rules.length + 1);
    for (let i = 0; i < rules.length; i++) evidence[i + 1] = evidenceOf(rules[i]);
    out.set(name, { chain, dnat: dnatOf(chain), evidence });
  });
  return out;
}

/**
 * An endpoint's evidence: its rule in the balancing chain (the Service's own evidence object for
 * that line, shared), then its SEP chain's rules; an array of exactly that length, as ~90k of them
 * stay in memory at 10k Services.
 */
function endpointEvidence(ruleEvidence: Evidence, sep: EndpointChain | undefined): Evidence[] {
  if (!sep) return [ruleEvidence];
  // The SEP chain's first endpoint takes its list; another one (a chain used twice) gets a copy.
  const list = sep.evidence[0] === undefined ? sep.evidence : sep.evidence.slice();
  list[0] = ruleEvidence;
  return list;
}

/** The list without repeats (kept first); the list itself when it has none, as nearly always. */
function uniqueInOrder(list: string[]): string[] {
  if (list.length > 16) return [...new Set(list)];
  for (let i = 1; i < list.length; i++) if (list.lastIndexOf(list[i], i - 1) >= 0) return [...new Set(list)];
  return list;
}

/**
 * A chain's rules when they are one block repeated (a paste done twice, or a dump concatenated
 * with itself): the block once, and how many times it came. Otherwise the rules, once.
 */
export function unrepeated(rules: readonly Rule[]): { rules: readonly Rule[]; times: number } {
  const n = rules.length;
  for (let period = 1; period <= n / 2; period++) {
    if (n % period !== 0) continue;
    let same = true;
    for (let i = period; i < n && same; i++) same = rules[i].raw === rules[i - period].raw;
    if (same) return { rules: rules.slice(0, period), times: n / period };
  }
  return { rules, times: 1 };
}

/** Where a table without COMMIT was cut: its last line read. */
function truncationOf(t: Table | undefined): Absence | undefined {
  if (!t || t.committed || t.implicit) return undefined;
  let line = t.line;
  for (const c of t.chains) {
    if (c.line !== undefined && c.line > line) line = c.line;
    const last = c.rules[c.rules.length - 1];
    if (last && last.line > line) line = last.line;
  }
  return { code: 'table-truncated', table: t.name, file: t.file, line };
}

function readFacts(
  g: Group,
  endpointChains: ReadonlyMap<string, EndpointChain>,
  truncation: Absence | undefined,
  cutChains: ReadonlySet<Chain>,
  fragment: boolean,
  claimed: Set<string>,
): ServiceFacts | undefined {
  const { svc, svl, ext, xlb } = g;
  const fwChains = g.fw ? g.fw.map((f) => f.chain) : [];
  const problems: ServiceProblem[] = [];
  const absences: Absence[] = [];
  // The group's evidence so far (dispatch and filter rules), then its chains'.
  const evidence = g.evidence;

  if (!g.identity) g.identity = identityFromChains([svc, svl, ext, xlb, ...fwChains]);
  if (!g.protocol) g.protocol = protocolFromChains([svc, svl, ext]);

  // Local policies from the chain shapes.
  let externalTrafficPolicy: 'Cluster' | 'Local' = 'Cluster';
  if (xlb) externalTrafficPolicy = 'Local';
  if (ext) {
    if (jumpsToLocalChain(ext)) externalTrafficPolicy = 'Local';
    pushEvidence(evidence, ext.rules);
  }
  if (g.externalLocal) externalTrafficPolicy = 'Local';
  const internalTrafficPolicy: 'Cluster' | 'Local' = g.clusterTarget === 'SVL' || g.internalLocal ? 'Local' : 'Cluster';

  // Source ranges from the firewall chains (nat ≤1.24, filter ≥1.25).
  for (const fw of fwChains) {
    for (const r of fw.rules) {
      evidence.push(evidenceOf(r));
      const src = ruleAddress(r, 'src', false);
      const t = jumpTarget(r) ?? r.target?.kind;
      if (!src?.cidr || t === kubeMarkDropChain || t === 'drop') continue;
      // kube-proxy also lets the LoadBalancer IPs themselves through (hairpin via the LB): not a user range.
      const host = src.cidr.prefix === (src.cidr.family === 4 ? 32 : 128) ? formatIp({ family: src.cidr.family, value: src.cidr.network }) : undefined;
      if (host && g.loadBalancerIPs?.has(host)) continue;
      g.sourceRanges = added(g.sourceRanges, formatCidr(src.cidr));
    }
  }

  // Endpoints: from SVC (all endpoints), else SVL (internalTrafficPolicy Local), else XLB.
  const balancing = svc ?? svl ?? xlb;
  const read = balancing ? readBalancingChain(balancing) : undefined;
  const localRead = svl ? (svl === balancing ? read : readBalancingChain(svl)) : undefined;
  const localSeps = svl ? new Set(localRead!.endpoints.map((e) => e.sep)) : undefined;
  // In a truncated table the chain holding the last rule read may have lost its tail at the cut:
  // its ladder and its rules say nothing certain about what followed.
  // Chains after it (iptables-save prints rules in chain order) lost all their rules.
  const cutShort = (c: Chain | undefined) => c !== undefined && cutChains.has(c);
  const balancingCut = cutShort(balancing);
  if ([svc, svl, ext, xlb].some(cutShort)) absences.push(truncation!);
  if (read && read.repeated > 1) problems.push(problem('repeated-rules', { chain: balancing!.name, times: read.repeated, rules: read.blockLength }));
  const balancingEvidence = evidence.length;
  if (balancing) pushEvidence(evidence, balancing.rules);
  if (svl && svl !== balancing) pushEvidence(evidence, svl.rules);

  const targets: Target[] = [];
  let unresolved: UnresolvedTarget[] | undefined;
  let seps: string[] = [];
  if (read) {
    // A share the evidence hides makes every share unknown (each is what the earlier rules leave).
    const hidden = read.endpoints.some((e) => e.probability === null);
    const ladder = ladderShares(read.endpoints.map((e) => e.probability ?? undefined));
    const shares: (number | null)[] = hidden ? ladder.shares.map(() => null) : ladder.shares;
    const { leftover, unreachableFrom } = hidden ? { leftover: 0, unreachableFrom: undefined } : ladder;
    for (const match of read.hidden) problems.push(problem('share-hidden', { chain: balancing!.name, match }));
    if (read.endpoints.length > 0 && leftover > 1e-6 && !balancingCut) problems.push(problem('ladder-leftover', { chain: balancing!.name, share: leftover }));
    if (unreachableFrom !== undefined && !balancingCut) problems.push(problem('ladder-unreachable-rule', { chain: balancing!.name, rule: unreachableFrom + 1 }));
    const n = read.endpoints.length;
    let noZeroShares: boolean | undefined;
    for (let i = 0; i < n; i++) {
      const e = read.endpoints[i];
      const sep = endpointChains.get(e.sep);
      seps.push(e.sep);
      const sepChain = sep?.chain;
      const dnat = sep?.dnat;
      const epEvidence = endpointEvidence(evidence[balancingEvidence + e.index], sep);
      let ip = dnat?.ip;
      let port = dnat?.port ?? null;
      // A chain with neither a declaration nor rules is not in the evidence: cut out of a paste or
      // past a truncation, which says nothing about the endpoint.
      if (!sepChain || (sepChain.line === undefined && sepChain.rules.length === 0)) absences.push(truncation ?? { code: 'endpoint-chain-absent', chain: e.sep, from: balancing!.name });
      else if (sepChain.rules.length === 0 && truncation) absences.push(truncation);
      else if (sepChain.line === undefined && !fragment) problems.push(problem('endpoint-chain-undeclared', { chain: balancing!.name, target: e.sep }));
      else if (!dnat) problems.push(problem('endpoint-chain-without-dnat', { chain: e.sep }));
      if (!ip) {
        const fromComment = endpointFromRuleComment(e.rule);
        if (fromComment) ({ ip, port } = fromComment);
      }
      if (!ip) {
        // An endpoint chain the rules name but the evidence does not hold: an endpoint whose address is unknown.
        (unresolved ??= []).push({ via: e.sep, share: shares[i], evidence: epEvidence });
        continue;
      }
      const share = shares[i];
      if (!balancingCut && share !== null && Math.abs(share - 1 / n) > 1e-6 && (noZeroShares ??= read.endpoints.every((x) => x.probability === undefined || (x.probability !== null && x.probability > 0)))) {
        problems.push(problem('unequal-share', { endpoint: `${ip}:${port}`, share, equal: 1 / n }));
      }
      // One shape for every target (no spread): ~90k of them at 10k Services.
      targets.push({ ip, port, share: shares[i], via: e.sep, local: localSeps ? localSeps.has(e.sep) : undefined, evidence: epEvidence });
    }
  }
  seps = uniqueInOrder(seps);
  // No protocol in the dispatch or Service chains (a grep, no comments): the DNAT rules say it.
  if (!g.protocol) g.protocol = protocolFromChains(seps.map((s) => endpointChains.get(s)?.chain));

  if (g.ambiguousExternal && g.externalIPs && g.externalIPs.size > 0 && !g.inNat) {
    problems.push(problem('external-kind-ambiguous', { addresses: [...g.externalIPs] }));
  }
  const hasChains = Boolean(svc || svl || ext || xlb || fwChains.length);
  if (!hasChains && !g.noEndpoints && !g.noLocalEndpoints && g.clusterIP === undefined && g.nodePort === undefined) return undefined;
  // Dispatch rules to a Service chain the dump does not hold (a grep, a cut paste).
  // …or its EXT/FW chain goes to a Service chain the dump does not hold (a grep of the EXT chain).
  const absentFromExt = balancing ? undefined : [ext, ...fwChains].flatMap((c) => c?.rules ?? []).map(jumpTarget).find((t) => t !== undefined && /^KUBE-(SVC|SVL)-/.test(t));
  if (!balancing && (g.absentChain ?? absentFromExt) !== undefined) absences.push(truncation ?? { code: 'service-chain-absent', chain: (g.absentChain ?? absentFromExt)! });
  else if (balancing && balancing.rules.length === 0 && truncation) absences.push(truncation);
  // Chains of this Service were read (an EXT or FW chain declared before the cut) but no Service
  // chain: in a truncated table it may simply be past the cut, unless a rule says there are none.
  else if (!balancing && truncation && !g.noEndpoints && !g.noLocalEndpoints) absences.push(truncation);

  const noEndpoints: NoEndpointFact[] = [];
  if (g.noEndpoints) noEndpoints.push({ scope: 'all', verdict: 'reject' });
  if (g.noLocalEndpoints) noEndpoints.push({ scope: 'local', verdict: 'drop' });
  if (read?.noEndpoints) noEndpoints.push(read.noEndpoints);

  const owned: OwnedObject[] = [];
  const own = (role: OwnedObject['role'], name: string) => {
    owned.push({ role, name });
    claimed.add(name);
  };
  if (svc) own('svc', svc.name);
  if (svl) own('svl', svl.name);
  if (ext) own('ext', ext.name);
  if (xlb) own('xlb', xlb.name);
  for (const fw of fwChains) own('fw', fw.name);
  for (const sep of seps) own('endpoint', sep);

  const hashClaims: HashClaim[] = [];
  if (g.identity) hashClaims.push({ kind: 'service-chain', hash: g.hash });
  const affinity = read?.affinity !== undefined ? read.affinity : localRead?.affinity;
  if (affinity === null) problems.push(problem('affinity-hidden', { chain: (read?.affinity === null ? balancing : svl)!.name }));
  const id = g.identity;
  return {
    mode: 'iptables',
    family: g.family,
    anchor: anchorOf(g, svc ?? svl),
    // Fixed-shape literals (undefined rather than absent fields): one per Service port.
    identity: id ? { namespace: id.namespace, name: id.name, portName: id.portName, by: 'comment' } : undefined,
    protocol: g.protocol,
    port: g.port,
    frontEnds: g.frontEnds ?? [],
    sourceRanges: g.sourceRanges ? [...g.sourceRanges] : [],
    externalTrafficPolicy,
    internalTrafficPolicy,
    affinitySeconds: affinity,
    targets,
    ...(unresolved ? { unresolved } : {}),
    emptyBalancing: balancing && read && read.endpoints.length === 0 && !g.noEndpoints && !read.noEndpoints ? balancing.name : undefined,
    noEndpoints,
    absences: uniqueAbsences(absences),
    problems,
    owned,
    hashClaims,
    evidence,
  };
}

function uniqueAbsences(list: Absence[]): Absence[] {
  if (list.length < 2) return list;
  const seen = new Set<string>();
  return list.filter((a) => {
    const k = JSON.stringify(a);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
