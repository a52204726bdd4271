/**
 * Walking one iptables table's built-in chain for a packet, with the kernel's semantics:
 * matches are ANDed, `-j` pushes a frame, `-g` replaces it, RETURN and falling off a user chain
 * return to the caller, a built-in chain's end applies its policy, terminal targets end the
 * table. `-m statistic` and matches kpx cannot decide split the walk into branches.
 */
import type { Chain, Rule, Ruleset } from '../model/netfilter.js';
import { formatHostPort, formatIp, parseIp } from '../model/addr.js';
import type { TraceContext } from './context.js';
import { evaluateMatch, type PathState } from './match.js';
import type { TraceStep } from './types.js';

export interface Branch {
  st: PathState;
  probability: number;
  conditions: string[];
  steps: TraceStep[];
  /** A rule (not a policy) accepted the packet somewhere. */
  claimed: boolean;
  masquerade: boolean;
  snatTo?: string;
  /** Terminal verdict once reached. */
  stopped?: 'DROP' | 'REJECT';
}

export type TableVerdict = 'accept' | 'drop' | 'reject';

export function cloneBranch(b: Branch): Branch {
  return { ...b, st: { ...b.st }, conditions: [...b.conditions], steps: [...b.steps] };
}

interface Frame {
  chain: Chain;
  candidates: readonly number[] | undefined;
  pos: number;
}

const MAX_FRAMES = 64;
const MAX_BRANCHES = 4096;

/** Rules of big chains indexed by exact destination, so a trace does not scan 10k dispatch rules. */
interface DispatchIndex {
  byDst: Map<string, number[]>;
  wildcard: number[];
}
const indexCache = new WeakMap<Chain, DispatchIndex | null>();

function dispatchIndex(chain: Chain): DispatchIndex | null {
  let idx = indexCache.get(chain);
  if (idx !== undefined) return idx;
  if (chain.rules.length < 64) {
    indexCache.set(chain, null);
    return null;
  }
  const byDst = new Map<string, number[]>();
  const wildcard: number[] = [];
  chain.rules.forEach((r, i) => {
    const m = r.matches.find((x) => x.kind === 'address' && x.dir === 'dst' && !x.negated && x.cidr && x.cidr.prefix === (x.cidr.family === 4 ? 32 : 128));
    if (m && m.kind === 'address' && m.cidr) {
      const key = `${m.cidr.family}:${m.cidr.network}`;
      const list = byDst.get(key);
      if (list) list.push(i);
      else byDst.set(key, [i]);
    } else wildcard.push(i);
  });
  idx = { byDst, wildcard };
  indexCache.set(chain, idx);
  return idx;
}

/** Rule indexes that can match this destination, in chain order. */
function candidatesFor(chain: Chain, st: PathState): readonly number[] | undefined {
  const idx = dispatchIndex(chain);
  if (!idx) return undefined;
  const exact = idx.byDst.get(`${st.dst.family}:${st.dst.value}`) ?? [];
  if (exact.length === 0) return idx.wildcard;
  const out: number[] = [];
  let a = 0;
  let b = 0;
  while (a < exact.length || b < idx.wildcard.length) {
    if (b >= idx.wildcard.length || (a < exact.length && exact[a] < idx.wildcard[b])) out.push(exact[a++]);
    else out.push(idx.wildcard[b++]);
  }
  return out;
}

function nextRule(f: Frame): Rule | undefined {
  if (f.candidates) {
    if (f.pos >= f.candidates.length) return undefined;
    return f.chain.rules[f.candidates[f.pos++]];
  }
  return f.chain.rules[f.pos++];
}

const step = (r: Rule, action: string): TraceStep => ({ table: r.table, chain: r.chain, rule: r.line, file: r.file, action, text: r.raw });

interface Work {
  b: Branch;
  stack: Frame[];
  base: Chain;
}

export interface TableResult {
  readonly branch: Branch;
  readonly verdict: TableVerdict;
}

/** Address the packet is masqueraded to: the route's preferred source, else the out interface's address. */
export type MasqueradeSource = (st: PathState) => string | undefined;

