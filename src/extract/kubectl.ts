/**
 * kubectl's text output → the API's objects, as PARTIAL objects (issue 30): exactly what the text
 * shows, each object and endpoint cited at its line. The fields a form shows are in the object's
 * `text.shows`; every other field holds a placeholder that intent and drift never conclude from.
 *
 * What each form shows is kubectl's own printing (k8s.io/kubernetes
 * pkg/printers/internalversion/printers.go for `get`, k8s.io/kubectl pkg/describe/describe.go for
 * `describe`; grammars/kubectl/README.md lists the columns and fields):
 *
 *  - `get svc`: name, type, the first cluster IP, the external addresses (clipped at 16 characters
 *    for a LoadBalancer without -o wide), each port's number, NodePort and protocol; `-o wide` adds
 *    the selector. Port names, target ports, traffic policies, affinity, source ranges: unknown.
 *  - `get ep`: the READY addresses only, at most three, then `+ N more...`: never the whole set.
 *  - `get endpointslices`: addresses (ready or not: not said), port numbers; not the Service.
 *  - `get pods -o wide`: each pod's IP and node. `get nodes -o wide`: internal/external IPs.
 *  - `describe` (./kubectl-describe.ts): nearly all of a Service; an Endpoints object whole.
 *
 * Which Services a listing holds whole (so that one it lacks is really absent) follows from the
 * command the paste shows: `get svc -A` or `-n NS`, not filtered (`| grep`, `-l`, names), not
 * elided. Without a command nothing is known whole.
 */
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { parseKubectlText, type KubectlTable, type KubectlRow, type Span } from '../../grammars/kubectl/index.js';
import { kubectlRequest, type KubectlRequest } from '../../grammars/common/command.js';
import { splitInput } from '../../grammars/common/text.js';
import { diagnostic, printable } from '../source/index.js';
import type { ApiEndpoint, ApiEndpointSlice, ApiNode, ApiObjects, ApiPod, ApiService, ApiServiceField, ApiSliceField, ApiWhere } from '../model/k8s-api.js';
import { endpointListOf, ipOf, isNone, kindAndName, labelsOf, portsOf, serviceTypeOf, where } from './kubectl-values.js';
import { readDescribeBlock } from './kubectl-describe.js';
import type { KubectlCollector } from './kubectl-collector.js';

/** The Service fields every text form shows (name and ports' numbers and protocols are in every form). */
const SERVICE_TABLE_SHOWS: readonly ApiServiceField[] = [];

export function extractKubectl(text: string, file: string): ParsedInput<ApiObjects> {
  const doc = parseKubectlText(text, file);
  const c: KubectlCollector = { file, services: [], slices: [], nodes: [], pods: [], diagnostics: [...doc.diagnostics], covered: new Set(), ignored: new Map() };
  for (const t of doc.tables) readTable(c, t);
  const lines = doc.blocks.length ? splitInput(text).lines : [];
  for (const b of doc.blocks) readDescribeBlock(c, b, lines);
  for (const e of doc.empty) {
    // `No resources found in NS namespace.` after `get svc`: that namespace has no Service at all.
    const req = e.command ? kubectlRequest(e.command.command) : undefined;
    if (req?.verb === 'get' && req.kinds.includes('service') && !req.selected && req.names.length === 0 && !e.command!.command.filtered) {
      const ns = e.namespace ?? req.namespace;
      if (ns) c.covered.add(ns);
    }
  }
  for (const [kind, { count, line }] of c.ignored) {
    const what = kind.startsWith('columns ') ? `${count} ${count === 1 ? 'row' : 'rows'} of a table with ${kind}` : `${count} ${kind} ${count === 1 ? 'row' : 'rows'}`;
    c.diagnostics.push(diagnostic('info', 'k8s/ignored-kind', `${what} ignored (kpx reads Services, Endpoints, EndpointSlices, Pods and Nodes)`, file, line, 1));
  }
  const data: ApiObjects = { files: [file], services: c.services, slices: c.slices, nodes: c.nodes, pods: c.pods, serviceNamespaces: [...c.covered].sort() };
  const endpoints = c.slices.reduce((n, s) => n + s.endpoints.length, 0);
  return {
    format: 'kubectl',
    file,
    data,
    diagnostics: c.diagnostics,
    variant: [doc.tables.length ? 'tables' : '', doc.blocks.length ? 'describe' : ''].filter(Boolean).join(', ') || undefined,
    counts: { services: c.services.length, endpointslices: c.slices.length, endpoints, nodes: c.nodes.length, pods: c.pods.length },
  };
}

