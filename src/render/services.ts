/** Pure renderers for `kpx services`: a table, one Service in detail, and the JSON schema. */
import { elideStart, renderTable, type Cell, type Column } from './columns.js';
import { textWidth, wrapWords } from './width.js';
import type { Resolution, ServicePort, ServiceState } from '../kube/types.js';
import { stateReason } from '../kube/state-reason.js';
import { formatHostPort } from '../model/addr.js';
import { printable, appendAll } from '../source/index.js';
import type { Colors } from './colors.js';
import { problemText } from './problems.js';
import { terminalText } from './colors.js';
import type { NodeJudgement, ServiceJudgement } from '../judge/index.js';
import { caveatText, evidenceText, leftoversText, staleText, unknownJson, unknownText as unknownPartText } from './judgement.js';

export function serviceLabel(s: ServicePort): string {
  // Unnamed: the resolver's id (`VIP:port/proto`, `*:NODEPORT/proto`, `KUBE-SVC-…/proto`).
  if (s.namespace === null || s.name === null) return s.id;
  return `${s.namespace}/${s.name}${s.portName ? ':' + s.portName : ''}`;
}

export function serviceType(s: ServicePort): string {
  if (s.loadBalancerIPs.length) return 'LoadBalancer';
  if (s.nodePort !== null) return 'NodePort';
  if (s.clusterIP !== null) return 'ClusterIP';
  return s.externalIPs.length ? 'ExternalIP' : '?';
}

export function policySummary(s: ServicePort): string {
  const parts: string[] = [];
  if (s.externalTrafficPolicy === 'Local') parts.push('ext:Local');
  if (s.internalTrafficPolicy === 'Local') parts.push('int:Local');
  if (s.sessionAffinity) parts.push(`affinity ${s.sessionAffinity.timeoutSeconds ?? '?'}s`);
  if (s.loadBalancerSourceRanges.length) parts.push(`ranges ${s.loadBalancerSourceRanges.length}`);
  return parts.join(', ') || 'Cluster';
}

/** kubectl's PORT(S): `port[:nodePort]/PROTO`; an IPVS NodePort alone does not say its Service port. */
export function portsText(s: ServicePort): string {
  const port = s.port === 0 && s.clusterIP === null ? '<unknown>' : String(s.port);
  return `${port}${s.nodePort === null ? '' : `:${s.nodePort}`}/${s.protocol === null ? '<unknown>' : s.protocol.toUpperCase()}`;
}

/** `ns/name:port`, `ns/name:<unset>` for an unnamed port (as kubectl says it), `<unnamed>` when no dump names the Service. */
export function serviceName(s: ServicePort): string {
  if (s.namespace === null || s.name === null) return '<unnamed>';
  return `${s.namespace}/${s.name}:${s.portName ?? '<unset>'}`;
}


/** `3 (1 local)`: how many endpoints, and how many of them are on this node (when the dumps say). */
export function endpointSummary(s: ServicePort): string {
  const unresolved = s.unresolvedEndpoints?.length ?? 0;
  if (unresolved > 0) return `${s.endpoints.length + unresolved} (${unresolved} address${unresolved === 1 ? '' : 'es'} unknown)`;
  const n = s.endpoints.length;
  if (n === 0) return '0';
  let local = 0;
  let unknown = 0;
  for (const e of s.endpoints) {
    if (e.local === true) local++;
    else if (e.local === null) unknown++;
  }
  if (unknown === n) return String(n);
  return `${n} (${local} local${unknown ? `, ${unknown} unknown` : ''})`;
}

/** Every endpoint, `*` marking the local ones (the `-o wide` ENDPOINT-LIST). */
function endpointList(s: ServicePort): string {
  if (s.endpoints.length === 0) return '<none>';
  return s.endpoints.map((e) => formatHostPort(e.ip, e.port ?? undefined) + (e.local ? '*' : '')).join(',');
}

