/**
 * The judgement of one Service port: from the resolver's reading (state, problems, endpoints,
 * unresolved endpoints), the completeness of the tables its rules are in, the IPVS sysctls and
 * connections, and kube-proxy's sync health, the one STATE, REASON, unknown share and caveats.
 *
 * The rule that keeps it honest: a state that claims absence (`no-endpoints`,
 * `no-local-endpoints`) must rest either on a rule that says so (kube-proxy's REJECT/DROP, a
 * virtual server without real servers, a no-endpoint map element) or on whole evidence for the
 * chains it depends on; otherwise the state is `unknown` with the reason. Shares the evidence
 * cannot give are an explicit unknown share, never renormalised into the others.
 */
import { degrades } from '../kube/problems.js';
import { stateReason } from '../kube/state-reason.js';
import type { ServicePort, ServiceState } from '../kube/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { SYSCTL_KEYS } from '../model/sysctl.js';
import { evidenceOf } from './evidence.js';
import type { Caveat, Cite, Reason, ServiceJudgement, StaleRules, TableEvidence } from './types.js';

/** The judgement of a healthy Service port with nothing to add: one shared object (10k Services). */
export const HEALTHY: ServiceJudgement = Object.freeze({ state: 'healthy', reason: null, more: 0, unknown: null, caveats: Object.freeze([]) as readonly Caveat[] });

/** What judging a Service port needs from its node, computed once per snapshot. */
export interface ServiceContext {
  readonly snapshot: NodeSnapshot;
  /** Evidence by file (the tables of that file). */
  readonly byFile: ReadonlyMap<string, readonly TableEvidence[]>;
  /** Every table is whole: the fast path for dumps taken whole. */
  readonly allWhole: boolean;
  readonly stale?: StaleRules;
  readonly connReuseMode: string | null;
  /** IPVS connections per real server (`ip:port` of the destination). */
  readonly connectionsTo: ReadonlyMap<string, number>;
}

export function serviceContext(snapshot: NodeSnapshot, stale: StaleRules | undefined): ServiceContext {
  const byFile = new Map<string, TableEvidence[]>();
  const all = evidenceOf(snapshot);
  for (const e of all) {
    const list = byFile.get(e.file) ?? [];
    list.push(e);
    byFile.set(e.file, list);
  }
  const connectionsTo = new Map<string, number>();
  for (const d of snapshot.ipvs) {
    for (const c of d.connections ?? []) {
      const k = `${c.destination.address}:${c.destination.port ?? ''}`;
      connectionsTo.set(k, (connectionsTo.get(k) ?? 0) + 1);
    }
  }
  return {
    snapshot,
    byFile,
    allWhole: all.every((e) => e.kind === 'whole' || e.kind === 'second-view'),
    ...(stale ? { stale } : {}),
    connReuseMode: snapshot.sysctls.get(SYSCTL_KEYS.connReuseMode)?.value.trim() ?? null,
    connectionsTo,
  };
}

/** The tables a Service port's evidence lies in (iptables `nat/…`, nft `ip kube-proxy/…`, IPVS listings). */
function tablesOf(s: ServicePort, ctx: ServiceContext): TableEvidence[] {
  const out = new Set<TableEvidence>();
  for (const e of s.evidence) {
    const list = ctx.byFile.get(e.file);
    if (!list) continue;
    if (list.length === 1) {
      out.add(list[0]);
      continue;
    }
    const slash = e.where?.indexOf('/') ?? -1;
    const table = slash > 0 ? e.where!.slice(0, slash) : e.where;
    const t = list.find((x) => x.table === table);
    if (t) out.add(t);
  }
  return [...out];
}

/** The dumps hold a rule (or object) that itself says the Service port has no (local) endpoints. */
function saidByARule(s: ServicePort): boolean {
  if (s.mode === 'ipvs') return true;
  return s.evidence.some((e) => /has no (local )?endpoints/.test(e.text) || /-j (REJECT|DROP)\b/.test(e.text) || /: (goto|jump) reject-chain$/.test(e.text) || /\s(reject|drop)( with [\w -]+)?$/.test(e.text));
}

const cite = (e: { file: string; line: number; text: string }): Cite => ({ file: e.file, line: e.line, text: e.text });