/** The cell under the first of these column names, if the table has one. */
function cell(t: KubectlTable, row: KubectlRow, ...names: string[]): Span | undefined {
  for (const n of names) {
    const i = t.columns.findIndex((c) => c.text === n);
    if (i >= 0) return row.cells[i];
  }
  return undefined;
}
const has = (t: KubectlTable, ...names: string[]) => names.some((n) => t.columns.some((c) => c.text === n));

/** Which kind of object a table lists, from its columns (the command, when shown, agrees). */
function tableKind(t: KubectlTable): string {
  if (has(t, 'ENDPOINTS') && has(t, 'ADDRESSTYPE', 'ADDRESS TYPE')) return 'endpointslice';
  if (has(t, 'ENDPOINTS')) return 'endpoints';
  if (has(t, 'PORT(S)') && has(t, 'CLUSTER-IP', 'CLUSTER_IP', 'IP(S)', 'TYPE')) return 'service';
  if (has(t, 'READY') && has(t, 'RESTARTS')) return 'pod';
  if (has(t, 'STATUS') && has(t, 'VERSION') && !has(t, 'READY')) return 'node';
  const req = t.command ? kubectlRequest(t.command.command) : undefined;
  return req?.kinds[0] ?? `columns ${t.columns.map((c) => c.text).join(', ')}`;
}

function readTable(c: KubectlCollector, t: KubectlTable): void {
  const req = t.command ? kubectlRequest(t.command.command) : undefined;
  const kind = tableKind(t);
  let listed = 0;
  for (const row of t.rows) {
    const nameCell = cell(t, row, 'NAME');
    if (!nameCell) continue;
    const { kind: prefixed, name } = kindAndName(nameCell.text);
    const k = prefixed ? canonicalPrefix(prefixed) : kind;
    const at = where(c.file, row.line, nameCell.column, row.text.trim());
    const ns = namespaceOf(t, row, req);
    if (k === 'service') {
      const s = serviceOfRow(c, t, row, name, ns, at, req);
      if (s) c.services.push(s);
      listed++;
    } else if (k === 'endpoints') c.slices.push(endpointsOfRow(c, t, row, name, ns, at));
    else if (k === 'endpointslice') c.slices.push(sliceOfRow(c, t, row, name, ns, at));
    else if (k === 'pod') c.pods.push(podOfRow(t, row, name, ns, at));
    else if (k === 'node') c.nodes.push(nodeOfRow(t, row, name, at));
    else {
      const prev = c.ignored.get(k);
      c.ignored.set(k, { count: (prev?.count ?? 0) + 1, line: prev?.line ?? row.line });
    }
  }
  if (kind === 'service' && listed > 0) noteCoverage(c, t, req);
}

/** `service`, `svc` → service; `pod` → pod; other `kind.group` prefixes stay as written. */
function canonicalPrefix(p: string): string {
  const k = p.split('.')[0];
  return k === 'svc' || k === 'service' ? 'service' : k === 'pod' ? 'pod' : k === 'node' ? 'node' : k === 'endpoints' || k === 'ep' ? 'endpoints' : k === 'endpointslice' ? 'endpointslice' : p;
}

/** The row's namespace: its NAMESPACE cell, else the command's `-n`; null when neither says. */
function namespaceOf(t: KubectlTable, row: KubectlRow, req: KubectlRequest | undefined): string | null {
  const ns = cell(t, row, 'NAMESPACE')?.text;
  if (ns && !isNone(ns)) return ns;
  return req?.namespace && req.namespace !== '*' ? req.namespace : null;
}

/** A `get svc` listing covers its namespace whole when the command says which and nothing was left out. */
function noteCoverage(c: KubectlCollector, t: KubectlTable, req: KubectlRequest | undefined): void {
  if (!req || req.verb !== 'get' || !t.command || t.command.command.filtered || req.selected || req.names.length > 0 || t.elided) return;
  if (!req.kinds.includes('service') && !req.kinds.includes('all')) return;
  if (req.namespace) c.covered.add(req.namespace);
}

