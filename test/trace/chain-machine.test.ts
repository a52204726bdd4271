/**
 * The chain machine on its own, with a toy dialect (rules are data: a condition, a share, effects):
 * frames, goto vs jump return, policies, limits, shares, missing chains, scenario forks and
 * merging, and that every run's distribution sums to 1.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BRANCHES, MAX_FRAMES, walkChain, type Alternative, type Branch, type ChainDialect, type Effect, type Entry, type TableResult } from '../../src/trace/chain-machine.js';
import type { TraceContext } from '../../src/trace/context.js';
import type { PathState } from '../../src/trace/match.js';
import { mergeEnds, mergeScenarios } from '../../src/trace/outcomes.js';
import { ScenarioRun, type Question } from '../../src/trace/scenario.js';
import type { TraceOutcome } from '../../src/trace/types.js';

/** A toy rule: matches when `when` holds (a question key is asked of the scenario), then its alternatives. */
interface ToyRule {
  readonly line: number;
  readonly ask?: string;
  readonly alts: readonly Alternative[];
}
type ToyChains = Record<string, readonly ToyRule[]>;

const eff = (...effects: Effect[]): Alternative[] => [{ share: 1, effects }];

function toyDialect(chains: ToyChains): ChainDialect<string, ToyRule> {
  return {
    findChain: (name) => (name in chains ? name : undefined),
    rulesOf: (c) => chains[c],
    evaluate: (c, r, _st, ask) => {
      if (r.ask) {
        const q: Question = { code: 'not-evaluated', key: r.ask, match: r.ask, table: 'toy', chain: c, file: 'toy.txt', line: r.line };
        if (!ask(q)) return [];
      }
      return r.alts;
    },
    refOf: (c, r) => ({ dialect: 'iptables', table: 'toy', chain: c, file: 'toy.txt', line: r.line }),
  };
}

const state = (): PathState => ({ family: 4, protocol: 'tcp', src: { family: 4, value: 1n }, sport: 1, dst: { family: 4, value: 2n }, dport: 80, mark: 0, connmark: 0, dnatDone: false, snatDone: false, hook: 'PREROUTING' });
const ctx = {} as TraceContext;

function walk(chains: ToyChains, opts: { policy?: 'ACCEPT' | 'DROP'; run?: ScenarioRun; branches?: number } = {}): TableResult[] {
  const entry: Entry<string> = { chain: 'BASE', policy: opts.policy ?? 'ACCEPT', base: 'built-in', policyRef: { dialect: 'iptables', table: 'toy', chain: 'BASE', file: 'toy.txt', line: 0 } };
  const b: Branch = { st: state(), probability: 1, steps: [], claimed: false, masquerade: false };
  return walkChain(toyDialect(chains), entry, b, { ctx, run: opts.run ?? new ScenarioRun([]), masqSource: () => '192.0.2.1', budget: { branches: opts.branches ?? MAX_BRANCHES } });
}

const codes = (r: TableResult) => r.branch.steps.map((s) => (s.code === 'jump' || s.code === 'goto' ? `${s.code} ${s.target}` : s.code === 'policy' ? `policy ${s.policy}` : s.code));
const total = (rs: readonly TableResult[]) => rs.reduce((n, r) => n + r.branch.probability, 0);