export function walkTable(rs: Ruleset, tableName: string, chainName: string, start: Branch, ctx: TraceContext, masqSource: MasqueradeSource): TableResult[] {
  const table = rs.tables.find((t) => t.name === tableName);
  const base = table?.chainsByName.get(chainName);
  if (!table || !base) return [{ branch: start, verdict: 'accept' }];
  const results: TableResult[] = [];
  const work: Work[] = [{ b: start, stack: [{ chain: base, candidates: candidatesFor(base, start.st), pos: 0 }], base }];
  let branches = 1;

  const finishPolicy = (w: Work) => {
    const policy = w.base.policy === 'DROP' ? 'drop' : 'accept';
    w.b.steps.push({ table: tableName, chain: w.base.name, rule: w.base.line ?? null, file: rs.file, action: `end of built-in chain: policy ${policy.toUpperCase()}` });
    results.push({ branch: w.b, verdict: policy });
  };

  while (work.length > 0) {
    const w = work.pop()!;
    let done = false;
    while (!done) {
      const frame = w.stack[w.stack.length - 1];
      if (!frame) {
        finishPolicy(w);
        break;
      }
      const rule = nextRule(frame);
      if (!rule) {
        w.stack.pop();
        if (w.stack.length === 0) {
          finishPolicy(w);
          break;
        }
        continue;
      }
      // Evaluate every match; any false decides at once.
      let takeP = 1;
      const unknowns: string[] = [];
      let fails = false;
      for (const m of rule.matches) {
        if (m.kind === 'statistic') {
          const p = m.mode === 'random' ? m.probability : 1 / m.every;
          takeP *= m.negated ? 1 - p : p;
          continue;
        }
        const r = evaluateMatch(m, w.b.st, ctx);
        if (r === false) {
          fails = true;
          break;
        }
        if (r !== true) unknowns.push(r.unknown);
      }
      if (fails) continue;
      if (unknowns.length > 0 || takeP < 1) {
        if (branches > MAX_BRANCHES) {
          w.b.conditions.push(`trace stopped: more than ${MAX_BRANCHES} branches`);
          results.push({ branch: w.b, verdict: 'accept' });
          done = true;
          break;
        }
        // Not taken: the rule is skipped. With unknowns, "the match did not hold" is its own scenario.
        if (unknowns.length > 0) {
          const skip = cloneBranch(w.b);
          skip.conditions.push(`if not: ${unknowns.join('; ')}`);
          skip.steps.push(step(rule, `undecided match assumed false: ${unknowns.join('; ')}`));
          work.push({ b: skip, stack: w.stack.map((f) => ({ ...f })), base: w.base });
          branches++;
          w.b.conditions.push(`if: ${unknowns.join('; ')}`);
        }
        if (takeP < 1) {
          const miss = cloneBranch(w.b);
          miss.probability *= 1 - takeP;
          miss.steps.push(step(rule, `statistic: not taken (${formatPct(1 - takeP)})`));
          if (miss.probability > 0) {
            work.push({ b: miss, stack: w.stack.map((f) => ({ ...f })), base: w.base });
            branches++;
          }
          w.b.probability *= takeP;
          if (w.b.probability === 0) {
            done = true;
            break;
          }
        }
      }
      // The rule matched on this branch: run its target.
      const t = rule.target;
      const statNote = takeP < 1 ? ` (statistic: taken, ${formatPct(takeP)})` : '';
      if (!t) {
        w.b.steps.push(step(rule, `matched, no target${statNote}`));
        continue;
      }
      switch (t.kind) {
        case 'jump':
        case 'goto': {
          const target = table.chainsByName.get(t.chain);
          if (!target) {
            w.b.steps.push(step(rule, `${t.kind} ${t.chain}: chain is not declared (iptables-restore would reject this table)${statNote}`));
            w.b.conditions.push(`dangling ${t.kind} to ${t.chain}`);
            continue;
          }
          if (w.stack.length >= MAX_FRAMES) {
            w.b.steps.push(step(rule, `${t.kind} ${t.chain}: too deep (loop?)`));
            w.b.conditions.push('chain loop');
            results.push({ branch: w.b, verdict: 'drop' });
            done = true;
            break;
          }
          w.b.steps.push(step(rule, `${t.kind} ${t.chain}${statNote}`));
          const f: Frame = { chain: target, candidates: candidatesFor(target, w.b.st), pos: 0 };
          if (t.kind === 'goto') w.stack[w.stack.length - 1] = f;
          else w.stack.push(f);
          break;
        }
        case 'return':
          w.b.steps.push(step(rule, `RETURN${statNote}`));
          w.stack.pop();
          if (w.stack.length === 0) {
            finishPolicy(w);
            done = true;
          }
          break;
        case 'accept':
          w.b.steps.push(step(rule, `ACCEPT${statNote}`));
          w.b.claimed = true;
          results.push({ branch: w.b, verdict: 'accept' });
          done = true;
          break;
        case 'drop':
          w.b.steps.push(step(rule, `DROP${statNote}`));
          results.push({ branch: w.b, verdict: 'drop' });
          done = true;
          break;
        case 'reject':
          w.b.steps.push(step(rule, `REJECT${t.with ? ` with ${t.with}` : ''}${statNote}`));
          results.push({ branch: w.b, verdict: 'reject' });
          done = true;
          break;
        case 'queue':
          w.b.steps.push(step(rule, 'QUEUE: a userspace program decides'));
          w.b.conditions.push('QUEUE: userspace decides the verdict');
          results.push({ branch: w.b, verdict: 'accept' });
          done = true;
          break;
        case 'dnat': {
          const to = t.to[0];
          const ip = to?.ip ? parseIp(to.ip) : undefined;
          if (ip && ip.family === w.b.st.family) {
            w.b.st.dst = ip;
            if (to.port !== undefined) w.b.st.dport = to.port;
          }
          w.b.st.dnatDone = true;
          w.b.claimed = true;
          w.b.steps.push(step(rule, `DNAT to ${formatHostPort(formatIp(w.b.st.dst), w.b.st.dport)}${t.to.length > 1 || to?.ipEnd || to?.portEnd ? ' (first of a range)' : ''}${statNote}`));
          results.push({ branch: w.b, verdict: 'accept' });
          done = true;
          break;
        }
        case 'redirect': {
          const port = t.toPorts ? Number(t.toPorts.split('-')[0]) : undefined;
          if (port !== undefined && Number.isFinite(port)) w.b.st.dport = port;
          w.b.st.dnatDone = true;
          w.b.claimed = true;
          w.b.steps.push(step(rule, `REDIRECT to a local port ${t.toPorts ?? ''}${statNote}`));
          results.push({ branch: w.b, verdict: 'accept' });
          done = true;
          break;
        }
        case 'snat':
        case 'masquerade': {
          // Source NAT changes who the packet is from, not where it goes: reported as masquerade, not as a claim.
          w.b.st.snatDone = true;
          w.b.masquerade = true;
          const to = t.kind === 'snat' ? t.to[0]?.ip : masqSource(w.b.st);
          if (to) w.b.snatTo = to;
          const flags = t.kind === 'masquerade' ? (t.randomFully ? ' --random-fully' : '') : t.randomFully ? ' --random-fully' : '';
          w.b.steps.push(step(rule, `${t.kind === 'snat' ? 'SNAT' : 'MASQUERADE'}${to ? ` to ${to}` : ''}${flags}${statNote}`));
          results.push({ branch: w.b, verdict: 'accept' });
          done = true;
          break;
        }
        case 'mark': {
          const before = t.connmark ? w.b.st.connmark : w.b.st.mark;
          const after = ((before & ~t.mask) ^ t.value) >>> 0;
          if (t.connmark) w.b.st.connmark = after;
          else w.b.st.mark = after;
          w.b.steps.push(step(rule, `${t.connmark ? 'CONNMARK' : 'MARK'} ${hex(before)} → ${hex(after)}${statNote}`));
          break;
        }
        case 'log':
          w.b.steps.push(step(rule, `LOG${t.prefix ? ` "${t.prefix}"` : ''} (continues)${statNote}`));
          break;
        case 'extension':
          if (t.terminating) {
            w.b.steps.push(step(rule, `${t.name}: terminal target kpx does not model`));
            w.b.conditions.push(`${t.name} decides the verdict`);
            results.push({ branch: w.b, verdict: 'accept' });
            done = true;
          } else w.b.steps.push(step(rule, `${t.name} (continues)${statNote}`));
          break;
      }
    }
  }
  return results;
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

export function formatPct(p: number): string {
  const v = p * 100;
  return `${Number.isInteger(v) ? v : v.toFixed(v >= 10 ? 2 : 3)}%`;
}
