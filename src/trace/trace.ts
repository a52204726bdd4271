/**
 * A packet's road through one node: the hooks in the kernel's order, the routing decision
 * after DNAT, IPVS for kube-ipvs0 VIPs, POSTROUTING's masquerade, and the route out.
 */
import { cidrContains, formatCidr, formatHostPort, formatIp, parseCidr, parseIp, type Cidr, type Ip } from '../model/addr.js';
import { lookupRoute } from '../model/route.js';
import type { Ruleset } from '../model/netfilter.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { compareServicePorts, type Resolution, type ServicePort } from '../kube/types.js';
import { buildContext, isLocalAddress, type TraceAssumptions, type TraceContext } from './context.js';
import { cloneBranch, walkTable, type Branch } from './iptables.js';
import type { PathState } from './match.js';
import type { Destination, TraceProtocol } from './packet.js';
import { describeRoute, routeFor } from './route.js';
import { ipvsStage } from './ipvs.js';
import { nftBaseChains, walkNftChain } from './nft.js';
import type { NftChain, NftTable } from '../model/nft.js';
import type { Trace, TraceOutcome, Verdict } from './types.js';

export type SourceSpec = 'pod' | 'external' | 'node' | { readonly ip: string };

export interface TraceOptions {
  readonly from: SourceSpec;
  readonly sport?: number;
  readonly protocol?: TraceProtocol;
  readonly inInterface?: string;
  readonly assumptions: TraceAssumptions;
}

export class TraceInputError extends Error {}

type Hook = PathState['hook'];

/** iptables tables at each hook with their priorities (netfilter's NF_IP_PRI_*). */
const IPTABLES_STAGES: Record<Hook, readonly { table: string; priority: number }[]> = {
  PREROUTING: [
    { table: 'raw', priority: -300 },
    { table: 'mangle', priority: -150 },
    { table: 'nat', priority: -100 },
  ],
  OUTPUT: [
    { table: 'raw', priority: -300 },
    { table: 'mangle', priority: -150 },
    { table: 'nat', priority: -100 },
    { table: 'filter', priority: 0 },
    { table: 'security', priority: 50 },
  ],
  INPUT: [
    { table: 'mangle', priority: -150 },
    { table: 'filter', priority: 0 },
    { table: 'security', priority: 50 },
    { table: 'nat', priority: 100 },
  ],
  FORWARD: [
    { table: 'mangle', priority: -150 },
    { table: 'filter', priority: 0 },
    { table: 'security', priority: 50 },
  ],
  POSTROUTING: [
    { table: 'mangle', priority: -150 },
    { table: 'nat', priority: 100 },
  ],
};

const NFT_HOOK: Record<Hook, string> = { PREROUTING: 'prerouting', INPUT: 'input', FORWARD: 'forward', OUTPUT: 'output', POSTROUTING: 'postrouting' };

type Stage =
  | { readonly kind: 'iptables'; readonly rs: Ruleset; readonly table: string; readonly priority: number; readonly nat: boolean }
  | { readonly kind: 'nft'; readonly table: NftTable; readonly chain: NftChain; readonly priority: number; readonly nat: boolean };

/** Every base chain at a hook, iptables tables and nft chains together, in priority order. */
function stagesAt(snapshot: NodeSnapshot, rs: Ruleset | undefined, hook: Hook, family: 4 | 6): Stage[] {
  const stages: Stage[] = [];
  if (rs) for (const s of IPTABLES_STAGES[hook]) if (rs.tables.some((t) => t.name === s.table)) stages.push({ kind: 'iptables', rs, table: s.table, priority: s.priority, nat: s.table === 'nat' });
  for (const n of snapshot.nft) {
    for (const b of nftBaseChains(n.tables, NFT_HOOK[hook], family)) stages.push({ kind: 'nft', table: b.table, chain: b.chain, priority: b.priority, nat: b.chain.type === 'nat' });
  }
  return stages.sort((a, b) => a.priority - b.priority);
}

