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

/** One run: the packet through every hook under one scenario's answers; its outcomes. */
function runScenario(snapshot: NodeSnapshot, ctx: TraceContext, source: Source, start: PathState, run: ScenarioRun, assumed: TraceAssumption[]): TraceOutcome[] {
  const env: RunEnv = { snapshot, rs: rulesetFor(snapshot, start.family), ctx, run, budget: { branches: MAX_BRANCHES }, assumed };
  const first: Branch = { st: { ...start }, probability: 1, steps: [], claimed: false, masquerade: false };
  const finished: Branch[] = [];
  const delivered: { b: Branch; delivery: 'local' | 'forward' }[] = [];

  // Locally generated packets are routed with iif lo (the kernel's flowi), arriving ones with their input interface.
  const query = (b: Branch) => ({ src: b.st.src, mark: b.st.mark, ...(source.local ? { iif: 'lo' } : b.st.inInterface ? { iif: b.st.inInterface } : {}) });
  // A virtual server's address is on kube-ipvs0 by construction: when the evidence has no kube-ipvs0
  // (an ipvsadm dump alone), the address is taken as the node's, and the trace says so.
  const kubeIpvs0 = snapshot.interfaces.some((i) => i.name === 'kube-ipvs0');
  const isLocalDst = (b: Branch) => {
    if (isLocalAddress(ctx, b.st.dst)) return true;
    if (kubeIpvs0 || !virtualServerFor(snapshot, b.st)) return false;
    assumed.push({ code: 'ipvs-address-local', address: formatIp(b.st.dst) });
    return true;
  };
  const routeOut = (b: Branch) => {
    const r = routeFor(snapshot, { ...query(b), dst: b.st.dst }).route;
    if (r?.dev) b.st.outInterface = r.dev;
  };
  const kernel = new KernelSwitches(snapshot, assumed, source.ip);
  /** Branches the kernel lets through at a switch; the others end there. */
  const through = (list: Branch[], pass: (b: Branch) => boolean) =>
    list.filter((b) => {
      if (pass(b)) return true;
      finished.push(b);
      return false;
    });
  /** The way out of a forwarded packet: the bridge it may go back out of, then the MTUs it crosses. */
  const out = (list: Branch[]) => through(list, (b) => kernel.bridge(b)).map((b) => (kernel.mtu(b), b));

  if (source.local) {
    let after = runStages(env, 'OUTPUT', [first], finished);
    after.forEach(routeOut);
    after = through(after, (b) => isLocalAddress(ctx, b.st.dst) || kernel.rerouting(b, b.st.outInterface));
    after = runStages(env, 'POSTROUTING', after, finished);
    for (const b of after) {
      if (!isLocalAddress(ctx, b.st.dst)) kernel.mtu(b);
      if (isLocalAddress(ctx, b.st.dst)) {
        for (const x of runStages(env, 'INPUT', [b], finished)) delivered.push({ b: x, delivery: 'local' });
      } else delivered.push({ b, delivery: 'forward' });
    }
  } else {
    for (const b of runStages(env, 'PREROUTING', [first], finished)) {
      if (isLocalDst(b)) {
        if (!kernel.routing(b, true)) {
          finished.push(b);
          continue;
        }
        for (const x of runStages(env, 'INPUT', [b], finished)) {
          // IPVS sits at LOCAL_IN, after the filter table: a kube-ipvs0 VIP goes on to a real server.
          const ipvs = ipvsStage(snapshot, x, env.budget);
          if (!ipvs) {
            delivered.push({ b: x, delivery: 'local' });
            continue;
          }
          if (ipvs.length === 0) {
            // ipvsStage ended the branch (refused: ICMP port unreachable, see ipvs.ts).
            finished.push(x);
            continue;
          }
          for (const y of ipvs) {
            if (y.end) {
              finished.push(y);
              continue;
            }
            routeOut(y);
            for (const z of runStages(env, 'POSTROUTING', [y], finished)) delivered.push({ b: z, delivery: 'forward' });
          }
        }
      } else {
        routeOut(b);
        if (!kernel.routing(b, false)) {
          finished.push(b);
          continue;
        }
        const fwd = runStages(env, 'FORWARD', [b], finished);
        for (const z of out(runStages(env, 'POSTROUTING', fwd, finished))) delivered.push({ b: z, delivery: 'forward' });
      }
    }
  }

  const outcome = (b: Branch, verdict: Verdict, delivery: TraceOutcome['delivery']): TraceOutcome => {
    const route = delivery === 'stopped' || delivery === 'unknown' ? null : describeRoute(snapshot, b.st.dst, query(b));
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
  };
  const outcomes: TraceOutcome[] = [];
  for (const b of finished) outcomes.push(outcome(b, b.end?.verdict ?? 'DROP', b.end?.verdict === 'UNKNOWN' ? 'unknown' : 'stopped'));
  for (const { b, delivery } of delivered) outcomes.push(outcome(b, b.st.dnatDone ? 'DNAT' : b.claimed ? 'ACCEPT' : 'NONE', delivery));
  return mergeEnds(outcomes);
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

  let inInterface = opts.inInterface;
  if (!inInterface && !source.local && snapshot.routes.length > 0) {
    const back = lookupRoute(snapshot.routes, source.ip);
    if (back?.dev) {
      inInterface = back.dev;
      assumptions.push({ code: 'in-interface', dev: back.dev });
    }
  }
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

  // One run per scenario: a run that meets a new undecided match queues the run with the other answer.
  const assumed: TraceAssumption[] = [];
  const results: ScenarioResult[] = [];
  const pending: Assignment[][] = [[]];
  while (pending.length > 0 && results.length < MAX_SCENARIOS) {
    const run = new ScenarioRun(pending.pop()!);
    const outcomes = runScenario(snapshot, ctx, source, start, run, assumed);
    results.push({ assignments: run.assignments, outcomes });
    pending.push(...run.forks);
  }
  const notFollowed = pending.length;
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
    // The ways not followed are one more scenario whose end is unknown: never a lost outcome.
    scenarios.push({ conditions: [], outcomes: [outcomes.length], notFollowed });
    outcomes.push({
      probability: 1,
      verdict: 'UNKNOWN',
      destination: formatHostPort(formatIp(dest.ip), dest.port),
      masquerade: false,
      route: null,
      conditions: [],
      delivery: 'unknown',
      unknown: { code: 'too-many-scenarios', limit: MAX_SCENARIOS, notFollowed },
      steps: [],
    });
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

