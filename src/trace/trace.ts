/**
 * A packet's road through one node: the hooks in the kernel's order, the routing decision
 * after DNAT, IPVS for kube-ipvs0 VIPs, POSTROUTING's masquerade, and the route out. The trace
 * runs once per scenario (one answer to each undecided match); see scenario.ts.
 */
import { formatHostPort, formatIp, parseIp } from '../model/addr.js';
import { lookupRoute } from '../model/route.js';
import type { Ruleset } from '../model/netfilter.js';
import { conntrackFor } from './conntrack.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { compareServicePorts, type Resolution, type ServicePort } from '../kube/types.js';
import { MAX_BRANCHES, type Branch } from './chain-machine.js';
import { buildContext, isLocalAddress, type TraceAssumptions, type TraceContext } from './context.js';
import { ipvsStage, virtualServerFor } from './ipvs.js';
import type { PathState } from './match.js';
import { flatten, mergeEnds, mergeScenarios, type ScenarioResult } from './outcomes.js';
import type { Destination, TraceProtocol } from './packet.js';
import { describeRoute, routeFor } from './route.js';
import { ScenarioRun, type Assignment } from './scenario.js';
import { chooseSource, type Source, type SourceSpec } from './source.js';
import { runStages, type RunEnv } from './stages.js';
import { KernelSwitches } from './switches.js';
import type { Trace, TraceAssumption, TraceOutcome, Verdict } from './types.js';
import { appendAll } from '../source/index.js';

export { clusterCidrFromRules, TraceInputError, type SourceSpec } from './source.js';

export interface TraceOptions {
  readonly from: SourceSpec;
  readonly sport?: number;
  readonly protocol?: TraceProtocol;
  readonly inInterface?: string;
  readonly assumptions: TraceAssumptions;
}

/** Scenarios a trace follows at most; beyond, the trace says so. */
export const MAX_SCENARIOS = 64;

function rulesetFor(snapshot: NodeSnapshot, family: 4 | 6): Ruleset | undefined {
  return snapshot.rulesets.find((r) => r.family === family);
}

/**
 * One run: the packet through every hook under one scenario's answers. Branches end on the way
 * (`finished`: dropped, rejected, unknown, stopped by a kernel switch) or are delivered, locally
 * or forwarded; each becomes an outcome.
 */
class ScenarioRoad {
  private readonly env: RunEnv;
  private readonly finished: Branch[] = [];
  private readonly delivered: { b: Branch; delivery: 'local' | 'forward' }[] = [];
  private readonly kernel: KernelSwitches;
  /** A virtual server's address is on kube-ipvs0 by construction (see isLocalDst). */
  private readonly kubeIpvs0: boolean;

  constructor(
    private readonly snapshot: NodeSnapshot,
    private readonly ctx: TraceContext,
    private readonly source: Source,
    run: ScenarioRun,
    private readonly assumed: TraceAssumption[],
    family: 4 | 6,
  ) {
    this.env = { snapshot, rs: rulesetFor(snapshot, family), ctx, run, budget: { branches: MAX_BRANCHES }, assumed };
    this.kernel = new KernelSwitches(snapshot, assumed, source.ip);
    this.kubeIpvs0 = snapshot.interfaces.some((i) => i.name === 'kube-ipvs0');
  }

  outcomes(start: PathState): TraceOutcome[] {
    const first: Branch = { st: { ...start }, probability: 1, steps: [], claimed: false, masquerade: false };
    if (this.source.local) this.fromThisNode(first);
    else this.arriving(first);
    const outcomes: TraceOutcome[] = [];
    for (const b of this.finished) outcomes.push(this.outcome(b, b.end?.verdict ?? 'DROP', b.end?.verdict === 'UNKNOWN' ? 'unknown' : 'stopped'));
    for (const { b, delivery } of this.delivered) outcomes.push(this.outcome(b, b.st.dnatDone ? 'DNAT' : b.claimed ? 'ACCEPT' : 'NONE', delivery));
    return mergeEnds(outcomes);
  }

  /** Locally generated packets are routed with iif lo (the kernel's flowi), arriving ones with their input interface. */
  private query(b: Branch) {
    return { src: b.st.src, mark: b.st.mark, ...(this.source.local ? { iif: 'lo' } : b.st.inInterface ? { iif: b.st.inInterface } : {}) };
  }

  /**
   * Whether the destination is this node's. When the evidence has no kube-ipvs0 (an ipvsadm dump
   * alone), a virtual server's address is taken as the node's, and the trace says so.
   */
  private isLocalDst(b: Branch): boolean {
    if (isLocalAddress(this.ctx, b.st.dst)) return true;
    if (this.kubeIpvs0 || !virtualServerFor(this.snapshot, b.st)) return false;
    this.assumed.push({ code: 'ipvs-address-local', address: formatIp(b.st.dst) });
    return true;
  }