/** Facts of a snapshot every trace needs; computed once per snapshot, not per trace (10k-Service dumps). */
interface SnapshotFacts {
  readonly clusterCidr: Partial<Record<4 | 6, Cidr>>;
  readonly dnatTargets: ReadonlySet<string>;
}
const factsCache = new WeakMap<NodeSnapshot, SnapshotFacts>();

function snapshotFacts(snapshot: NodeSnapshot): SnapshotFacts {
  let f = factsCache.get(snapshot);
  if (f) return f;
  const clusterCidr: Partial<Record<4 | 6, Cidr>> = {};
  const dnat = new Set<string>();
  for (const rs of snapshot.rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        const detector = t.name === 'nat' && (c.name.startsWith('KUBE-SVC-') || c.name.startsWith('KUBE-EXT-')) && clusterCidr[rs.family] === undefined;
        for (const r of c.rules) {
          if (r.target?.kind === 'dnat' && r.target.to[0]?.ip) dnat.add(r.target.to[0].ip);
          if (!detector || clusterCidr[rs.family] !== undefined) continue;
          // kube-proxy's local detector: `! -s CLUSTER-CIDR … -j KUBE-MARK-MASQ` (or `-s CIDR` in KUBE-EXT).
          const src = r.matches.find((m) => m.kind === 'address' && m.dir === 'src');
          if (src && src.kind === 'address' && src.cidr && src.cidr.prefix < (rs.family === 4 ? 32 : 128)) clusterCidr[rs.family] = src.cidr;
        }
      }
    }
  }
  f = { clusterCidr, dnatTargets: dnat };
  factsCache.set(snapshot, f);
  return f;
}

/** The pod network the rules reveal: kube-proxy's `! -s CIDR … -j KUBE-MARK-MASQ` local detector. */
export function clusterCidrFromRules(snapshot: NodeSnapshot, family: 4 | 6): Cidr | undefined {
  return snapshotFacts(snapshot).clusterCidr[family];
}

function nodeSourceFor(ctx: TraceContext, dst: Ip): Ip | undefined {
  const r = lookupRoute(ctx.snapshot.routes, dst);
  const src = r?.src ? parseIp(r.src) : undefined;
  if (src) return src;
  return ctx.localAddresses.find((a) => a.family === dst.family && !(a.family === 4 && a.value >> 24n === 127n) && !(a.family === 6 && a.value === 1n));
}

interface Source {
  ip: Ip;
  local: boolean;
  label: string;
  assumption?: string;
}

function chooseSource(ctx: TraceContext, spec: SourceSpec, dst: Ip): Source {
  const family = dst.family;
  if (typeof spec === 'object') {
    const ip = parseIp(spec.ip);
    if (!ip) throw new TraceInputError(`--from ${spec.ip}: not an IP address`);
    if (ip.family !== family) throw new TraceInputError(`--from ${spec.ip} is IPv${ip.family} but the destination is IPv${family}`);
    const local = isLocalAddress(ctx, ip);
    return { ip, local, label: formatIp(ip), ...(local ? { assumption: `${formatIp(ip)} is one of this node's addresses: the packet is locally generated (OUTPUT path)` } : {}) };
  }
  if (spec === 'node') {
    const ip = nodeSourceFor(ctx, dst);
    if (!ip) throw new TraceInputError("--from node needs the node's address: give an `ip addr` dump or --node-ip");
    return { ip, local: true, label: 'node', assumption: `the node itself sends from ${formatIp(ip)} (OUTPUT path)` };
  }
  if (spec === 'external') {
    const ip = parseIp(family === 4 ? '203.0.113.10' : '2001:db8::10')!;
    return { ip, local: false, label: 'external', assumption: `an external client ${formatIp(ip)} (documentation address) sends to the node` };
  }
  // pod: an address in the pod network the rules reveal, preferring this node's pod subnet.
  const cidr = clusterCidrFromRules(ctx.snapshot, family);
  const taken = snapshotFacts(ctx.snapshot).dnatTargets;
  const subnet = ctx.snapshot.routes.find((r) => r.dst.family === family && r.dev && /^(cni0|cbr0|docker0)$/.test(r.dev) && r.type === 'unicast' && (!cidr || cidrContains(cidr, { family, value: r.dst.network })));
  const base = subnet?.dst ?? cidr ?? parseCidr(family === 4 ? '10.244.0.0/16' : 'fd00:10:244::/56')!;
  let candidate = base.network + 10n;
  while (taken.has(formatIp({ family, value: candidate }))) candidate++;
  const ip: Ip = { family, value: candidate };
  const why = subnet ? `this node's pod subnet ${formatCidr(subnet.dst)}` : cidr ? `the pod network ${formatCidr(cidr)} from kube-proxy's rules` : `no pod network found in the rules; assumed ${formatCidr(base)}`;
  return { ip, local: false, label: 'pod', assumption: `a pod ${formatIp(ip)} (in ${why}) sends the packet` };
}

