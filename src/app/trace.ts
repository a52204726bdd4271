/** `kpx trace TARGET` (one node): the packet's road through this node (VIP:PORT, a bare VIP, ns/name[:port], nodeport:PORT). */
import { judgeFlow, judgeSnapshot, mentionsName, mentionsOf, partialEvidence, type NodeJudgement } from '../judge/index.js';
import { ExitCode, flowsWhollyUnknown } from '../judge/inputs.js';
import { parseIp } from '../model/addr.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { parseDestination, type TraceProtocol } from '../trace/packet.js';
import { tracePacket, TraceInputError, type SourceSpec } from '../trace/trace.js';
import { planTarget, type Plan, type Target } from '../trace/target.js';
import type { Trace } from '../trace/types.js';
import { cannotTell, inputProblemLines, logAccountLines } from '../render/evidence.js';
import { UsageError, type AppIO, type Outcome } from './io.js';
import { targetArg } from './services.js';

export interface TraceQuery {
  readonly target: string;
  /** Unset: `pod`, or `external` for a NodePort target. */
  readonly from?: string;
  readonly sport?: string;
  readonly protocol?: string;
  readonly inInterface?: string;
  readonly established?: boolean;
  readonly affinityHit?: boolean;
  /** Trace VIP:PORT as given, even when no Service is there and a near one is. */
  readonly exact?: boolean;
  readonly verbose?: boolean;
  /** The answer is for people: a Service the API explains is said in words (JSON says the miss). */
  readonly forPeople: boolean;
}

export function protocolFlag(opts: { readonly protocol?: string }, given: TraceProtocol | undefined, text: string): TraceProtocol | undefined {
  if (!opts.protocol) return given;
  const p = opts.protocol.toLowerCase();
  if (p !== 'tcp' && p !== 'udp' && p !== 'sctp') throw new UsageError(`-p ${opts.protocol}: expected tcp, udp or sctp`);
  if (given && given !== p) throw new UsageError(`-p ${p} contradicts ${text}`);
  return p;
}

export function sourceOf(opts: { readonly from?: string; readonly sport?: string }, fallback: 'pod' | 'external' = 'pod') {
  const f = opts.from ?? fallback;
  const from: SourceSpec = f === 'pod' || f === 'external' || f === 'node' ? f : { ip: f };
  let sport: number | undefined;
  if (opts.sport !== undefined) {
    sport = Number(opts.sport);
    if (!Number.isInteger(sport) || sport < 1 || sport > 65535) throw new UsageError(`--sport ${opts.sport}: expected a port number`);
  }
  return { from, sport };
}

/** The packet asked for on the command line (VIP:PORT only: cluster traces): destination, protocol, source and source port. */
export function traceRequest(destination: string, opts: { readonly protocol?: string; readonly from?: string; readonly sport?: string }) {
  const dest = parseDestination(destination);
  if (typeof dest === 'string') throw new UsageError(dest);
  const protocol = protocolFlag(opts, dest.protocol, destination);
  return { dest, protocol, ...sourceOf(opts) };
}

/** The address family a target names before the Services are read (a Service name or NodePort: either). */
function familyOf(t: Target): 4 | 6 | undefined {
  if (t.kind === 'address') return t.dest.ip.family;
  if (t.kind === 'vip') return t.ip.family;
  return undefined;
}

/** No ruleset for the family: any road shown would be made up (exit 3, said first). */
function noRuleset(snapshot: NodeSnapshot, question: string, family: 4 | 6 | undefined, io: AppIO, logs: boolean): boolean {
  const unknown = cannotTell(snapshot, question, family);
  if (!unknown) return false;
  io.notice(unknown);
  if (logs) for (const l of logAccountLines(snapshot)) io.notice(l);
  return true;
}

