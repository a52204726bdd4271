/**
 * Differential test of the `nft -f` transaction form against the real nft: random batches of
 * commands (fast-check, fixed seed) over a small generated kube-proxy ruleset, some of them
 * deliberately broken, are applied by `nft -f` in a namespace this test creates and deletes,
 * and by kpx. Where nft takes a batch, kpx reports no error and `nft list ruleset` reads to
 * the model kpx built; where nft refuses it, kpx reports errors too, and on the first line nft
 * names (`/dev/stdin:LINE:COL-COL: Error: …`). nft names later lines as well, in ways kpx does
 * not copy: after its own checks fail it never asks the kernel (so kernel refusals on earlier
 * lines go unsaid), and once the kernel refuses a rule in validation it keeps refusing every
 * later rule of that transaction; and nftables 1.0.6 on Linux 6.x sometimes leaves out a
 * kernel refusal of an earlier line (`delete element` of a missing element before an `add rule
 * … handle N goto …` is named only for the second). So: kpx reports an error on nft's first
 * line, and none earlier than nft's unless nft's first came from its own checks; how often the
 * first lines are the same is counted. A failing case prints the shrunk batch.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nftParser } from '../../src/extract/nft.js';
import { generateCluster, nftScript } from '../../src/generate/index.js';
import type { NftRuleset } from '../../src/model/nft.js';
import { createNetns, deleteNetns, requireKernel } from '../helpers/netns.js';
import { projectRuleset } from '../helpers/nft-compare.js';
import { breathe } from '../helpers/breathe.js';

const canRun = requireKernel();
const T = 'ip kube-proxy';

/** Syntax nft refuses (nftables 1.0.6 says `syntax error` for each). */
const BROKEN = [
  `frob chain ${T} x1`,
  `add chain ${T}`,
  `add rule ${T} services ip daddr`,
  `add element ${T} cluster-ips 10.9.9.9`,
  `add rule ${T} services jump`,
  `add set ${T} s9`,
  `add rule ${T} services ip daddr { 1.2.3.4 drop`,
  `delete rule ${T} services`,
];
// (`destroy` is left out: kpx reads it as nftables ≥ 1.0.8 does; the 1.0.6 here refuses it.)

