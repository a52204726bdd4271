/** `kpx services --nodes`: where the nodes of a cluster bundle disagree, per Service port, filtered as asked. */
import type { NodeComparison, ServiceComparison } from '../cluster/compare.js';
import { ExitCode } from '../judge/inputs.js';
import { printable } from '../source/index.js';
import { UsageError, type ClusterIO, type Outcome } from './io.js';

export interface ServicesNodesQuery {
  readonly inputs: readonly string[];
  readonly service?: string;
  readonly namespace?: string;
  /** Text: list agreeing Service ports too. */
  readonly all?: boolean;
}

/** `ns/name`, `ns/name:port` or a ClusterIP[:port]. */
function selector(sel: string): (s: ServiceComparison) => boolean {
  const m = /^([^/]+)\/([^:]+)(?::(.*))?$/.exec(sel);
  if (m) return (s) => s.label === `${m[1]}/${m[2]}` || s.label === `${m[1]}/${m[2]}:${m[3] ?? ''}` || (m[3] === undefined && s.label.startsWith(`${m[1]}/${m[2]}:`));
  const v = /^\[?([0-9a-fA-F:.]+?)\]?(?::(\d+))?$/.exec(sel);
  if (v) return (s) => s.clusterIP === v[1] && (v[2] === undefined || String(s.port) === v[2]);
  throw new UsageError(`--service ${sel}: expected ns/name, ns/name:port or a VIP`);
}

export async function servicesAcrossNodes(q: ServicesNodesQuery, io: ClusterIO): Promise<Outcome> {
  const { comparison: cmp, skipped, inputErrors } = await io.compareFleet(q.inputs);
  let services = cmp.services;
  if (q.namespace) services = services.filter((s) => s.label.startsWith(`${q.namespace}/`));
  if (q.service) services = services.filter(selector(q.service));
  const differing = services.filter((s) => s.differences.length > 0).length;
  const shown: NodeComparison = { ...cmp, services, summary: { servicePorts: services.length, agreeing: services.length - differing, differing } };
  // Nodes that could not be read are said first (stderr), and listed in the JSON; the others are compared.
  for (const s of skipped) io.notice(`kpx: ${printable(s.dir, 4096)}: node ${printable(s.node, 253)} not compared: ${printable(s.reason, 600)}`);
  return {
    result: { kind: 'services-nodes', shown, skipped, all: Boolean(q.all || q.service) },
    exit: ExitCode.Ok,
    afterward: inputErrors.length ? [`kpx: some inputs had errors on ${inputErrors.join(', ')}; run \`kpx inspect -i DIR --node NAME\` for details`] : [],
  };
}
