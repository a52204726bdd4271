/**
 * `kubectl describe service|endpoints|endpointslice|pod|node` → partial API objects. What each
 * describer prints is k8s.io/kubectl pkg/describe/describe.go (describeService,
 * describeEndpoints, describeEndpointSliceV1, describePod, describeNode); both layouts are read,
 * today's (values aligned with blanks, `IP Families:` …) and the old one (tab-separated, before
 * 1.20). A describe block is a list of top-level fields, each with the lines under it.
 *
 * What describe does NOT show, and so stays unknown: a Service's ClientIP timeout; an
 * EndpointSlice's serving/terminating conditions and hints; a node's zone unless its labels say.
 * Fields describe prints only when set (External IPs, LoadBalancer Source Ranges, HealthCheck
 * NodePort) are known absent when missing; the traffic policies only when printed.
 */
import type { DescribeBlock, DescribeLine } from '../../grammars/kubectl/index.js';
import { kubectlRequest } from '../../grammars/common/command.js';
import { diagnostic, printable, appendAll } from '../source/index.js';
import type { ApiEndpoint, ApiEndpointSlice, ApiServiceField, ApiServicePort, ApiSliceField, ApiTrafficPolicy, ApiWhere } from '../model/k8s-api.js';
import { endpointListOf, ipOf, isNone, labelsOf, protocolOf, serviceTypeOf, where } from './kubectl-values.js';
import type { KubectlCollector } from './kubectl-collector.js';

/** A top-level field and the lines under it. */
interface Field {
  readonly line: DescribeLine;
  readonly key: string;
  readonly value: string;
  readonly children: readonly DescribeLine[];
}

function fieldsOf(block: DescribeBlock): Field[] {
  const out: { line: DescribeLine; key: string; value: string; children: DescribeLine[] }[] = [];
  for (const l of block.lines) {
    if (l.key !== undefined && l.indent === 0 && !l.dash) out.push({ line: l, key: l.key, value: l.value ?? '', children: [] });
    else out[out.length - 1]?.children.push(l);
  }
  return out;
}

const first = (fields: readonly Field[], key: string) => fields.find((f) => f.key === key);

/** Which describer printed this block. */
function kindOf(fields: readonly Field[], block: DescribeBlock): string {
  const keys = new Set(fields.map((f) => f.key));
  if (keys.has('AddressType')) return 'endpointslice';
  if (keys.has('Subsets')) return 'endpoints';
  if (keys.has('Type') && (keys.has('IP') || keys.has('Port') || keys.has('Session Affinity') || keys.has('IPs'))) return 'service';
  if (keys.has('Node') && (keys.has('Containers') || keys.has('Start Time') || keys.has('IP'))) return 'pod';
  if (keys.has('Roles') || keys.has('Taints') || (keys.has('Addresses') && keys.has('Capacity'))) return 'node';
  const req = block.command ? kubectlRequest(block.command.command) : undefined;
  return req?.verb === 'describe' ? (req.kinds[0] ?? 'unknown') : 'unknown';
}

/** A field's value and its continuation lines (Labels on several lines). */
function multiline(f: Field | undefined): string[] {
  if (!f) return [];
  return [f.value, ...f.children.filter((c) => c.key === undefined).map((c) => c.text)].map((v) => v.trim()).filter((v) => v !== '' && !isNone(v));
}

function labelsField(f: Field | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of multiline(f)) {
    const i = l.indexOf('=');
    if (i > 0) out[l.slice(0, i)] = l.slice(i + 1);
  }
  return out;
}

export function readDescribeBlock(c: KubectlCollector, block: DescribeBlock, _lines: readonly string[]): void {
  const fields = fieldsOf(block);
  const nameField = first(fields, 'Name');
  const name = nameField?.value;
  if (!name) {
    c.diagnostics.push(diagnostic('warning', 'k8s/no-name', 'a describe block without its Name: line is skipped', c.file, block.line, 1));
    return;
  }
  const at = where(c.file, nameField!.line.line, nameField!.line.valueColumn ?? 1, nameField!.line.text);
  const ns = first(fields, 'Namespace')?.value || 'default';
  const kind = kindOf(fields, block);
  switch (kind) {
    case 'service':
      return describedService(c, fields, name, ns, at, Boolean(first(fields, 'Namespace')));
    case 'endpoints':
      return describedEndpoints(c, fields, name, ns, at);
    case 'endpointslice':
      return describedSlice(c, fields, name, ns, at);
    case 'pod':
      return describedPod(c, fields, name, ns, at);
    case 'node':
      return describedNode(c, fields, name, at);
    default: {
      const prev = c.ignored.get(kind);
      c.ignored.set(kind, { count: (prev?.count ?? 0) + 1, line: prev?.line ?? block.line });
    }
  }
}

