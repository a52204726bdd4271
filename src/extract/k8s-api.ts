/**
 * `kubectl get svc,endpointslices,nodes,pods -A -o json|yaml` (a List, several `---` documents,
 * or single objects; legacy `Endpoints` too) → ApiObjects. JSON is YAML, so the `yaml` package
 * reads both, and its syntax tree gives every object its file:line:column.
 */
import { isMap, isSeq, LineCounter, parseAllDocuments, type Node as YamlNode } from 'yaml';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { noiseKind, splitInput } from '../../grammars/common/text.js';
import { commandOfLine, kubectlRequest, type PastedCommand } from '../../grammars/common/command.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';
import type {
  ApiEndpoint,
  ApiEndpointSlice,
  ApiNode,
  ApiObjects,
  ApiPod,
  ApiProtocol,
  ApiService,
  ApiServicePort,
  ApiTrafficPolicy,
  ApiWhere,
} from '../model/k8s-api.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const protocolOf = (v: unknown): ApiProtocol => (v === 'UDP' ? 'udp' : v === 'SCTP' ? 'sctp' : 'tcp');
const policyOf = (v: unknown): ApiTrafficPolicy => (v === 'Local' ? 'Local' : 'Cluster');

/** Paste noise (fences, prompts, heredoc ends) becomes blank lines, so line numbers stay the file's. */
function withoutNoise(lines: readonly string[]): string {
  return lines.map((l) => (/^\s*---/.test(l) || noiseKind(l) === undefined ? l : '')).join('\n');
}

interface Reader {
  readonly file: string;
  readonly lines: readonly string[];
  readonly counter: LineCounter;
  readonly diagnostics: Diagnostic[];
}

function whereOf(r: Reader, node: YamlNode | null | undefined): ApiWhere {
  const offset = node?.range?.[0] ?? 0;
  const { line, col } = r.counter.linePos(offset);
  return { file: r.file, line, column: col, text: r.lines[line - 1] ?? '' };
}

function warn(r: Reader, w: ApiWhere, code: string, message: string): void {
  r.diagnostics.push(diagnostic('warning', code, message, r.file, w.line, w.column));
}

/** The child node of a map node under `key` (for positions), or undefined. */
function child(node: YamlNode | null | undefined, key: string): YamlNode | undefined {
  if (!isMap(node)) return undefined;
  const v = node.get(key, true);
  return v && typeof v === 'object' && 'range' in v ? (v as YamlNode) : undefined;
}
function items(node: YamlNode | undefined): readonly (YamlNode | undefined)[] {
  return isSeq(node) ? node.items.map((x) => (x && typeof x === 'object' && 'range' in x ? (x as YamlNode) : undefined)) : [];
}

interface Collected {
  services: ApiService[];
  slices: ApiEndpointSlice[];
  nodes: ApiNode[];
  pods: ApiPod[];
  ignored: Map<string, number>;
}

function readObject(r: Reader, o: unknown, node: YamlNode | undefined, out: Collected): void {
  const at = whereOf(r, node);
  if (!isObj(o)) {
    if (o !== null && o !== undefined) warn(r, at, 'k8s/not-an-object', 'expected a Kubernetes object (a mapping with kind and apiVersion)');
    return;
  }
  const kind = str(o.kind);
  if (kind !== null && kind.endsWith('List') && Array.isArray(o.items)) {
    const nodes = items(child(node, 'items'));
    o.items.forEach((it, i) => readObject(r, it, nodes[i] ?? node, out));
    return;
  }
  const meta = obj(o.metadata);
  const name = str(meta.name);
  // Cite an object by its name line (`"name": "web",` / `name: web`), which says which object it is;
  // its first line is only `{` or `- apiVersion: v1`.
  const nameNode = child(child(node, 'metadata'), 'name');
  const w = nameNode ? whereOf(r, nameNode) : at;
  const namespace = str(meta.namespace) ?? 'default';
  if (kind === null) return warn(r, at, 'k8s/no-kind', 'this object has no `kind`: kpx cannot tell what it is');
  if (!['Service', 'EndpointSlice', 'Endpoints', 'Node', 'Pod'].includes(kind)) {
    out.ignored.set(kind, (out.ignored.get(kind) ?? 0) + 1);
    return;
  }
  if (name === null) return warn(r, w, 'k8s/no-name', `this ${kind} has no metadata.name; it is skipped`);
  switch (kind) {
    case 'Service':
      out.services.push(readService(r, namespace, name, meta, obj(o.spec), obj(o.status), node, w));
      break;
    case 'EndpointSlice':
      out.slices.push(readSlice(r, namespace, name, meta, o, node, w));
      break;
    case 'Endpoints':
      out.slices.push(...readEndpoints(namespace, name, o, node, r, w));
      break;
    case 'Node': {
      const labels = obj(meta.labels);
      const status = obj(o.status);
      const spec = obj(o.spec);
      const addresses = (Array.isArray(status.addresses) ? status.addresses : []).map((a) => str(obj(a).address)).filter((a): a is string => a !== null);
      const podCIDRs = strs(spec.podCIDRs).length ? strs(spec.podCIDRs) : strs([spec.podCIDR]);
      out.nodes.push({ name, zone: str(labels['topology.kubernetes.io/zone']) ?? str(labels['failure-domain.beta.kubernetes.io/zone']), addresses, podCIDRs, where: w });
      break;
    }
    case 'Pod': {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const podIPs = (Array.isArray(status.podIPs) ? status.podIPs : []).map((p) => str(obj(p).ip)).filter((p): p is string => p !== null);
      if (podIPs.length === 0 && str(status.podIP)) podIPs.push(str(status.podIP)!);
      out.pods.push({ namespace, name, nodeName: str(spec.nodeName), podIPs, phase: str(status.phase), deleting: str(meta.deletionTimestamp) !== null, where: w });
      break;
    }
  }
}

