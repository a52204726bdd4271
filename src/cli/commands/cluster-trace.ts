/** `kpx trace VIP:PORT --node A -i CLUSTER_DIR`: the packet from node A to the pod's node and interface. */
import { traceRequest } from './trace.js';
import { traceAcross, type CrossTrace } from '../../cluster/trace.js';
import { crossTraceJson, renderCrossTraceText } from '../../cluster/render.js';
import { nodeByName } from '../../cluster/types.js';
import { resolveJudged } from '../../judge/index.js';
import { protocolsFor, TraceInputError } from '../../trace/trace.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { versioned } from '../../render/schemas/index.js';
import { renderJson } from '../../render/json.js';
import { ExitCode, UsageError } from '../exit.js';
import { loadClusterFromOptions, type ClusterInputOptions } from './cluster-inputs.js';
import { writeOut, writeJsonOut } from '../output.js';

export interface TraceAcrossCliOptions extends ClusterInputOptions {
  node: string;
  from: string;
  sport?: string;
  protocol?: string;
  inInterface?: string;
  established?: boolean;
  affinityHit?: boolean;
  output: 'text' | 'json';
  verbose?: boolean;
}

export async function traceAcrossAction(destination: string, opts: TraceAcrossCliOptions): Promise<number> {
  const { dest, protocol, from, sport } = traceRequest(destination, opts);
  const cluster = await loadClusterFromOptions([], opts, opts.output === 'text');
  const first = nodeByName(cluster, opts.node);
  if (!first) throw new UsageError(`--node ${opts.node}: no such node in the bundle (nodes: ${cluster.nodes.map((n) => n.name).join(', ')})`);
  const res = await resolveJudged(first.snapshot);
  const protocols = protocol ? [protocol] : protocolsFor(res, dest, first.snapshot);
  const traces: CrossTrace[] = [];
  try {
    for (const p of protocols) {
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
    writeOut(traces.map((t) => renderCrossTraceText(t, c, { verbose: Boolean(opts.verbose), cluster })).join('\n'));
  }
  return ExitCode.Ok;
}