/** The unknown share and its reasons: endpoints whose chain is not in the evidence, endpoints whose address is unknown, cut tables. */
function unknownOf(s: ServicePort, tables: readonly TableEvidence[]): { share: number | null; reasons: Reason[] } | null {
  const reasons: Reason[] = [];
  let share = 0;
  let shareKnown = true;
  const absent = new Set<string>();
  for (const p of s.problems) if (p.code === 'endpoint-chain-absent') absent.add(p.chain);
  if (absent.size) {
    const eps = s.endpoints.filter((e) => e.via !== undefined && absent.has(e.via));
    for (const e of eps) {
      if (e.probability === null) shareKnown = false;
      else share += e.probability;
    }
    const cites = eps.map((e) => e.evidence[0]).filter((x) => x !== undefined).map(cite);
    reasons.push({ code: 'endpoint-chains-absent', chains: [...absent], cites });
    // The jump is in a table that looks whole: the kernel could not hold it (cut or edited).
    const edited = tables.find((t) => t.kind === 'edited' && t.missing?.some((m) => absent.has(m.chain)));
    if (edited) reasons.unshift({ code: 'dump-not-whole', file: edited.file, table: edited.table, chains: edited.missing!.map((m) => m.chain).filter((c) => absent.has(c)), cites: edited.missing!.filter((m) => absent.has(m.chain)).map((m) => ({ file: edited.file, line: m.line, text: m.text })) });
  }
  const unresolved = s.unresolvedEndpoints ?? [];
  if (unresolved.length) {
    for (const u of unresolved) {
      if (u.share === null) shareKnown = false;
      else share += u.share;
    }
    reasons.push({ code: 'endpoint-address-unknown', chains: unresolved.map((u) => u.via), cites: unresolved.map((u) => u.evidence[0]).filter((x) => x !== undefined).map(cite) });
  }
  for (const p of s.problems) if (p.code === 'table-truncated') reasons.push({ code: 'table-cut', file: p.file, table: p.table, line: p.line });
  for (const t of tables) if (t.kind === 'grep' && t.inferred) reasons.push({ code: 'table-inferred', file: t.file, table: t.table, basis: t.inferred.basis, ...(t.inferred.line !== undefined ? { line: t.inferred.line } : {}), ...(t.inferred.why ? { why: t.inferred.why } : {}) });
  if (reasons.length === 0) return null;
  // Nothing known of its endpoints: the whole answer is unknown.
  if (s.state === 'unknown' && s.endpoints.length === 0) return { share: 1, reasons };
  if (!absent.size && !unresolved.length) return { share: null, reasons };
  return { share: shareKnown ? Math.round(share * 1e10) / 1e10 : null, reasons };
}

/** IPVS real servers at weight 0 behind the Service port: the conn_reuse_mode trap. */
function draining(s: ServicePort, ctx: ServiceContext): Caveat | undefined {
  if (s.mode !== 'ipvs') return undefined;
  const zero = s.endpoints.filter((e) => e.weight === 0);
  if (zero.length === 0 || zero.length === s.endpoints.length) return undefined;
  const servers = zero.map((e) => `${e.ip}:${e.port ?? ''}`);
  return {
    code: 'draining-real-servers',
    servers,
    connReuseMode: ctx.connReuseMode,
    connections: servers.reduce((n, k) => n + (ctx.connectionsTo.get(k) ?? 0), 0),
    cites: zero.map((e) => e.evidence[e.evidence.length - 1]).filter((x) => x !== undefined).map(cite),
  };
}

export function judgeService(s: ServicePort, ctx: ServiceContext): ServiceJudgement {
  const weightZero = s.mode === 'ipvs' && s.endpoints.some((e) => e.weight === 0);
  const namedByStale = ctx.stale?.refused?.service !== undefined && s.namespace !== null && ctx.stale.refused.service.startsWith(`${s.namespace}/${s.name}:`);
  if (s.state === 'healthy' && ctx.allWhole && s.problems.length === 0 && !s.unresolvedEndpoints && !weightZero && !namedByStale) return HEALTHY;

  const tables = ctx.allWhole ? [] : tablesOf(s, ctx);
  const unknown = unknownOf(s, tables);
  let state: ServiceState = s.state;
  const notWhole = tables.filter((t) => t.kind !== 'whole' && t.kind !== 'second-view');
  // A claim of absence not said by a rule rests on the completeness of the tables it was read from.
  if ((state === 'no-endpoints' || state === 'no-local-endpoints') && notWhole.length > 0 && !saidByARule(s)) state = 'unknown';
  if (state === 'healthy' && unknown && (unknown.share === null || unknown.share > 0) && unknown.reasons.some((r) => r.code !== 'table-inferred')) state = 'partial';

  const caveats: Caveat[] = [];
  const d = draining(s, ctx);
  if (d) caveats.push(d);
  if (namedByStale && ctx.stale) caveats.push({ code: 'rules-may-be-stale', ...ctx.stale });

  if (state === 'healthy' && !unknown && caveats.length === 0) return HEALTHY;
  if (state === 'healthy') return { state, reason: null, more: 0, unknown, caveats };
  // The REASON column: the judgement's own reason leads when the dump cannot be whole, or when the
  // judgement changed the state; then the resolver's (stateReason); the rest count as `+N`.
  const base = stateReason(state === s.state ? s : { ...s, state });
  const own = unknown?.reasons.find((r) => r.code === 'dump-not-whole') ?? (state !== s.state ? unknown?.reasons[0] : undefined);
  const codes = new Set<string>();
  if (own) codes.add(own.code);
  if (base) codes.add(base.code);
  for (const p of s.problems) if (degrades(p)) codes.add(p.code);
  const [reason] = codes;
  return { state, reason: (reason ?? null) as ServiceJudgement['reason'], more: Math.max(0, codes.size - 1), unknown, caveats };
}