/** The Service port's own chains (sets, virtual servers), not its endpoints' (ENDPOINT-LIST has those). */
function serviceChains(s: ServicePort): string {
  const own = s.owned.filter((o) => o.role !== 'endpoint').map((o) => o.name);
  return own.length ? printable([...new Set(own)].join(','), 4096) : '<none>';
}

/** The REASON column: the judgement's (src/judge) when given, else the resolver's reading (stateReason). */
export function reasonText(s: ServicePort, j?: ServiceJudgement): string {
  const r = j ? (j.reason === null ? null : { code: j.reason, more: j.more }) : stateReason(s);
  return r === null ? '' : `${r.code}${r.more ? ` +${r.more}` : ''}`;
}

function stateCell(s: ServicePort, c: Colors): Cell {
  const paint = s.state === 'healthy' ? c.green : s.state === 'partial' || s.state === 'unknown' ? c.yellow : c.red;
  return { text: s.state, paint };
}

/** Unhealthy first: what stops traffic, then what may, then what kpx cannot tell, then healthy. */
const STATE_ORDER: readonly ServiceState[] = ['no-endpoints', 'no-local-endpoints', 'partial', 'unknown', 'healthy'];

/** The Service ports grouped by state in STATE_ORDER, each group in the resolver's order (linear, stable). */
export function unhealthyFirst(services: readonly ServicePort[]): ServicePort[] {
  const groups = new Map<ServiceState, ServicePort[]>(STATE_ORDER.map((st) => [st, []]));
  for (const s of services) groups.get(s.state)!.push(s);
  return STATE_ORDER.flatMap((st) => groups.get(st)!);
}

/**
 * The name, the address, the ports, the endpoints, and whether (and why not) it works. Names and
 * addresses are never cut (an SRE copies them into the next command): to fit a narrow terminal the
 * reason, then the endpoint count are left out (said below the table; `--service` and `-o wide`
 * show them), then a name too long for its column goes alone on its line.
 */
const COLUMNS: readonly Column[] = [
  { head: 'service', keep: true },
  { head: 'cluster-ip', keep: true },
  { head: 'port(s)' },
  { head: 'endpoints', drop: 2 },
  { head: 'state' },
  { head: 'reason', drop: 1 },
];

const WIDE_COLUMNS: readonly Column[] = [
  ...COLUMNS,
  { head: 'type' },
  { head: 'external-ip' },
  { head: 'policy' },
  { head: 'mode' },
  { head: 'identified-by' },
  { head: 'chains' },
  { head: 'endpoint-list' },
];

export interface TableOptions {
  /** The terminal's width (or 120); ignored with `wide`, which prints every cell whole. */
  readonly width: number;
  readonly wide?: boolean;
  /** The node's judgement of each Service port (its REASON); without it, the resolver's reading. */
  readonly judgementOf?: (s: ServicePort) => ServiceJudgement;
}

/** `kpx services`: one row per Service port, kubectl-style, unhealthy first. */
export function renderServicesTable(res: Resolution, c: Colors, opts: TableOptions): string {
  if (res.services.length === 0) return 'No Kubernetes Services found in these dumps.\n';
  const rows: Cell[][] = [];
  for (const s of unhealthyFirst(res.services)) {
    const row: Cell[] = [
      printable(serviceName(s), 253),
      s.clusterIP ?? '<none>',
      portsText(s),
      endpointSummary(s),
      stateCell(s, c),
      reasonText(s, opts.judgementOf?.(s)),
    ];
    if (opts.wide) {
      const external = [...s.externalIPs, ...s.loadBalancerIPs];
      row.push(
        serviceType(s),
        external.length ? external.join(',') : '<none>',
        policySummary(s).replace(/, /g, ','),
        s.mode,
        `${s.identifiedBy}${s.hashVerified === false ? ' (hash mismatch)' : ''}`,
        serviceChains(s),
        endpointList(s),
      );
    }
    rows.push(row);
  }
  const counts = new Map<string, number>();
  for (const s of res.services) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  const summary = STATE_ORDER.filter((st) => counts.has(st)).map((st) => `${counts.get(st)} ${st}`).join(', ');
  const { text: table, dropped } = renderTable(opts.wide ? WIDE_COLUMNS : COLUMNS, rows, { width: opts.wide ? Infinity : opts.width });
  const left = dropped.length ? `${dropped.join(' and ')} left out to fit ${opts.width} columns: -o wide shows every column.\n` : '';
  return `${table}${res.services.length} Service ports (${summary}).\n${left}`;
}

