/**
 * The chain machine: one walk of netfilter chains for every rule language. Frames (`jump`
 * pushes, `goto` replaces, `return` and falling off a user chain pop), the base chain's policy,
 * depth and branch limits, NAT and mark effects, and shares (statistic, numgen, IPVS weights)
 * as branches live here, once. A dialect (iptables rules, nft rules) only says which rules a
 * chain holds and what one rule does to a packet: a list of alternatives, each a share of the
 * branch and the effects to apply in order.
 */
import { formatHostPort, formatIp, type Ip } from '../model/addr.js';
import type { TraceContext } from './context.js';
import type { PathState } from './match.js';
import { conditionOf, type Question, type ScenarioRun } from './scenario.js';
import type { Dialect, KernelFate, Share, TraceStep, UnknownReason } from './types.js';

export interface Branch {
  st: PathState;
  /** Share of new connections on this branch (within its scenario). */
  probability: number;
  steps: TraceStep[];
  /** A rule (not a policy) accepted or rewrote the packet somewhere. */
  claimed: boolean;
  masquerade: boolean;
  snatTo?: string;
  /** A kernel switch that decided the branch's end (forwarding off, rp_filter, …). */
  fate?: KernelFate;
  /** How the branch ended when it did not go on: dropped, rejected, or unknown. */
  end?: { readonly verdict: 'DROP' | 'REJECT' } | { readonly verdict: 'UNKNOWN'; readonly reason: UnknownReason };
}

export function cloneBranch(b: Branch): Branch {
  return { ...b, st: { ...b.st }, steps: [...b.steps] };
}

/** Where a step happened: the rule (or chain, virtual server) and its evidence. */
export interface StepRef {
  readonly dialect: Dialect;
  readonly table: string;
  readonly chain: string;
  readonly file: string | null;
  readonly line: number | null;
  readonly text?: string;
}

/** What a rule does, in order; the walk stops at the first terminal effect. */
export type Effect =
  | { readonly kind: 'mark'; readonly which: 'meta' | 'ct'; readonly value: number; readonly mask: number }
  | { readonly kind: 'log'; readonly prefix?: string }
  | { readonly kind: 'extension'; readonly name: string }
  | { readonly kind: 'matched' }
  | { readonly kind: 'nat-map-miss'; readonly nat: 'dnat' | 'snat' }
  | { readonly kind: 'accept' | 'drop' | 'return' }
  | { readonly kind: 'reject'; readonly with?: string }
  | { readonly kind: 'jump' | 'goto'; readonly chain: string }
  /** Destination NAT; `ip` undefined keeps the address (a port-only rewrite). */
  | { readonly kind: 'dnat'; readonly ip?: Ip; readonly port?: number; readonly firstOfRange?: boolean }
  | { readonly kind: 'redirect'; readonly port?: number; readonly ports?: string; readonly flags?: readonly string[] }
  | { readonly kind: 'snat'; readonly to?: string; readonly flags: readonly string[] }
  | { readonly kind: 'masquerade'; readonly flags: readonly string[] }
  /** IPVS sends the packet to a real server (Masq rewrites the destination like DNAT). */
  | { readonly kind: 'ipvs'; readonly ip: Ip; readonly address: string; readonly port?: number; readonly forward?: string; readonly weight?: number; readonly probability: number; readonly persistent?: number }
  | { readonly kind: 'unknown'; readonly reason: UnknownReason };

/** One way a rule can go for this packet: a share of the branch (1 when certain) and its effects. */
export interface Alternative {
  readonly share: number;
  readonly note?: Share;
  /** numgen values that no map element takes (the share that falls through). */
  readonly missing?: { readonly values: number; readonly of: number };
  /** Empty: the rule does not match on this share; the walk goes on with the next rule. */
  readonly effects: readonly Effect[];
}

/** End a branch here as UNKNOWN (a stage the evidence does not show), with its step. */
export function unknownHere(b: Branch, ref: StepRef, reason: UnknownReason): TableResult {
  b.steps.push({ ...stepAt(ref), code: 'unknown', reason });
  b.end = { verdict: 'UNKNOWN', reason };
  return { branch: b, verdict: 'unknown' };
}

