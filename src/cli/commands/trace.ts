/** `kpx trace TARGET`: the packet's road through this node (src/app/trace.ts), rendered as asked. */
import type { InputOptions } from '../input-options.js';
import { trace } from '../../app/trace.js';
import { appIO, finish, forPeople } from '../emit.js';

export { protocolFlag, sourceOf, traceRequest } from '../../app/trace.js';

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

export async function traceAction(destination: string, opts: TraceCliOptions): Promise<number> {
  if (opts.node) return (await import('./cluster-trace.js')).traceAcrossAction(destination, { ...opts, node: opts.node });
  const { output, input: _input, nodeIp: _nodeIp, node: _node, color: _color, ...asked } = opts;
  return finish(await trace({ ...asked, target: destination, forPeople: forPeople(output) }, appIO(opts, output)), output, opts);
}