function readService(r: Reader, namespace: string, name: string, meta: Obj, spec: Obj, status: Obj, node: YamlNode | undefined, w: ApiWhere): ApiService {
  const type = spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ExternalName' ? spec.type : 'ClusterIP';
  const clusterIP = str(spec.clusterIP);
  const clusterIPs = strs(spec.clusterIPs).length ? strs(spec.clusterIPs) : clusterIP !== null ? [clusterIP] : [];
  const specNode = child(node, 'spec');
  const portNodes = items(child(specNode, 'ports'));
  const ports: ApiServicePort[] = [];
  (Array.isArray(spec.ports) ? spec.ports : []).forEach((p, i) => {
    const po = obj(p);
    const port = num(po.port);
    if (port === null) return warn(r, whereOf(r, portNodes[i] ?? specNode), 'k8s/bad-port', `Service ${namespace}/${name}: a port without a numeric \`port\` is skipped`);
    const tp = po.targetPort;
    ports.push({ name: str(po.name), protocol: protocolOf(po.protocol), port, nodePort: num(po.nodePort), targetPort: typeof tp === 'number' || typeof tp === 'string' ? tp : null });
  });
  const affinity = spec.sessionAffinity === 'ClientIP';
  const timeout = num(obj(obj(spec.sessionAffinityConfig).clientIP).timeoutSeconds);
  const ingress = Array.isArray(obj(status.loadBalancer).ingress) ? (obj(status.loadBalancer).ingress as unknown[]) : [];
  const labels = obj(meta.labels);
  return {
    namespace,
    name,
    type,
    clusterIP,
    clusterIPs,
    ports,
    selector: isObj(spec.selector) && Object.keys(spec.selector).length > 0 ? (Object.fromEntries(Object.entries(spec.selector).map(([k, v]) => [k, String(v)])) as Record<string, string>) : null,
    externalName: str(spec.externalName),
    externalIPs: strs(spec.externalIPs),
    loadBalancerIPs: ingress.map((i) => str(obj(i).ip)).filter((i): i is string => i !== null),
    loadBalancerSourceRanges: strs(spec.loadBalancerSourceRanges),
    externalTrafficPolicy: policyOf(spec.externalTrafficPolicy),
    internalTrafficPolicy: policyOf(spec.internalTrafficPolicy),
    // The API server defaults the ClientIP timeout to 10800 s (3 h).
    sessionAffinitySeconds: affinity ? (timeout ?? 10800) : null,
    trafficDistribution: str(spec.trafficDistribution),
    healthCheckNodePort: num(spec.healthCheckNodePort),
    serviceProxyName: str(labels['service.kubernetes.io/service-proxy-name']),
    where: w,
  };
}

