import { appendAll } from '../source/index.js';
/**
 * The kernel's chain validation, incrementally. After a rule or verdict-map element is added,
 * the kernel walks every path from the table's base chains (nft_table_validate →
 * nft_chain_validate): a loop, or a path of NFT_JUMP_STACK_SIZE (16) jumps, fails that command
 * with EMLINK ("Too many links"); a statement its base chain's type or hook does not allow
 * (masquerade outside nat postrouting, dnat outside nat prerouting/output, reject outside
 * prerouting/input/forward/output: the expressions' validate callbacks) fails it with EOPNOTSUPP. What no
 * base chain reaches is not checked.
 *
 * Walking the whole table after each command would make a kube-proxy transaction of n Services
 * cost O(n²); instead the longest distance from a base chain to each reachable chain (`level`)
 * and the users of each map are kept, and a new edge C → T is checked by walking only below T.
 * Anything that removes edges marks the state stale; it is rebuilt at the next check.
 */

export interface JumpChain {
  readonly name: string;
  readonly base: boolean;
  /** Base chains' `type/hook`. */
  readonly context?: string;
  /** Per rule: chains it jumps or goes to, sets/maps it looks up, statements with hook rules. */
  readonly rules: readonly { readonly chains: readonly string[]; readonly sets: readonly string[]; readonly stmts: readonly string[] }[];
}

/** Where the kernel allows a statement (net/netfilter nft_masq, nft_nat, nft_redir, nft_reject validate). */
const ALLOWED: Record<string, (type: string, hook: string) => boolean> = {
  masquerade: (t, h) => t === 'nat' && h === 'postrouting',
  snat: (t, h) => t === 'nat' && (h === 'postrouting' || h === 'input'),
  dnat: (t, h) => t === 'nat' && (h === 'prerouting' || h === 'output'),
  redirect: (t, h) => t === 'nat' && (h === 'prerouting' || h === 'output'),
  // prerouting too since Linux 5.x (kube-proxy's comments still say input/forward/output only)
  reject: (_t, h) => h === 'input' || h === 'forward' || h === 'output' || h === 'prerouting',
};
export const VALIDATED_STATEMENTS: ReadonlySet<string> = new Set(Object.keys(ALLOWED));

function allowed(stmt: string, context: string): boolean {
  const [type, hook] = context.split('/');
  return ALLOWED[stmt]?.(type, hook) ?? true;
}

export type Verdict = 'ok' | 'mlink' | 'notsupp';

export interface JumpSource {
  chain(name: string): JumpChain | undefined;
  chains(): Iterable<JumpChain>;
  /** Chains the verdicts of a map's elements go to. */
  mapTargets(set: string): Iterable<string>;
}

const LIMIT = 16;

export class JumpGraph {
  private level = new Map<string, number>();
  /** The base chains' `type/hook` each reachable chain runs in. */
  private contexts = new Map<string, Set<string>>();
  private users = new Map<string, Set<string>>();
  private stale = true;

  constructor(private readonly src: JumpSource) {}

  /** Edges went away (a rule, chain, element or map deleted or flushed): rebuild before the next check. */
  invalidate(): void {
    this.stale = true;
  }

  private out(name: string): string[] {
    const c = this.src.chain(name);
    if (!c) return [];
    const next: string[] = [];
    for (const r of c.rules) {
      appendAll(next, r.chains);
      for (const s of r.sets) appendAll(next, this.src.mapTargets(s));
    }
    return next;
  }

  /** Raise levels below `name` to at least `lvl` (longest path from a base chain). */
  private relax(name: string, lvl: number): void {
    const cur = this.level.get(name);
    if ((cur !== undefined && cur >= lvl) || lvl > LIMIT) return;
    this.level.set(name, lvl);
    for (const n of this.out(name)) this.relax(n, lvl + 1);
  }

  private spread(name: string, ctx: string): void {
    let cs = this.contexts.get(name);
    if (cs?.has(ctx)) return;
    if (!cs) this.contexts.set(name, (cs = new Set()));
    cs.add(ctx);
    for (const n of this.out(name)) this.spread(n, ctx);
  }

  private rebuild(): void {
    this.level = new Map();
    this.contexts = new Map();
    this.users = new Map();
    for (const c of this.src.chains()) for (const r of c.rules) for (const s of r.sets) this.use(s, c.name);
    for (const c of this.src.chains())
      if (c.base) {
        this.relax(c.name, 0);
        if (c.context) this.spread(c.name, c.context);
      }
    this.stale = false;
  }

