/** `kpx services` (one node): the Service ports this node's dataplane implements, filtered as asked. */
import { judgeSnapshot, partialEvidence, type NodeJudgement } from '../judge/index.js';
import { ExitCode, servicesWhollyUnknown } from '../judge/inputs.js';
import type { ServicePort } from '../kube/types.js';
import { connectionsOf } from '../kube/conntrack.js';
import { intendedDataplane, type ServiceWithoutRules } from '../kube/intent.js';
import { knows } from '../model/k8s-api.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { noMatchFor, parseTarget, targetSelects, type Target } from '../trace/target.js';
import { printable } from '../source/index.js';
import { partialRulesNote } from '../render/evidence.js';
import { evidenceText } from '../render/judgement.js';
import type { ServicesResult } from '../render/services/output.js';
import { loadAnswerable } from './answerable.js';
import { UsageError, type AppIO, type Outcome } from './io.js';

export interface ServicesQuery {
  readonly inputs: readonly string[];
  readonly service?: string;
  readonly namespace?: string;
  readonly state?: string;
  /** The answer is for people (text, wide): the detail view counts connections. */
  readonly forPeople: boolean;
}

export const STATES = ['healthy', 'no-endpoints', 'no-local-endpoints', 'partial', 'unknown'];

/** A target on the command line, or a usage error naming the flag it came from. */
export function targetArg(text: string, flag?: string): Target {
  const t = parseTarget(text);
  if (typeof t === 'string') throw new UsageError(flag ? `${flag} ${t}` : t);
  return t;
}

/** The Service ports `--service TARGET` names (the grammar of `kpx trace`: src/trace/target.ts). */
export function serviceSelector(sel: string): (s: ServicePort) => boolean {
  return targetSelects(targetArg(sel, '--service'));
}

/** The --namespace/--service filters applied to the API's Services without rules (named by ns/name only). */
function selectWithoutRules(q: Pick<ServicesQuery, 'namespace' | 'service' | 'state'>): (w: ServiceWithoutRules) => boolean {
  const t = q.service ? targetArg(q.service, '--service') : undefined;
  return (w) => !q.state && (!q.namespace || w.service.namespace === q.namespace) && (!t || (t.kind === 'service' && w.service.namespace === t.namespace && w.service.name === t.name));
}

/** "Cannot tell" once the Services are resolved: none resolved, from evidence that is not whole. */
function cannotTellNone(node: NodeJudgement, q: ServicesQuery, io: AppIO): boolean {
  const snapshot = node.snapshot;
  // "No Services" from evidence that is not whole (a grep, a cut dump) would be a claim of absence.
  const partial = partialEvidence(snapshot);
  if (partial.length > 0 && !snapshot.api) {
    io.notice(`kpx: cannot tell which Services this node implements: no Service was resolved, and the evidence cannot show there are none: ${partial.slice(0, 3).map(evidenceText).join('; ')}`);
    return true;
  }
  // Rules shown in part (an iptables -L listing of some chains): the judgement's listings (the tables' own
  // coverage, which the evidence kinds above do not judge: a listing of some chains is not a cut or a grep), with API objects too.
  const partialRules = partialRulesNote(node.listings);
  if (partialRules && !q.service) {
    io.notice(`kpx: cannot tell which Services this node implements: no Service port could be resolved from rules shown only in part (${partialRules})`);
    return true;
  }
  return false;
}

/** `--service X` named nothing, and the evidence is not whole: "nothing here" cannot be told (exit 3). */
function cannotTellService(service: string, partial: ReturnType<typeof partialEvidence>, io: AppIO): Outcome {
  io.notice(`kpx: cannot tell whether ${printable(service, 200)} is here: no Service matches it, and the evidence cannot show there is none: ${partial.slice(0, 3).map(evidenceText).join('; ')}`);
  return { exit: ExitCode.CannotTell };
}

export async function services(q: ServicesQuery, io: AppIO): Promise<Outcome> {
  if (q.state && !STATES.includes(q.state)) throw new UsageError(`--state ${q.state}: expected one of ${STATES.join(', ')}`);
  const loaded = await loadAnswerable(q.inputs, io, 'which Services this node implements');
  if ('outcome' in loaded) return loaded.outcome;
  const { snapshot } = loaded;
  const node = await judgeSnapshot(snapshot);
  if (node.resolution.services.length === 0 && cannotTellNone(node, q, io)) return { exit: ExitCode.CannotTell };
  return answer(snapshot, node, q, io);
}

/** The Service ports asked for, from a snapshot that can answer. */
function answer(snapshot: NodeSnapshot, node: NodeJudgement, q: ServicesQuery, io: AppIO): Outcome {
  const res = node.resolution;
  const partial = partialEvidence(snapshot);
  // The API's Services kube-proxy programs nothing for (headless, ExternalName…): explained, not missing.
  const intent = snapshot.api ? intendedDataplane(snapshot.api, snapshot) : undefined;
  const withoutRules = (intent?.withoutRules ?? []).filter(selectWithoutRules(q));
  // A --service that names nothing here: the near misses, and the same exit as every command's miss —
  // unless the evidence is not whole, when "nothing here" cannot be told (exit 3).
  const selects = q.service ? serviceSelector(q.service) : undefined;
  if (q.service && selects && !res.services.some(selects) && withoutRules.length === 0) {
    if (partial.length > 0) return cannotTellService(q.service, partial, io);
    const plan = noMatchFor(targetArg(q.service, '--service'), res, snapshot);
    return { result: { kind: 'no-match', plan }, exit: plan.code === 'services-unnamed' ? ExitCode.CannotTell : ExitCode.Error };
  }
  const shown = res.services.filter((s) => (!q.namespace || s.namespace === q.namespace) && (!q.state || s.state === q.state) && (!selects || selects(s)));
  // For people, --service with nothing left after --namespace/--state is a miss (JSON lists none).
  if (q.service && q.forPeople && shown.length === 0 && withoutRules.length === 0) {
    if (partial.length > 0) return cannotTellService(q.service, partial, io);
    throw new UsageError(`no Service matches ${q.service}`);
  }
  const result: ServicesResult = {
    kind: 'services',
    view: !q.service ? 'table' : shown.length ? 'detail' : 'explained',
    shown: { ...res, services: shown },
    judgementOf: node.judgementOf,
    node: { evidence: node.evidence, stale: node.stale, leftovers: node.leftovers, secondViews: node.secondViews, liveModes: node.liveModes },
    withoutRules: snapshot.api ? withoutRules : undefined,
    // Without a selector: only where the evidence shows the selector (a table without -o wide does not).
    selectorless: intent?.ports.filter((p) => p.service.selector === null && knows(p.service, 'selector')) ?? [],
    // Connection counts per endpoint for the detail view, while the conntrack tables are still held.
    connections: selects && q.forPeople && snapshot.conntrack?.tables.length ? new Map(res.services.filter(selects).map((s) => [s, connectionsOf(snapshot.conntrack!.tables, s, snapshot)])) : undefined,
    withEvidence: Boolean(q.service),
  };
  // Cannot tell: every Service port shown is unknown (src/judge/inputs.ts) — unless unknown ones were asked for.
  const exit = q.service && q.forPeople && shown.length === 0 ? ExitCode.Ok : servicesWhollyUnknown(shown, Boolean(q.state)) ? ExitCode.CannotTell : ExitCode.Ok;
  return { result, exit };
}