function commandArb(regular: string[], base: string[]): fc.Arbitrary<{ text: string; broken: boolean }> {
  const chain = fc.constantFrom(...regular, 'x1', 'x2', 'x3');
  const anyChain = fc.oneof(chain, fc.constantFrom(...base));
  const handle = fc.integer({ min: 1, max: 90 });
  const octet = fc.integer({ min: 1, max: 6 });
  const body = fc.oneof(
    fc.constantFrom('accept', 'drop', 'counter', 'return', 'ip daddr 10.1.2.3 drop', 'ip saddr { 10.0.0.0/24, 10.0.1.0/24, 10.0.2.7 } return', 'tcp dport 8080 accept', 'ip daddr @cluster-ips accept', 'ct state new counter accept', 'ip daddr . meta l4proto . th dport vmap @service-ips'),
    chain.map((c) => `jump ${c}`),
    chain.map((c) => `goto ${c}`),
  );
  const ok = (a: fc.Arbitrary<string>) => a.map((text) => ({ text, broken: false }));
  return fc.oneof(
    { weight: 6, arbitrary: ok(fc.tuple(anyChain, body).map(([c, b]) => `add rule ${T} ${c} ${b}`)) },
    { weight: 2, arbitrary: ok(fc.tuple(anyChain, body).map(([c, b]) => `insert rule ${T} ${c} ${b}`)) },
    { weight: 1, arbitrary: ok(fc.tuple(anyChain, handle, body).map(([c, h, b]) => `add rule ${T} ${c} handle ${h} ${b}`)) },
    { weight: 2, arbitrary: ok(fc.tuple(anyChain, handle).map(([c, h]) => `delete rule ${T} ${c} handle ${h}`)) },
    { weight: 1, arbitrary: ok(fc.tuple(anyChain, handle, body).map(([c, h, b]) => `replace rule ${T} ${c} handle ${h} ${b}`)) },
    { weight: 3, arbitrary: ok(chain.map((c) => `add chain ${T} ${c}`)) },
    { weight: 1, arbitrary: ok(chain.map((c) => `create chain ${T} ${c}`)) },
    { weight: 2, arbitrary: ok(chain.map((c) => `delete chain ${T} ${c}`)) },
    { weight: 2, arbitrary: ok(anyChain.map((c) => `flush chain ${T} ${c}`)) },
    { weight: 2, arbitrary: ok(fc.tuple(octet, octet).map(([a, b]) => `add element ${T} cluster-ips { 10.96.${a}.${b} }`)) },
    { weight: 1, arbitrary: ok(fc.tuple(octet, octet).map(([a, b]) => `delete element ${T} cluster-ips { 10.96.${a}.${b} }`)) },
    { weight: 1, arbitrary: ok(fc.tuple(octet, octet).map(([a, b]) => `create element ${T} cluster-ips { 10.96.${a}.${b} }`)) },
    { weight: 2, arbitrary: ok(fc.tuple(octet, anyChain).map(([b, c]) => `add element ${T} service-ips { 10.96.0.${b} . tcp . 80 : goto ${c} }`)) },
    { weight: 1, arbitrary: ok(octet.map((b) => `delete element ${T} service-ips { 10.96.0.${b} . tcp . 80 }`)) },
    { weight: 1, arbitrary: ok(fc.constantFrom(`flush set ${T} cluster-ips`, `flush map ${T} service-ips`, `delete set ${T} s1`, `delete set ${T} cluster-ips`, `flush set ${T} s1`)) },
    { weight: 1, arbitrary: ok(fc.constantFrom(`add set ${T} s1 { type ipv4_addr ; }`, `add set ${T} s1 { type ipv4_addr ; flags interval ; }`, `add element ${T} s1 { 10.7.0.1 }`, `create set ${T} s1 { type ipv4_addr ; }`)) },
    { weight: 1, arbitrary: ok(fc.constantFrom(`flush table ${T}`, `add table ${T}`, `create table ${T}`, `delete table ${T}`, `add chain ${T} x1 { type filter hook output priority 0 ; }`, `add chain ${T} filter-input { type filter hook input priority -110 ; policy drop ; }`)) },
    { weight: 2, arbitrary: fc.constantFrom(...BROKEN).map((text) => ({ text, broken: true })) },
  );
}

const errorLines = (stderr: string) => [...stderr.matchAll(/^\/dev\/stdin:(\d+):\d+-\d+: Error:/gm)].map((m) => Number(m[1]));

