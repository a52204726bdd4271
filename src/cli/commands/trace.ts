/** `kpx trace VIP:PORT[/proto]`: the packet's road through this node. */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { resolveServices } from '../../kube/resolve.js';
import { parseDestination, type TraceProtocol } from '../../trace/packet.js';
import { protocolsFor, tracePacket, TraceInputError, type SourceSpec } from '../../trace/trace.js';
import { renderJson } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { renderTraceText } from '../../render/trace.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { ExitCode, UsageError } from '../exit.js';
import { cannotTell, reportInputProblems } from '../evidence.js';
import { staleRulesNotice } from '../../kube/sync-state.js';

export interface TraceCliOptions extends InputOptions {
  from: string;
  sport?: string;
  protocol?: string;
  inInterface?: string;
  established?: boolean;
  affinityHit?: boolean;
  output: 'text' | 'json';
  verbose?: boolean;
}

/** The packet asked for on the command line: destination, protocol, source and source port. */
export function traceRequest(destination: string, opts: Pick<TraceCliOptions, 'protocol' | 'from' | 'sport'>) {
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
  return { dest, protocol, from, sport };
}

export async function traceAction(destination: string, opts: TraceCliOptions): Promise<number> {
  if (opts.node) return (await import('./cluster-trace.js')).traceAcrossAction(destination, { ...opts, node: opts.node });
  const { dest, protocol, from, sport } = traceRequest(destination, opts);
  const snapshot = await loadFromOptions([], opts, opts.output === 'text');
  // No ruleset for the packet's family: any road shown would be made up (exit 3, said first).
  reportInputProblems(snapshot);
  const unknown = cannotTell(snapshot, `where ${destination} goes`, dest.ip.family);
  if (unknown) {
    process.stderr.write(unknown + '\n');
    return ExitCode.CannotTell;
  }
  const res = await resolveServices(snapshot);
  const protocols = protocol ? [protocol] : protocolsFor(res, dest, snapshot);
  const traces = [];
  try {
    for (const p of protocols) {
      traces.push(
        tracePacket(snapshot, res, dest, p, {
          from,
          ...(sport !== undefined ? { sport } : {}),
          ...(opts.inInterface ? { inInterface: opts.inInterface } : {}),
          assumptions: { established: Boolean(opts.established), affinityHit: Boolean(opts.affinityHit) },
        }),
      );
    }
  } catch (e) {
    if (e instanceof TraceInputError) throw new UsageError(e.message);
    throw e;
  }
  if (opts.output === 'json') process.stdout.write(renderJson(versioned('trace', { traces })));
  else {
    const c = chalkInit(colorEnabled(opts));
    const stale = staleRulesNotice(snapshot);
    if (stale) process.stdout.write(`${stale}\n`);
    process.stdout.write(traces.map((t) => renderTraceText(t, c, { verbose: Boolean(opts.verbose) })).join('\n'));
  }
  return ExitCode.Ok;
}