function readSlice(r: Reader, namespace: string, name: string, meta: Obj, o: Obj, node: YamlNode | undefined, w: ApiWhere): ApiEndpointSlice {
  const at = o.addressType;
  const addressType = at === 'IPv6' || at === 'FQDN' ? at : 'IPv4';
  if (at !== 'IPv4' && at !== 'IPv6' && at !== 'FQDN') warn(r, w, 'k8s/address-type', `EndpointSlice ${namespace}/${name} has no addressType IPv4, IPv6 or FQDN; kpx reads it as IPv4`);
  const epNodes = items(child(node, 'endpoints'));
  const endpoints: ApiEndpoint[] = (Array.isArray(o.endpoints) ? o.endpoints : []).map((e, i) => {
    const eo = obj(e);
    const c = obj(eo.conditions);
    const hints = isObj(eo.hints)
      ? { forZones: (Array.isArray(eo.hints.forZones) ? eo.hints.forZones : []).map((z) => str(obj(z).name)).filter((z): z is string => z !== null), forNodes: (Array.isArray(eo.hints.forNodes) ? eo.hints.forNodes : []).map((z) => str(obj(z).name)).filter((z): z is string => z !== null) }
      : null;
    // An endpoint is cited by its (first) address line.
    const addrNode = items(child(epNodes[i], 'addresses'))[0] ?? epNodes[i] ?? node;
    return { addresses: strs(eo.addresses), conditions: { ready: bool(c.ready), serving: bool(c.serving), terminating: bool(c.terminating) }, nodeName: str(eo.nodeName), zone: str(eo.zone), hints, where: whereOf(r, addrNode) };
  });
  const ports = (Array.isArray(o.ports) ? o.ports : []).map((p) => {
    const po = obj(p);
    return { name: str(po.name), protocol: protocolOf(po.protocol), port: num(po.port) };
  });
  return { namespace, name, serviceName: str(obj(meta.labels)['kubernetes.io/service-name']), addressType, ports, endpoints, fromEndpoints: false, where: w };
}

/**
 * A legacy Endpoints object as the slices the EndpointSlice mirroring controller would make of it:
 * `addresses` ready, `notReadyAddresses` not ready; one slice per subset and address family.
 */
function readEndpoints(namespace: string, name: string, o: Obj, node: YamlNode | undefined, r: Reader, w: ApiWhere): ApiEndpointSlice[] {
  const out: ApiEndpointSlice[] = [];
  const subsetNodes = items(child(node, 'subsets'));
  (Array.isArray(o.subsets) ? o.subsets : []).forEach((s, si) => {
    const so = obj(s);
    const sn = subsetNodes[si];
    const ports = (Array.isArray(so.ports) ? so.ports : []).map((p) => ({ name: str(obj(p).name), protocol: protocolOf(obj(p).protocol), port: num(obj(p).port) }));
    const eps: ApiEndpoint[] = [];
    for (const [key, ready] of [['addresses', true], ['notReadyAddresses', false]] as const) {
      const nodes = items(child(sn, key));
      (Array.isArray(so[key]) ? (so[key] as unknown[]) : []).forEach((a, i) => {
        const ao = obj(a);
        const ip = str(ao.ip);
        if (ip === null) return;
        eps.push({ addresses: [ip], conditions: { ready, serving: ready, terminating: null }, nodeName: str(ao.nodeName), zone: null, hints: null, where: whereOf(r, nodes[i] ?? sn ?? node) });
      });
    }
    for (const fam of ['IPv4', 'IPv6'] as const) {
      const mine = eps.filter((e) => (e.addresses[0].includes(':') ? 'IPv6' : 'IPv4') === fam);
      if (mine.length) out.push({ namespace, name: `${name}-${si}-${fam.toLowerCase()}`, serviceName: name, addressType: fam, ports, endpoints: mine, fromEndpoints: true, where: w });
    }
  });
  return out;
}

