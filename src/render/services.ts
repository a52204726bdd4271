/** Pure renderers for `kpx services`: a table, one Service in detail, and the JSON schema. */
import { renderTable } from './table.js';
import type { Resolution, ServicePort } from '../kube/types.js';
import { formatHostPort } from '../model/addr.js';
import { printable } from '../source/index.js';
import type { Colors } from './colors.js';
import { problemText } from './problems.js';

export function serviceLabel(s: ServicePort): string {
  if (s.namespace === null || s.name === null) return `(unnamed) ${formatHostPort(s.clusterIP ?? '?', s.port)}`;
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

function endpointList(s: ServicePort, max = 3): string {
  if (s.endpoints.length === 0) return '0';
  const shown = s.endpoints.slice(0, max).map((e) => formatHostPort(e.ip, e.port ?? undefined) + (e.local ? '*' : ''));
  return `${s.endpoints.length}: ${shown.join(' ')}${s.endpoints.length > max ? ' …' : ''}`;
}

function stateText(s: ServicePort, c: Colors): string {
  switch (s.state) {
    case 'healthy':
      return c.green('healthy');
    case 'partial':
      return c.yellow('partial');
    case 'unknown':
      return c.yellow('unknown');
    default:
      return c.red(s.state);
  }
}

export function renderServicesTable(res: Resolution, c: Colors): string {
  if (res.services.length === 0) return 'No Kubernetes Services found in these dumps.\n';
  const rows: string[][] = [];
  for (const s of res.services) {
    rows.push([
      printable(serviceLabel(s), 60),
      serviceType(s),
      `${formatHostPort(s.clusterIP ?? s.externalIPs[0] ?? s.loadBalancerIPs[0] ?? '-', s.port)}/${s.protocol}`,
      s.nodePort === null ? '' : String(s.nodePort),
      policySummary(s),
      endpointList(s),
      stateText(s, c),
    ]);
  }
  const counts = new Map<string, number>();
  for (const s of res.services) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  const summary = [...counts.entries()].map(([k, v]) => `${v} ${k}`).join(', ');
  const table = renderTable({ head: ['Service', 'type', 'VIP:port/proto', 'node port', 'policy', 'endpoints (* local)', 'state'] }, rows);
  return `${table}\n${res.services.length} Service ports (${summary}).\n`;
}

export function renderServiceDetail(s: ServicePort, c: Colors): string {
  const lines: string[] = [];
  lines.push(`${c.bold(printable(serviceLabel(s), 120))}  ${s.protocol}/${s.port}  ${stateText(s, c)}   (${s.mode} mode, IPv${s.family})`);
  if (s.clusterIP) lines.push(`  ClusterIP        ${formatHostPort(s.clusterIP, s.port)}`);
  if (s.nodePort !== null) lines.push(`  NodePort         ${s.nodePort}`);
  if (s.externalIPs.length) lines.push(`  externalIPs      ${s.externalIPs.join(', ')}`);
  if (s.loadBalancerIPs.length) lines.push(`  LoadBalancer     ${s.loadBalancerIPs.join(', ')}`);
  if (s.loadBalancerSourceRanges.length) lines.push(`  source ranges    ${s.loadBalancerSourceRanges.join(', ')}`);
  lines.push(`  policies         externalTrafficPolicy=${s.externalTrafficPolicy} internalTrafficPolicy=${s.internalTrafficPolicy}${s.sessionAffinity ? ` sessionAffinity=ClientIP (${s.sessionAffinity.timeoutSeconds === null ? 'timeout unknown' : `${s.sessionAffinity.timeoutSeconds}s`})` : ''}`);
  lines.push(`  identified by    ${s.identifiedBy}${s.hashVerified === true ? ' (chain hash verified)' : s.hashVerified === false ? c.red(' (chain hash MISMATCH)') : ''}`);
  lines.push(`  endpoints        ${s.endpoints.length}`);
  for (const e of s.endpoints) {
    lines.push(`    ${formatHostPort(e.ip, e.port ?? undefined).padEnd(24)} ${e.probability === null ? ' share?' : `${(e.probability * 100).toFixed(2).padStart(6)}%`}  ${e.local === true ? 'local' : e.local === false ? 'remote' : 'locality unknown'}${e.via ? `  via ${e.via}` : ''}${e.weight !== undefined ? `  weight ${e.weight}` : ''}`);
  }
  if (s.problems.length) {
    lines.push(`  ${c.yellow('problems')}`);
    for (const p of s.problems) lines.push(`    - ${printable(problemText(p), 200)}`);
  }
  lines.push(`  ${c.bold('evidence')}`);
  const seen = new Set<string>();
  const all = [...s.evidence, ...s.endpoints.flatMap((e) => e.evidence)].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  for (const e of all) {
    const key = `${e.file}:${e.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    lines.push(`    ${c.dim(`${printable(e.file, 80)}:${e.line}`)}  ${printable(e.text, 240)}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * One Service port in the stable JSON schema (README "JSON output"): evidence only with detail.
 * `services -o json` prints `{ services, others, problems }` with each Service port so.
 */
export function serviceJson(s: ServicePort, withEvidence: boolean): Record<string, unknown> {
  // owned, frontEnds and anchor are the typed forms of chains and the address fields.
  const { evidence, endpoints, owned: _owned, frontEnds: _frontEnds, anchor: _anchor, problems, ...rest } = s;
  return {
    ...rest,
    problems: problems.map(problemText),
    endpoints: endpoints.map(({ evidence: epEvidence, ...e }) => (withEvidence ? { ...e, evidence: epEvidence } : e)),
    ...(withEvidence ? { evidence } : {}),
  };
}
