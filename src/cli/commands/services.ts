/** `kpx services`: the Services this node's dataplane implements. */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { resolveServices } from '../../kube/resolve.js';
import type { ServicePort } from '../../kube/types.js';
import { writeJson } from '../../render/json-stream.js';
import { connectionsOf } from '../../kube/conntrack.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { renderServiceDetail, renderServicesTable, serviceJson } from '../../render/services.js';
import { problemText } from '../../render/problems.js';
import { noMatchFor, targetSelects } from '../../trace/target.js';
import { parseTargetArg, reportNoMatch } from '../target.js';
import { ExitCode, UsageError } from '../exit.js';
import { outputWidth, writeText } from '../output.js';
import { renderYaml } from '../../render/json.js';
import { SCHEMA_VERSION } from '../../render/schemas/index.js';
import { cannotTell, reportInputProblems } from '../evidence.js';
import { staleRulesNotice } from '../../kube/sync-state.js';
import { intendedDataplane, type ServiceWithoutRules } from '../../kube/intent.js';
import { explainSelectorless, explainWithoutRules, withoutRulesJson } from '../../render/api.js';

export interface ServicesOptions extends InputOptions {
  output: 'text' | 'wide' | 'json' | 'yaml';
  service?: string;
  namespace?: string;
  state?: string;
  nodes?: boolean;
  all?: boolean;
}

const STATES = ['healthy', 'no-endpoints', 'no-local-endpoints', 'partial', 'unknown'];

/** The Service ports `--service TARGET` names (the grammar of `kpx trace`: src/trace/target.ts). */
export function serviceSelector(sel: string): (s: ServicePort) => boolean {
  return targetSelects(parseTargetArg(sel, '--service'));
}

/** The --namespace/--service filters applied to the API's Services without rules (named by ns/name only). */
function selectWithoutRules(opts: Pick<ServicesOptions, 'namespace' | 'service' | 'state'>): (w: ServiceWithoutRules) => boolean {
  const t = opts.service ? parseTargetArg(opts.service, '--service') : undefined;
  return (w) => !opts.state && (!opts.namespace || w.service.namespace === opts.namespace) && (!t || (t.kind === 'service' && w.service.namespace === t.namespace && w.service.name === t.name));
}

export async function servicesAction(positional: string[], opts: ServicesOptions): Promise<number> {
  if (opts.nodes) return (await import('./cluster-services.js')).servicesNodesAction(positional, opts);
  if (opts.state && !STATES.includes(opts.state)) throw new UsageError(`--state ${opts.state}: expected one of ${STATES.join(', ')}`);
  let snapshot: NodeSnapshot | undefined = await loadFromOptions(positional, opts, opts.output === 'text' || opts.output === 'wide');
  // Inputs that could not be used are said first; with no ruleset left, "no Services" would be a lie.
  reportInputProblems(snapshot);
  const unknown = cannotTell(snapshot, 'which Services this node implements');
  if (unknown) {
    process.stderr.write(unknown + '\n');
    return ExitCode.CannotTell;
  }
  const res = await resolveServices(snapshot);
  const stale = staleRulesNotice(snapshot);
  // The API's Services kube-proxy programs nothing for (headless, ExternalName…): explained, not missing.
  const intent = snapshot.api ? intendedDataplane(snapshot.api, snapshot) : undefined;
  const withoutRules: readonly ServiceWithoutRules[] = intent?.withoutRules ?? [];
  const selectorless = intent?.ports.filter((p) => p.service.selector === null) ?? [];
  const apiGiven = snapshot.api !== undefined;
  // Connection counts per endpoint for the detail view, while the conntrack tables are still held.
  const tables = snapshot.conntrack?.tables ?? [];
  // A --service that names nothing here: the near misses, and the same exit as every command's miss.
  if (opts.service && !res.services.some(serviceSelector(opts.service)) && !withoutRules.some(selectWithoutRules(opts))) {
    return reportNoMatch(noMatchFor(parseTargetArg(opts.service, '--service'), res, snapshot!), opts);
  }
  const connections = opts.service && tables.length > 0 && opts.output !== 'json' ? new Map(res.services.filter(serviceSelector(opts.service)).map((s) => [s, connectionsOf(tables, s, snapshot!)])) : undefined;
  // The resolved Services are all that is printed: let the model go before the output is built (peak memory).
  snapshot = undefined;
  let services = res.services;
  if (opts.namespace) services = services.filter((s) => s.namespace === opts.namespace);
  if (opts.state) services = services.filter((s) => s.state === opts.state);
  if (opts.service) services = services.filter(serviceSelector(opts.service));
  const filtered = { ...res, services };
  const c = chalkInit(colorEnabled(opts));
  if (opts.output === 'json' || opts.output === 'yaml') {
    const withEvidence = Boolean(opts.service);
    const parts = {
      schemaVersion: SCHEMA_VERSION.services,
      services: filtered.services,
      others: filtered.others,
      problems: filtered.problems.map((p) => ({ message: problemText(p.problem), evidence: p.evidence })),
      ...(apiGiven ? { withoutRules: withoutRules.filter(selectWithoutRules(opts)).map(withoutRulesJson) } : {}),
    };
    // Each Service port is turned into its printed form a slice at a time (see writeJson).
    if (opts.output === 'json') writeJson(parts, (text) => process.stdout.write(text), { services: (s: ServicePort) => serviceJson(s, withEvidence) });
    else process.stdout.write(renderYaml({ ...parts, services: parts.services.map((s) => serviceJson(s, withEvidence)) }));
  }
  else if (opts.service) {
        if (services.length === 0) {
      const explained = withoutRules.filter(selectWithoutRules(opts));
      writeText(`${stale ? `${stale}\n` : ''}${explained.map((w) => `${explainWithoutRules(w)}\n`).join('')}`);
      return ExitCode.Ok;
    }
    // A Service without a selector: where its endpoints come from (or why there are none), from the API.
    const notes = [...new Set(services.map((s) => selectorless.find((p) => p.namespace === s.namespace && p.name === s.name)).filter((p) => p !== undefined).map(explainSelectorless))];
    writeText(`${stale ? `${stale}\n` : ''}${services.map((s) => renderServiceDetail(s, c, connections?.get(s))).join('\n')}${notes.map((n) => `${n}\n`).join('')}`);
  } else {
    const explained = withoutRules.filter(selectWithoutRules(opts));
    const notes = explained.length ? `\nWithout dataplane rules (from the API's objects):\n${explained.map((w) => `  ${explainWithoutRules(w)}\n`).join('')}` : '';
    writeText(`${stale ? `${stale}\n` : ''}${renderServicesTable(filtered, c, { width: outputWidth(), wide: opts.output === 'wide' })}${notes}`, { fit: opts.output !== 'wide' });
  }
  return ExitCode.Ok;
}