function rulesetFor(snapshot: NodeSnapshot, family: 4 | 6): Ruleset | undefined {
  return snapshot.rulesets.find((r) => r.family === family);
}

function runStages(snapshot: NodeSnapshot, rs: Ruleset | undefined, hook: Hook, branches: Branch[], ctx: TraceContext, finished: Branch[]): Branch[] {
  const masqSource = (st: PathState) => {
    const r = lookupRoute(ctx.snapshot.routes, st.dst);
    if (r?.src) return r.src;
    const dev = r?.dev;
    const iface = dev ? ctx.snapshot.interfaces.find((i) => i.name === dev) : undefined;
    const a = iface?.addresses.find((x) => x.family === st.family);
    return a?.address;
  };
  let current = branches;
  if (current.length === 0) return current;
  const family = current[0].st.family;
  for (const s of stagesAt(snapshot, rs, hook, family)) {
    // NAT chains see only a connection's first packet; once one binds a NAT at this hook, later ones are skipped.
    if (s.nat && ctx.assumptions.established) continue;
    const next: Branch[] = [];
    for (const b of current) {
      const bound = hook === 'POSTROUTING' || hook === 'INPUT' ? b.st.snatDone : b.st.dnatDone;
      if (s.nat && bound) {
        next.push(b);
        continue;
      }
      b.st.hook = hook;
      const results = s.kind === 'iptables' ? walkTable(s.rs, s.table, hook, b, ctx, masqSource) : walkNftChain(s.table, s.chain, b, ctx, masqSource);
      for (const r of results) {
        if (r.verdict === 'accept') next.push(r.branch);
        else {
          r.branch.stopped = r.verdict === 'drop' ? 'DROP' : 'REJECT';
          finished.push(r.branch);
        }
      }
    }
    current = next;
  }
  return current;
}