export async function trace(q: TraceQuery, io: AppIO): Promise<Outcome> {
  const target = targetArg(q.target);
  const protocol = protocolFlag(q, target.kind === 'address' ? target.dest.protocol : target.protocol, q.target);
  const source = sourceOf(q, target.kind === 'nodeport' ? 'external' : 'pod');
  const snapshot = await io.load([]);
  for (const l of inputProblemLines(snapshot)) io.notice(l);
  if (noRuleset(snapshot, `where ${q.target} goes`, familyOf(target), io, true)) return { exit: ExitCode.CannotTell };
  const node = await judgeSnapshot(snapshot);
  const plan = planTarget(target, node.resolution, snapshot, { ...(protocol ? { protocol } : {}), exact: Boolean(q.exact) });
  if (plan.kind === 'no-match') return noMatch(node, target, plan, q);
  // A Service name or NodePort resolved to a family without a ruleset (a dual-stack Service read from one family's dump).
  for (const p of plan.traces) if (noRuleset(snapshot, `where ${q.target} goes`, p.dest.ip.family, io, false)) return { exit: ExitCode.CannotTell };
  const traces = traceAll(snapshot, node, plan, q, source);
  // One judgement per traced flow: the verdict line, its unknown share and caveats, and the exit code.
  const judgements = traces.map((t) => judgeFlow(node, t));
  const facts = { evidence: node.evidence, stale: node.stale, leftovers: node.leftovers, secondViews: node.secondViews, liveModes: node.liveModes };
  return {
    result: { kind: 'trace', target, planned: plan.traces, traces, judgements, node: facts, verbose: Boolean(q.verbose) },
    // Cannot tell: every traced flow's answer is wholly unknown (src/judge/inputs.ts).
    exit: flowsWhollyUnknown(judgements) ? ExitCode.CannotTell : ExitCode.Ok,
  };
}

function traceAll(snapshot: NodeSnapshot, node: NodeJudgement, plan: Extract<Plan, { kind: 'trace' }>, q: TraceQuery, source: ReturnType<typeof sourceOf>): Trace[] {
  // A NodePort traced on an assumed node address: the trace takes that address as the node's.
  const assumedNode = plan.nodeAddress?.code === 'nodeport-address-assumed' ? parseIp(plan.nodeAddress.address) : undefined;
  const traced = assumedNode ? { ...snapshot, extraNodeIps: [...snapshot.extraNodeIps, assumedNode] } : snapshot;
  const traces: Trace[] = [];
  try {
    for (const p of plan.traces) {
      const t = tracePacket(traced, node.resolution, p.dest, p.protocol, {
        from: source.from,
        ...(source.sport !== undefined ? { sport: source.sport } : {}),
        ...(q.inInterface ? { inInterface: q.inInterface } : {}),
        assumptions: { established: Boolean(q.established), affinityHit: Boolean(q.affinityHit) },
      });
      const na = plan.nodeAddress;
      traces.push(na ? { ...t, assumptions: [{ code: 'node-address', address: na.address, from: na.code === 'nodeport-address-assumed' ? 'assumed' : na.from }, ...t.assumptions] } : t);
    }
  } catch (e) {
    if (e instanceof TraceInputError) throw new UsageError(e.message);
    throw e;
  }
  return traces;
}

/** A target that names nothing here: unknown (evidence not whole), explained by the API, or a miss with near ones. */
async function noMatch(node: NodeJudgement, target: Target, plan: Extract<Plan, { kind: 'no-match' }>, q: TraceQuery): Promise<Outcome> {
  // "Nothing here" is a claim of absence: with partial evidence (or unread lines naming the target) it is UNKNOWN.
  const judgement = noMatchUnknown(node, target);
  if (judgement) return { result: { kind: 'trace-unknown-match', target, plan, judgement }, exit: ExitCode.CannotTell };
  // A Service the API has but kube-proxy programs nothing for (headless, ExternalName), or one it should program here.
  if (target.kind === 'service' && node.snapshot.api && q.forPeople) {
    const byApi = (await import('./trace-api-explain.js')).explainFromApi(target, node.snapshot);
    if (byApi) return { result: { kind: 'trace-api', text: byApi.text }, exit: byApi.exit };
  }
  // Not a trace of nothing: what is not here and the nearest real targets, exit 2 as in every command.
  return { result: { kind: 'no-match', plan, document: 'trace' }, exit: plan.code === 'services-unnamed' ? ExitCode.CannotTell : ExitCode.Error };
}

/**
 * A target that names nothing here, when the evidence cannot say so: some table is not whole, or
 * lines kpx could not read name the target's address. Undefined when "nothing here" stands.
 */
function noMatchUnknown(node: NodeJudgement, target: Target) {
  const ipText = target.kind === 'address' ? target.dest.ipText : target.kind === 'vip' ? target.ipText : undefined;
  const ip = ipText !== undefined ? parseIp(ipText) : undefined;
  const mentions = ip ? mentionsOf(node.snapshot, ip, target.kind === 'address' ? target.dest.port : undefined) : target.kind === 'service' ? mentionsName(node.snapshot, target.namespace, target.name) : [];
  const partial = partialEvidence(node.snapshot);
  if (mentions.length === 0 && partial.length === 0) return undefined;
  return { evidence: 'partial' as const, mentions, partial };
}