  private routeOut(b: Branch): void {
    const r = routeFor(this.snapshot, { ...this.query(b), dst: b.st.dst }).route;
    if (r?.dev) b.st.outInterface = r.dev;
  }

  /** Branches the kernel lets through at a switch; the others end there. */
  private through(list: Branch[], pass: (b: Branch) => boolean): Branch[] {
    return list.filter((b) => {
      if (pass(b)) return true;
      this.finished.push(b);
      return false;
    });
  }

  private stages(hook: Parameters<typeof runStages>[1], list: Branch[]): Branch[] {
    return runStages(this.env, hook, list, this.finished);
  }

  /** OUTPUT, the reroute after it, POSTROUTING; then INPUT for the node's own addresses, else out. */
  private fromThisNode(first: Branch): void {
    const { ctx, kernel } = this;
    let after = this.stages('OUTPUT', [first]);
    for (const b of after) this.routeOut(b);
    after = this.through(after, (b) => isLocalAddress(ctx, b.st.dst) || kernel.rerouting(b, b.st.outInterface));
    after = this.stages('POSTROUTING', after);
    for (const b of after) {
      if (!isLocalAddress(ctx, b.st.dst)) kernel.mtu(b);
      if (isLocalAddress(ctx, b.st.dst)) {
        for (const x of this.stages('INPUT', [b])) this.delivered.push({ b: x, delivery: 'local' });
      } else this.delivered.push({ b, delivery: 'forward' });
    }
  }

  /** PREROUTING, then the routing decision: INPUT (and IPVS) for the node's addresses, FORWARD and POSTROUTING for the rest. */
  private arriving(first: Branch): void {
    const { kernel } = this;
    for (const b of this.stages('PREROUTING', [first])) {
      if (this.isLocalDst(b)) {
        if (!kernel.routing(b, true)) {
          this.finished.push(b);
          continue;
        }
        for (const x of this.stages('INPUT', [b])) this.localIn(x);
      } else {
        this.routeOut(b);
        if (!kernel.routing(b, false)) {
          this.finished.push(b);
          continue;
        }
        const fwd = this.stages('FORWARD', [b]);
        // The way out of a forwarded packet: the bridge it may go back out of, then the MTUs it crosses.
        const out = this.through(this.stages('POSTROUTING', fwd), (z) => kernel.bridge(z));
        for (const z of out) {
          kernel.mtu(z);
          this.delivered.push({ b: z, delivery: 'forward' });
        }
      }
    }
  }

  /** IPVS sits at LOCAL_IN, after the filter table: a kube-ipvs0 VIP goes on to a real server. */
  private localIn(x: Branch): void {
    const ipvs = ipvsStage(this.snapshot, x, this.env.budget);
    if (!ipvs) {
      this.delivered.push({ b: x, delivery: 'local' });
      return;
    }
    if (ipvs.length === 0) {
      // ipvsStage ended the branch (refused: ICMP port unreachable, see ipvs.ts).
      this.finished.push(x);
      return;
    }
    for (const y of ipvs) {
      if (y.end) {
        this.finished.push(y);
        continue;
      }
      this.routeOut(y);
      for (const z of this.stages('POSTROUTING', [y])) this.delivered.push({ b: z, delivery: 'forward' });
    }
  }

  private outcome(b: Branch, verdict: Verdict, delivery: TraceOutcome['delivery']): TraceOutcome {
    const route = delivery === 'stopped' || delivery === 'unknown' ? null : describeRoute(this.snapshot, b.st.dst, this.query(b));
    return {
      probability: b.probability,
      verdict,
      destination: formatHostPort(formatIp(b.st.dst), b.st.dport),
      masquerade: b.masquerade,
      ...(b.snatTo ? { snatTo: b.snatTo } : {}),
      route,
      conditions: [],
      delivery,
      ...(b.end?.verdict === 'UNKNOWN' ? { unknown: b.end.reason } : {}),
      ...(b.fate ? { fate: b.fate } : {}),
      steps: b.steps,
    };
  }
}

/** One run: the packet through every hook under one scenario's answers; its outcomes. */
function runScenario(snapshot: NodeSnapshot, ctx: TraceContext, source: Source, start: PathState, run: ScenarioRun, assumed: TraceAssumption[]): TraceOutcome[] {
  return new ScenarioRoad(snapshot, ctx, source, run, assumed, start.family).outcomes(start);
}

