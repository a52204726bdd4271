/**
 * One kube-proxy nftables table while it is read: the per-Service-port group the dispatch maps and
 * chains fill, the reading context, and the readers of elements, rules and chains every concern
 * uses (targets, protocol/port keys, numgen keys, evidence lines, reachability).
 */
import type { NftChain, NftElement, NftExpr, NftMapRef, NftOperand, NftRule, NftSet, NftTable } from '../../model/nft.js';
import { valueText } from '../../model/nft.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { parseIp } from '../../model/addr.js';
import type { ServiceProblem } from '../problems.js';
import type { Evidence, Protocol, Resolution } from '../types.js';
import { parseNftObjectName, type NftChainRole, type NftObjectName } from './identity.js';

export type Problem = Resolution['problems'][number];


export interface IpEntry {
  ip: string;
  /** Where this IP was seen going: the chain role of service-ips, or only the no-endpoint map. */
  target?: NftChainRole;
  noEndpointVerdict?: string;
  comment?: string;
  /** The map element that claims the address. */
  evidence?: Evidence;
}

export interface Group {
  key: string;
  parsed?: NftObjectName;
  commentId?: { namespace: string; name: string; portName: string | null };
  protocol?: Protocol;
  port?: number;
  ips: Map<string, IpEntry>;
  lbIPs: Set<string>;
  nodePort?: number;
  nodePortEvidence?: Evidence;
  nodePortNoEndpoint?: string;
  chains: Partial<Record<'service' | 'local' | 'external' | 'firewall', NftChain>>;
  /** Endpoint chains a service-ips element goes to directly (no service chain in between). */
  directEndpoints: { chain: string; element: Evidence }[];
  /** Map elements go to these chains, which the dump does not have. */
  absentTargets: string[];
  /** Reached from a dispatch map element (or from another reached chain). */
  referenced: boolean;
  evidence: Evidence[];
  problems: ServiceProblem[];
}

export interface Ctx {
  table: NftTable;
  family: 4 | 6;
  where: string;
  chains: Map<string, NftChain>;
  sets: Map<string, NftSet>;
  snapshot: NodeSnapshot;
  problems: Problem[];
  /** parseNftObjectName results (names are looked at many times); null: not a kube-proxy name. */
  names: Map<string, NftObjectName | null>;
  locality: (ip: string) => boolean | null;
}

export function cachedName(ctx: Ctx, text: string): NftObjectName | undefined {
  let n = ctx.names.get(text);
  if (n === undefined) {
    n = parseNftObjectName(text) ?? null;
    ctx.names.set(text, n);
  }
  return n ?? undefined;
}

export const elementText = (e: NftElement): string =>
  `${e.key.join(' . ')}${e.comment !== undefined ? ` comment "${e.comment}"` : ''}${e.value ? ` : ${valueText(e.value)}` : ''}`;

export function elementEvidence(ctx: Ctx, set: string, e: NftElement): Evidence {
  return { file: ctx.table.file, line: e.line, text: elementText(e), where: `${ctx.where}/${set}` };
}

export function ruleEvidence(ctx: Ctx, chain: NftChain, r: NftRule): Evidence {
  return { file: ctx.table.file, line: r.line, text: r.raw, where: `${ctx.where}/${chain.name}` };
}

export function chainEvidence(ctx: Ctx, chain: NftChain): Evidence[] {
  if (chain.rules.length === 0) return [{ file: ctx.table.file, line: chain.line, text: `chain ${chain.name} {`, where: ctx.where }];
  // One `where` string per chain, not one per rule (a chain's rules are read for several Service ports).
  const where = `${ctx.where}/${chain.name}`;
  const file = ctx.table.file;
  return chain.rules.map((r) => ({ file, line: r.line, text: r.raw, where }));
}

export function tableFamily(t: NftTable): 4 | 6 {
  if (t.family === 'ip6') return 6;
  if (t.family === 'ip') return 4;
  for (const s of t.sets) {
    if (s.keyType.includes('ipv6_addr')) return 6;
    if (s.keyType.includes('ipv4_addr')) return 4;
  }
  for (const s of t.sets) for (const e of s.elements) for (const k of e.key) if (parseIp(k)) return parseIp(k)!.family;
  return 4;
}

export const verdictTarget = (e: NftElement): string | undefined =>
  e.value?.kind === 'verdict' && (e.value.verdict === 'goto' || e.value.verdict === 'jump') ? e.value.chain : undefined;

export function asProtocol(text: string | undefined): Protocol | undefined {
  return text === 'tcp' || text === 'udp' || text === 'sctp' ? text : undefined;
}

export function asPort(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,5}$/.test(text) ? Number(text) : undefined;
}

/** Count the integers an nft key stands for (`3`, `0-2`). */
export function keyNumbers(text: string): number[] | undefined {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = m[2] !== undefined ? Number(m[2]) : a;
  if (b < a || b - a > 65536) return undefined;
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

export function isMatch(e: NftExpr): e is Extract<NftExpr, { kind: 'match' }> {
  return e.kind === 'match';
}

/** The goto/jump verdict of a rule, if any. */
export function ruleTarget(r: NftRule): { verdict: 'goto' | 'jump'; chain: string } | undefined {
  for (const e of r.exprs) if (e.kind === 'verdict' && (e.verdict === 'goto' || e.verdict === 'jump') && e.chain) return { verdict: e.verdict, chain: e.chain };
  return undefined;
}

export const payloadIs = (o: NftOperand, field: string) => o.kind === 'payload' && (o.protocol === 'ip' || o.protocol === 'ip6') && o.field === field;

/** Every chain a rule can send a packet to (verdicts, inline vmaps, named verdict maps). */
export function ruleChainRefs(r: NftRule, sets: Map<string, NftSet>): string[] {
  const out: string[] = [];
  const fromMap = (m: NftMapRef) => {
    const els = m.kind === 'inline' ? m.elements : (sets.get(m.name)?.elements ?? []);
    for (const e of els) {
      const t = verdictTarget(e);
      if (t) out.push(t);
    }
  };
  for (const e of r.exprs) {
    if (e.kind === 'verdict' && e.chain) out.push(e.chain);
    else if (e.kind === 'vmap') fromMap(e.map);
  }
  return out;
}

/** How a table is named in evidence and object lists. */
export const tableLabel = (t: NftTable) => (t.implicit ? '(fragment)' : `${t.family} ${t.name}`);

/** Chains reachable from the table's base chains; undefined when the table has none (a fragment). */
export function reachableChains(ctx: Ctx): Set<string> | undefined {
  const bases = ctx.table.chains.filter((c) => c.hook);
  if (bases.length === 0) return undefined;
  const seen = new Set<string>();
  const todo = bases.map((c) => c.name);
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const c = ctx.chains.get(name);
    if (!c) continue;
    for (const r of c.rules) for (const ref of ruleChainRefs(r, ctx.sets)) if (!seen.has(ref)) todo.push(ref);
  }
  return seen;
}