export const certain = (effects: readonly Effect[]): Alternative[] => [{ share: 1, effects }];
export const noMatch: Alternative[] = [];

/** A rule language: which rules a chain holds and what one of them does. */
export interface ChainDialect<C, R> {
  /** The chain a jump/goto names, or undefined when it is not in the evidence. */
  findChain(name: string): C | undefined;
  /** Rules to try, in order (a big dispatch chain may give only those that can match). */
  rulesOf(c: C, st: PathState): readonly R[];
  evaluate(c: C, rule: R, st: PathState, ask: (q: Question) => boolean): readonly Alternative[];
  refOf(c: C, rule: R): StepRef;
  /**
   * For a chain whose rules may go on past a truncated table's cut: where the evidence ends and why
   * the walk cannot say what follows (the end of such a chain is not a return nor its policy).
   */
  cutAt?(c: C): { readonly ref: StepRef; readonly reason: UnknownReason } | undefined;
}

/** The chain a walk starts in and what its end means. */
export interface Entry<C> {
  readonly chain: C;
  readonly policy: 'ACCEPT' | 'DROP';
  /** built-in (iptables), base (nft), or a dispatch chain started at because its hook is not in the evidence. */
  readonly base: 'built-in' | 'base' | 'assumed-entry';
  readonly policyRef: StepRef;
}

export interface WalkEnv {
  readonly ctx: TraceContext;
  readonly run: ScenarioRun;
  /** Address a MASQUERADE picks: the route's preferred source, else the out interface's address. */
  readonly masqSource: (st: PathState) => string | undefined;
  /** Branches left to this run (shared by every walk of one trace run). */
  readonly budget: { branches: number };
}

export type TableVerdict = 'accept' | 'drop' | 'reject' | 'unknown';

export interface TableResult {
  readonly branch: Branch;
  readonly verdict: TableVerdict;
}

export const MAX_FRAMES = 64;
export const MAX_BRANCHES = 4096;

interface Frame<C, R> {
  readonly chain: C;
  readonly rules: readonly R[];
  pos: number;
}

const stepAt = (ref: StepRef, share?: Share): Pick<TraceStep, 'dialect' | 'table' | 'chain' | 'rule' | 'file' | 'text' | 'share'> => ({
  dialect: ref.dialect,
  table: ref.table,
  chain: ref.chain,
  rule: ref.line,
  file: ref.file,
  ...(ref.text !== undefined ? { text: ref.text } : {}),
  ...(share ? { share } : {}),
});

/** What applying one effect did to the walk. */
type Flow = { readonly kind: 'next' } | { readonly kind: 'push' | 'goto'; readonly chain: string } | { readonly kind: 'pop' } | { readonly kind: 'end'; readonly verdict: TableVerdict };

const hexMark = (n: number) => n >>> 0;

type EffectOf<K extends Effect['kind']> = Extract<Effect, { readonly kind: K }>;
type At = ReturnType<typeof stepAt>;

/** A meta mark or a conntrack mark set: `(before & ~mask) ^ value`, as xt_MARK/xt_CONNMARK and nft do. */
function applyMark(b: Branch, e: EffectOf<'mark'>, at: At): Flow {
  const before = e.which === 'ct' ? b.st.connmark : b.st.mark;
  const after = hexMark((before & ~e.mask) ^ e.value);
  if (e.which === 'ct') b.st.connmark = after;
  else b.st.mark = after;
  b.steps.push({ ...at, code: 'mark', which: e.which, before, after });
  return { kind: 'next' };
}

