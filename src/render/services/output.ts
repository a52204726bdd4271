/** `kpx services` (one node): its result, and the renderers of each -o format. */
import type { Resolution, ServicePort } from '../../kube/types.js';
import type { connectionsOf } from '../../kube/conntrack.js';
import type { ServiceWithoutRules, IntendedServicePort } from '../../kube/intent.js';
import type { ServiceJudgement } from '../../judge/index.js';
import { nodeJudgementJson, renderServiceDetail, renderServicesTable, serviceJson, type NodeFacts } from '../services.js';
import { nodeNotes } from '../judgement.js';
import { problemText } from '../problems.js';
import { explainSelectorless, explainWithoutRules, withoutRulesJson } from '../api.js';
import { writeJson } from '../json-stream.js';
import { renderYaml } from '../json.js';
import { SCHEMA_VERSION } from '../schemas/index.js';
import type { RenderContext, Rendered } from '../output.js';

export interface ServicesResult {
  readonly kind: 'services';
  /** table: every Service port; detail: the ports --service names; explained: --service named only Services without rules. */
  readonly view: 'table' | 'detail' | 'explained';
  /** The resolution with the Service ports the filters kept. */
  readonly shown: Resolution;
  readonly judgementOf: (s: ServicePort) => ServiceJudgement;
  readonly node: NodeFacts;
  /** The API's Services kube-proxy programs nothing for, as the filters keep them; undefined without API objects. */
  readonly withoutRules: readonly ServiceWithoutRules[] | undefined;
  /** The API's Service ports without a selector (detail view: where their endpoints come from). */
  readonly selectorless: readonly IntendedServicePort[];
  /** Connections per endpoint (detail view, from conntrack tables). */
  readonly connections: ReadonlyMap<ServicePort, ReturnType<typeof connectionsOf>> | undefined;
  /** JSON: each Service port with its evidence (--service). */
  readonly withEvidence: boolean;
}

function document(r: ServicesResult) {
  return {
    schemaVersion: SCHEMA_VERSION.services,
    services: r.shown.services,
    others: r.shown.others,
    problems: r.shown.problems.map((p) => ({ message: problemText(p.problem), evidence: p.evidence })),
    // What the answer rests on, said once: partial evidence, stale rules, leftovers, second views.
    judgement: nodeJudgementJson(r.node),
    ...(r.withoutRules ? { withoutRules: r.withoutRules.map(withoutRulesJson) } : {}),
  };
}

export function servicesJson(r: ServicesResult): Rendered {
  // Each Service port is turned into its printed form a slice at a time (see writeJson).
  return { via: 'json', write: (sink) => writeJson(document(r), sink, { services: (s: ServicePort) => serviceJson(s, r.withEvidence, r.judgementOf(s)) }) };
}

export function servicesYaml(r: ServicesResult): Rendered {
  const parts = document(r);
  const text = renderYaml({ ...parts, services: parts.services.map((s) => serviceJson(s, r.withEvidence, r.judgementOf(s))) });
  return { via: 'json', write: (sink) => sink(text) };
}

function staleHead(r: ServicesResult): string {
  const notes = nodeNotes(r.node);
  return notes.length ? `${notes.join('\n')}\n` : '';
}

function detailText(r: ServicesResult, ctx: RenderContext): string {
  const services = r.shown.services;
  // A Service without a selector: where its endpoints come from (or why there are none), from the API.
  const selectorNotes = [...new Set(services.map((s) => r.selectorless.find((p) => p.namespace === s.namespace && p.name === s.name)).filter((p) => p !== undefined).map(explainSelectorless))];
  return `${staleHead(r)}${services.map((s) => renderServiceDetail(s, ctx.c, r.connections?.get(s), r.judgementOf(s))).join('\n')}${selectorNotes.map((n) => `${n}\n`).join('')}`;
}

/** text and wide: the table (wide: more columns, nothing cut), or the detail of the ports --service names. */
export function servicesText(wide: boolean): (r: ServicesResult, ctx: RenderContext) => Rendered {
  return (r, ctx) => {
    const explained = r.withoutRules ?? [];
    if (r.view === 'explained') return { via: 'text', text: `${staleHead(r)}${explained.map((w) => `${explainWithoutRules(w)}\n`).join('')}` };
    if (r.view === 'detail') return { via: 'text', text: detailText(r, ctx) };
    const apiNotes = explained.length ? `\nWithout dataplane rules (from the API's objects):\n${explained.map((w) => `  ${explainWithoutRules(w)}\n`).join('')}` : '';
    return { via: 'text', text: `${staleHead(r)}${renderServicesTable(r.shown, ctx.c, { width: ctx.width, wide, judgementOf: r.judgementOf })}${apiNotes}`, fit: !wide };
  };
}
