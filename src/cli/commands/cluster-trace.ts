/** `kpx trace VIP:PORT --node A -i CLUSTER_DIR`: the packet across the nodes (src/app/trace-cluster.ts), rendered as asked. */
import { traceAcrossNodes } from '../../app/trace-cluster.js';
import { finish, forPeople } from '../emit.js';
import { clusterIO, type ClusterInputOptions } from './cluster-inputs.js';

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
  const { output, input: _input, nodeIp: _nodeIp, color: _color, ...asked } = opts;
  return finish(await traceAcrossNodes({ ...asked, target: destination }, clusterIO(opts, forPeople(output))), output, opts);
}
