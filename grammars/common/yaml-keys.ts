/**
 * YAML mapping keys that are collections (`? [a, b]: c`, or the `{{{…` a broken flow mapping
 * leaves). The yaml package's toJS() turns such a key into a string by printing the key's whole
 * subtree, at every level of nesting, each print as long as what is below it: 3,000 nested `{`
 * in an 11 KB paste took minutes (found by the fuzz run, test/fuzz). No Kubernetes object, kube-proxy
 * configuration or kpx lint configuration has such keys: the pairs are left out before toJS, and
 * counted, so the reader can say so.
 */
import { isCollection, visit, type Document, type Node } from 'yaml';

export interface DroppedKeys {
  /** How many pairs were left out. */
  readonly count: number;
  /** The first such key (for its position). */
  readonly first?: Node;
}

/** Remove every pair whose key is a list or a map from `doc`, in place. */
export function dropCollectionKeys(doc: Document): DroppedKeys {
  let count = 0;
  let first: Node | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (!isCollection(pair.key)) return undefined;
      count++;
      first ??= pair.key;
      return visit.REMOVE;
    },
  });
  return { count, first };
}