/** Destination NAT (DNAT or REDIRECT): where the packet goes changes, and the branch claims it. */
function applyDestinationNat(b: Branch, e: EffectOf<'dnat' | 'redirect'>, at: At): Flow {
  if (e.kind === 'dnat' && e.ip && e.ip.family === b.st.family) b.st.dst = e.ip;
  if (e.port !== undefined) b.st.dport = e.port;
  b.st.dnatDone = true;
  b.claimed = true;
  const to = formatHostPort(formatIp(b.st.dst), b.st.dport);
  if (e.kind === 'dnat') b.steps.push({ ...at, code: 'dnat', to, ...(e.firstOfRange ? { firstOfRange: true } : {}) });
  else b.steps.push({ ...at, code: 'redirect', to, ...(e.ports !== undefined ? { ports: e.ports } : {}), ...(e.flags?.length ? { flags: e.flags } : {}) });
  return { kind: 'end', verdict: 'accept' };
}

/** Source NAT changes who the packet is from, not where it goes: reported as masquerade, not as a claim. */
function applySourceNat(b: Branch, e: EffectOf<'snat' | 'masquerade'>, at: At, env: Pick<WalkEnv, 'masqSource'>): Flow {
  b.st.snatDone = true;
  b.masquerade = true;
  const to = e.kind === 'snat' ? e.to : env.masqSource(b.st);
  if (to) b.snatTo = to;
  b.steps.push({ ...at, code: e.kind, ...(to ? { to } : {}), flags: e.flags });
  return { kind: 'end', verdict: 'accept' };
}

/** IPVS picked a real server: Masq (the default) rewrites the destination like DNAT; the branch claims the packet. */
function applyIpvs(b: Branch, e: EffectOf<'ipvs'>, at: At): Flow {
  b.st.dst = e.ip;
  if (e.port !== undefined) b.st.dport = e.port;
  b.st.dnatDone = e.forward === undefined || e.forward === 'Masq';
  b.claimed = true;
  b.steps.push({
    ...at,
    code: 'ipvs-real-server',
    forward: e.forward ?? 'Masq',
    address: e.address,
    ...(e.port !== undefined ? { port: e.port } : {}),
    ...(e.weight !== undefined ? { weight: e.weight } : {}),
    probability: e.probability,
    ...(e.persistent !== undefined ? { persistent: e.persistent } : {}),
  });
  return { kind: 'end', verdict: 'accept' };
}

/**
 * Apply one effect to a branch, recording its step. Frame changes are returned for the walk to
 * make; NAT, marks and ends are done here, for every dialect and for IPVS.
 */
export function applyEffect(b: Branch, e: Effect, ref: StepRef, share: Share | undefined, env: Pick<WalkEnv, 'masqSource'>): Flow {
  const at = stepAt(ref, share);
  switch (e.kind) {
    case 'mark':
      return applyMark(b, e, at);
    case 'log':
      b.steps.push({ ...at, code: 'log', ...(e.prefix !== undefined ? { prefix: e.prefix } : {}) });
      return { kind: 'next' };
    case 'extension':
      b.steps.push({ ...at, code: 'extension', name: e.name });
      return { kind: 'next' };
    case 'matched':
      b.steps.push({ ...at, code: 'matched' });
      return { kind: 'next' };
    case 'nat-map-miss':
      b.steps.push({ ...at, code: 'nat-map-miss', nat: e.nat });
      return { kind: 'next' };
    case 'accept':
      b.steps.push({ ...at, code: 'accept' });
      b.claimed = true;
      return { kind: 'end', verdict: 'accept' };
    case 'drop':
      b.steps.push({ ...at, code: 'drop' });
      return { kind: 'end', verdict: 'drop' };
    case 'reject':
      b.steps.push({ ...at, code: 'reject', ...(e.with !== undefined ? { with: e.with } : {}) });
      return { kind: 'end', verdict: 'reject' };
    case 'return':
      b.steps.push({ ...at, code: 'return' });
      return { kind: 'pop' };
    case 'jump':
    case 'goto':
      // The step is recorded by the walk, which knows whether the chain exists.
      return { kind: e.kind === 'jump' ? 'push' : 'goto', chain: e.chain };
    case 'dnat':
    case 'redirect':
      return applyDestinationNat(b, e, at);
    case 'snat':
    case 'masquerade':
      return applySourceNat(b, e, at, env);
    case 'ipvs':
      return applyIpvs(b, e, at);
    case 'unknown':
      b.steps.push({ ...at, code: 'unknown', reason: e.reason });
      b.end = { verdict: 'UNKNOWN', reason: e.reason };
      return { kind: 'end', verdict: 'unknown' };
  }
}