export function extractK8sApi(text: string, file: string): ParsedInput<ApiObjects> {
  const lines = splitInput(text).lines;
  const counter = new LineCounter();
  const r: Reader = { file, lines, counter, diagnostics: [] };
  const out: Collected = { services: [], slices: [], nodes: [], pods: [], ignored: new Map() };
  const source = withoutNoise(lines);
  let docs = parseAllDocuments(source, { lineCounter: counter, prettyErrors: false, uniqueKeys: false });
  // A JSON List with one broken item: blank that item out (offsets and lines kept) and read the others.
  let salvaged: string | undefined;
  if (Array.isArray(docs) && docs.length === 1 && docs[0].errors.length > 0) {
    salvaged = withoutBrokenItems(source);
    if (salvaged !== undefined) {
      const again = parseAllDocuments(salvaged, { lineCounter: new LineCounter(), prettyErrors: false, uniqueKeys: false });
      if (Array.isArray(again) && again.length === 1 && again[0].errors.length === 0) docs = [Object.assign(again[0], { errors: docs[0].errors })] as typeof docs;
      else salvaged = undefined;
    }
  }
  for (const doc of Array.isArray(docs) ? docs : []) {
    // One error per document: the first real one (a broken flow collection also makes the yaml parser
    // call the whole document a multi-line implicit key, at its first character: a consequence, not the fault).
    const e = doc.errors.find((x) => x.code !== 'MULTILINE_IMPLICIT_KEY') ?? doc.errors[0];
    if (e) {
      const { line, col } = counter.linePos(e.pos[0]);
      const found = lines[line - 1] ?? '';
      const atEnd = e.pos[0] >= source.trimEnd().length - 1;
      const what = atEnd ? 'the text ends inside an unclosed object or list (cut off?)' : printable(e.message.split('\n')[0], 160);
      r.diagnostics.push(
        diagnostic('error', 'parse/k8s-api', `not valid ${/^\s*[[{]/.test(source) ? 'JSON/YAML' : 'YAML'}: ${what}; ${salvaged !== undefined ? 'that object is skipped, the others are read' : 'what comes before it is still read'}`, file, line, col, { expected: 'a Kubernetes object', found: printable(found.trim(), 60) }),
      );
    }
    // A document with errors still yields what was read before them (a paste cut off mid-object).
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      const w = whereOf(r, doc.contents as YamlNode);
      r.diagnostics.push(diagnostic('error', 'parse/k8s-api', printable((e as Error).message, 160), file, w.line, w.column));
      continue;
    }
    readObject(r, value, (doc.contents ?? undefined) as YamlNode | undefined, out);
  }
  for (const [kind, n] of out.ignored) r.diagnostics.push(diagnostic('info', 'k8s/ignored-kind', `${n} ${kind} object${n === 1 ? '' : 's'} ignored (kpx reads Services, EndpointSlices, Endpoints, Nodes and Pods)`, file, 1, 1));
  const covered = coverageOfCommands(lines.flatMap((l) => commandOfLine(l) ?? []));
  const data: ApiObjects = { files: [file], services: out.services, slices: out.slices, nodes: out.nodes, pods: out.pods, ...(covered ? { serviceNamespaces: covered } : {}) };
  const endpoints = out.slices.reduce((n, s) => n + s.endpoints.length, 0);
  return { format: 'k8s-api', file, data, diagnostics: r.diagnostics, counts: { services: out.services.length, endpointslices: out.slices.length, endpoints, nodes: out.nodes.length, pods: out.pods.length } };
}

/**
 * Which namespaces' Services the pasted commands list whole (issue 30): `kubectl get svc -A -o yaml`
 * every one, `-n NS` that namespace; a command naming objects (`get svc web -o yaml`), selecting
 * (`-l`), or piped through grep covers none. Undefined when the text shows no command: a file of
 * objects is taken as the whole listing, as kpx always did.
 */
export function coverageOfCommands(commands: readonly PastedCommand[]): string[] | undefined {
  let seen = false;
  const covered = new Set<string>();
  for (const c of commands) {
    const r = kubectlRequest(c);
    if (!r || r.verb !== 'get') continue;
    seen = true;
    if (!r.kinds.includes('service') && !r.kinds.includes('all')) continue;
    if (r.names.length === 0 && !r.selected && !c.filtered && r.namespace) covered.add(r.namespace);
  }
  return seen ? [...covered].sort() : undefined;
}

/**
 * `kubectl … -o json` prints a List whose items are `{…}` objects: the ones that are not valid JSON are
 * replaced by spaces (newlines kept, so every other object keeps its line and column), with a comma
 * next to them. Undefined when the text is not such a List or no item is broken.
 */
function withoutBrokenItems(text: string): string | undefined {
  const start = /"items"\s*:\s*\[/.exec(text);
  if (!start || !/^\s*\{/.test(text)) return undefined;
  const spans: [number, number][] = [];
  let depth = 0;
  let inString = false;
  let begin = -1;
  for (let i = start.index + start[0].length; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) begin = i;
    } else if (c === '}') {
      if (--depth === 0) spans.push([begin, i + 1]);
      if (depth < 0) break;
    } else if (c === ']' && depth === 0) break;
  }
  const broken = spans.filter(([a, b]) => {
    try {
      JSON.parse(text.slice(a, b));
      return false;
    } catch {
      return true;
    }
  });
  if (broken.length === 0) return undefined;
  const chars = [...text];
  const blank = (a: number, b: number) => {
    for (let i = a; i < b; i++) if (chars[i] !== '\n') chars[i] = ' ';
  };
  for (const [a, b] of broken) {
    blank(a, b);
    // The comma after it (or, for the last item, the one before it).
    const after = /^\s*,/.exec(text.slice(b));
    if (after) blank(b, b + after[0].length);
    else {
      const before = /,\s*$/.exec(text.slice(0, a));
      if (before) blank(a - before[0].length, a);
    }
  }
  return chars.join('');
}

export const k8sApiParser: FormatParser<ApiObjects> = { id: 'k8s-api', parse: (text, file) => extractK8sApi(text, file) };