/** Conntrack entries of a Service port (kube/conntrack.ts connectionsOf), when a conntrack dump was given. */
export interface ServiceConnections {
  readonly perEndpoint: ReadonlyMap<string, number>;
  readonly elsewhere: number;
  readonly total: number;
}

function stateText(s: ServicePort, c: Colors): string {
  const cell = stateCell(s, c);
  return typeof cell === 'string' ? cell : cell.paint(cell.text);
}

/** `text` wrapped at spaces to the output's width (src/render/width.ts), each line starting with `indent`; nothing cut. */
function wrap(text: string, indent: string, first = indent): string[] {
  return wrapWords(text, indent, textWidth(), first);
}

/** `kpx services --service X`: one Service port with its endpoints, problems and every dump line it owns, fitted to the width (names never cut). */
export function renderServiceDetail(s: ServicePort, c: Colors, connections?: ServiceConnections, j?: ServiceJudgement): string {
  const lines: string[] = [];
  const reason = reasonText(s, j);
  lines.push(`${c.bold(printable(serviceName(s), 253))}  ${portsText(s)}  ${stateText(s, c)}${reason ? ` (${reason})` : ''}   ${s.mode} mode, IPv${s.family}`);
  if (s.namespace === null || s.name === null) lines.push(`  id               ${printable(s.id, 300)}`);
  if (s.clusterIP) lines.push(`  ClusterIP        ${formatHostPort(s.clusterIP, s.port)}`);
  if (s.nodePort !== null) lines.push(`  NodePort         ${s.nodePort}`);
  if (s.externalIPs.length) appendAll(lines, wrap(s.externalIPs.join(', '), ' '.repeat(19), '  externalIPs      '));
  if (s.loadBalancerIPs.length) appendAll(lines, wrap(s.loadBalancerIPs.join(', '), ' '.repeat(19), '  LoadBalancer     '));
  if (s.loadBalancerSourceRanges.length) appendAll(lines, wrap(s.loadBalancerSourceRanges.join(', '), ' '.repeat(19), '  source ranges    '));
  lines.push(`  policies         externalTrafficPolicy=${s.externalTrafficPolicy} internalTrafficPolicy=${s.internalTrafficPolicy}${s.sessionAffinity ? ` sessionAffinity=ClientIP (${s.sessionAffinity.timeoutSeconds === null ? 'timeout unknown' : `${s.sessionAffinity.timeoutSeconds}s`})` : ''}`);
  lines.push(`  identified by    ${s.identifiedBy}${s.hashVerified === true ? ' (chain hash verified)' : s.hashVerified === false ? c.red(' (chain hash MISMATCH)') : ''}`);
  lines.push(`  endpoints        ${endpointSummary(s)}${connections ? `   (conntrack: ${connections.total} entries to this Service port)` : ''}`);
  for (const e of s.endpoints) {
    const where = e.local === true ? 'local' : e.local === false ? 'remote' : 'locality unknown';
    const conns = connections ? `  ${connections.perEndpoint.get(`${e.ip}:${e.port ?? ''}`) ?? 0} conns` : '';
    const line = `    ${formatHostPort(e.ip, e.port ?? undefined).padEnd(24)} ${e.probability === null ? ' share?' : `${(e.probability * 100).toFixed(2).padStart(6)}%`}  ${where}${e.via ? `  via ${e.via}` : ''}${e.weight !== undefined ? `  weight ${e.weight}` : ''}${conns}`;
    lines.push(printable(line, 4096));
  }
  if (connections && connections.elsewhere > 0) lines.push(c.yellow(`    ${connections.elsewhere} conntrack entries go to no current endpoint (a gone pod, or never translated): see kpx lint`));
  for (const u of s.unresolvedEndpoints ?? []) lines.push(printable(`    ${'(address unknown)'.padEnd(24)} ${u.share === null ? ' share?' : `${(u.share * 100).toFixed(2).padStart(6)}%`}  via ${u.via} (not in the evidence)`, 4096));
  if (j?.unknown) appendAll(lines, wrap(printable(`unknown ${unknownPartText(j.unknown)}`, 4096), '      ', `  ${c.yellow('judgement')}  `));
  for (const cv of j?.caveats ?? []) appendAll(lines, wrap(printable(caveatText(cv), 4096), '      ', `  ${c.yellow(cv.code === 'rules-may-be-stale' ? 'stale' : 'note')}  `));
  if (s.problems.length) {
    lines.push(`  ${c.yellow('problems')}`);
    for (const p of s.problems) appendAll(lines, wrap(printable(problemText(p), 4096), '      ', '    - '));
  }
  lines.push(`  ${c.bold('evidence')}`);
  const seen = new Set<string>();
  const all = [...s.evidence, ...s.endpoints.flatMap((e) => e.evidence)].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  for (const e of all) {
    const key = `${e.file}:${e.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // The file's end (its name) and the line number say where; the rule is wrapped, not cut (its target is at the end).
    const at = `${elideStart(printable(e.file, 4096), 50)}:${e.line}`;
    const [first, ...rest] = wrap(printable(e.text, 4096), '        ', `    ${at}  `);
    lines.push(`    ${c.dim(at)}${first.slice(4 + at.length)}`);
    appendAll(lines, rest);
  }
  return terminalText(lines.join('\n') + '\n', c);
}

/**
 * One Service port in the stable JSON schema (docs/commands/services.md): evidence only with detail.
 * `services -o json` prints `{ services, others, problems }` with each Service port so.
 */
export function serviceJson(s: ServicePort, withEvidence: boolean, j?: ServiceJudgement): Record<string, unknown> {
  // owned, frontEnds and anchor are the typed forms of chains and the address fields.
  const { evidence, endpoints, owned: _owned, frontEnds: _frontEnds, anchor: _anchor, unresolvedEndpoints: _unresolved, problems, ...rest } = s;
  return {
    ...rest,
    problems: problems.map(problemText),
    endpoints: endpoints.map(({ evidence: epEvidence, ...e }) => (withEvidence ? { ...e, evidence: epEvidence } : e)),
    ...(withEvidence ? { evidence } : {}),
    // The judgement (src/judge): present when it says more than "healthy" (reason, unknown share, caveats).
    ...(j && (j.reason !== null || j.unknown !== null || j.caveats.length > 0) ? { judgement: serviceJudgementJson(j) } : {}),
  };
}

/** A Service port's judgement as JSON (docs/json.md): typed reasons and caveats, each with its words. */
export function serviceJudgementJson(j: ServiceJudgement): Record<string, unknown> {
  return {
    reason: j.reason,
    more: j.more,
    unknown: unknownJson(j.unknown),
    caveats: j.caveats.map((cv) => ({ ...cv, message: caveatText(cv) })),
  };
}

/** What a node's answers rest on, once per document: partial evidence, stale rules, leftovers, second views. */
export function nodeJudgementJson(node: NodeFacts): Record<string, unknown> {
  return {
    evidence: node.evidence.filter((e) => e.kind !== 'whole').map((e) => ({ ...e, message: evidenceText(e) })),
    stale: node.stale ? { ...node.stale, message: staleText(node.stale) } : null,
    leftovers: node.leftovers.map((l) => ({ ...l, message: leftoversText(l) })),
    secondViews: node.secondViews.map(({ lines: _lines, ...v }) => v),
    liveModes: node.liveModes,
  };
}

/** What the node's judgement says of the whole node, without the snapshot it holds (a result outlives the model). */
export type NodeFacts = Pick<NodeJudgement, 'evidence' | 'stale' | 'leftovers' | 'secondViews' | 'liveModes'>;
