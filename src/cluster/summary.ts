/**
 * Node summaries (`kpx summarize -o json`): one node's analysis in a compact, versioned JSON
 * document — its Service ports (with endpoints, policies, state, problems), lint findings, the
 * files it was made from with their diagnostics, and what ownership needs (the node's interfaces
 * and routes) — with evidence as references (file + line), never the dump text. `kpx services
 * --nodes` reads summaries as it reads raw node dumps, so a fleet can be analysed where it runs
 * (one kpx per node) and compared in one place. Plain data; the writer lives in the CLI (it also
 * runs the linter, which this layer may not import).
 */
import { formatCidr, formatIp, parseCidr, parseIp } from '../model/addr.js';
import type { NetInterface } from '../model/iface.js';
import type { Route } from '../model/route.js';
import type { LoadedFile, NodeSnapshot, ProxyMode } from '../model/snapshot.js';
import type { Evidence, Resolution, ServicePort } from '../kube/types.js';
import { chainRecord } from '../kube/service-builder.js';
import { NODE_SUMMARY_SCHEMA, NODE_SUMMARY_VERSION } from '../render/schemas/summary.js';
import { schemaProblem } from '../render/schemas/validate.js';

export const SUMMARY_KIND = 'kpx-node-summary';
/** Bumped when a field changes meaning or goes away (adding fields keeps the version). */
export const SUMMARY_SCHEMA_VERSION = NODE_SUMMARY_VERSION;

/**
 * Where a fact comes from: `[file, line]`, the file an index into the summary's `files` — a line
 * of one of the node's dumps; its text stays on the node (evidence is most of a Service's data:
 * as objects with paths, a 1k-Service node's summary was 10 MiB, larger than its dumps).
 */
export type EvidenceRef = readonly [file: number, line: number];

export interface SummaryFinding {
  readonly ruleId: string;
  readonly severity: 'error' | 'warning' | 'info';
  readonly message: string;
  readonly service?: string;
  readonly fingerprint: string;
  readonly evidence: readonly EvidenceRef[];
}

export interface SummaryFile {
  readonly path: string;
  readonly format: string;
  readonly bytes: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly errors: number;
  readonly warnings: number;
  /** The first error diagnostics (file:line:column and message), at most MAX_DIAGNOSTICS. */
  readonly firstErrors: readonly { readonly code: string; readonly line: number; readonly column: number; readonly message: string }[];
}

export interface NodeSummary {
  readonly kind: typeof SUMMARY_KIND;
  readonly schemaVersion: number;
  readonly kpxVersion: string;
  readonly node: string;
  readonly files: readonly SummaryFile[];
  readonly modes: readonly ProxyMode[];
  /** ServicePort as in `kpx services -o json` but `chains` (derived from `owned`), plus owned/frontEnds/anchor; evidence as references. */
  readonly services: readonly unknown[];
  readonly others: Resolution['others'];
  readonly problems: readonly { readonly problem: unknown; readonly evidence: readonly EvidenceRef[] }[];
  readonly findings: readonly SummaryFinding[];
  readonly findingCounts: { readonly error: number; readonly warning: number; readonly info: number };
  /** What says which node owns an address (`ip addr`, `ip route`, --node-ip); addresses tagged `{"$ip"}`/`{"$cidr"}`. */
  readonly interfaces: readonly unknown[];
  readonly routes: readonly unknown[];
  readonly extraNodeIps: readonly string[];
}

const MAX_DIAGNOSTICS = 20;

/** Evidence of a snapshot's files as references: `[index in files, line]`. */
export type EvidenceRefs = (e: { readonly file: string; readonly line: number }) => EvidenceRef;

/** The referencing function for a snapshot whose files are `files` (a file not among them is added). */
export function evidenceRefs(files: string[]): EvidenceRefs {
  const index = new Map(files.map((f, i) => [f, i]));
  return (e) => {
    let i = index.get(e.file);
    if (i === undefined) {
      i = files.length;
      files.push(e.file);
      index.set(e.file, i);
    }
    return [i, e.line];
  };
}

