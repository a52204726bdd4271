/** `kpx trace TARGET`: the packet's road through this node (VIP:PORT, a bare VIP, ns/name[:port], nodeport:PORT). */
import { writeText } from '../output.js';
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { judgeFlow, judgeSnapshot, mentionsName, mentionsOf, partialEvidence } from '../../judge/index.js';
import { parseIp } from '../../model/addr.js';
import { parseDestination, type TraceProtocol } from '../../trace/packet.js';
import { tracePacket, TraceInputError, type SourceSpec } from '../../trace/trace.js';
import { planTarget, type Target } from '../../trace/target.js';
import type { Trace } from '../../trace/types.js';
import { renderJson } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { renderPlanHeader, renderTraceText, traceJson } from '../../render/trace.js';
import { writeJsonDeep } from '../../render/json-deep-stream.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { ExitCode, UsageError } from '../exit.js';
import { printable } from '../../source/index.js';
import { cannotTell, logAccountLines, reportInputProblems } from '../evidence.js';
import { noMatchExit, parseTargetArg, reportNoMatch } from '../target.js';
import { flowJudgementJson, nodeNotes, noServiceText } from '../../render/judgement.js';
import { writeErr, writeJsonOut } from '../output.js';

export interface TraceCliOptions extends InputOptions {
  /** Unset: `pod`, or `external` for a NodePort target. */
  from?: string;
  sport?: string;
  protocol?: string;
  inInterface?: string;
  established?: boolean;
  affinityHit?: boolean;
  /** Trace VIP:PORT as given, even when no Service is there and a near one is. */
  exact?: boolean;
  output: 'text' | 'json';
  verbose?: boolean;
}

export function protocolFlag(opts: Pick<TraceCliOptions, 'protocol'>, given: TraceProtocol | undefined, text: string): TraceProtocol | undefined {
  if (!opts.protocol) return given;
  const p = opts.protocol.toLowerCase();
  if (p !== 'tcp' && p !== 'udp' && p !== 'sctp') throw new UsageError(`-p ${opts.protocol}: expected tcp, udp or sctp`);
  if (given && given !== p) throw new UsageError(`-p ${p} contradicts ${text}`);
  return p;
}

