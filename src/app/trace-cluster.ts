/** `kpx trace TARGET --node A -i CLUSTER_DIR`: the packet from node A to the pod's node and interface. */
import { traceAcross, type CrossTrace } from '../cluster/trace.js';
import { nodeByName } from '../cluster/types.js';
import { resolveJudged } from '../judge/index.js';
import { ExitCode } from '../judge/inputs.js';
import { TraceInputError } from '../trace/trace.js';
import { planTarget } from '../trace/target.js';
import { UsageError, type ClusterIO, type Outcome } from './io.js';
import { targetArg } from './services.js';
import { protocolFlag, sourceOf, type TraceQuery } from './trace.js';

export interface TraceAcrossQuery extends Omit<TraceQuery, 'forPeople'> {
  /** The node the packet starts from. */
  readonly node: string;
}

export async function traceAcrossNodes(q: TraceAcrossQuery, io: ClusterIO): Promise<Outcome> {
  // The grammar of `kpx trace` (ns/name, a bare VIP, nodeport:PORT), planned on the first node's Services.
  const target = targetArg(q.target);
  const protocol = protocolFlag(q, target.kind === 'address' ? target.dest.protocol : target.protocol, q.target);
  const { from, sport } = sourceOf(q, target.kind === 'nodeport' ? 'external' : 'pod');
  const cluster = await io.loadCluster([]);
  const first = nodeByName(cluster, q.node);
  if (!first) throw new UsageError(`--node ${q.node}: no such node in the bundle (nodes: ${cluster.nodes.map((n) => n.name).join(', ')})`);
  const res = await resolveJudged(first.snapshot);
  const plan = planTarget(target, res, first.snapshot, { ...(protocol ? { protocol } : {}), exact: Boolean(q.exact) });
  // A miss: the near misses, as in every command (JSON: a trace-cluster document without traces).
  if (plan.kind === 'no-match') return { result: { kind: 'no-match', plan, document: 'trace-cluster' }, exit: plan.code === 'services-unnamed' ? ExitCode.CannotTell : ExitCode.Error };
  const traces: CrossTrace[] = [];
  try {
    for (const { dest, protocol: p } of plan.traces) {
      traces.push(
        await traceAcross(cluster, dest, p, {
          node: first.name,
          from,
          ...(sport !== undefined ? { sport } : {}),
          ...(q.inInterface ? { inInterface: q.inInterface } : {}),
          assumptions: { established: Boolean(q.established), affinityHit: Boolean(q.affinityHit) },
          resolutions: new Map([[first.name, res]]),
        }),
      );
    }
  } catch (e) {
    if (e instanceof TraceInputError) throw new UsageError(e.message);
    throw e;
  }
  return { result: { kind: 'trace-cluster', traces, cluster, verbose: Boolean(q.verbose) }, exit: ExitCode.Ok };
}