describe.runIf(canRun)('nft -f transactions: kpx against the real nft (property-based)', () => {
  it('random add/insert/replace/delete/flush/create batches over a generated ruleset: same acceptance, same error lines, same ruleset', async () => {
    const base = nftScript(generateCluster({ seed: 41, services: 3 }));
    const baseRead = nftParser.parse(base, 'base.nft');
    expect(baseRead.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const kp = (baseRead.data as NftRuleset).tables[0];
    const regular = kp.chains.filter((c) => c.hook === undefined).map((c) => c.name);
    const baseChains = kp.chains.filter((c) => c.hook !== undefined).map((c) => c.name);
    // a few of each kind: infrastructure chains, and per-Service / per-endpoint ones
    const pool = [...regular.filter((c) => !c.includes('/')).slice(0, 5), ...regular.filter((c) => c.startsWith('service-')).slice(0, 2), ...regular.filter((c) => c.startsWith('endpoint-')).slice(0, 2)];
    expect(pool.length).toBeGreaterThanOrEqual(7);
    const baseLines = base.split('\n').length - 1;
    const stats = { batches: 0, commands: 0, broken: 0, accepted: 0, refused: 0, sameFirstLine: 0, kernelLeftOut: 0, nftErrorLines: 0, kpxErrorLines: 0 };

    const ns = createNetns('nft-diff');
    try {
      // Async, with a turn of the event loop per batch: 120 batches of spawnSync'd nft runs must not
      // keep the worker deaf to vitest for a minute on a loaded machine (test/helpers/breathe.ts).
      await fc.assert(
        fc.asyncProperty(fc.array(commandArb(pool, baseChains.slice(0, 3)), { minLength: 1, maxLength: 6 }), async (cmds) => {
          await breathe();
          const text = cmds.map((c) => c.text).join('\n') + '\n';
          const loaded = ns.run('nft', ['-f', '-'], `flush ruleset\n${base}`);
          if (loaded.status !== 0) throw new Error(`base did not load: ${loaded.stderr}`);
          const r = ns.run('nft', ['-f', '-'], text);
          const kpx = nftParser.parse(base + text, 'tx.nft');
          const kpxLines = [...new Set(kpx.diagnostics.filter((d) => d.severity === 'error').map((d) => d.line - baseLines))];
          stats.batches++;
          stats.commands += cmds.length;
          stats.broken += cmds.filter((c) => c.broken).length;
          if (r.status === 0) {
            stats.accepted++;
            expect({ kpxErrors: kpxLines, text }).toEqual({ kpxErrors: [], text });
            const listed = nftParser.parse(ns.exec('nft', ['list', 'ruleset']), 'ruleset.txt');
            expect(projectRuleset(kpx.data as NftRuleset)).toEqual(projectRuleset(listed.data as NftRuleset));
          } else {
            stats.refused++;
            const nftLines = errorLines(r.stderr);
            stats.nftErrorLines += nftLines.length;
            stats.kpxErrorLines += kpxLines.length;
            expect(nftLines.length).toBeGreaterThan(0);
            const kernelOnly = [...r.stderr.matchAll(/: Error: (.*)$/gm)].every((m) => m[1].startsWith('Could not process rule:'));
            const first = { nft: Math.min(...nftLines), kpx: Math.min(...kpxLines), kpxHasNftFirst: kpxLines.includes(Math.min(...nftLines)) };
            // kpx may name an earlier line than nft only where nft did not ask the kernel, or where the
            // kernel's answer names a later line (see above); both are counted
            const want = { nft: first.nft, kpx: Math.min(first.kpx, first.nft), kpxHasNftFirst: true };
            if (first.kpx === first.nft) stats.sameFirstLine++;
            else if (kernelOnly) stats.kernelLeftOut++;
            expect({ ...first, text, stderr: r.stderr }).toEqual({ ...want, text, stderr: r.stderr });
          }
          // a deliberately broken command is reported at its own line
          cmds.forEach((c, k) => {
            if (c.broken) expect({ line: k + 1, text: c.text, reported: kpxLines.includes(k + 1) }).toEqual({ line: k + 1, text: c.text, reported: true });
          });
        }),
        { seed: 20261125, numRuns: 120, endOnFailure: false },
      );
    } finally {
      deleteNetns(ns);
    }
    console.log(`nft -f differential: ${stats.commands} commands (${stats.broken} deliberately broken) in ${stats.batches} batches; nft took ${stats.accepted}, refused ${stats.refused}, kpx's first error on nft's first in ${stats.sameFirstLine}, earlier in ${stats.refused - stats.sameFirstLine} (${stats.kernelLeftOut} where nft's errors all came from the kernel) (nft named ${stats.nftErrorLines} error lines, kpx ${stats.kpxErrorLines})`);
    expect(stats.commands).toBeGreaterThanOrEqual(300);
    expect(stats.accepted).toBeGreaterThan(10);
    expect(stats.refused).toBeGreaterThan(10);
  });
});