/** Every scenario's run (a run that meets a new undecided match queues the run with the other answer), up to MAX_SCENARIOS. */
function runScenarios(snapshot: NodeSnapshot, ctx: TraceContext, source: Source, start: PathState): { results: ScenarioResult[]; notFollowed: number; assumed: TraceAssumption[] } {
  const assumed: TraceAssumption[] = [];
  const results: ScenarioResult[] = [];
  const pending: Assignment[][] = [[]];
  while (pending.length > 0 && results.length < MAX_SCENARIOS) {
    const run = new ScenarioRun(pending.pop()!);
    const outcomes = runScenario(snapshot, ctx, source, start, run, assumed);
    results.push({ assignments: run.assignments, outcomes });
    appendAll(pending, run.forks);
  }
  return { results, notFollowed: pending.length, assumed };
}

/** The scenarios not followed, as one more whose end is unknown: never a lost outcome. */
function notFollowedOutcome(dest: Destination, notFollowed: number): TraceOutcome {
  return {
    probability: 1,
    verdict: 'UNKNOWN',
    destination: formatHostPort(formatIp(dest.ip), dest.port),
    masquerade: false,
    route: null,
    conditions: [],
    delivery: 'unknown',
    unknown: { code: 'too-many-scenarios', limit: MAX_SCENARIOS, notFollowed },
    steps: [],
  };
}

/** The interface an arriving packet comes in by: given, or the route back to its source (an assumption, said). */
function inInterfaceOf(snapshot: NodeSnapshot, source: Source, given: string | undefined, assumptions: TraceAssumption[]): string | undefined {
  if (given || source.local || snapshot.routes.length === 0) return given;
  const back = lookupRoute(snapshot.routes, source.ip);
  if (!back?.dev) return undefined;
  assumptions.push({ code: 'in-interface', dev: back.dev });
  return back.dev;
}

/** Trace one packet (one protocol). */
export function tracePacket(snapshot: NodeSnapshot, resolution: Resolution | undefined, dest: Destination, protocol: TraceProtocol, opts: TraceOptions): Trace {
  const family = dest.ip.family;
  const assumptions: TraceAssumption[] = [];
  const source = chooseSource(buildContext(snapshot, opts.assumptions), opts.from, dest.ip);
  if (source.assumption) assumptions.push(source.assumption);
  const sport = opts.sport ?? 40000;
  // A conntrack entry holding the 5-tuple decides the packet of its connection: its NAT binding, not the nat chains.
  const pin = conntrackFor(snapshot, resolution, { protocol, src: source.ip, sport, dst: dest.ip, dport: dest.port }, opts.assumptions.established, opts.sport !== undefined);
  const pinnedTo = pin?.code === 'conntrack-pinned' && pin.applied ? pinTarget(pin) : undefined;
  const traceAssumptions = pinnedTo ? { ...opts.assumptions, established: true, pinnedTo } : opts.assumptions;
  const ctx = buildContext(snapshot, traceAssumptions);
  if (opts.sport === undefined) assumptions.push({ code: 'source-port', port: sport });
  assumptions.push({ code: 'connection', established: traceAssumptions.established });
  assumptions.push({ code: 'affinity', hit: opts.assumptions.affinityHit });
  if (!ctx.knowsLocal) assumptions.push({ code: 'node-addresses-unknown' });
  if (snapshot.routes.length === 0) assumptions.push({ code: 'no-routes' });
  if (!rulesetFor(snapshot, family) && snapshot.nft.length === 0) assumptions.push({ code: 'no-ruleset', family });
  if (pin) assumptions.unshift(pin);

  const inInterface = inInterfaceOf(snapshot, source, opts.inInterface, assumptions);
  const start: PathState = {
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

  const { results, notFollowed, assumed } = runScenarios(snapshot, ctx, source, start);
  if (notFollowed > 0) assumptions.push({ code: 'too-many-scenarios', limit: MAX_SCENARIOS });
  const seen = new Set<string>();
  for (const a of assumed) {
    const k = JSON.stringify(a);
    if (!seen.has(k)) {
      seen.add(k);
      assumptions.push(a);
    }
  }
  const { outcomes, scenarios } = flatten(mergeScenarios(results));
  if (notFollowed > 0) {
    scenarios.push({ conditions: [], outcomes: [outcomes.length], notFollowed });
    outcomes.push(notFollowedOutcome(dest, notFollowed));
  }

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
    scenarios,
  };
}

/** Where a conntrack entry sends the flow: the address its reply comes from. */
function pinTarget(pin: Extract<TraceAssumption, { code: 'conntrack-pinned' }>): TraceAssumptions['pinnedTo'] {
  const m = /^\[(.+)\]:(\d+)$/.exec(pin.to) ?? /^([^:]+):(\d+)$/.exec(pin.to);
  const ip = parseIp(m ? m[1] : pin.to);
  if (!ip) return undefined;
  return { ip, ...(m ? { port: Number(m[2]) } : {}), file: pin.file, line: pin.line };
}

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