/**
 * Split a branch over a rule's alternatives: each gets its share of the probability (the first
 * reuses the branch itself). A share of 0 is dropped: nothing takes that road.
 */
export function splitBranch(b: Branch, alternatives: readonly Alternative[], budget: { branches: number }): { branch: Branch; alt: Alternative }[] {
  if (alternatives.length === 1 && alternatives[0].share === 1) return [{ branch: b, alt: alternatives[0] }];
  const out: { branch: Branch; alt: Alternative }[] = [];
  const live = alternatives.filter((a) => a.share > 0);
  live.forEach((alt, i) => {
    const nb = i === live.length - 1 ? b : cloneBranch(b);
    nb.probability *= alt.share;
    if (i > 0) budget.branches--;
    out.push({ branch: nb, alt });
  });
  return out;
}

/** A branch, its frames, and the alternative of the last rule it still has to apply (after a split). */
interface Work<C, R> {
  readonly b: Branch;
  readonly stack: Frame<C, R>[];
  readonly pending?: { readonly alt: Alternative; readonly ref: StepRef };
}

/** Whether a branch is still walking the table ('on') or has left it with a result ('over'). */
type Going = 'on' | 'over';

/**
 * One walk of a table from its base chain: a stack of branches still walking (split off by
 * probabilistic rules), each with its frames; the results of those that left.
 */
class ChainWalk<C, R> {
  readonly results: TableResult[] = [];
  private readonly work: Work<C, R>[];

  constructor(
    private readonly d: ChainDialect<C, R>,
    private readonly entry: Entry<C>,
    start: Branch,
    private readonly env: WalkEnv,
  ) {
    this.work = [{ b: start, stack: [this.frame(entry.chain, start.st)] }];
  }

  run(): TableResult[] {
    while (this.work.length > 0) {
      const w = this.work.pop()!;
      if (w.pending && this.runAlternative(w, w.pending.alt, w.pending.ref) === 'over') continue;
      while (this.nextRule(w) === 'on');
    }
    return this.results;
  }

  private frame(c: C, st: PathState): Frame<C, R> {
    return { chain: c, rules: this.d.rulesOf(c, st), pos: 0 };
  }

  /** The base chain ran out: its policy decides, unless the entry was assumed (then nobody knows). */
  private policy(w: Work<C, R>): void {
    const entry = this.entry;
    if (entry.base === 'assumed-entry') {
      // The hook's built-in chain is not in the evidence: its other rules and its policy are unknown.
      const ref = entry.policyRef;
      this.unknown(w, ref, { code: 'hook-unknown', chain: ref.chain, table: ref.table, hook: w.b.st.hook });
      return;
    }
    w.b.steps.push({ ...stepAt(entry.policyRef), code: 'policy', policy: entry.policy, base: entry.base });
    this.results.push({ branch: w.b, verdict: entry.policy === 'DROP' ? 'drop' : 'accept' });
  }

  private unknown(w: Work<C, R>, ref: StepRef, reason: UnknownReason): void {
    applyEffect(w.b, { kind: 'unknown', reason }, ref, undefined, this.env);
    this.results.push({ branch: w.b, verdict: 'unknown' });
  }

  /** The top frame has no rule left: a cut chain is unknown; else return to the caller, or the policy. */
  private frameEnd(w: Work<C, R>, top: Frame<C, R>): Going {
    const cut = this.d.cutAt?.(top.chain);
    if (cut) {
      this.unknown(w, cut.ref, cut.reason);
      return 'over';
    }
    w.stack.pop();
    if (w.stack.length === 0) {
      this.policy(w);
      return 'over';
    }
    return 'on';
  }

