/**
 * A table cut before its COMMIT (a terminal's scrollback, a paste limit): lint must report nothing
 * that the cut created (issue 15) — no empty/orphan/undefined/dangling findings for chains after
 * the cut — and the snapshot must record the truncation.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, ipAddr, ipRoute, ipsetList, iptablesSave, ipvsadmLn, ipvsIpAddr, ipvsIptablesSave, ipvsState } from '../../src/generate/index.js';
import type { Finding } from '../../src/lint/rule.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { lintFiles, snapshotOf } from '../lint/helpers.js';

/** The dump with `table`'s body cut after `fraction` of its lines (its COMMIT and everything after it gone). */
function cut(text: string, table: string, fraction: number): { text: string; cutLine: number } {
  const lines = text.split('\n');
  const start = lines.indexOf(`*${table}`);
  const commit = lines.indexOf('COMMIT', start);
  if (start < 0 || commit < 0) throw new Error(`no *${table} … COMMIT in the generated dump`);
  const at = start + 1 + Math.floor((commit - start - 1) * fraction);
  return { text: lines.slice(0, at).join('\n') + '\n', cutLine: at };
}

/** One finding about one Service port (its wording may carry less evidence after the cut), or about one object. */
const key = (f: Finding) => `${f.ruleId} ${f.service ?? f.fingerprint}`;
const created = (full: readonly Finding[], part: readonly Finding[]) => {
  const had = new Set(full.map(key));
  return part.filter((f) => !had.has(key(f))).map((f) => `${f.severity} ${f.ruleId} ${f.file}:${f.line}: ${f.message}`);
};

describe('lint on a table cut before COMMIT', () => {
  const c = generateCluster({ seed: 15, services: 60, family: 4 });
  const ipt = iptablesSave(c);
  const others = { 'ip-route.txt': ipRoute(c), 'ip-addr.txt': ipAddr(c) };

  for (const table of ['nat', 'filter'] as const) {
    for (const fraction of [0.2, 0.5, 0.8]) {
      it(`iptables mode: ${table} cut at ${fraction * 100}% gives no finding the cut created`, async () => {
        const full = await lintFiles({ 'iptables-save.txt': ipt, ...others });
        const part = cut(ipt, table, fraction);
        const r = await lintFiles({ 'iptables-save.txt': part.text, ...others });
        expect(created(full.findings, r.findings)).toEqual([]);
      });
    }
  }

  it('iptables mode: the snapshot records the truncation; Services whose chains are past the cut are unknown, not broken', async () => {
    const states = async (text: string) => {
      const s = await snapshotOf({ 'iptables-save.txt': text, ...others });
      return { s, services: (await resolveServices(s)).services };
    };
    const full = await states(ipt);
    const late = await states(cut(ipt, 'nat', 0.8).text);
    const nat = late.s.rulesets.flatMap((r) => r.tables).find((t) => t.name === 'nat');
    expect(nat?.committed).toBe(false);
    // Its KUBE-SVL chain (the local endpoints) is past the cut: not "no local endpoints".
    const id = 'shapes/affinity-local:http/tcp';
    expect(full.services.find((x) => x.id === id)?.state).toBe('healthy');
    const cutSvc = late.services.find((x) => x.id === id);
    expect(cutSvc?.state).toBe('unknown');
    expect(cutSvc?.problems.map((p) => p.code)).toContain('table-truncated');
    // Cut early (only declarations and a few rules kept): Services known only by a declared chain are unknown.
    const early = await states(cut(ipt, 'nat', 0.2).text);
    expect(early.services.filter((x) => x.state === 'no-endpoints' && x.endpoints.length === 0 && !x.evidence.some((e) => /has no endpoints/.test(e.text)))).toEqual([]);
    expect(early.services.filter((x) => x.state === 'unknown').length).toBeGreaterThan(0);
  });

  const st = ipvsState(c);
  const vipt = ipvsIptablesSave(c, {}, st);
  const ipvsOthers = { 'ipvsadm.txt': ipvsadmLn(c, st), 'ipset.txt': ipsetList(c, st, vipt), 'ip-addr.txt': ipvsIpAddr(c, st), 'ip-route.txt': ipRoute(c) };
  for (const table of ['nat', 'filter'] as const) {
    for (const fraction of [0.3, 0.6]) {
      it(`ipvs mode: ${table} cut at ${fraction * 100}% gives no finding the cut created`, async () => {
        const full = await lintFiles({ 'iptables-save.txt': vipt, ...ipvsOthers });
        const r = await lintFiles({ 'iptables-save.txt': cut(vipt, table, fraction).text, ...ipvsOthers });
        expect(created(full.findings, r.findings)).toEqual([]);
      });
    }
  }
});