function serviceOfRow(c: KubectlCollector, t: KubectlTable, row: KubectlRow, name: string, ns: string | null, at: ApiWhere, req: KubectlRequest | undefined): ApiService | undefined {
  const shows = new Set<ApiServiceField>(SERVICE_TABLE_SHOWS);
  if (ns !== null) shows.add('namespace');
  const typeCell = cell(t, row, 'TYPE');
  const type = typeCell ? serviceTypeOf(typeCell.text) : undefined;
  if (type) shows.add('type');
  else if (typeCell) warn(c, row, typeCell, 'kubectl/bad-value', `Service ${name}: TYPE ${printable(typeCell.text, 30)} is not a Service type; its type is unknown`);
  const ipCell = cell(t, row, 'CLUSTER-IP', 'CLUSTER_IP', 'IP(S)');
  const clusterIP = clusterIpOf(c, row, ipCell, name);
  if (clusterIP !== undefined) shows.add('clusterIPs');
  const portsCell = cell(t, row, 'PORT(S)');
  const ports = portsCell ? portsOf(portsCell.text) : undefined;
  if (portsCell && !ports) warn(c, row, portsCell, 'kubectl/bad-value', `Service ${name}: PORT(S) ${printable(portsCell.text, 40)} cannot be read; its ports are unknown`);
  const selectorCell = cell(t, row, 'SELECTOR');
  const selector = selectorCell ? labelsOf(selectorCell.text) : undefined;
  if (selector) shows.add('selector');
  const external = externalOf(cell(t, row, 'EXTERNAL-IP', 'EXTERNAL_IP'), type, shows, req?.output === 'wide');
  const labels = cell(t, row, 'LABELS');
  const labelMap = labels ? labelsOf(labels.text) : undefined;
  if (labelMap) shows.add('labels');
  return {
    namespace: ns ?? 'default',
    name,
    // A NodePort in PORT(S) says the type is at least NodePort when the table has no TYPE column.
    type: type ?? (ports?.some((p) => p.nodePort !== null) ? 'NodePort' : 'ClusterIP'),
    clusterIP: clusterIP ?? null,
    clusterIPs: clusterIP && clusterIP !== 'None' ? [clusterIP] : [],
    ports: (ports ?? []).map((p) => ({ name: null, protocol: p.protocol, port: p.port, nodePort: p.nodePort, targetPort: null })),
    selector: selector && Object.keys(selector).length > 0 ? selector : null,
    externalName: type === 'ExternalName' ? (cell(t, row, 'EXTERNAL-IP', 'EXTERNAL_IP')?.text ?? null) : null,
    externalIPs: external.externalIPs,
    loadBalancerIPs: external.loadBalancerIPs,
    loadBalancerSourceRanges: [],
    externalTrafficPolicy: 'Cluster',
    internalTrafficPolicy: 'Cluster',
    sessionAffinitySeconds: null,
    trafficDistribution: null,
    healthCheckNodePort: null,
    serviceProxyName: labelMap?.['service.kubernetes.io/service-proxy-name'] ?? null,
    where: at,
    text: { form: t.markdown ? 'markdown table' : req?.output === 'wide' ? 'kubectl get -o wide' : 'kubectl get', shows },
  };
}

/** CLUSTER-IP: an address, `None` (headless), `<none>` (none); undefined when unreadable (redacted). */
function clusterIpOf(c: KubectlCollector, row: KubectlRow, ipCell: Span | undefined, name: string): string | null | undefined {
  if (!ipCell) return undefined;
  if (ipCell.text === 'None') return 'None';
  if (isNone(ipCell.text)) return null;
  const ip = ipOf(ipCell.text);
  if (ip === undefined) warn(c, row, ipCell, 'kubectl/bad-value', `Service ${name}: cluster IP ${printable(ipCell.text, 30)} cannot be read (redacted?); it is unknown`);
  return ip;
}

/**
 * printers.go getServiceExternalIP: external IPs for ClusterIP/NodePort; load-balancer ingress
 * addresses then external IPs for LoadBalancer (clipped to 16 characters, `...`, without -o wide);
 * `<pending>` when it has none. Whole only when nothing was clipped and every address was read.
 */
function externalOf(cellSpan: Span | undefined, type: string | undefined, shows: Set<ApiServiceField>, wide: boolean): { externalIPs: string[]; loadBalancerIPs: string[] } {
  const none = { externalIPs: [], loadBalancerIPs: [] };
  if (!cellSpan || type === undefined || type === 'ExternalName') return none;
  const text = cellSpan.text;
  if (/^<?pending>?$/i.test(text) || isNone(text)) {
    shows.add('externalAddresses');
    if (type !== 'LoadBalancer') shows.add('externalIPs');
    if (type === 'LoadBalancer' && /pending/i.test(text)) {
      shows.add('externalIPs');
      shows.add('loadBalancerIPs');
    }
    return none;
  }
  if (text.endsWith('...') && !wide) return none;
  const parts = text.split(',').map((p) => p.trim());
  const ips = parts.map(ipOf).filter((x): x is string => x !== undefined);
  if (ips.length !== parts.length) return none;
  shows.add('externalAddresses');
  if (type !== 'LoadBalancer') {
    shows.add('externalIPs');
    return { externalIPs: ips, loadBalancerIPs: [] };
  }
  // A LoadBalancer's column mixes ingress and external IPs: which is which is unknown.
  return { externalIPs: [], loadBalancerIPs: ips };
}

