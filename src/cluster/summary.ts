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

export const SUMMARY_KIND = 'kpx-node-summary';
/** Bumped when a field changes meaning or goes away (adding fields keeps the version). */
export const SUMMARY_SCHEMA_VERSION = 1;

/** Where a fact comes from: a line of one of the node's files (the text stays on the node). */
export interface EvidenceRef {
  readonly file: string;
  readonly line: number;
  readonly where?: string;
}

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
  /** ServicePort as in `kpx services -o json`, plus owned/frontEnds/anchor; evidence as references. */
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

export const evidenceRef = (e: { readonly file: string; readonly line: number; readonly where?: string }): EvidenceRef => ({ file: e.file, line: e.line, ...(e.where !== undefined ? { where: e.where } : {}) });

function compactService(s: ServicePort): unknown {
  return {
    ...s,
    endpoints: s.endpoints.map((e) => ({ ...e, evidence: e.evidence.map(evidenceRef) })),
    frontEnds: s.frontEnds.map((f) => ({ ...f, evidence: evidenceRef(f.evidence) })),
    evidence: s.evidence.map(evidenceRef),
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

/** The inverse of tagAddresses (a JSON.parse reviver); undefined for text that is no address. */
function untagAddresses(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$ip') return parseIp(String((value as { $ip: unknown }).$ip));
    if (keys.length === 1 && keys[0] === '$cidr') return parseCidr(String((value as { $cidr: unknown }).$cidr));
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
  readonly findings: readonly SummaryFinding[];
}

/** The summary document of one node (plain JSON data: `JSON.stringify` it). */
export function nodeSummary(x: SummaryInput): NodeSummary {
  const s = x.snapshot;
  const count = (sev: SummaryFinding['severity']) => x.findings.filter((f) => f.severity === sev).length;
  const tagged = (v: unknown): unknown[] => JSON.parse(JSON.stringify(v, tagAddresses)) as unknown[];
  return {
    kind: SUMMARY_KIND,
    schemaVersion: SUMMARY_SCHEMA_VERSION,
    kpxVersion: x.kpxVersion,
    node: x.node,
    files: s.files.map(fileSummary),
    modes: x.modes,
    services: x.resolution.services.map(compactService),
    others: x.resolution.others,
    problems: x.resolution.problems.map((p) => ({ problem: p.problem, evidence: p.evidence.map(evidenceRef) })),
    findings: x.findings,
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

const withText = (e: EvidenceRef): Evidence => ({ ...e, text: '' });

/**
 * Read a summary back into what the node comparison uses: a Resolution (evidence keeps its
 * file and line; its text stays on the node, so it is empty here), the proxy modes, and a
 * snapshot without rule sets (files, interfaces, routes, --node-ip addresses).
 */
export function readSummary(text: string, path: string): { node: string; snapshot: NodeSnapshot; resolution: Resolution; modes: readonly ProxyMode[]; summary: NodeSummary } {
  let data: NodeSummary;
  try {
    data = JSON.parse(text, untagAddresses) as NodeSummary;
  } catch (e) {
    throw new SummaryError(`${path}: not JSON (${(e as Error).message})`);
  }
  if (data === null || typeof data !== 'object' || data.kind !== SUMMARY_KIND) throw new SummaryError(`${path}: not a kpx node summary (expected "kind": "${SUMMARY_KIND}")`);
  if (data.schemaVersion !== SUMMARY_SCHEMA_VERSION)
    throw new SummaryError(`${path}: summary schemaVersion ${String(data.schemaVersion)}; this kpx reads version ${SUMMARY_SCHEMA_VERSION} (re-run \`kpx summarize\` with this kpx version)`);
  for (const field of ['node', 'files', 'modes', 'services', 'interfaces', 'routes'] as const)
    if (data[field] === undefined || (field !== 'node' && !Array.isArray(data[field]))) throw new SummaryError(`${path}: summary has no valid "${field}"`);
  const services = (data.services as ServicePort[]).map((s) => ({
    ...s,
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
