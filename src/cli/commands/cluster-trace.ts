/** `kpx trace VIP:PORT --node A -i CLUSTER_DIR`: the packet from node A to the pod's node and interface. */
import { traceAcross, type CrossTrace } from '../../cluster/trace.js';
import { crossTraceJson, renderCrossTraceText } from '../../cluster/render.js';
import { nodeByName } from '../../cluster/types.js';
import { resolveServices } from '../../kube/resolve.js';
import { parseDestination, type TraceProtocol } from '../../trace/packet.js';
import { protocolsFor, TraceInputError, type SourceSpec } from '../../trace/trace.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { renderJson } from '../../render/json.js';
import { ExitCode, UsageError } from '../exit.js';
import { loadClusterFromOptions, type ClusterInputOptions } from './cluster-inputs.js';

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
  const dest = parseDestination(destination);
  if (typeof dest === 'string') throw new UsageError(dest);
  let protocol = dest.protocol;
  if (opts.protocol) {
    const p = opts.protocol.toLowerCase();
    if (p !== 'tcp' && p !== 'udp' && p !== 'sctp') throw new UsageError(`-p ${opts.protocol}: expected tcp, udp or sctp`);
    if (protocol && protocol !== p) throw new UsageError(`-p ${p} contradicts ${destination}`);
    protocol = p as TraceProtocol;
  }
  const from: SourceSpec = opts.from === 'pod' || opts.from === 'external' || opts.from === 'node' ? opts.from : { ip: opts.from };
  let sport: number | undefined;
  if (opts.sport !== undefined) {
    sport = Number(opts.sport);
    if (!Number.isInteger(sport) || sport < 1 || sport > 65535) throw new UsageError(`--sport ${opts.sport}: expected a port number`);
  }
  const cluster = await loadClusterFromOptions([], opts, opts.output === 'text');
  const first = nodeByName(cluster, opts.node);
  if (!first) throw new UsageError(`--node ${opts.node}: no such node in the bundle (nodes: ${cluster.nodes.map((n) => n.name).join(', ')})`);
  const res = await resolveServices(first.snapshot);
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
  if (opts.output === 'json') process.stdout.write(renderJson(protocol ? crossTraceJson(traces[0]) : { traces: traces.map(crossTraceJson) }));
  else {
    const c = chalkInit(colorEnabled(opts));
    process.stdout.write(traces.map((t) => renderCrossTraceText(t, c, { verbose: Boolean(opts.verbose), cluster })).join('\n'));
  }
  return ExitCode.Ok;
}