/** `get ep`: ready addresses only, at most three shown. */
function endpointsOfRow(c: KubectlCollector, t: KubectlTable, row: KubectlRow, name: string, ns: string | null, at: ApiWhere): ApiEndpointSlice {
  const epCell = cell(t, row, 'ENDPOINTS');
  const list = epCell ? endpointListOf(epCell.text) : { entries: [], hidden: 0, unreadable: 0 };
  if (epCell && list.unreadable > 0) warn(c, row, epCell, 'kubectl/bad-value', `Endpoints ${name}: ${list.unreadable} address(es) cannot be read (redacted?)`);
  // One cell lists `IP:port` for every port of every ready address (printers.go formatEndpoints): an address once.
  const ips = [...new Set(list.entries.map((e) => e.ip))];
  const endpoints: ApiEndpoint[] = ips.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: null }, nodeName: null, zone: null, hints: null, where: { ...at, column: epCell?.column ?? at.column } }));
  const ports = [...new Set(list.entries.map((e) => e.port).filter((p): p is number => p !== null))];
  const shows = new Set<ApiSliceField>(['serviceName', 'ready']);
  return {
    namespace: ns ?? 'default',
    name,
    serviceName: name,
    addressType: ips[0]?.includes(':') ? 'IPv6' : 'IPv4',
    ports: ports.map((port) => ({ name: null, protocol: 'tcp', port })),
    endpoints,
    fromEndpoints: true,
    where: at,
    text: { form: t.markdown ? 'markdown table' : 'kubectl get endpoints', shows, hidden: list.hidden + list.unreadable, wholeService: false },
  };
}

/** `get endpointslices`: addresses (readiness not shown), port numbers; the Service is not shown. */
function sliceOfRow(c: KubectlCollector, t: KubectlTable, row: KubectlRow, name: string, ns: string | null, at: ApiWhere): ApiEndpointSlice {
  const epCell = cell(t, row, 'ENDPOINTS');
  const list = epCell ? endpointListOf(epCell.text) : { entries: [], hidden: 0, unreadable: 0 };
  if (epCell && list.unreadable > 0) warn(c, row, epCell, 'kubectl/bad-value', `EndpointSlice ${name}: ${list.unreadable} address(es) cannot be read`);
  const typeText = cell(t, row, 'ADDRESSTYPE', 'ADDRESS TYPE')?.text;
  const portsText = cell(t, row, 'PORTS')?.text ?? '';
  const ports = portsText.replace(/\s*\+.*$/, '').split(',').map((p) => Number(p.trim())).filter((p) => Number.isInteger(p) && p > 0);
  return {
    namespace: ns ?? 'default',
    name,
    serviceName: null,
    addressType: typeText === 'IPv6' || typeText === 'FQDN' ? typeText : 'IPv4',
    ports: ports.map((port) => ({ name: null, protocol: 'tcp', port })),
    endpoints: list.entries.map((e) => ({ addresses: [e.ip], conditions: { ready: null, serving: null, terminating: null }, nodeName: null, zone: null, hints: null, where: { ...at, column: epCell?.column ?? at.column } })),
    fromEndpoints: false,
    where: at,
    text: { form: t.markdown ? 'markdown table' : 'kubectl get endpointslices', shows: new Set(), hidden: list.hidden + list.unreadable, wholeService: false },
  };
}

/** `get pods [-o wide]`: the pod's IP and node only with -o wide. */
function podOfRow(t: KubectlTable, row: KubectlRow, name: string, ns: string | null, at: ApiWhere): ApiPod {
  const ip = cell(t, row, 'IP')?.text;
  const node = cell(t, row, 'NODE')?.text;
  const status = cell(t, row, 'STATUS')?.text ?? null;
  const podIP = ip && !isNone(ip) ? ipOf(ip) : undefined;
  return { namespace: ns ?? 'default', name, nodeName: node && !isNone(node) ? node : null, podIPs: podIP ? [podIP] : [], phase: status, deleting: status === 'Terminating', where: at };
}

/** `get nodes [-o wide]`: the addresses only with -o wide. */
function nodeOfRow(t: KubectlTable, row: KubectlRow, name: string, at: ApiWhere): ApiNode {
  const addresses = [cell(t, row, 'INTERNAL-IP')?.text, cell(t, row, 'EXTERNAL-IP')?.text]
    .filter((a): a is string => a !== undefined && !isNone(a))
    .map(ipOf)
    .filter((a): a is string => a !== undefined);
  return { name, zone: null, addresses, podCIDRs: [], where: at };
}

function warn(c: KubectlCollector, row: KubectlRow, at: Span, code: string, message: string): void {
  c.diagnostics.push(diagnostic('warning', code, message, c.file, row.line, at.column, { found: printable(at.text, 40) }));
}

export const kubectlParser: FormatParser<ApiObjects> = { id: 'kubectl', parse: (text, file) => extractKubectl(text, file) };
