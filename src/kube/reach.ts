/**
 * Which chains of an iptables table a packet can reach: everything a built-in chain jumps or goes
 * to, transitively. A chain nothing reaches does nothing to any packet, whatever it holds — on an
 * IPVS or nftables node, KUBE-SVC/KUBE-SEP chains left by an earlier iptables mode are such chains.
 * Only a whole table that holds its built-in chains can say: in a grep, a restore payload (no
 * built-in chain) or a table cut before COMMIT, what reaches a chain is not all in the evidence, and
 * the answer is undefined.
 */
import type { Table } from '../model/netfilter.js';

/**
 * Chains reachable from the table's built-in chains; undefined when the table holds none of them.
 * Not kept: the resolver asks once per table (a set of ~100k names at 10k Services).
 */
export function reachableChains(t: Table): ReadonlySet<string> | undefined {
  const roots = t.chains.filter((c) => c.builtin && c.line !== undefined);
  // A table cut before COMMIT may have lost the very jumps that reach a chain.
  if (roots.length === 0 || t.implicit || !t.committed) return undefined;
  const seen = new Set<string>(roots.map((c) => c.name));
  const todo = roots.map((c) => c.name);
  while (todo.length > 0) {
    const c = t.chainsByName.get(todo.pop()!);
    if (!c) continue;
    for (const r of c.rules) {
      const target = r.target;
      if (!target || (target.kind !== 'jump' && target.kind !== 'goto') || seen.has(target.chain)) continue;
      seen.add(target.chain);
      todo.push(target.chain);
    }
  }
  return seen;
}
