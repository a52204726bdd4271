/**
 * The report's Services: for each Service port a problem touches, its verdict, where its traffic
 * goes with shares, its locality, the judgement's unknowns and caveats, the resolver's problems, the
 * lint findings about it and its evidence; then the remaining Services in one table. Every word
 * about a state is the judgement's (src/judge): the report reads it, never recomputes it.
 */
import type { ServiceJudgement } from '../../judge/index.js';
import type { Finding } from '../../lint/rule.js';
import type { Endpoint, ServicePort } from '../../kube/types.js';
import { degrades } from '../../kube/problems.js';
import { formatHostPort } from '../../model/addr.js';
import { problemText } from '../problems.js';
import { caveatText, unknownText } from '../judgement.js';
import { endpointSummary, policySummary, portsText, reasonText, serviceLabel, serviceType } from '../services.js';
import type { EvidenceIndex } from './evidence.js';
import { joinRich, plural, type Block, type Inline, type Rich } from './model.js';

/** Evidence links shown per Service (a Service with a thousand endpoints has thousands of lines). */
const MAX_LINKS = 60;

const pct = (p: number) => `${Number((p * 100).toFixed(2))}%`;

/** What the judged state means for new connections, in a sentence. */
export function verdictWords(s: ServicePort, j: ServiceJudgement): string {
  switch (j.state) {
    case 'healthy':
      return 'new connections go to its endpoints';
    case 'no-endpoints':
      return 'no endpoints: new connections to it get no destination';
    case 'no-local-endpoints':
      return `${localPolicies(s)} and no endpoint on this node: ${localScope(s)} gets no destination`;
    case 'partial':
      return j.unknown ? `part of its traffic goes where the evidence does not show: unknown ${unknownText(j.unknown)}` : 'part of its traffic goes where the evidence does not show';
    case 'unknown':
      return j.unknown ? `the evidence cannot tell where its traffic goes: unknown ${unknownText(j.unknown)}` : 'the evidence cannot tell where its traffic goes';
  }
}

/** `externalTrafficPolicy=Local`, `internalTrafficPolicy=Local`, or both. */
function localPolicies(s: ServicePort): string {
  const p = [s.externalTrafficPolicy === 'Local' ? 'externalTrafficPolicy=Local' : '', s.internalTrafficPolicy === 'Local' ? 'internalTrafficPolicy=Local' : ''].filter(Boolean);
  return p.length ? p.join(' and ') : 'a Local traffic policy';
}

/** Which traffic a Local policy confines to this node's endpoints. */
function localScope(s: ServicePort): string {
  const ext = s.externalTrafficPolicy === 'Local';
  const int = s.internalTrafficPolicy === 'Local';
  if (ext && int) return 'traffic arriving at this node, external or from its pods,';
  return int ? 'traffic from this node’s pods to the cluster IP' : 'external traffic (NodePort, LoadBalancer, external IPs) arriving at this node';
}

/**
 * The Service port's locality as the judgement states it: `no local endpoints` when its state is
 * no-local-endpoints, `unknown` when the evidence cannot tell its state or which node its
 * endpoints are on; else how many endpoints are on this node and which traffic a Local policy
 * keeps to them.
 */
export function localityText(s: ServicePort, j: ServiceJudgement): string {
  if (j.state === 'no-local-endpoints') return `${localPolicies(s)} and no local endpoints: ${localScope(s)} gets no destination`;
  if (j.state === 'unknown') return `unknown: the evidence is incomplete (${j.reason ?? 'evidence-missing'}${j.more ? ` +${j.more}` : ''})`;
  const unresolved = s.unresolvedEndpoints?.length ?? 0;
  const n = s.endpoints.length + unresolved;
  if (n === 0) return 'no endpoints: locality does not apply';
  const local = s.endpoints.filter((e) => e.local === true).length;
  const notSaid = s.endpoints.filter((e) => e.local === null).length;
  if (notSaid + unresolved === n) return `unknown: the dumps do not say which of the ${plural(n, 'endpoint')} run on this node`;
  const counts = `${local} of ${plural(n, 'endpoint')} on this node${notSaid ? `, ${notSaid} whose node the dumps do not say` : ''}${unresolved ? `, ${unresolved} whose address is unknown` : ''}`;
  const kept = s.externalTrafficPolicy === 'Local' || s.internalTrafficPolicy === 'Local';
  return kept ? `${localPolicies(s)}: ${localScope(s)} goes to the ${plural(local, 'local endpoint')} only; ${counts}` : `Cluster policy: ${counts}`;
}

/** Links to dump lines, each once (at most `max`, then how many more and where they all are). */
export function evidenceLinks(ev: EvidenceIndex, lines: readonly { file: string; line: number; text?: string }[], max = MAX_LINKS, rest = 'kpx lint lists them'): Inline[] {
  const unique = new Map<string, { file: string; line: number; text?: string }>();
  for (const l of lines) if (l.line > 0 && !unique.has(`${l.file}\u0000${l.line}`)) unique.set(`${l.file}\u0000${l.line}`, l);
  const all = [...unique.values()];
  const refs: Rich[] = [];
  for (const l of all.slice(0, max)) {
    const r = ev.cite(l.file, l.line, l.text);
    if (r) refs.push([r]);
  }
  if (all.length > max) refs.push([`and ${all.length - max} more (${rest})`]);
  return joinRich(refs);
}