export function sourceOf(opts: Pick<TraceCliOptions, 'from' | 'sport'>, fallback: 'pod' | 'external' = 'pod') {
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
export function traceRequest(destination: string, opts: Pick<TraceCliOptions, 'protocol' | 'from' | 'sport'>) {
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

export async function traceAction(destination: string, opts: TraceCliOptions): Promise<number> {
  if (opts.node) return (await import('./cluster-trace.js')).traceAcrossAction(destination, { ...opts, node: opts.node });
  const target = parseTargetArg(destination);
  const protocol = protocolFlag(opts, target.kind === 'address' ? target.dest.protocol : target.protocol, destination);
  const { from, sport } = sourceOf(opts, target.kind === 'nodeport' ? 'external' : 'pod');
  const snapshot = await loadFromOptions([], opts, opts.output === 'text');
  // No ruleset for the packet's family: any road shown would be made up (exit 3, said first).
  reportInputProblems(snapshot);
  const unknown = cannotTell(snapshot, `where ${destination} goes`, familyOf(target));
  if (unknown) {
    writeErr(unknown + '\n');
    for (const l of logAccountLines(snapshot)) writeErr(l + '\n');
    return ExitCode.CannotTell;
  }
  const node = await judgeSnapshot(snapshot);
  const res = node.resolution;
  const plan = planTarget(target, res, snapshot, { ...(protocol ? { protocol } : {}), exact: Boolean(opts.exact) });
  const c = chalkInit(colorEnabled(opts));
  if (plan.kind === 'no-match') {
    // "Nothing here" is a claim of absence: with partial evidence (or unread lines naming the target) it is UNKNOWN.
    const unknownMatch = noMatchUnknown(node, target);
    if (unknownMatch) {
      if (opts.output === 'json') writeJsonOut(renderJson(versioned('trace', { traces: [], noMatch: { ...plan, judgement: unknownMatch } })));
      else writeText(`${c.yellow(printable(noServiceText(unknownMatch, target.text), 2000))}\n`);
      return ExitCode.CannotTell;
    }
    // A Service the API has but kube-proxy programs nothing for (headless, ExternalName), or one it should program here.
    if (target.kind === 'service' && snapshot.api && opts.output !== 'json') {
      const byApi = (await import('./trace-api-explain.js')).explainFromApi(target, snapshot);
      if (byApi) {
        writeText(byApi.text);
        return byApi.exit;
      }
    }
    // Not a trace of nothing: what is not here and the nearest real targets, exit 2 as in every command.
    if (opts.output !== 'json') return reportNoMatch(plan, opts);
    writeJsonOut(renderJson(versioned('trace', { traces: [], noMatch: plan })));
    return noMatchExit(plan);
  }
  // A Service name or NodePort resolved to a family without a ruleset (a dual-stack Service read from one family's dump).
  for (const p of plan.traces) {
    const none = cannotTell(snapshot, `where ${destination} goes`, p.dest.ip.family);
    if (none) {
      writeErr(none + '\n');
      return ExitCode.CannotTell;
    }
  }
  // A NodePort traced on an assumed node address: the trace takes that address as the node's.
  const assumedNode = plan.nodeAddress?.code === 'nodeport-address-assumed' ? parseIp(plan.nodeAddress.address) : undefined;
  const traced = assumedNode ? { ...snapshot, extraNodeIps: [...snapshot.extraNodeIps, assumedNode] } : snapshot;
  const traces: Trace[] = [];
  try {
    for (const p of plan.traces) {
      const t = tracePacket(traced, res, p.dest, p.protocol, {
        from,
        ...(sport !== undefined ? { sport } : {}),
        ...(opts.inInterface ? { inInterface: opts.inInterface } : {}),
        assumptions: { established: Boolean(opts.established), affinityHit: Boolean(opts.affinityHit) },
      });
      const na = plan.nodeAddress;
      traces.push(na ? { ...t, assumptions: [{ code: 'node-address', address: na.address, from: na.code === 'nodeport-address-assumed' ? 'assumed' : na.from }, ...t.assumptions] } : t);
    }
  } catch (e) {
    if (e instanceof TraceInputError) throw new UsageError(e.message);
    throw e;
  }
  // One judgement per traced flow: the verdict line, its unknown share and caveats, and the exit code.
  const judgements = traces.map((t) => judgeFlow(node, t));
  // Written piece by piece: a trace of thousands of undecided statements is more text than one string holds.
  if (opts.output === 'json') writeJsonDeep(versioned('trace', { traces: traces.map((t, i) => ({ ...traceJson(t), judgement: flowJudgementJson(judgements[i]) })) }), (text) => writeJsonOut(text));
  else {
    const notes = nodeNotes(node, { trace: true });
    writeText(`${notes.map((n) => `${n}\n`).join('')}${renderPlanHeader(target, plan.traces, c)}${traces.map((t, i) => renderTraceText(t, c, { verbose: Boolean(opts.verbose), judgement: judgements[i] })).join('\n')}`);
  }
  // Cannot tell: every traced flow's answer is wholly unknown (documented in exit.ts).
  return judgements.length > 0 && judgements.every((j) => j.cannotTell) ? ExitCode.CannotTell : ExitCode.Ok;
}

/**
 * A target that names nothing here, when the evidence cannot say so: some table is not whole, or
 * lines kpx could not read name the target's address. Undefined when "nothing here" stands.
 */
function noMatchUnknown(node: Awaited<ReturnType<typeof judgeSnapshot>>, target: Target) {
  const ipText = target.kind === 'address' ? target.dest.ipText : target.kind === 'vip' ? target.ipText : undefined;
  const ip = ipText !== undefined ? parseIp(ipText) : undefined;
  const mentions = ip ? mentionsOf(node.snapshot, ip, target.kind === 'address' ? target.dest.port : undefined) : target.kind === 'service' ? mentionsName(node.snapshot, target.namespace, target.name) : [];
  const partial = partialEvidence(node.snapshot);
  if (mentions.length === 0 && partial.length === 0) return undefined;
  return { evidence: 'partial' as const, mentions, partial };
}