  private use(set: string, chain: string): void {
    let u = this.users.get(set);
    if (!u) this.users.set(set, (u = new Set()));
    u.add(chain);
  }

  /** A base chain was created. */
  addBase(name: string, context: string): void {
    if (this.stale) return;
    this.level.set(name, 0);
    this.contexts.set(name, new Set([context]));
  }

  /**
   * A rule (already in its chain) jumps to `targets` and looks up `sets`: true when the kernel
   * accepts it. On acceptance the state includes the new edges.
   */
  addRule(chain: string, targets: readonly string[], sets: readonly string[], stmts: readonly string[]): Verdict {
    if (this.stale) this.rebuild();
    for (const s of sets) this.use(s, chain);
    for (const ctx of this.contexts.get(chain) ?? []) for (const st of stmts) if (!allowed(st, ctx)) return this.reject('notsupp');
    const all = [...targets, ...sets.flatMap((s) => [...this.src.mapTargets(s)])];
    return this.addEdges([chain], all);
  }

  /** A verdict-map element (already in the map) goes to `targets`. */
  addMapElement(set: string, targets: readonly string[]): Verdict {
    if (this.stale) this.rebuild();
    return this.addEdges([...(this.users.get(set) ?? [])], targets);
  }

  /** Statements in the chains below `names` (themselves included). */
  private stmtsBelow(names: readonly string[]): Set<string> {
    const seen = new Set<string>();
    const out = new Set<string>();
    const walk = (n: string) => {
      if (seen.has(n)) return;
      seen.add(n);
      for (const r of this.src.chain(n)?.rules ?? []) for (const st of r.stmts) out.add(st);
      for (const m of this.out(n)) walk(m);
    };
    names.forEach(walk);
    return out;
  }

  private addEdges(from: readonly string[], targets: readonly string[]): Verdict {
    if (targets.length === 0) return 'ok';
    for (const c of from) {
      const lvl = this.level.get(c);
      if (lvl === undefined) continue; // no base chain reaches c: the kernel does not look
      // A path back to c is a loop through the new edge: infinitely high.
      const below = this.heights(c);
      for (const t of targets) if (lvl + 1 + below(t) >= LIMIT) return this.reject('mlink');
      const ctxs = this.contexts.get(c);
      if (ctxs?.size) {
        const stmts = this.stmtsBelow(targets);
        for (const ctx of ctxs) for (const st of stmts) if (!allowed(st, ctx)) return this.reject('notsupp');
      }
    }
    for (const c of from) {
      const lvl = this.level.get(c);
      if (lvl !== undefined) for (const t of targets) this.relax(t, lvl + 1);
      for (const ctx of this.contexts.get(c) ?? []) for (const t of targets) this.spread(t, ctx);
    }
    return 'ok';
  }

  /**
   * The whole table as the kernel checks it at commit (nf_tables_validate): false when a base
   * chain reaches a loop, a path of 16 jumps, or a statement its type or hook does not allow.
   */
  validAll(): boolean {
    this.rebuild();
    const below = this.heights();
    for (const c of this.src.chains()) if (c.base && below(c.name) >= LIMIT) return false;
    for (const [name, ctxs] of this.contexts) for (const r of this.src.chain(name)?.rules ?? []) for (const st of r.stmts) for (const ctx of ctxs) if (!allowed(st, ctx)) return false;
    return true;
  }

  /**
   * Jump height below a chain (memoised, capped at LIMIT); Infinity on a loop, or on reaching
   * `stop` (the chain a new edge leaves from: a loop through that edge).
   */
  private heights(stop?: string): (name: string) => number {
    const height = new Map<string, number>();
    const onPath = new Set<string>();
    const below = (name: string): number => {
      if (name === stop) return Infinity;
      const known = height.get(name);
      if (known !== undefined) return known;
      if (onPath.has(name)) return Infinity;
      onPath.add(name);
      let h = 0;
      for (const n of this.out(name)) {
        h = Math.max(h, 1 + below(n));
        if (h >= LIMIT) break;
      }
      onPath.delete(name);
      height.set(name, h);
      return h;
    };
    return below;
  }

  /** The caller takes the edge back out: the derived state may have been raised on its account. */
  private reject(v: Exclude<Verdict, 'ok'>): Verdict {
    this.stale = true;
    return v;
  }
}
