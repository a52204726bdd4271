/** `kpx services`: the Services this node's dataplane implements. */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { judgeSnapshot, partialEvidence, type NodeJudgement } from '../../judge/index.js';
import type { ServicePort } from '../../kube/types.js';
import { writeJson } from '../../render/json-stream.js';
import { connectionsOf } from '../../kube/conntrack.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { nodeJudgementJson, renderServiceDetail, renderServicesTable, serviceJson } from '../../render/services.js';
import { problemText } from '../../render/problems.js';
import { noMatchFor, targetSelects } from '../../trace/target.js';
import { parseTargetArg, reportNoMatch } from '../target.js';
import { ExitCode, UsageError } from '../exit.js';
import { printable } from '../../source/index.js';
import { outputWidth, writeErr, writeJsonOut, writeText } from '../output.js';
import { renderYaml } from '../../render/json.js';
import { SCHEMA_VERSION } from '../../render/schemas/index.js';
import { cannotTell, logAccountLines, partialRulesNote, reportInputProblems } from '../evidence.js';
import { evidenceText, nodeNotes } from '../../render/judgement.js';
import { intendedDataplane, type ServiceWithoutRules } from '../../kube/intent.js';
import { knows } from '../../model/k8s-api.js';
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
    writeErr(unknown + '\n');
    for (const l of logAccountLines(snapshot)) writeErr(l + '\n');
    return ExitCode.CannotTell;
  }
  let node: NodeJudgement | undefined = await judgeSnapshot(snapshot);
  const res = node.resolution;
  const notes = nodeNotes(node);
  const nodeJson = nodeJudgementJson(node);
  const stale = notes.length ? notes.join('\n') : undefined;
  // "No Services" from evidence that is not whole (a grep, a cut dump) would be a claim of absence: cannot tell.
  const partial = partialEvidence(snapshot);
  if (res.services.length === 0 && partial.length > 0 && !snapshot.api) {
    writeErr(`kpx: cannot tell which Services this node implements: no Service was resolved, and the evidence cannot show there are none: ${partial.slice(0, 3).map(evidenceText).join('; ')}\n`);
    return ExitCode.CannotTell;
  }
  // Rules shown in part (a listing of some chains, a grep): no Service found there is not "no Service".
  const partialRules = partialRulesNote(snapshot);
  if (res.services.length === 0 && partialRules && !opts.service) {
    writeErr(`kpx: cannot tell which Services this node implements: no Service port could be resolved from rules shown only in part (${partialRules})\n`);
    return ExitCode.CannotTell;
  }
  // The API's Services kube-proxy programs nothing for (headless, ExternalName…): explained, not missing.
  const intent = snapshot.api ? intendedDataplane(snapshot.api, snapshot) : undefined;
  const withoutRules: readonly ServiceWithoutRules[] = intent?.withoutRules ?? [];
  // Without a selector: only where the evidence shows the selector (a table without -o wide does not).
  const selectorless = intent?.ports.filter((p) => p.service.selector === null && knows(p.service, 'selector')) ?? [];
  const apiGiven = snapshot.api !== undefined;
  // Connection counts per endpoint for the detail view, while the conntrack tables are still held.
  const tables = snapshot.conntrack?.tables ?? [];
  // A --service that names nothing here: the near misses, and the same exit as every command's miss —
  // unless the evidence is not whole, when "nothing here" cannot be told (exit 3).
  if (opts.service && !res.services.some(serviceSelector(opts.service)) && !withoutRules.some(selectWithoutRules(opts))) {
    if (partial.length > 0) return cannotTellService(opts.service, partial);
    return reportNoMatch(noMatchFor(parseTargetArg(opts.service, '--service'), res, snapshot!), opts);
  }
  const connections = opts.service && tables.length > 0 && opts.output !== 'json' ? new Map(res.services.filter(serviceSelector(opts.service)).map((s) => [s, connectionsOf(tables, s, snapshot!)])) : undefined;
  const judgementOf = node.judgementOf;
  // The judgement holds the snapshot: what is printed was taken from it above.
  node = undefined;
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
      // What the answer rests on, said once: partial evidence, stale rules, leftovers, second views.
      judgement: nodeJson,
      ...(apiGiven ? { withoutRules: withoutRules.filter(selectWithoutRules(opts)).map(withoutRulesJson) } : {}),
    };
    // Each Service port is turned into its printed form a slice at a time (see writeJson).
    if (opts.output === 'json') writeJson(parts, (text) => writeJsonOut(text), { services: (s: ServicePort) => serviceJson(s, withEvidence, judgementOf(s)) });
    else writeJsonOut(renderYaml({ ...parts, services: parts.services.map((s) => serviceJson(s, withEvidence, judgementOf(s))) }));
  }
  else if (opts.service) {
    if (services.length === 0) {
      const explained = withoutRules.filter(selectWithoutRules(opts));
      if (explained.length === 0 && partial.length > 0) return cannotTellService(opts.service, partial);
      if (explained.length === 0) throw new UsageError(`no Service matches ${opts.service}`);
      writeText(`${stale ? `${stale}\n` : ''}${explained.map((w) => `${explainWithoutRules(w)}\n`).join('')}`);
      return ExitCode.Ok;
    }
    // A Service without a selector: where its endpoints come from (or why there are none), from the API.
    const selectorNotes = [...new Set(services.map((s) => selectorless.find((p) => p.namespace === s.namespace && p.name === s.name)).filter((p) => p !== undefined).map(explainSelectorless))];
    writeText(`${stale ? `${stale}\n` : ''}${services.map((s) => renderServiceDetail(s, c, connections?.get(s), judgementOf(s))).join('\n')}${selectorNotes.map((n) => `${n}\n`).join('')}`);
  } else {
    const explained = withoutRules.filter(selectWithoutRules(opts));
    const apiNotes = explained.length ? `\nWithout dataplane rules (from the API's objects):\n${explained.map((w) => `  ${explainWithoutRules(w)}\n`).join('')}` : '';
    writeText(`${stale ? `${stale}\n` : ''}${renderServicesTable(filtered, c, { width: outputWidth(), wide: opts.output === 'wide', judgementOf })}${apiNotes}`, { fit: opts.output !== 'wide' });
  }
  // Cannot tell: every Service port shown is unknown (documented in exit.ts) — unless unknown ones were asked for.
  if (!opts.state && services.length > 0 && services.every((s) => s.state === 'unknown')) return ExitCode.CannotTell;
  return ExitCode.Ok;
}

/** `--service X` named nothing, and the evidence is not whole: "nothing here" cannot be told (exit 3). */
function cannotTellService(service: string, partial: ReturnType<typeof partialEvidence>): number {
  process.stderr.write(`kpx: cannot tell whether ${printable(service, 200)} is here: no Service matches it, and the evidence cannot show there is none: ${partial.slice(0, 3).map(evidenceText).join('; ')}\n`);
  return ExitCode.CannotTell;
}