/** `Port:  http  80/TCP` / `NodePort:  <unset>  30080/TCP`: the name and the number/protocol. */
function namedPort(value: string): { name: string | null; port: number; protocol: ApiServicePort['protocol'] } | undefined {
  const words = value.split(/\s+/);
  const m = /^(\d+)\/(\w+)$/.exec(words[words.length - 1] ?? '');
  const protocol = m ? protocolOf(m[2]) : undefined;
  if (!m || !protocol) return undefined;
  const n = words.length > 1 ? words[0] : '<unset>';
  return { name: /^<(unset|unnamed)>$/.test(n) ? null : n, port: Number(m[1]), protocol };
}

function describedService(c: KubectlCollector, fields: readonly Field[], name: string, ns: string, at: ApiWhere, nsShown: boolean): void {
  const shows = new Set<ApiServiceField>(['type', 'clusterIPs', 'portNames', 'targetPorts', 'selector', 'externalIPs', 'loadBalancerIPs', 'externalAddresses', 'loadBalancerSourceRanges', 'healthCheckNodePort', 'sessionAffinity', 'labels', 'trafficDistribution']);
  if (nsShown) shows.add('namespace');
  const type = serviceTypeOf(first(fields, 'Type')?.value ?? '') ?? 'ClusterIP';
  const ip = first(fields, 'IP')?.value ?? '';
  const ips = (first(fields, 'IPs')?.value ?? '').split(',').map((x) => x.trim()).filter((x) => x && !isNone(x));
  const clusterIP = ip === 'None' ? 'None' : isNone(ip) ? null : (ipOf(ip) ?? null);
  if (ip && clusterIP === null && !isNone(ip)) shows.delete('clusterIPs');
  const ports: ApiServicePort[] = [];
  const epFields: { port: ApiServicePort; field: Field }[] = [];
  for (const f of fields) {
    if (f.key === 'Port') {
      const p = namedPort(f.value);
      if (p) ports.push({ name: p.name, protocol: p.protocol, port: p.port, nodePort: null, targetPort: null });
      else c.diagnostics.push(diagnostic('warning', 'kubectl/bad-value', `Service ${name}: Port ${printable(f.value, 40)} cannot be read`, c.file, f.line.line, f.line.valueColumn ?? 1));
    } else if (ports.length > 0) {
      const last = ports[ports.length - 1];
      if (f.key === 'NodePort') ports[ports.length - 1] = { ...last, nodePort: namedPort(f.value)?.port ?? null };
      else if (f.key === 'TargetPort') ports[ports.length - 1] = { ...last, targetPort: targetPortOf(f.value) };
      else if (f.key === 'Endpoints') epFields.push({ port: last, field: f });
    }
  }
  const affinity = first(fields, 'Session Affinity')?.value;
  // On or off is shown; a ClientIP timeout is not (describe never prints it).
  if (affinity !== 'ClientIP') shows.add('sessionAffinityTimeout');
  const etp = policy(first(fields, 'External Traffic Policy')?.value);
  const itp = policy(first(fields, 'Internal Traffic Policy')?.value);
  if (etp || type === 'ClusterIP') shows.add('externalTrafficPolicy');
  if (itp) shows.add('internalTrafficPolicy');
  const labels = labelsField(first(fields, 'Labels'));
  const selector = labelsOf(multiline(first(fields, 'Selector')).join(',')) ?? {};
  const lbIngress = (first(fields, 'LoadBalancer Ingress')?.value ?? '').split(',').map((x) => ipOf(x.replace(/\(.*\)/, '').trim())).filter((x): x is string => x !== undefined);
  const list = (key: string) => (first(fields, key)?.value ?? '').split(',').map((x) => x.trim()).filter((x) => x && !isNone(x));
  c.services.push({
    namespace: ns,
    name,
    type,
    clusterIP,
    clusterIPs: ips.length ? ips.map((x) => ipOf(x) ?? x) : clusterIP && clusterIP !== 'None' ? [clusterIP] : [],
    ports,
    selector: Object.keys(selector).length ? selector : null,
    externalName: first(fields, 'External Name')?.value || null,
    externalIPs: list('External IPs').map((x) => ipOf(x) ?? x),
    loadBalancerIPs: lbIngress,
    loadBalancerSourceRanges: list('LoadBalancer Source Ranges'),
    externalTrafficPolicy: etp ?? 'Cluster',
    internalTrafficPolicy: itp ?? 'Cluster',
    // describe shows ClientIP but not its timeout: 10800 is a placeholder (sessionAffinityTimeout unknown).
    sessionAffinitySeconds: affinity === 'ClientIP' ? 10800 : null,
    trafficDistribution: first(fields, 'Traffic Distribution')?.value || null,
    healthCheckNodePort: Number(first(fields, 'HealthCheck NodePort')?.value) || null,
    serviceProxyName: labels['service.kubernetes.io/service-proxy-name'] ?? null,
    where: at,
    text: { form: 'kubectl describe', shows },
  });
  appendAll(c.slices, describedServiceEndpoints(c, epFields, name, ns, at));
}