function compactService(s: ServicePort, ref: EvidenceRefs): unknown {
  // `chains` is the JSON form of `owned` (chainRecord): the reader derives it again.
  const { chains: _chains, ...rest } = s;
  return {
    ...rest,
    endpoints: s.endpoints.map((e) => ({ ...e, evidence: e.evidence.map(ref) })),
    frontEnds: s.frontEnds.map((f) => ({ ...f, evidence: ref(f.evidence) })),
    evidence: s.evidence.map(ref),
  };
}

/** JSON.stringify replacer: model addresses (bigint inside) become tagged text. */
function tagAddresses(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object') {
    const v = value as { family?: unknown; value?: unknown; network?: unknown; prefix?: unknown };
    if (typeof v.value === 'bigint' && (v.family === 4 || v.family === 6)) return { $ip: formatIp(value as Parameters<typeof formatIp>[0]) };
    if (typeof v.network === 'bigint' && typeof v.prefix === 'number') return { $cidr: formatCidr(value as Parameters<typeof formatCidr>[0]) };
  }
  return value;
}

/**
 * The inverse of tagAddresses, in place, on the parts that hold addresses (interfaces, routes):
 * a JSON.parse reviver would visit every value of the summary (most of the reading time).
 */
function untagAddresses(value: unknown): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = untagAddresses(value[i]);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === '$ip') return parseIp(String(o.$ip));
    if (keys.length === 1 && keys[0] === '$cidr') return parseCidr(String(o.$cidr));
    for (const k of keys) o[k] = untagAddresses(o[k]);
  }
  return value;
}

function fileSummary(f: LoadedFile): SummaryFile {
  const errors = f.diagnostics.filter((d) => d.severity === 'error');
  return {
    path: f.path,
    format: f.format,
    bytes: f.bytes,
    counts: f.counts,
    errors: errors.length,
    warnings: f.diagnostics.filter((d) => d.severity === 'warning').length,
    firstErrors: errors.slice(0, MAX_DIAGNOSTICS).map((d) => ({ code: d.code, line: d.line, column: d.column, message: d.message })),
  };
}

export interface SummaryInput {
  readonly node: string;
  readonly kpxVersion: string;
  readonly snapshot: NodeSnapshot;
  readonly resolution: Resolution;
  readonly modes: readonly ProxyMode[];
  /** Lint findings, their evidence referenced with `ref` (the one given to the writer's callback). */
  readonly findings: (ref: EvidenceRefs) => readonly SummaryFinding[];
}

/** The summary document of one node (plain JSON data: `JSON.stringify` it). */
export function nodeSummary(x: SummaryInput): NodeSummary {
  const s = x.snapshot;
  const paths = s.files.map((f) => f.path);
  const ref = evidenceRefs(paths);
  const services = x.resolution.services.map((sp) => compactService(sp, ref));
  const problems = x.resolution.problems.map((p) => ({ problem: p.problem, evidence: p.evidence.map(ref) }));
  const findings = x.findings(ref);
  const count = (sev: SummaryFinding['severity']) => findings.filter((f) => f.severity === sev).length;
  const tagged = (v: unknown): unknown[] => JSON.parse(JSON.stringify(v, tagAddresses)) as unknown[];
  const known = new Map(s.files.map((f) => [f.path, f]));
  return {
    kind: SUMMARY_KIND,
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    kpxVersion: x.kpxVersion,
    node: x.node,
    // Every file evidence points at: the loaded ones with their counts, any other by path only.
    files: paths.map((p) => (known.has(p) ? fileSummary(known.get(p)!) : { path: p, format: 'unknown', bytes: 0, counts: {}, errors: 0, warnings: 0, firstErrors: [] })),
    modes: x.modes,
    services,
    others: x.resolution.others,
    problems,
    findings,
    findingCounts: { error: count('error'), warning: count('warning'), info: count('info') },
    interfaces: tagged(s.interfaces),
    routes: tagged(s.routes),
    extraNodeIps: s.extraNodeIps.map(formatIp),
  };
}

/** Why this text is not a summary kpx can read, or undefined when it is one. */
export class SummaryError extends Error {}