describe('frames', () => {
  it('-j returns to the next rule of the caller; -g returns to the caller of the chain that jumped', () => {
    const chains: ToyChains = {
      BASE: [
        { line: 1, alts: eff({ kind: 'jump', chain: 'A' }) },
        { line: 2, alts: eff({ kind: 'accept' }) },
      ],
      A: [
        { line: 3, alts: eff({ kind: 'goto', chain: 'B' }) },
        { line: 4, alts: eff({ kind: 'drop' }) },
      ],
      B: [{ line: 5, alts: eff({ kind: 'return' }) }],
    };
    const [r, ...more] = walk(chains);
    expect(more).toEqual([]);
    // RETURN in B pops B, which replaced A: the walk is back in BASE (line 2), not at A's DROP.
    expect(r.verdict).toBe('accept');
    expect(codes(r)).toEqual(['jump A', 'goto B', 'return', 'accept']);
  });

  it('falling off a user chain returns to its caller; falling off the base chain applies the policy', () => {
    const chains: ToyChains = { BASE: [{ line: 1, alts: eff({ kind: 'jump', chain: 'A' }) }], A: [{ line: 2, alts: eff({ kind: 'log' }) }] };
    expect(walk(chains, { policy: 'DROP' }).map((r) => [r.verdict, codes(r)])).toEqual([['drop', ['jump A', 'log', 'policy DROP']]]);
    expect(walk(chains, { policy: 'ACCEPT' }).map((r) => r.verdict)).toEqual(['accept']);
  });

  it('a RETURN in the base chain ends it with the policy', () => {
    expect(walk({ BASE: [{ line: 1, alts: eff({ kind: 'return' }) }, { line: 2, alts: eff({ kind: 'accept' }) }] }, { policy: 'DROP' }).map(codes)).toEqual([['return', 'policy DROP']]);
  });

  it('a chain the evidence does not hold ends the branch UNKNOWN, not an empty chain that falls through', () => {
    const [r] = walk({ BASE: [{ line: 1, alts: eff({ kind: 'jump', chain: 'KUBE-SEP-GONE' }) }, { line: 2, alts: eff({ kind: 'accept' }) }] });
    expect(r.verdict).toBe('unknown');
    expect(r.branch.end).toEqual({ verdict: 'UNKNOWN', reason: { code: 'chain-missing', chain: 'KUBE-SEP-GONE', via: 'jump' } });
  });

  it(`a loop stops after ${MAX_FRAMES} frames as UNKNOWN`, () => {
    const [r] = walk({ BASE: [{ line: 1, alts: eff({ kind: 'jump', chain: 'L' }) }], L: [{ line: 2, alts: eff({ kind: 'jump', chain: 'L' }) }] });
    expect(r.branch.end).toEqual({ verdict: 'UNKNOWN', reason: { code: 'too-deep', limit: MAX_FRAMES } });
  });
});

describe('effects', () => {
  it('marks apply (mark & ~mask) ^ value and later rules see them; DNAT rewrites and ends the chain', () => {
    const chains: ToyChains = {
      BASE: [
        { line: 1, alts: eff({ kind: 'mark', which: 'meta', value: 0x4000, mask: 0x4000 }) },
        { line: 2, alts: eff({ kind: 'dnat', ip: { family: 4, value: 0x0af40003n }, port: 53 }) },
        { line: 3, alts: eff({ kind: 'drop' }) },
      ],
    };
    const [r] = walk(chains);
    expect(r.branch.st.mark).toBe(0x4000);
    expect(r.branch.st.dnatDone).toBe(true);
    expect(r.branch.steps.at(-1)).toMatchObject({ code: 'dnat', to: '10.244.0.3:53' });
    expect(r.verdict).toBe('accept');
  });

  it('MASQUERADE takes the address the environment gives and is not a claim', () => {
    const [r] = walk({ BASE: [{ line: 1, alts: eff({ kind: 'masquerade', flags: ['random-fully'] }) }] });
    expect([r.branch.masquerade, r.branch.snatTo, r.branch.claimed]).toEqual([true, '192.0.2.1', false]);
  });
});

describe('shares', () => {
  const ladder = (n: number): ToyChains => ({
    BASE: Array.from({ length: n }, (_, i) => ({
      line: i + 1,
      alts:
        i === n - 1
          ? eff({ kind: 'dnat', port: 1000 + i })
          : [
              { share: 1 - 1 / (n - i), note: { kind: 'statistic', probability: 1 - 1 / (n - i), taken: false }, effects: [] },
              { share: 1 / (n - i), note: { kind: 'statistic', probability: 1 / (n - i), taken: true }, effects: [{ kind: 'dnat', port: 1000 + i }] },
            ],
    })) as ToyRule[],
  });

  it('a kube-proxy ladder of 5 gives each endpoint a fifth', () => {
    const rs = walk(ladder(5));
    expect(rs.map((r) => r.branch.st.dport).sort()).toEqual([1000, 1001, 1002, 1003, 1004]);
    for (const r of rs) expect(r.branch.probability).toBeCloseTo(0.2, 12);
  });

  it('property: any tree of shares ends in a distribution that sums to 1', () => {
    // Each rule splits over 1–4 alternatives with random weights; some continue, some end.
    const rule = fc.record({ weights: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }), ends: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }) });
    fc.assert(
      fc.property(fc.array(rule, { minLength: 1, maxLength: 6 }), fc.constantFrom<'ACCEPT' | 'DROP'>('ACCEPT', 'DROP'), (rules, policy) => {
        const chains: ToyChains = {
          BASE: rules.map((r, i) => {
            const sum = r.weights.reduce((a, b) => a + b, 0);
            return { line: i + 1, alts: r.weights.map((w, k) => ({ share: w / sum, effects: r.ends[k] ? [{ kind: 'drop' } as Effect] : [] })) };
          }),
        };
        const rs = walk(chains, { policy });
        expect(rs.length).toBeGreaterThan(0);
        expect(total(rs)).toBeCloseTo(1, 9);
      }),
      { numRuns: 200 },
    );
  });

  it(`more than the branch budget ends the walk UNKNOWN instead of splitting further`, () => {
    const two: Alternative[] = [
      { share: 0.5, effects: [] },
      { share: 0.5, effects: [] },
    ];
    const rs = walk({ BASE: Array.from({ length: 6 }, (_, i) => ({ line: i + 1, alts: two })) }, { branches: 8 });
    expect(rs.some((r) => r.branch.end?.verdict === 'UNKNOWN' && r.branch.end.reason.code === 'too-many-branches')).toBe(true);
    expect(total(rs)).toBeCloseTo(1, 12);
  });
});