const policy = (v: string | undefined): ApiTrafficPolicy | undefined => (v === 'Local' ? 'Local' : v === 'Cluster' ? 'Cluster' : undefined);
const targetPortOf = (v: string): number | string | null => {
  const t = v.split('/')[0];
  return /^\d+$/.test(t) ? Number(t) : t || null;
};

/**
 * describe's `Endpoints:` lines, one per Service port: that port's ready endpoints only (at most
 * three, then `+ N more...`). A slice per port, as an EndpointSlice holds the endpoints of its ports:
 * an address on one port's line is not said to serve the others.
 */
function describedServiceEndpoints(c: KubectlCollector, epFields: readonly { port: ApiServicePort; field: Field }[], name: string, ns: string, at: ApiWhere): ApiEndpointSlice[] {
  const shows = new Set<ApiSliceField>(['serviceName', 'portNames', 'protocols', 'ready']);
  return epFields.map(({ port, field }) => {
    const list = endpointListOf(field.value);
    const byIp = new Map<string, ApiEndpoint>();
    for (const e of list.entries) {
      if (!byIp.has(e.ip)) byIp.set(e.ip, { addresses: [e.ip], conditions: { ready: true, serving: true, terminating: null }, nodeName: null, zone: null, hints: null, where: where(c.file, field.line.line, field.line.valueColumn ?? 1, field.line.text) });
    }
    const ports = [{ name: port.name, protocol: port.protocol, port: list.entries[0]?.port ?? null }];
    const addressType = [...byIp.keys()][0]?.includes(':') ? 'IPv6' : 'IPv4';
    const text = { form: 'kubectl describe service' as const, shows, hidden: list.hidden + list.unreadable, wholeService: false };
    return { namespace: ns, name: `${name} (describe service${port.name ? ` ${port.name}` : ''})`, serviceName: name, addressType, ports, endpoints: [...byIp.values()], fromEndpoints: true, where: at, text };
  });
}

/** describe endpoints: every subset's ready and not-ready addresses and its ports. */
function describedEndpoints(c: KubectlCollector, fields: readonly Field[], name: string, ns: string, at: ApiWhere): void {
  const subsets = first(fields, 'Subsets')?.children ?? [];
  const groups: DescribeLine[][] = [];
  for (const l of subsets) {
    if (l.key === 'Addresses' || groups.length === 0) groups.push([]);
    groups[groups.length - 1].push(l);
  }
  const shows = new Set<ApiSliceField>(['serviceName', 'portNames', 'protocols', 'ready', 'notReady']);
  groups.forEach((g, gi) => {
    const endpoints: ApiEndpoint[] = [];
    for (const [key, ready] of [['Addresses', true], ['NotReadyAddresses', false]] as const) {
      const l = g.find((x) => x.key === key);
      for (const a of (l?.value ?? '').split(',').map((x) => x.trim()).filter((x) => x && !isNone(x))) {
        const ip = ipOf(a);
        if (ip === undefined) continue;
        endpoints.push({ addresses: [ip], conditions: { ready, serving: ready, terminating: null }, nodeName: null, zone: null, hints: null, where: where(c.file, l!.line, l!.valueColumn ?? 1, l!.text) });
      }
    }
    const ports = portTable(g);
    c.slices.push({ namespace: ns, name: `${name}-${gi}`, serviceName: name, addressType: endpoints[0]?.addresses[0].includes(':') ? 'IPv6' : 'IPv4', ports, endpoints, fromEndpoints: true, where: at, text: { form: 'kubectl describe endpoints', shows, hidden: 0, wholeService: true } });
  });
}

