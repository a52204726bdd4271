/**
 * The kernel's jump validation, incrementally. After a rule or verdict-map element adds jumps,
 * the kernel walks every path from the table's base chains (nft_table_validate →
 * nft_chain_validate): a loop, or a path of NFT_JUMP_STACK_SIZE (16) jumps, fails that command
 * with EMLINK ("Too many links"). Loops no base chain reaches are accepted.
 *
 * Walking the whole table after each command would make a kube-proxy transaction of n Services
 * cost O(n²); instead the longest distance from a base chain to each reachable chain (`level`)
 * and the users of each map are kept, and a new edge C → T is checked by walking only below T.
 * Anything that removes edges marks the state stale; it is rebuilt at the next check.
 */

export interface JumpChain {
  readonly name: string;
  readonly base: boolean;
  /** Per rule: chains it jumps or goes to, and sets/maps it looks up. */
  readonly rules: readonly { readonly chains: readonly string[]; readonly sets: readonly string[] }[];
}

export interface JumpSource {
  chain(name: string): JumpChain | undefined;
  chains(): Iterable<JumpChain>;
  /** Chains the verdicts of a map's elements go to. */
  mapTargets(set: string): Iterable<string>;
}

const LIMIT = 16;

export class JumpGraph {
  private level = new Map<string, number>();
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
      next.push(...r.chains);
      for (const s of r.sets) next.push(...this.src.mapTargets(s));
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

  private rebuild(): void {
    this.level = new Map();
    this.users = new Map();
    for (const c of this.src.chains()) for (const r of c.rules) for (const s of r.sets) this.use(s, c.name);
    for (const c of this.src.chains()) if (c.base) this.relax(c.name, 0);
    this.stale = false;
  }

  private use(set: string, chain: string): void {
    let u = this.users.get(set);
    if (!u) this.users.set(set, (u = new Set()));
    u.add(chain);
  }

  /** A base chain was created. */
  addBase(name: string): void {
    if (!this.stale) this.level.set(name, 0);
  }

  /**
   * A rule (already in its chain) jumps to `targets` and looks up `sets`: true when the kernel
   * accepts it. On acceptance the state includes the new edges.
   */
  addRule(chain: string, targets: readonly string[], sets: readonly string[]): boolean {
    if (this.stale) this.rebuild();
    for (const s of sets) this.use(s, chain);
    const all = [...targets, ...sets.flatMap((s) => [...this.src.mapTargets(s)])];
    return this.addEdges([chain], all);
  }

  /** A verdict-map element (already in the map) goes to `targets`. */
  addMapElement(set: string, targets: readonly string[]): boolean {
    if (this.stale) this.rebuild();
    return this.addEdges([...(this.users.get(set) ?? [])], targets);
  }

  private addEdges(from: readonly string[], targets: readonly string[]): boolean {
    if (targets.length === 0) return true;
    const height = new Map<string, number>();
    const onPath = new Set<string>();
    // Height below `name`; Infinity when it reaches `stop` (a loop through the new edge).
    const below = (name: string, stop: string): number => {
      if (name === stop) return Infinity;
      const known = height.get(name);
      if (known !== undefined) return known;
      if (onPath.has(name)) return Infinity;
      onPath.add(name);
      let h = 0;
      for (const n of this.out(name)) {
        h = Math.max(h, 1 + below(n, stop));
        if (h >= LIMIT) break;
      }
      onPath.delete(name);
      height.set(name, h);
      return h;
    };
    for (const c of from) {
      const lvl = this.level.get(c);
      if (lvl === undefined) continue; // no base chain reaches c: the kernel does not look
      height.clear();
      for (const t of targets) if (lvl + 1 + below(t, c) >= LIMIT) return this.reject();
    }
    for (const c of from) {
      const lvl = this.level.get(c);
      if (lvl !== undefined) for (const t of targets) this.relax(t, lvl + 1);
    }
    return true;
  }

  /** The caller takes the edge back out: the levels may have been raised on its account. */
  private reject(): false {
    this.stale = true;
    return false;
  }
}
