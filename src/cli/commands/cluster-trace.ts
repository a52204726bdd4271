/** `kpx trace VIP:PORT --node A -i CLUSTER_DIR`: the packet from node A to the pod's node and interface. */
import { writeText } from '../output.js';
import { protocolFlag, sourceOf } from './trace.js';
import { traceAcross, type CrossTrace } from '../../cluster/trace.js';
import { crossTraceJson, renderCrossTraceText } from '../../render/cluster/render.js';
import { nodeByName } from '../../cluster/types.js';
import { resolveJudged } from '../../judge/index.js';
import { TraceInputError } from '../../trace/trace.js';
import { planTarget } from '../../trace/target.js';
import { noMatchExit, parseTargetArg, reportNoMatch } from '../target.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { versioned } from '../../render/schemas/index.js';
import { renderJson } from '../../render/json.js';
import { ExitCode, UsageError } from '../exit.js';
import { loadClusterFromOptions, type ClusterInputOptions } from './cluster-inputs.js';
import { writeJsonOut } from '../output.js';

export interface TraceAcrossCliOptions extends ClusterInputOptions {
  node: string;
  /** Unset: `pod`, or `external` for a NodePort target. */
  from?: string;
  exact?: boolean;
  sport?: string;
  protocol?: string;
  inInterface?: string;
  established?: boolean;
  affinityHit?: boolean;
  output: 'text' | 'json';
  verbose?: boolean;
}

export async function traceAcrossAction(destination: string, opts: TraceAcrossCliOptions): Promise<number> {
  // The grammar of `kpx trace` (ns/name, a bare VIP, nodeport:PORT), planned on the first node's Services.
  const target = parseTargetArg(destination);
  const protocol = protocolFlag(opts, target.kind === 'address' ? target.dest.protocol : target.protocol, destination);
  const { from, sport } = sourceOf(opts, target.kind === 'nodeport' ? 'external' : 'pod');
  const cluster = await loadClusterFromOptions([], opts, opts.output === 'text');
  const first = nodeByName(cluster, opts.node);
  if (!first) throw new UsageError(`--node ${opts.node}: no such node in the bundle (nodes: ${cluster.nodes.map((n) => n.name).join(', ')})`);
  const res = await resolveJudged(first.snapshot);
  const plan = planTarget(target, res, first.snapshot, { ...(protocol ? { protocol } : {}), exact: Boolean(opts.exact) });
  if (plan.kind === 'no-match') {
    if (opts.output !== 'json') return reportNoMatch(plan, opts);
    process.stdout.write(renderJson(versioned('trace-cluster', { traces: [], noMatch: plan })));
    return noMatchExit(plan);
  }
  const traces: CrossTrace[] = [];
  try {
    for (const { dest, protocol: p } of plan.traces) {
      traces.push(
        await traceAcross(cluster, dest, p, {
          node: first.name,
          from,
          ...(sport !== undefined ? { sport } : {}),
          ...(opts.inInterface ? { inInterface: opts.inInterface } : {}),
          assumptions: { established: Boolean(opts.established), affinityHit: Boolean(opts.affinityHit) },
          resolutions: new Map([[first.name, res]]),
        }),
      );
    }
  } catch (e) {
    if (e instanceof TraceInputError) throw new UsageError(e.message);
    throw e;
  }
  if (opts.output === 'json') writeJsonOut(renderJson(versioned('trace-cluster', { traces: traces.map(crossTraceJson) })));
  else {
    const c = chalkInit(colorEnabled(opts));
    writeText(traces.map((t) => renderCrossTraceText(t, c, { verbose: Boolean(opts.verbose), cluster })).join('\n'));
  }
  return ExitCode.Ok;
}