/** Trace one packet (one protocol). */
export function tracePacket(snapshot: NodeSnapshot, resolution: Resolution | undefined, dest: Destination, protocol: TraceProtocol, opts: TraceOptions): Trace {
  const ctx = buildContext(snapshot, opts.assumptions);
  const family = dest.ip.family;
  const assumptions: string[] = [];
  const source = chooseSource(ctx, opts.from, dest.ip);
  if (source.assumption) assumptions.push(source.assumption);
  const sport = opts.sport ?? 40000;
  if (opts.sport === undefined) assumptions.push('source port 40000');
  assumptions.push(opts.assumptions.established ? 'the packet belongs to an ESTABLISHED connection: conntrack reuses its NAT, nat chains are not traversed' : 'the first packet of a NEW connection (conntrack state NEW)');
  assumptions.push(opts.assumptions.affinityHit ? 'session-affinity entries (-m recent) exist for this source' : 'no session-affinity entry exists for this source yet (-m recent --rcheck does not match)');
  if (!ctx.knowsLocal) assumptions.push("the node's own addresses are unknown (no ip addr, no --node-ip): addrtype LOCAL matches are left undecided");
  if (snapshot.routes.length === 0) assumptions.push('no ip route dump: where the packet goes after NAT is not shown');
  const rs = rulesetFor(snapshot, family);
  if (!rs && snapshot.nft.length === 0) assumptions.push(`no IPv${family} iptables or nft ruleset in the dumps`);

  let inInterface = opts.inInterface;
  if (!inInterface && !source.local && snapshot.routes.length > 0) {
    const back = lookupRoute(snapshot.routes, source.ip);
    if (back?.dev) {
      inInterface = back.dev;
      assumptions.push(`arrives on ${back.dev} (the route back to the source)`);
    }
  }
  const st: PathState = {
    family,
    protocol,
    src: source.ip,
    sport,
    dst: dest.ip,
    dport: dest.port,
    mark: 0,
    connmark: 0,
    dnatDone: false,
    snatDone: false,
    hook: source.local ? 'OUTPUT' : 'PREROUTING',
    ...(inInterface && !source.local ? { inInterface } : {}),
  };
  const start: Branch = { st, probability: 1, conditions: [], steps: [], claimed: false, masquerade: false };
  const finished: Branch[] = [];
  const delivered: { b: Branch; delivery: 'local' | 'forward' }[] = [];

  // Locally generated packets are routed with iif lo (the kernel's flowi), arriving ones with their input interface.
  const query = (b: Branch) => ({ src: b.st.src, mark: b.st.mark, ...(source.local ? { iif: 'lo' } : b.st.inInterface ? { iif: b.st.inInterface } : {}) });
  const routeOut = (b: Branch) => {
    const r = routeFor(snapshot, { ...query(b), dst: b.st.dst }).route;
    if (r?.dev) b.st.outInterface = r.dev;
  };

  if (source.local) {
    let after = runStages(snapshot, rs, 'OUTPUT', [start], ctx, finished);
    after.forEach(routeOut);
    after = runStages(snapshot, rs, 'POSTROUTING', after, ctx, finished);
    for (const b of after) {
      if (isLocalAddress(ctx, b.st.dst)) {
        const input = runStages(snapshot, rs, 'INPUT', [b], ctx, finished);
        for (const x of input) delivered.push({ b: x, delivery: 'local' });
      } else delivered.push({ b, delivery: 'forward' });
    }
  } else {
    const afterPre = runStages(snapshot, rs, 'PREROUTING', [start], ctx, finished);
    for (const b of afterPre) {
      if (isLocalAddress(ctx, b.st.dst)) {
        for (const x of runStages(snapshot, rs, 'INPUT', [b], ctx, finished)) {
          // IPVS sits at LOCAL_IN, after the filter table: a kube-ipvs0 VIP goes on to a real server.
          const ipvs = ipvsStage(snapshot, x);
          if (!ipvs) {
            delivered.push({ b: x, delivery: 'local' });
            continue;
          }
          if (ipvs.length === 0) {
            x.stopped = 'DROP';
            finished.push(x);
            continue;
          }
          for (const y of ipvs) {
            routeOut(y);
            for (const z of runStages(snapshot, rs, 'POSTROUTING', [y], ctx, finished)) delivered.push({ b: z, delivery: 'forward' });
          }
        }
      } else {
        routeOut(b);
        const fwd = runStages(snapshot, rs, 'FORWARD', [b], ctx, finished);
        for (const z of runStages(snapshot, rs, 'POSTROUTING', fwd, ctx, finished)) delivered.push({ b: z, delivery: 'forward' });
      }
    }
  }

  const outcomes: TraceOutcome[] = [];
  const outcome = (b: Branch, verdict: Verdict, delivery: TraceOutcome['delivery']): TraceOutcome => {
    const route = delivery === 'stopped' ? null : describeRoute(snapshot, b.st.dst, query(b));
    return {
      probability: round(b.probability),
      verdict,
      destination: formatHostPort(formatIp(b.st.dst), b.st.dport),
      masquerade: b.masquerade,
      ...(b.snatTo ? { snatTo: b.snatTo } : {}),
      route,
      conditions: b.conditions,
      delivery,
      steps: b.steps,
    };
  };
  for (const b of finished) outcomes.push(outcome(b, b.stopped ?? 'DROP', 'stopped'));
  for (const { b, delivery } of delivered) {
    const verdict: Verdict = b.st.dnatDone ? 'DNAT' : b.claimed ? 'ACCEPT' : 'NONE';
    outcomes.push(outcome(b, verdict, delivery));
  }
  outcomes.sort((a, b) => b.probability - a.probability || (a.destination < b.destination ? -1 : 1));

  const services = resolution ? servicesAt(resolution, dest, protocol, ctx).map(serviceName) : [];
  return {
    packet: {
      protocol,
      family,
      src: formatIp(source.ip),
      sport,
      dst: dest.ipText,
      dport: dest.port,
      from: source.label,
      ...(inInterface && !source.local ? { inInterface } : {}),
      local: source.local,
    },
    services,
    assumptions,
    outcomes,
  };
}

