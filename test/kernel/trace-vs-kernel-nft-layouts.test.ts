/**
 * kpx trace vs the real Linux kernel on every kube-proxy nftables layout since 1.29 (issue 31,
 * acceptance 3). The default layout (1.30–1.33) runs in trace-vs-kernel-nft.test.ts; here the
 * same generated clusters (seeds 501–504; layoutNftSuites says which for which layout) are
 * written in the 1.29, 1.34, 1.36 and 1.37 layouts (src/generate/nft-layout.ts says
 * where each comes from), loaded with `nft -f` into a namespace, and kpx reads what the kernel
 * prints back. Same comparison as the other suites: outcomes, verdicts, masquerade per outcome,
 * and the split (chi-square).
 *
 * Set KPX_ORACLE_LOG=1 to print every case's kernel/kpx summary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NftLayoutId } from '../../src/generate/index.js';
import { requireKernel } from '../helpers/netns.js';
import { leftovers } from './harness/index.js';
import { compare, kpxTrace, loadKpx, originalKey, packetsFor, predictionOf } from './oracle/compare.js';
import { layoutNftSuites } from './oracle/dumps-nft.js';
import { describeResult, kpxDumpOf, runSuite, type CaseResult, type SuiteResult } from './oracle/run.js';

const kernel = requireKernel();
const verbose = process.env.KPX_ORACLE_LOG === '1';

/** What the kernel's own listing must show of each layout (so a case cannot silently test another layout). */
const MARKERS: Record<Exclude<NftLayoutId, '1.30'>, { has: RegExp[]; hasNot: RegExp[] }> = {
  '1.29': { has: [/chain endpoints-check \{/, /jump mark-for-masquerade/], hasNot: [/cluster-ips/, /service-endpoints-check/, /filter-output-post-dnat/] },
  '1.34': { has: [/chain filter-prerouting-pre-dnat \{/, /chain filter-output-pre-dnat \{/, /type filter hook input priority filter;/], hasNot: [/filter-output-post-dnat/, /hairpin-connections/] },
  '1.36': {
    has: [/set hairpin-connections \{/, /ct status dnat ip6? saddr \. ip6? daddr \. meta l4proto \. th dport @hairpin-connections masquerade fully-random/, /dnat ip6? to numgen random mod \d+ map \{/, /masquerade clusterIP traffic from outside cluster/],
    hasNot: [/mark-for-masquerade/],
  },
  '1.37': { has: [/set hairpin-connections \{/, /chain (service|local)-[^\n]*\{\n\t\tmeta l4proto (tcp|udp|sctp) dnat to \S+\n\t\}/], hasNot: [/mark-for-masquerade/, /numgen random mod 1 map/] },
};

describe.runIf(kernel)('kpx trace vs the Linux kernel: every kube-proxy nftables layout since 1.29', () => {
  const runs = new Map<string, SuiteResult>();
  const result = (dump: string, label: string): CaseResult => {
    const r = runs.get(dump)?.results.find((x) => x.case.label === label);
    if (!r) throw new Error(`no result for ${dump} / ${label} (the dump's run failed?)`);
    return r;
  };

  afterAll(() => {
    const lines = [...runs.values()].map((s) => `  ${s.dump.name}: ${s.results.length} cases, ${s.results.reduce((n, r) => n + r.packets, 0)} packets, ${(s.ms / 1000).toFixed(1)} s`);
    console.log(`kpx trace vs kernel (nftables layouts):\n${lines.join('\n')}`);
  });

  for (const layout of Object.keys(MARKERS) as (keyof typeof MARKERS)[]) {
    const suites = layoutNftSuites(layout);
    describe(`layout ${layout}`, () => {
      it('covers at least 19 cases over 2 or more generated clusters', () => {
        expect(suites.length).toBeGreaterThanOrEqual(2);
        expect(suites.reduce((n, s) => n + s.cases.length, 0)).toBeGreaterThanOrEqual(19);
      });

      for (const suite of suites) {
        describe(suite.dump.name, () => {
          beforeAll(async () => {
            runs.set(suite.dump.name, await runSuite(suite, verbose ? (l) => console.log(l) : undefined));
          }, 300_000);

          it(`the kernel's listing is the ${layout} layout`, () => {
            const run = runs.get(suite.dump.name)!;
            expect(run.listing).toMatch(/^table ip6? kube-proxy \{/m);
            for (const re of MARKERS[layout].has) expect(run.listing).toMatch(re);
            for (const re of MARKERS[layout].hasNot) expect(run.listing).not.toMatch(re);
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
    });
  }

  describe('the comparison catches a tracer that misreads the new layouts', () => {
    it('1.36: without the hairpin rule, kpx predicts no masquerade where the kernel masquerades the hairpin outcome', async () => {
      const name = 'nft-501-v4-flannel-kp1.36';
      const run = runs.get(name)!;
      const listing = run.listing!.replace(/^\s*ct status dnat ip saddr .*@hairpin-connections masquerade fully-random\n/m, '');
      expect(listing).not.toBe(run.listing);
      const broken = await loadKpx(kpxDumpOf(run.dump, listing));
      const r = result(name, 'nft501: hairpin, one of 3 endpoints calls its own Service');
      const cmp = compare(predictionOf(kpxTrace(broken, r.case, r.source)), r.obs!, originalKey(r.case));
      expect(cmp.ok, cmp.summary).toBe(false);
      expect(cmp.problems.join('\n')).toMatch(/masquerade/);
    });

    it('1.36: without the ClusterIP masquerade rule in `services`, an external client is predicted unmasqueraded', async () => {
      const name = 'nft-501-v4-flannel-kp1.36';
      const run = runs.get(name)!;
      const listing = run.listing!.replace(/^\s*ip daddr @cluster-ips ip saddr != \S+ meta mark set .*\n/m, '');
      expect(listing).not.toBe(run.listing);
      const broken = await loadKpx(kpxDumpOf(run.dump, listing));
      const r = result(name, 'nft501: ClusterIP, 2 endpoints, external (masquerade)');
      const cmp = compare(predictionOf(kpxTrace(broken, r.case, r.source)), r.obs!, originalKey(r.case));
      expect(cmp.ok, cmp.summary).toBe(false);
    });
  });

  it('leaves no namespaces, links or processes behind', () => {
    expect(leftovers()).toEqual([]);
  });
});
