/**
 * The report's first answer: its problems. Two sources, read and never recomputed: the judgement's
 * verdicts that are not healthy (one problem per Service port, unhealthy first as `services`
 * orders them, with the lint findings about that Service port under it), then the lint findings
 * about anything else (errors, warnings, info; each with its dump line).
 */
import type { NodeJudgement } from '../../judge/index.js';
import { servicePortName } from '../../kube/hash.js';
import type { ServicePort } from '../../kube/types.js';
import { severityRank, type Finding } from '../../lint/rule.js';
import type { LintResult } from '../../lint/run.js';
import { portsText, reasonText, serviceLabel, unhealthyFirst } from '../services.js';
import { appendAll } from '../../source/index.js';
import type { EvidenceIndex } from './evidence.js';
import { plural, type Block, type Inline, type ListItem } from './model.js';
import { evidenceLinks, verdictWords } from './services.js';

export interface Problems {
  /** Service ports whose judged state is not healthy, unhealthy first. */
  readonly unhealthy: readonly ServicePort[];
  /** Lint findings about each Service port touched (under an unhealthy one's problem, and in every one's section). */
  readonly findingsOf: ReadonlyMap<ServicePort, readonly Finding[]>;
  /** Lint findings about no unhealthy Service port: problems of their own. */
  readonly standalone: readonly Finding[];
  /** The Service ports the problems touch: the unhealthy ones, then those the standalone findings name. */
  readonly touched: readonly ServicePort[];
}

/** How lint names a Service port (LintContext.serviceLabel): `ns/name:port`, or the resolver's id. */
const lintLabel = (s: ServicePort) => (s.namespace !== null && s.name !== null ? servicePortName(s.namespace, s.name, s.portName) : s.id);

export function problemsOf(node: NodeJudgement, lint: LintResult | null): Problems {
  const services = node.resolution.services;
  const unhealthy = unhealthyFirst(services).filter((s) => s.state !== 'healthy');
  const bad = new Set(unhealthy);
  const byLabel = new Map<string, ServicePort[]>();
  for (const s of services) {
    const l = lintLabel(s);
    const list = byLabel.get(l) ?? [];
    list.push(s);
    byLabel.set(l, list);
  }
  const findingsOf = new Map<ServicePort, Finding[]>();
  const standalone: Finding[] = [];
  const touched: ServicePort[] = [...unhealthy];
  const seen = new Set<ServicePort>(unhealthy);
  const findings = [...(lint?.findings ?? [])].sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  for (const f of findings) {
    const ports = f.service !== undefined ? (byLabel.get(f.service) ?? []) : [];
    const onBad = ports.filter((p) => bad.has(p));
    if (onBad.length) {
      for (const p of onBad) findingsOf.set(p, [...(findingsOf.get(p) ?? []), f]);
      continue;
    }
    standalone.push(f);
    // A healthy Service port a finding is about: touched, and the finding shown in its section too.
    for (const p of ports) {
      findingsOf.set(p, [...(findingsOf.get(p) ?? []), f]);
      if (seen.has(p)) continue;
      seen.add(p);
      touched.push(p);
    }
  }
  return { unhealthy, findingsOf, standalone, touched };
}

/** The anchor of a Service port shown in detail; undefined for one that is not (beyond the cap). */
export type AnchorOf = (s: ServicePort) => string | undefined;

/** A Service port's name, linked to its section when it has one. */
function serviceRef(s: ServicePort, anchorOf: AnchorOf): Inline {
  const id = anchorOf(s);
  return id === undefined ? serviceLabel(s) : { text: serviceLabel(s), href: `#${id}` };
}

/** A finding's dump lines: its own, then the related ones. */
const findingLines = (f: Finding) => [{ file: f.file, line: f.line, text: f.text }, ...(f.related ?? [])];

function serviceProblem(s: ServicePort, node: NodeJudgement, p: Problems, ev: EvidenceIndex, anchorOf: AnchorOf): ListItem {
  const j = node.judgementOf(s);
  const reason = reasonText(s, j);
  const cites = [...s.evidence, ...(j.unknown?.reasons ?? []).flatMap((r) => ('cites' in r ? r.cites : []))];
  const content: Inline[] = [{ text: j.state, cls: `verdict v-${j.state}` }, ' ', serviceRef(s, anchorOf), ` ${portsText(s)}${reason ? ` (${reason})` : ''}: ${verdictWords(s, j)}`];
  const links = evidenceLinks(ev, cites, 3, 'the Service’s section lists them');
  if (links.length) appendAll(content, [' — ', ...links]);
  const sub = (p.findingsOf.get(s) ?? []).map((f) => [`lint ${f.severity} [${f.ruleId}] ${f.message} — `, ...evidenceLinks(ev, findingLines(f), 3)]);
  return { content, sub, cls: 'problem service-problem' };
}

function findingProblem(f: Finding, ports: readonly ServicePort[], ev: EvidenceIndex, anchorOf: AnchorOf): ListItem {
  const content: Inline[] = [{ text: f.severity, cls: `sev sev-${f.severity}` }, ` [${f.ruleId}] `];
  const port = ports[0];
  if (port) content.push(serviceRef(port, anchorOf), ': ');
  content.push(f.message);
  const links = evidenceLinks(ev, findingLines(f), 4);
  appendAll(content, [' — ', ...(links.length ? links : [f.file])]);
  return { content, cls: 'problem lint-problem' };
}

/** The problems section: the count, what it is made of, and the list (at most `max` items). */
export function problemsSection(node: NodeJudgement, lint: LintResult | null, p: Problems, ev: EvidenceIndex, anchorOf: AnchorOf, max: number): Block {
  const total = p.unhealthy.length + p.standalone.length;
  const attached = new Set(p.unhealthy.flatMap((s) => p.findingsOf.get(s) ?? [])).size;
  const lintPart = lint ? `; lint: ${plural(lint.summary.error, 'error')}, ${plural(lint.summary.warning, 'warning')}, ${lint.summary.info} info${attached ? ` (${attached} of them under the Service they are about)` : ''}` : '; lint not run';
  const blocks: Block[] = [{ kind: 'heading', level: 2, text: `Problems (${total})`, id: 'problems-heading' }];
  blocks.push({ kind: 'paragraph', cls: 'summary', content: [`${plural(p.unhealthy.length, 'Service port')} not healthy${lintPart}.`] });
  if (total === 0) {
    blocks.push({ kind: 'paragraph', content: [lint ? 'No problems: every Service port is healthy and lint found nothing.' : 'Every Service port is healthy (lint was not run).'] });
    return { kind: 'section', id: 'problems', blocks };
  }
  const byLabel = new Map(node.resolution.services.map((s) => [lintLabel(s), s] as const));
  const items: ListItem[] = [];
  for (const s of p.unhealthy) {
    if (items.length === max) break;
    items.push(serviceProblem(s, node, p, ev, anchorOf));
  }
  for (const f of p.standalone) {
    if (items.length === max) break;
    const port = f.service !== undefined ? byLabel.get(f.service) : undefined;
    items.push(findingProblem(f, port ? [port] : [], ev, anchorOf));
  }
  blocks.push({ kind: 'list', ordered: true, cls: 'problems', items });
  if (total > items.length) blocks.push({ kind: 'paragraph', content: [`… and ${total - items.length} more: \`kpx services\` and \`kpx lint\` list them all.`] });
  return { kind: 'section', id: 'problems', blocks };
}