describe('scenarios', () => {
  it('an undecided fact forks once: the run takes "holds", queues "does not hold", and asks it again with the same answer', () => {
    const run = new ScenarioRun([]);
    const chains: ToyChains = {
      BASE: [
        { line: 1, ask: 'iif cni0', alts: eff({ kind: 'jump', chain: 'A' }) },
        { line: 2, ask: 'iif cni0', alts: eff({ kind: 'accept' }) },
        { line: 3, alts: eff({ kind: 'drop' }) },
      ],
      A: [{ line: 4, alts: eff({ kind: 'log' }) }],
    };
    const [r] = walk(chains, { run });
    expect(r.verdict).toBe('accept');
    expect(run.forks.map((f) => f.map((a) => [a.question.key, a.holds]))).toEqual([[['iif cni0', false]]]);
    // Both encounters are on the path as `assumed` steps with the same answer.
    expect(r.branch.steps.filter((s) => s.code === 'assumed').map((s) => s.code === 'assumed' && s.condition.holds)).toEqual([true, true]);
    const other = new ScenarioRun(run.forks[0]);
    const [r2] = walk(chains, { run: other });
    expect([r2.verdict, other.forks]).toEqual(['drop', []]);
  });

  it('interface questions bind: once it arrives on cni0, it does not arrive on eth0 (no second fork)', () => {
    const run = new ScenarioRun([]);
    const q = (pattern: string): Question => ({ code: 'in-interface', key: `iface:in:${pattern}`, subject: pattern, match: `-i ${pattern}`, table: 't', chain: 'c', file: null, line: null, iface: { dir: 'in', pattern } });
    expect(run.answer(q('cni0'))).toBe(true);
    expect(run.answer(q('eth0'))).toBe(false);
    expect(run.answer(q('cni+'))).toBe(true);
    expect(run.forks).toHaveLength(1);
  });

  const outcome = (p: number, destination: string, verdict: TraceOutcome['verdict'] = 'DNAT'): TraceOutcome => ({ probability: p, verdict, destination, masquerade: false, route: null, conditions: [], delivery: 'forward', steps: [] });

  it('branches that end identically are merged, shares added', () => {
    const merged = mergeEnds([outcome(0.25, 'a:1'), outcome(0.5, 'b:1'), outcome(0.25, 'a:1')]);
    expect(merged.map((o) => [o.destination, o.probability, o.roads ?? 1])).toEqual([
      ['a:1', 0.5, 2],
      ['b:1', 0.5, 1],
    ]);
  });

  it('scenarios that differ in one answer and end the same are merged; others are kept apart', () => {
    const q = (key: string): Question => ({ code: 'not-evaluated', key, match: key, table: 't', chain: 'c', file: null, line: null });
    const A = q('A');
    const B = q('B');
    const same = [outcome(1, 'x:1')];
    const merged = mergeScenarios([
      { assignments: [{ question: A, holds: true }, { question: B, holds: true }], outcomes: same },
      { assignments: [{ question: A, holds: true }, { question: B, holds: false }], outcomes: same },
      { assignments: [{ question: A, holds: false }], outcomes: [outcome(1, 'y:1', 'DROP')] },
    ]);
    expect(merged.map((s) => [s.assignments.map((a) => `${a.question.key}=${a.holds}`), s.outcomes[0].destination])).toEqual([
      [['A=true'], 'x:1'],
      [['A=false'], 'y:1'],
    ]);
  });
});
