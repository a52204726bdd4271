import { appendAll } from '../source/index.js';
/**
 * Order-aware diff of two sequences of strings (Myers' O((N+M)D) algorithm after trimming the
 * common prefix and suffix). When the edit distance is larger than `maxEdits` the middle part
 * is compared as multisets instead (every element not common is removed/added): the result is
 * still correct as a list of removals and insertions, only not minimal in moves.
 */

export type EditOp = { readonly op: '=' | '-' | '+'; readonly a: number; readonly b: number };

/** Edits turning `a` into `b`: '=' keeps a[a] (= b[b]), '-' removes a[a], '+' inserts b[b]. */
export function diffSequences(a: readonly string[], b: readonly string[], maxEdits = 4000): EditOp[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: EditOp[] = [];
  for (let i = 0; i < start; i++) out.push({ op: '=', a: i, b: i });
  const middle = myers(a, b, start, endA, start, endB, maxEdits) ?? multiset(a, b, start, endA, start, endB);
  appendAll(out, middle);
  for (let i = 0; i < a.length - endA; i++) out.push({ op: '=', a: endA + i, b: endB + i });
  return out;
}

function multiset(a: readonly string[], b: readonly string[], a0: number, a1: number, b0: number, b1: number): EditOp[] {
  const inB = new Map<string, number>();
  for (let j = b0; j < b1; j++) inB.set(b[j], (inB.get(b[j]) ?? 0) + 1);
  const inA = new Map<string, number>();
  for (let i = a0; i < a1; i++) inA.set(a[i], (inA.get(a[i]) ?? 0) + 1);
  const out: EditOp[] = [];
  // Elements present on both sides are kept (as moved-or-kept); the rest removed or added.
  const keepA = new Map(inB);
  for (let i = a0; i < a1; i++) {
    const n = keepA.get(a[i]) ?? 0;
    if (n > 0) keepA.set(a[i], n - 1);
    else out.push({ op: '-', a: i, b: -1 });
  }
  const keepB = new Map(inA);
  for (let j = b0; j < b1; j++) {
    const n = keepB.get(b[j]) ?? 0;
    if (n > 0) keepB.set(b[j], n - 1);
    else out.push({ op: '+', a: -1, b: j });
  }
  return out;
}

function myers(a: readonly string[], b: readonly string[], a0: number, a1: number, b0: number, b1: number, maxEdits: number): EditOp[] | undefined {
  const n = a1 - a0;
  const m = b1 - b0;
  if (n === 0 && m === 0) return [];
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    const next = v;
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && next[offset + k - 1] < next[offset + k + 1])) x = next[offset + k + 1];
      else x = next[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[a0 + x] === b[b0 + y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    v = next;
    if (found >= 0) break;
  }
  if (found < 0) return undefined;
  // Backtrack.
  const ops: EditOp[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const pv = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && pv[offset + k - 1] < pv[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = pv[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ op: '=', a: a0 + x - 1, b: b0 + y - 1 });
      x--;
      y--;
    }
    if (x === prevX) ops.push({ op: '+', a: -1, b: b0 + y - 1 });
    else ops.push({ op: '-', a: a0 + x - 1, b: -1 });
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push({ op: '=', a: a0 + x - 1, b: b0 + y - 1 });
    x--;
    y--;
  }
  return ops.reverse();
}