const round = (p: number) => Math.round(p * 1e10) / 1e10;

function serviceName(s: ServicePort): string {
  return s.namespace && s.name ? `${s.namespace}/${s.name}${s.portName ? ':' + s.portName : ''}` : `(unnamed ${s.id})`;
}

/** Service ports by address key (`family:value`) and by node port, built once per resolution. */
interface ServiceIndex {
  readonly byAddress: ReadonlyMap<string, readonly ServicePort[]>;
  readonly byNodePort: ReadonlyMap<number, readonly ServicePort[]>;
}
const serviceIndexes = new WeakMap<Resolution, ServiceIndex>();

function serviceIndex(res: Resolution): ServiceIndex {
  let idx = serviceIndexes.get(res);
  if (idx) return idx;
  const byAddress = new Map<string, ServicePort[]>();
  const byNodePort = new Map<number, ServicePort[]>();
  const add = <K>(m: Map<K, ServicePort[]>, k: K, s: ServicePort) => {
    const list = m.get(k);
    if (list) {
      if (!list.includes(s)) list.push(s);
    } else m.set(k, [s]);
  };
  for (const s of res.services) {
    for (const a of [s.clusterIP, ...s.externalIPs, ...s.loadBalancerIPs]) {
      const ip = a === null ? undefined : parseIp(a);
      if (ip) add(byAddress, `${ip.family}:${ip.value}`, s);
    }
    if (s.nodePort !== null) add(byNodePort, s.nodePort, s);
  }
  idx = { byAddress, byNodePort };
  serviceIndexes.set(res, idx);
  return idx;
}

/** Services listening on this destination: by VIP and port, or by node port on a node address. */
export function servicesAt(res: Resolution, dest: Destination, protocol: TraceProtocol | undefined, ctx?: TraceContext): ServicePort[] {
  const idx = serviceIndex(res);
  const byVip = (idx.byAddress.get(`${dest.ip.family}:${dest.ip.value}`) ?? []).filter((s) => s.port === dest.port);
  const byNodePort = ctx !== undefined && isLocalAddress(ctx, dest.ip) ? (idx.byNodePort.get(dest.port) ?? []).filter((s) => s.family === dest.ip.family) : [];
  const all = [...new Set([...byVip, ...byNodePort])];
  return all.filter((s) => !protocol || s.protocol === protocol).sort(compareServicePorts);
}

/** Which protocols to trace when none is given: those the snapshot serves on this VIP:port, else tcp. */
export function protocolsFor(res: Resolution, dest: Destination, snapshot: NodeSnapshot): TraceProtocol[] {
  if (dest.protocol) return [dest.protocol];
  const ctx = buildContext(snapshot, { established: false, affinityHit: false });
  const found = [...new Set(servicesAt(res, dest, undefined, ctx).map((s) => s.protocol))];
  const order: TraceProtocol[] = ['udp', 'tcp', 'sctp'];
  return found.length ? order.filter((p) => found.includes(p)) : ['tcp'];
}

export { cloneBranch };
