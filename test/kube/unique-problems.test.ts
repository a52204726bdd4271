/** uniqueProblems() drops exactly the problems JSON-equal to an earlier one, keeping order. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uniqueProblems, type ServiceProblem } from '../../src/kube/problems.js';

/** The definition: compare every problem's JSON. */
function reference(list: readonly ServiceProblem[]): ServiceProblem[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = JSON.stringify(p);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

describe('uniqueProblems', () => {
  it('equals comparing every problem as JSON, with repeated codes, equal fields and the same object twice', () => {
    const one = fc.record({ code: fc.constantFrom('a', 'b', 'c', 'd'), chain: fc.constantFrom('X', 'Y'), n: fc.integer({ min: 0, max: 2 }) });
    const list = fc.array(one, { maxLength: 12 }).chain((ps) =>
      // Some entries repeat an earlier object itself, not a copy.
      fc.array(fc.nat(), { maxLength: 4 }).map((picks) => (ps.length === 0 ? ps : [...ps, ...picks.map((i) => ps[i % ps.length])])),
    );
    fc.assert(
      fc.property(list, (ps) => {
        const problems = ps as unknown as ServiceProblem[];
        expect(uniqueProblems(problems)).toEqual(reference(problems));
        expect(uniqueProblems(problems).every((p, i, all) => all.indexOf(p) === i)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the first of two equal problems and every problem whose code is seen once', () => {
    const a1 = { code: 'a', chain: 'X' } as unknown as ServiceProblem;
    const a2 = { code: 'a', chain: 'X' } as unknown as ServiceProblem;
    const b = { code: 'b', chain: 'X' } as unknown as ServiceProblem;
    const out = uniqueProblems([a1, b, a2, a1]);
    expect(out).toHaveLength(2);
    expect(out[0]).toBe(a1);
    expect(out[1]).toBe(b);
  });
});