  /** The next rule of the branch's top frame: evaluated, split over its alternatives, the last one applied here. */
  private nextRule(w: Work<C, R>): Going {
    const { d, env } = this;
    const top = w.stack[w.stack.length - 1];
    const rule = top?.rules[top.pos++];
    if (rule === undefined) return this.frameEnd(w, top);
    const ref = d.refOf(top.chain, rule);
    const asked: { q: Question; holds: boolean }[] = [];
    const alternatives = d.evaluate(top.chain, rule, w.b.st, (q) => {
      const holds = env.run.answer(q);
      asked.push({ q, holds });
      return holds;
    });
    // Every undecided match this rule met is on the path: its answer is the scenario's condition.
    for (const a of asked) w.b.steps.push({ ...stepAt(ref), code: 'assumed', condition: conditionOf({ question: a.q, holds: a.holds }) });
    if (alternatives.length === 0) return 'on';
    if (alternatives.length > 1 && env.budget.branches < alternatives.length) {
      this.unknown(w, ref, { code: 'too-many-branches', limit: MAX_BRANCHES });
      return 'over';
    }
    const parts = splitBranch(w.b, alternatives, env.budget);
    if (parts.length === 0) return 'over'; // every share was 0: nothing takes this road
    // The other parts resume at the next rule of a copy of this frame stack, after their own effects.
    for (const p of parts.slice(0, -1)) this.work.push({ b: p.branch, stack: w.stack.map((f) => ({ ...f })), pending: { alt: p.alt, ref } });
    return this.runAlternative(w, parts[parts.length - 1].alt, ref);
  }

  /** Apply an alternative's effects; 'over' when the branch left the chain. */
  private runAlternative(w: Work<C, R>, alt: Alternative, ref: StepRef): Going {
    if (alt.effects.length === 0) {
      if (alt.note?.kind === 'statistic' || alt.note?.kind === 'numgen') w.b.steps.push({ ...stepAt(ref), code: 'not-taken', probability: alt.share, ...(alt.missing ? { missing: alt.missing } : {}) });
      return 'on';
    }
    const last = alt.effects.length - 1;
    for (let i = 0; i <= last; i++) {
      const share = i === last ? alt.note : undefined;
      const flow = applyEffect(w.b, alt.effects[i], ref, share, this.env);
      switch (flow.kind) {
        case 'next':
          continue;
        case 'end':
          this.results.push({ branch: w.b, verdict: flow.verdict });
          return 'over';
        case 'pop':
          w.stack.pop();
          if (w.stack.length === 0) {
            this.policy(w);
            return 'over';
          }
          return 'on';
        case 'push':
        case 'goto':
          return this.enter(w, flow.kind === 'push' ? 'jump' : 'goto', flow.chain, ref, share);
      }
    }
    return 'on';
  }

  /** A jump (a new frame) or a goto (replaces the top frame) to a chain, if the evidence holds it. */
  private enter(w: Work<C, R>, via: 'jump' | 'goto', chain: string, ref: StepRef, share: Share | undefined): Going {
    w.b.steps.push({ ...stepAt(ref, share), code: via, target: chain });
    const target = this.d.findChain(chain);
    if (target === undefined) {
      // A chain the evidence does not hold (cut out of a paste): what it does is unknown.
      this.unknown(w, ref, { code: 'chain-missing', chain, via });
      return 'over';
    }
    if (w.stack.length >= MAX_FRAMES) {
      this.unknown(w, ref, { code: 'too-deep', limit: MAX_FRAMES });
      return 'over';
    }
    const f = this.frame(target, w.b.st);
    if (via === 'goto') w.stack[w.stack.length - 1] = f;
    else w.stack.push(f);
    return 'on';
  }
}

/** Walk one base chain (and every chain it reaches) for a branch; one result per branch that leaves it. */
export function walkChain<C, R>(d: ChainDialect<C, R>, entry: Entry<C>, start: Branch, env: WalkEnv): TableResult[] {
  return new ChainWalk(d, entry, start, env).run();
}