/** Every dump line a Service port rests on: its own, its endpoints', the judgement's reasons and caveats. */
export function serviceLines(s: ServicePort, j: ServiceJudgement): { file: string; line: number; text?: string }[] {
  const out: { file: string; line: number; text?: string }[] = [...s.evidence];
  for (const e of s.endpoints) for (const x of e.evidence) out.push(x);
  for (const u of s.unresolvedEndpoints ?? []) for (const x of u.evidence) out.push(x);
  for (const r of j.unknown?.reasons ?? []) if ('cites' in r) for (const c of r.cites) out.push(c);
  for (const c of j.caveats) if (c.code === 'draining-real-servers') for (const x of c.cites) out.push(x);
  return out.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
}

const where = (e: Endpoint) => (e.local === true ? 'this node' : e.local === false ? 'another node' : 'not said');

/** Where new connections go: one row per endpoint with its share and node, then the endpoints whose address is unknown. */
function trafficTable(s: ServicePort, ev: EvidenceIndex): Block {
  const rows: Rich[][] = s.endpoints.map((e) => [
    [formatHostPort(e.ip, e.port ?? undefined)],
    [e.probability === null ? 'not in the evidence' : pct(e.probability)],
    [where(e)],
    [e.via ?? ''],
    evidenceLinks(ev, e.evidence, 3, 'the evidence row above lists them'),
  ]);
  for (const u of s.unresolvedEndpoints ?? []) rows.push([['(address unknown)'], [u.share === null ? 'not in the evidence' : pct(u.share)], ['not said'], [u.via], evidenceLinks(ev, u.evidence, 3, 'the evidence row above lists them')]);
  return { kind: 'table', cls: 'traffic', head: ['endpoint', 'share of new connections', 'node', 'via', 'evidence'], rows };
}

/** One Service port a problem touches, in detail. */
export function serviceSection(s: ServicePort, j: ServiceJudgement, id: string, ev: EvidenceIndex, findings: readonly Finding[]): Block {
  const reason = reasonText(s, j);
  const addresses = [s.clusterIP ? `cluster IP ${formatHostPort(s.clusterIP, s.port)}` : '', s.nodePort !== null ? `NodePort ${s.nodePort}` : '', ...s.externalIPs.map((x) => `external IP ${x}`), ...s.loadBalancerIPs.map((x) => `LoadBalancer IP ${x}`)].filter(Boolean);
  const rows: [string, Rich][] = [
    ['verdict', [{ text: j.state, cls: `verdict v-${j.state}` }, reason ? ` (${reason}) ` : ' ', verdictWords(s, j)]],
    ['addresses', [`${serviceType(s)} ${portsText(s)}: ${addresses.join(', ') || 'none in the evidence'}; ${s.mode} mode, IPv${s.family}`]],
    ['policy', [`${policySummary(s)} (externalTrafficPolicy=${s.externalTrafficPolicy}, internalTrafficPolicy=${s.internalTrafficPolicy})`]],
    ['locality', [{ text: localityText(s, j), cls: 'locality' }]],
    ['traffic', [s.endpoints.length || s.unresolvedEndpoints?.length ? `${endpointSummary(s)} endpoints; shares below` : 'no endpoint in this node’s rules']],
  ];
  if (j.unknown) rows.push(['unknown', [unknownText(j.unknown)]]);
  for (const c of j.caveats) rows.push([c.code === 'rules-may-be-stale' ? 'stale' : 'note', [caveatText(c)]]);
  for (const p of s.problems) rows.push([degrades(p) ? 'problem' : 'remark', [problemText(p)]]);
  for (const f of findings) rows.push([`lint ${f.severity}`, [`[${f.ruleId}] ${f.message} — `, ...evidenceLinks(ev, [{ file: f.file, line: f.line, text: f.text }, ...(f.related ?? [])], 5)]]);
  rows.push(['evidence', evidenceLinks(ev, serviceLines(s, j), MAX_LINKS, 'kpx services --service shows them all')]);
  const blocks: Block[] = [{ kind: 'heading', level: 3, text: `${serviceLabel(s)} ${portsText(s)} — ${j.state}` }, { kind: 'fields', rows }];
  if (s.endpoints.length || s.unresolvedEndpoints?.length) blocks.push(trafficTable(s, ev));
  return { kind: 'section', id, cls: 'service', blocks };
}

/** The Services no problem touches: one row each, no evidence (`kpx services --service` shows it). */
export function otherServicesTable(services: readonly ServicePort[], judgementOf: (s: ServicePort) => ServiceJudgement): Block {
  return {
    kind: 'table',
    cls: 'others',
    head: ['Service', 'type', 'address', 'endpoints', 'state', 'locality'],
    rows: services.map((s) => {
      const j = judgementOf(s);
      const addr = s.clusterIP ?? s.externalIPs[0] ?? s.loadBalancerIPs[0];
      const proto = s.protocol === null ? '<unknown>' : s.protocol.toUpperCase();
      return [[serviceLabel(s)], [serviceType(s)], [`${addr ? formatHostPort(addr, s.port) : `port ${s.port}`}/${proto}${s.nodePort !== null ? `, NodePort ${s.nodePort}` : ''}`], [endpointSummary(s)], [{ text: j.state, cls: `verdict v-${j.state}` }], [{ text: localityText(s, j), cls: 'locality' }]];
    }),
  };
}
