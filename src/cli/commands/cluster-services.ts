/** `kpx services --nodes`: where the nodes of a cluster bundle disagree (src/app/services-nodes.ts), rendered as asked. */
import { servicesAcrossNodes } from '../../app/services-nodes.js';
import { finish, forPeople } from '../emit.js';
import { clusterIO, type ClusterInputOptions } from './cluster-inputs.js';

export interface ServicesNodesOptions extends ClusterInputOptions {
  output: 'text' | 'wide' | 'json' | 'yaml';
  service?: string;
  namespace?: string;
  /** Text: list agreeing Service ports too. */
  all?: boolean;
}

export async function servicesNodesAction(positional: string[], opts: ServicesNodesOptions): Promise<number> {
  const query = { inputs: positional, service: opts.service, namespace: opts.namespace, all: opts.all };
  return finish(await servicesAcrossNodes(query, clusterIO(opts, forPeople(opts.output))), opts.output, opts);
}
