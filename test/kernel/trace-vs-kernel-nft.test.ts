/**
 * kpx trace vs the real Linux kernel, kube-proxy's nftables mode (issue 9, acceptance 3).
 *
 * Generated clusters (seeds 501–504; IPv4 flannel/calico, IPv6, --nodeport-addresses all) in the generator's
 * nftables mode: the kernel loads the `nft -f` transaction kube-proxy would run, kpx reads what
 * the kernel prints back (`nft list ruleset` from the node namespace, as a user would give it).
 * Same comparison as the iptables suite (test/kernel/oracle/compare.ts): outcome set, verdicts,
 * masquerade per outcome, and the split (chi-square at DEFAULT_ALPHA = 1e-6 with N sized so an
 * off-by-one ladder fails) — here numgen shares, DNAT targets and masquerade from
 * mark-for-masquerade, and the REJECTs of @no-endpoint-services / @cluster-ips.
 *
 * Set KPX_ORACLE_LOG=1 to print every case's kernel/kpx summary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireKernel } from '../helpers/netns.js';
import { leftovers } from './harness/index.js';
import { compare, kpxTrace, loadKpx, offByOneLadder, originalKey, packetsFor, predictionOf, type Prediction } from './oracle/compare.js';
import { allNftSuites } from './oracle/dumps-nft.js';
import type { OracleSuite } from './oracle/dumps.js';
import { describeResult, kpxDumpOf, runSuite, type CaseResult, type SuiteResult } from './oracle/run.js';

const kernel = requireKernel();
const verbose = process.env.KPX_ORACLE_LOG === '1';

describe.runIf(kernel)('kpx trace vs the Linux kernel: kube-proxy nftables mode', () => {
  const suites: OracleSuite[] = allNftSuites();
  const runs = new Map<string, SuiteResult>();
  const result = (dump: string, label: string): CaseResult => {
    const r = runs.get(dump)?.results.find((x) => x.case.label === label);
    if (!r) throw new Error(`no result for ${dump} / ${label} (the dump's run failed?)`);
    return r;
  };

  afterAll(() => {
    const lines = [...runs.values()].map((s) => `  ${s.dump.name}: ${s.results.length} cases, ${s.results.reduce((n, r) => n + r.packets, 0)} packets, ${(s.ms / 1000).toFixed(1)} s`);
    console.log(`kpx trace vs kernel (nftables mode):\n${lines.join('\n')}`);
  });

  it('covers at least 15 cases over at least 2 distinct generated nftables dumps', () => {
    expect(new Set(suites.map((s) => s.dump.scenario.nft)).size).toBe(suites.length);
    expect(suites.length).toBeGreaterThanOrEqual(2);
    expect(suites.every((s) => s.dump.kpxReads === 'kernel-nft-listing' && !s.dump.scenario.iptables)).toBe(true);
    expect(suites.reduce((n, s) => n + s.cases.length, 0)).toBeGreaterThanOrEqual(15);
  });

  for (const suite of suites) {
    describe(suite.dump.name, () => {
      beforeAll(async () => {
        runs.set(suite.dump.name, await runSuite(suite, verbose ? (l) => console.log(l) : undefined));
      }, 300_000);

      it('kpx read the kernel\'s own listing of the loaded ruleset', () => {
        const run = runs.get(suite.dump.name)!;
        expect(run.listing).toMatch(/^table ip6? kube-proxy \{/m);
        // The kernel's form, not the script: no `add rule` lines, chains as blocks.
        expect(run.listing).not.toMatch(/^add /m);
        expect(run.listing).toMatch(/numgen random mod \d+ vmap/);
        expect(run.kpx.snapshot.nft.length).toBe(1);
      });

      for (const c of suite.cases) {
        it(c.label, () => {
          const r = result(suite.dump.name, c.label);
          expect(r.error, r.error).toBeUndefined();
          const cmp = r.comparison!;
          expect([...cmp.problems, ...cmp.premise], describeResult(r)).toEqual([]);
          expect(r.packets).toBeGreaterThanOrEqual(c.packets ?? packetsFor(cmp.prediction.probs));
        });
      }
    });
  }

  describe('the comparison catches a wrong nft tracer', () => {
    it('an off-by-one numgen share fails on the kernel data (3 and 7 endpoints)', () => {
      for (const label of ['nft501: ClusterIP, 3 endpoints (numgen mod 3), from a pod', 'nft501: ClusterIP, 7 endpoints (numgen mod 7), from a pod']) {
        const r = result('nft-501-v4-flannel', label);
        const good = r.comparison!.prediction;
        const wrong = offByOneLadder(good.probs);
        const bad: Prediction = { outcomes: good.outcomes.map((o) => ({ ...o, probability: wrong[o.key] })), probs: wrong };
        const cmp = compare(bad, r.obs!, originalKey(r.case));
        expect(cmp.ok, cmp.summary).toBe(false);
        expect(cmp.problems.join('\n')).toMatch(/^split: /m);
      }
    });

    it('a ruleset read without its @cluster-ips reject rule predicts PASS where the kernel REJECTs', async () => {
      const suite = suites.find((s) => s.dump.name === 'nft-501-v4-flannel')!;
      const run = runs.get(suite.dump.name)!;
      const listing = run.listing!.replace(/^\s*ip daddr @cluster-ips reject.*\n/m, '');
      expect(listing).not.toBe(run.listing);
      const broken = await loadKpx(kpxDumpOf(suite.dump, listing));
      const r = result(suite.dump.name, 'nft501: ClusterIP port without a Service → REJECT via @cluster-ips (external, tcp)');
      const cmp = compare(predictionOf(kpxTrace(broken, r.case, r.source)), r.obs!, originalKey(r.case));
      expect(cmp.ok, cmp.summary).toBe(false);
      expect(cmp.problems.join('\n')).toMatch(/the kernel gave REJECT/);
    });
  });

  it('leaves no namespaces, links or processes behind', () => {
    expect(leftovers()).toEqual([]);
  });
});
