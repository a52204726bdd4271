/**
 * kpx trace vs the real Linux kernel (issue 6; issue 5 acceptance 1).
 *
 * Each dump (the seed kind sample, generated kube-proxy iptables-mode dumps over several seeds,
 * flannel/calico, IPv4/IPv6, and a hand-written fixture) is replayed ONCE in throw-away
 * namespaces (test/kernel/harness); every case then sends N real packets and compares what
 * the kernel did with `tracePacket` given the same dump, the node's addresses (--node-ip)
 * and the same source address: outcome set, verdicts, masquerade per outcome, and the split
 * (chi-square at DEFAULT_ALPHA = 1e-6, N from samplesToDistinguish so a wrong ladder fails).
 * See test/kernel/oracle/compare.ts for the rules of the comparison.
 *
 * Set KPX_ORACLE_LOG=1 to print every case's kernel/kpx summary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireKernel } from '../helpers/netns.js';
import { chiSquareConsistent, leftovers } from './harness/index.js';
import { statisticAlwaysMatching, ignoringAddressNegation } from './oracle/broken.js';
import { compare, kpxTrace, offByOneLadder, originalKey, packetsFor, predictionOf, type Prediction } from './oracle/compare.js';
import { allSuites, type OracleSuite } from './oracle/dumps.js';
import { describeResult, runSuite, type CaseResult, type SuiteResult } from './oracle/run.js';

const kernel = requireKernel();
const verbose = process.env.KPX_ORACLE_LOG === '1';

describe('comparison rules (no kernel needed)', () => {
  const two: Prediction = {
    outcomes: [
      { key: '10.244.0.3:53', probability: 0.5, verdict: 'DNAT', kpxVerdicts: ['DNAT'], masqueradeShare: 1, conditions: [] },
      { key: '10.244.0.4:53', probability: 0.5, verdict: 'DNAT', kpxVerdicts: ['DNAT'], masqueradeShare: 1, conditions: [] },
    ],
    probs: { '10.244.0.3:53': 0.5, '10.244.0.4:53': 0.5 },
  };
  const orig = '10.96.0.10:53';
  it('accepts an agreeing observation', () => {
    const c = compare(two, { total: 400, outcomes: { '10.244.0.3:53': 205, '10.244.0.4:53': 195 }, masqueraded: { '10.244.0.3:53': 205, '10.244.0.4:53': 195 } }, orig);
    expect(c.problems).toEqual([]);
  });
  it('reports a missing outcome, an unexpected one, a masquerade mismatch and a wrong verdict', () => {
    const c = compare(two, { total: 400, outcomes: { '10.244.0.3:53': 390, REJECT: 10 }, masqueraded: { '10.244.0.3:53': 0 } }, orig);
    expect(c.problems.join('\n')).toMatch(/kpx predicts 10\.244\.0\.4:53 .* never/);
    expect(c.problems.join('\n')).toMatch(/the kernel gave REJECT \(REJECT\) 10\/400 times/);
    expect(c.problems.join('\n')).toMatch(/10\.244\.0\.3:53: the kernel masqueraded 0\/390, kpx says always/);
    expect(c.problems.join('\n')).toMatch(/split: outcome REJECT/);
    const pass = compare(two, { total: 10, outcomes: { [orig]: 10 }, masqueraded: {} }, orig);
    expect(pass.problems.join('\n')).toMatch(/the kernel gave 10\.96\.0\.10:53 \(PASS\)/);
  });
  it('sizes N so that an off-by-one ladder fails', () => {
    expect(offByOneLadder({ a: 0.5, b: 0.5 })).toEqual({ a: 1 / 3, b: 2 / 3 });
    expect(packetsFor({ a: 0.5, b: 0.5 })).toBe(534);
    expect(packetsFor({ a: 1 })).toBe(40);
    const n3 = packetsFor({ a: 1 / 3, b: 1 / 3, c: 1 / 3 });
    expect(n3).toBeGreaterThan(500);
    expect(packetsFor(Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`e${i}`, 1 / 7])))).toBeGreaterThan(800);
    // A skewed ladder needs more than its favourable order suggests.
    expect(packetsFor({ x: 0.8, y: 0.2 })).toBeGreaterThan(600);
  });
});

describe.runIf(kernel)('kpx trace vs the Linux kernel', () => {
  const suites: OracleSuite[] = allSuites();
  const runs = new Map<string, SuiteResult>();
  const result = (dump: string, label: string): CaseResult => {
    const r = runs.get(dump)?.results.find((x) => x.case.label === label);
    if (!r) throw new Error(`no result for ${dump} / ${label} (the dump's run failed?)`);
    return r;
  };

  afterAll(() => {
    const lines = [...runs.values()].map((s) => `  ${s.dump.name}: ${s.results.length} cases, ${s.results.reduce((n, r) => n + r.packets, 0)} packets, ${(s.ms / 1000).toFixed(1)} s`);
    console.log(`kpx trace vs kernel:\n${lines.join('\n')}`);
  });

  it('covers at least 30 cases over at least 5 distinct dumps', () => {
    const names = new Set(suites.map((s) => s.dump.name));
    const texts = new Set(suites.map((s) => s.dump.scenario.iptables ?? s.dump.scenario.ip6tables));
    expect(names.size).toBeGreaterThanOrEqual(5);
    expect(texts.size).toBe(names.size);
    expect(suites.reduce((n, s) => n + s.cases.length, 0)).toBeGreaterThanOrEqual(30);
  });

  for (const suite of suites) {
    describe(suite.dump.name, () => {
      beforeAll(async () => {
        runs.set(suite.dump.name, await runSuite(suite, verbose ? (l) => console.log(l) : undefined));
      }, 300_000);

      for (const c of suite.cases) {
        it(c.label, () => {
          const r = result(suite.dump.name, c.label);
          expect(r.error, r.error).toBeUndefined();
          const cmp = r.comparison!;
          expect([...cmp.problems, ...cmp.premise], describeResult(r)).toEqual([]);
          // Enough packets for the prediction at hand (a wrong ladder would have failed).
          expect(r.packets).toBeGreaterThanOrEqual(c.packets ?? packetsFor(cmp.prediction.probs));
        });
      }
    });
  }

  describe('the comparison catches a wrong tracer', () => {
    const kindSuite = () => suites.find((s) => s.dump.name === 'kind-sample')!;
    const flannelSuite = () => suites.find((s) => s.dump.name === 'gen-101-v4-flannel')!;

    it('a flipped / off-by-one probability ladder fails on the kernel data', () => {
      const r = result('kind-sample', kindSuite().cases[0].label);
      const good = r.comparison!.prediction;
      expect(r.obs!.total).toBe(1200);
      // Off by one: 1/3 vs 2/3 instead of 1/2 vs 1/2 (kpx's outcomes otherwise unchanged).
      const wrong = offByOneLadder(good.probs);
      const bad: Prediction = { outcomes: good.outcomes.map((o) => ({ ...o, probability: wrong[o.key] })), probs: wrong };
      const cmp = compare(bad, r.obs!, originalKey(r.case));
      expect(cmp.ok).toBe(false);
      expect(cmp.problems.join('\n')).toMatch(/^split: /m);
      expect(chiSquareConsistent(r.obs!.outcomes, good.probs).consistent).toBe(true);
    });

    it('a tracer that ignores `! -s` negation is caught (masquerade for pods and external clients)', async () => {
      const suite = kindSuite();
      const broken = await ignoringAddressNegation(suite.dump);
      for (const label of [suite.cases[0].label, suite.cases[1].label]) {
        const r = result('kind-sample', label);
        const cmp = compare(predictionOf(kpxTrace(broken, r.case, r.source)), r.obs!, originalKey(r.case));
        expect(cmp.ok, cmp.summary).toBe(false);
        expect(cmp.problems.join('\n')).toMatch(/the kernel masqueraded \d+\/\d+, kpx says (always|never)/);
      }
    });

    it('a tracer whose statistic always matches is caught (3 and 7 endpoints)', async () => {
      const suite = flannelSuite();
      const broken = await statisticAlwaysMatching(suite.dump);
      for (const label of ['gen101: ClusterIP, 3 endpoints, from a pod', 'gen101: ClusterIP, 7 endpoints (http), from a pod']) {
        const r = result(suite.dump.name, label);
        const cmp = compare(predictionOf(kpxTrace(broken, r.case, r.source)), r.obs!, originalKey(r.case));
        expect(cmp.ok, cmp.summary).toBe(false);
        expect(cmp.problems.join('\n')).toMatch(/kpx says it cannot happen/);
      }
    });

    it('dropping one outcome from the prediction, or claiming DNAT for an unclaimed VIP, is caught', () => {
      const r = result('gen-101-v4-flannel', 'gen101: ClusterIP, 3 endpoints, from a pod');
      const good = r.comparison!.prediction;
      const [first, ...rest] = good.outcomes;
      const restP = rest.reduce((s, o) => s + o.probability, 0);
      const fewer: Prediction = { outcomes: rest.map((o) => ({ ...o, probability: o.probability / restP })), probs: Object.fromEntries(rest.map((o) => [o.key, o.probability / restP])) };
      const c1 = compare(fewer, r.obs!, originalKey(r.case));
      expect(c1.problems.join('\n')).toContain(`the kernel gave ${first.key}`);

      const none = result('kind-sample', 'kind: 10.96.0.10:9999 → no Service: passes unchanged');
      const p = none.comparison!.prediction;
      const dnat: Prediction = { outcomes: p.outcomes.map((o) => ({ ...o, verdict: 'DNAT' as const })), probs: p.probs };
      expect(compare(dnat, none.obs!, originalKey(none.case)).problems.join('\n')).toMatch(/verdict is PASS, kpx's is DNAT/);
    });
  });

  it('leaves no namespaces, links or processes behind', () => {
    expect(leftovers()).toEqual([]);
  });
});