/** Is this the start of a node summary? (cheap: for sniffing folders) */
export function looksLikeSummary(head: string): boolean {
  return /^\s*\{\s*"kind"\s*:\s*"kpx-node-summary"/.test(head);
}


/**
 * Read a summary back into what the node comparison uses: a Resolution (evidence keeps its
 * file and line; its text stays on the node, so it is empty here), the proxy modes, and a
 * snapshot without rule sets (files, interfaces, routes, --node-ip addresses).
 */
export function readSummary(text: string, path: string): { node: string; snapshot: NodeSnapshot; resolution: Resolution; modes: readonly ProxyMode[]; summary: NodeSummary } {
  let data: NodeSummary;
  try {
    data = JSON.parse(text) as NodeSummary;
  } catch (e) {
    throw new SummaryError(`${path}: not JSON (${(e as Error).message})`);
  }
  if (data === null || typeof data !== 'object' || data.kind !== SUMMARY_KIND) throw new SummaryError(`${path}: not a kpx node summary (expected "kind": "${SUMMARY_KIND}")`);
  if (data.schemaVersion !== SUMMARY_SCHEMA_VERSION)
    throw new SummaryError(`${path}: summary schemaVersion ${String(data.schemaVersion)}; this kpx reads version ${SUMMARY_SCHEMA_VERSION} (re-run \`kpx summarize\` with this kpx version)`);
  // Written on another machine, maybe edited or damaged: checked whole against `kpx schema node-summary` before any of it is used.
  const problem = schemaProblem(data, NODE_SUMMARY_SCHEMA);
  if (problem !== undefined) throw new SummaryError(`${path}: not a valid node summary: ${problem} (\`kpx schema node-summary\` shows the shape)`);
  untagAddresses(data.interfaces);
  untagAddresses(data.routes);
  const withText = (e: EvidenceRef): Evidence => {
    const file = Array.isArray(e) ? data.files[e[0]]?.path : undefined;
    if (file === undefined) throw new SummaryError(`${path}: evidence ${JSON.stringify(e)} names no file of the summary`);
    return { file, line: e[1], text: '' };
  };
  /** A ServicePort as the summary holds it: every evidence a reference. */
  type Stored = Omit<ServicePort, 'endpoints' | 'frontEnds' | 'evidence' | 'chains'> & {
    readonly endpoints: readonly (Omit<ServicePort['endpoints'][number], 'evidence'> & { readonly evidence: readonly EvidenceRef[] })[];
    readonly frontEnds: readonly (Omit<ServicePort['frontEnds'][number], 'evidence'> & { readonly evidence: EvidenceRef })[];
    readonly evidence: readonly EvidenceRef[];
  };
  const services: ServicePort[] = (data.services as Stored[]).map((s) => ({
    ...s,
    chains: chainRecord(s.mode, s.owned),
    endpoints: s.endpoints.map((e) => ({ ...e, evidence: e.evidence.map(withText) })),
    frontEnds: s.frontEnds.map((f) => ({ ...f, evidence: withText(f.evidence) })),
    evidence: s.evidence.map(withText),
  }));
  const resolution: Resolution = {
    services,
    others: data.others ?? [],
    problems: (data.problems ?? []).map((p) => ({ problem: p.problem as Resolution['problems'][number]['problem'], evidence: p.evidence.map(withText) })),
  };
  const files: LoadedFile[] = data.files.map((f) => ({
    path: f.path,
    format: f.format as LoadedFile['format'],
    counts: f.counts,
    bytes: f.bytes,
    // The counts are kept; the first errors come back as diagnostics (the rest are counted only).
    diagnostics: f.firstErrors.map((d) => ({ severity: 'error' as const, code: d.code, message: d.message, file: f.path, line: d.line, column: d.column })),
  }));
  const snapshot: NodeSnapshot = {
    name: data.node,
    files,
    rulesets: [],
    ipsets: [],
    ipsetsByName: new Map(),
    ipvs: [],
    nft: [],
    routes: data.routes as Route[],
    policyRules: [],
    interfaces: data.interfaces as NetInterface[],
    sysctls: new Map(),
    extraNodeIps: data.extraNodeIps.map((t) => parseIp(t)).filter((ip) => ip !== undefined),
  };
  return { node: data.node, snapshot, resolution, modes: data.modes, summary: data };
}