/** describe's small `Name  Port  Protocol` table (after its `----` line). */
function portTable(lines: readonly DescribeLine[]): { name: string | null; protocol: ApiServicePort['protocol']; port: number | null }[] {
  const out: { name: string | null; protocol: ApiServicePort['protocol']; port: number | null }[] = [];
  for (const l of lines) {
    if (l.key !== undefined) continue;
    const w = l.text.split(/\s+/);
    if (w.length !== 3 || w[0] === 'Name' || /^-+$/.test(w[0])) continue;
    const protocol = protocolOf(w[2]);
    if (!protocol) continue;
    out.push({ name: /^<(unset|unnamed)>$/.test(w[0]) ? null : w[0], protocol, port: /^\d+$/.test(w[1]) ? Number(w[1]) : null });
  }
  return out;
}

/** describe endpointslice: its ports, and each endpoint's addresses, Ready, NodeName and Zone. */
function describedSlice(c: KubectlCollector, fields: readonly Field[], name: string, ns: string, at: ApiWhere): void {
  const labels = labelsField(first(fields, 'Labels'));
  const endpoints: ApiEndpoint[] = [];
  let current: { addresses: string[]; ready: boolean | null; nodeName: string | null; zone: string | null; where: ApiWhere } | undefined;
  const flush = () => {
    if (current) endpoints.push({ addresses: current.addresses, conditions: { ready: current.ready, serving: null, terminating: null }, nodeName: current.nodeName, zone: current.zone, hints: null, where: current.where });
    current = undefined;
  };
  for (const l of first(fields, 'Endpoints')?.children ?? []) {
    if (l.key === 'Addresses') {
      flush();
      current = { addresses: (l.value ?? '').split(',').map((x) => ipOf(x.trim())).filter((x): x is string => x !== undefined), ready: null, nodeName: null, zone: null, where: where(c.file, l.line, l.valueColumn ?? 1, l.text) };
    } else if (current && l.key === 'Ready') current.ready = l.value === 'true' ? true : l.value === 'false' ? false : null;
    else if (current && l.key === 'NodeName') current.nodeName = isNone(l.value) ? null : (l.value ?? null);
    else if (current && l.key === 'Zone') current.zone = isNone(l.value) ? null : (l.value ?? null);
  }
  flush();
  const type = first(fields, 'AddressType')?.value;
  const shows = new Set<ApiSliceField>(['serviceName', 'portNames', 'protocols', 'ready', 'notReady', 'nodeName', 'zone']);
  c.slices.push({
    namespace: ns,
    name,
    serviceName: labels['kubernetes.io/service-name'] ?? null,
    addressType: type === 'IPv6' || type === 'FQDN' ? type : 'IPv4',
    ports: portTable(first(fields, 'Ports')?.children ?? []),
    endpoints: endpoints.filter((e) => e.addresses.length > 0),
    fromEndpoints: false,
    where: at,
    text: { form: 'kubectl describe endpointslice', shows, hidden: 0, wholeService: false },
  });
}

/** describe pod: `Node:  node01/192.168.1.2`, `IP:`, `IPs:`, `Status:`. */
function describedPod(c: KubectlCollector, fields: readonly Field[], name: string, ns: string, at: ApiWhere): void {
  const node = first(fields, 'Node')?.value ?? '';
  const ips = [first(fields, 'IP')?.value ?? '', ...(first(fields, 'IPs')?.children ?? []).map((l) => l.value ?? '')].map((x) => ipOf(x)).filter((x): x is string => x !== undefined);
  const status = first(fields, 'Status')?.value || null;
  c.pods.push({ namespace: ns, name, nodeName: isNone(node) ? null : node.split('/')[0], podIPs: [...new Set(ips)], phase: status, deleting: status === 'Terminating', where: at });
}

/** describe node: its addresses (`InternalIP:`, `ExternalIP:`), zone label and pod CIDRs. */
function describedNode(c: KubectlCollector, fields: readonly Field[], name: string, at: ApiWhere): void {
  const labels = labelsField(first(fields, 'Labels'));
  const addresses = (first(fields, 'Addresses')?.children ?? []).filter((l) => l.key === 'InternalIP' || l.key === 'ExternalIP').map((l) => ipOf(l.value ?? '')).filter((x): x is string => x !== undefined);
  const cidrs = (first(fields, 'PodCIDRs')?.value ?? first(fields, 'PodCIDR')?.value ?? '').split(',').map((x) => x.trim()).filter((x) => x && !isNone(x));
  c.nodes.push({ name, zone: labels['topology.kubernetes.io/zone'] ?? labels['failure-domain.beta.kubernetes.io/zone'] ?? null, addresses, podCIDRs: cidrs, where: at });
}
