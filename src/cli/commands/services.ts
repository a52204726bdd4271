/** `kpx services`: the Services this node's dataplane implements (src/app/services.ts), rendered as asked. */
import type { InputOptions } from '../input-options.js';
import { services } from '../../app/services.js';
import { appIO, finish, forPeople } from '../emit.js';

export { serviceSelector } from '../../app/services.js';

export interface ServicesOptions extends InputOptions {
  output: 'text' | 'wide' | 'json' | 'yaml';
  service?: string;
  namespace?: string;
  state?: string;
  nodes?: boolean;
  all?: boolean;
}

export async function servicesAction(positional: string[], opts: ServicesOptions): Promise<number> {
  if (opts.nodes) return (await import('./cluster-services.js')).servicesNodesAction(positional, opts);
  const query = { inputs: positional, service: opts.service, namespace: opts.namespace, state: opts.state, forPeople: forPeople(opts.output) };
  return finish(await services(query, appIO(opts, opts.output)), opts.output, opts);
}
