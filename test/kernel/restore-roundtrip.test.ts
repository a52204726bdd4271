/**
 * `kpx dump -o iptables-save` of iptables-restore input, judged by the real iptables-restore: kube-proxy's
 * own nine syncs (TestSyncProxyRulesRepeated, three of them deleting chains with -X) are replayed with
 * `iptables-restore --noflush` in one namespace as kube-proxy gives them, and in another as kpx writes
 * them back; after every step both namespaces hold the same tables. Then the constructed -X cases:
 * the tool refuses exactly those kpx reports an error for.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { iptablesSaveParser } from '../../src/extract/iptables-save.js';
import { cli } from '../helpers/cli.js';
import { DELETE_CASES, DELETED, FIX, STEPS } from '../helpers/kube-proxy-restore.js';
import { requireKernel, withNetns, type Netns } from '../helpers/netns.js';

const kernel = requireKernel();

/** What the kernel holds, as iptables-save prints it, without its dated comments and counters. */
const tables = (ns: Netns) =>
  ns
    .exec('iptables-save', [])
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ''))
    .join('\n');

describe.runIf(kernel)('kpx dump keeps what iptables-restore applies (kube-proxy payloads, -X included)', () => {
  it('replaying the nine syncs as given and as kpx writes them back leaves the same tables after every step', async () => {
    const given = STEPS.map((n) => readFileSync(FIX(n), 'utf8'));
    const back: string[] = [];
    for (const n of STEPS) {
      const r = await cli(['dump', FIX(n)]);
      expect(r.code, r.stderr).toBe(0);
      back.push(r.stdout);
    }
    await withNetns('kprt-given', (a) =>
      withNetns('kprt-kpx', (b) => {
        for (const [i, n] of STEPS.entries()) {
          a.exec('iptables-restore', ['--noflush'], given[i]);
          b.exec('iptables-restore', ['--noflush'], back[i]);
          const after = tables(a);
          expect(tables(b), `after step ${n}`).toBe(after);
          // The kernel deleted the chains (the comparison is not between two namespaces that both kept them).
          for (const c of DELETED[n] ?? []) expect(after, `step ${n}`).not.toContain(`:${c} `);
        }
        expect(tables(a)).toContain(':KUBE-SVC-X27LE4BHSL4DOUIK ');
      }),
    );
  });

  it('both backends of iptables-restore refuse exactly the -X inputs kpx reports an error for; where they differ, kpx warns', async () => {
    const seen: string[] = [];
    for (const [what, c] of Object.entries(DELETE_CASES)) {
      const refused: Record<string, boolean> = {};
      for (const [backend, tool] of [['nf_tables', 'iptables-nft-restore'], ['legacy', 'iptables-legacy-restore']] as const) {
        // --wait: legacy's lock is machine-wide (another kernel test may hold it); nft's tool ignores it.
        const r = await withNetns('kprt-x', (ns) => ns.run(tool, [...(backend === 'legacy' ? ['--wait=60'] : []), '--noflush'], c.text));
        refused[backend] = r.status !== 0;
      }
      const expected = typeof c.refused === 'boolean' ? { nf_tables: c.refused, legacy: c.refused } : c.refused;
      expect(refused, what).toEqual(expected);
      const said = iptablesSaveParser.parse(c.text, 'rules.txt').diagnostics.filter((d) => d.severity !== 'info').map((d) => d.severity);
      const both = refused.nf_tables && refused.legacy;
      const either = refused.nf_tables || refused.legacy;
      expect(said.includes('error'), `${what}: ${said.join(', ')}`).toBe(both);
      expect(said.length > 0, `${what}: ${said.join(', ')}`).toBe(either);
      seen.push(what);
    }
    expect(seen.length).toBe(8);
  });
});
