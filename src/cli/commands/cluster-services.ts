/** `kpx services --nodes`: where the nodes of a cluster bundle disagree, per Service port. */
import type { NodeComparison, ServiceComparison } from '../../cluster/compare.js';
import { nodeComparisonJson, renderNodeComparison } from '../../render/cluster/render.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { renderJson, renderYaml } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { ExitCode, UsageError } from '../exit.js';
import { outputWidth, writeErr, writeJsonOut, writeText } from '../output.js';
import { compareFleetFromOptions, type ClusterInputOptions } from './cluster-inputs.js';
import { printable } from '../../source/index.js';

export interface ServicesNodesOptions extends ClusterInputOptions {
  output: 'text' | 'wide' | 'json' | 'yaml';
  service?: string;
  namespace?: string;
  /** Text: list agreeing Service ports too. */
  all?: boolean;
}

/** `ns/name`, `ns/name:port` or a ClusterIP[:port]. */
function selector(sel: string): (s: ServiceComparison) => boolean {
  const m = /^([^/]+)\/([^:]+)(?::(.*))?$/.exec(sel);
  if (m) return (s) => s.label === `${m[1]}/${m[2]}` || s.label === `${m[1]}/${m[2]}:${m[3] ?? ''}` || (m[3] === undefined && s.label.startsWith(`${m[1]}/${m[2]}:`));
  const v = /^\[?([0-9a-fA-F:.]+?)\]?(?::(\d+))?$/.exec(sel);
  if (v) return (s) => s.clusterIP === v[1] && (v[2] === undefined || String(s.port) === v[2]);
  throw new UsageError(`--service ${sel}: expected ns/name, ns/name:port or a VIP`);
}

export async function servicesNodesAction(positional: string[], opts: ServicesNodesOptions): Promise<number> {
  const { comparison: cmp, skipped, inputErrors } = await compareFleetFromOptions(positional, opts, opts.output === 'text' || opts.output === 'wide');
  let services = cmp.services;
  if (opts.namespace) services = services.filter((s) => s.label.startsWith(`${opts.namespace}/`));
  if (opts.service) services = services.filter(selector(opts.service));
  const differing = services.filter((s) => s.differences.length > 0).length;
  const shown: NodeComparison = { ...cmp, services, summary: { servicePorts: services.length, agreeing: services.length - differing, differing } };
  // Nodes that could not be read are said first (stderr), and listed in the JSON; the others are compared.
  for (const s of skipped) writeErr(`kpx: ${printable(s.dir, 4096)}: node ${printable(s.node, 253)} not compared: ${printable(s.reason, 600)}\n`);
  const doc = () => versioned('services-nodes', { ...nodeComparisonJson(shown), ...(skipped.length ? { skipped: skipped.map((s) => ({ node: s.node, path: s.dir, reason: s.reason })) } : {}) });
  if (opts.output === 'json') writeJsonOut(renderJson(doc()));
  else if (opts.output === 'yaml') writeJsonOut(renderYaml(doc()));
  else writeText(renderNodeComparison(shown, chalkInit(colorEnabled(opts)), { all: Boolean(opts.all || opts.service), width: outputWidth() }));
  if (inputErrors.length) writeErr(`kpx: some inputs had errors on ${inputErrors.join(', ')}; run \`kpx inspect -i DIR --node NAME\` for details\n`);
  return ExitCode.Ok;
}
