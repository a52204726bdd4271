/**
 * A table cut before its COMMIT (a terminal's scrollback, a paste limit): lint must report nothing
 * that the cut created (issue 15) — no empty/orphan/undefined/dangling findings for chains after
 * the cut — and the snapshot must record the truncation.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, ipAddr, ipRoute, ipsetList, iptablesSave, ipvsadmLn, ipvsIpAddr, ipvsIptablesSave, ipvsState, nftListing } from '../../src/generate/index.js';
import type { Finding } from '../../src/lint/rule.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { lintFiles, snapshotOf } from '../lint/helpers.js';
import { readFileSync } from 'node:fs';
import { parseDestination, type Destination } from '../../src/trace/packet.js';
import { tracePacket } from '../../src/trace/trace.js';

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
/** The same finding about a Service port the cut left unnamed (named by its node port instead of its cluster IP). */
const unlabelled = (f: Finding) => `${f.ruleId} ${f.service ? f.message.split(f.service).join('') : f.message}`;
const created = (full: readonly Finding[], part: readonly Finding[]) => {
  const had = new Set(full.map(key));
  const hadText = new Set(full.map(unlabelled));
  return part.filter((f) => !had.has(key(f)) && !hadText.has(unlabelled(f))).map((f) => `${f.severity} ${f.ruleId} ${f.file}:${f.line}: ${f.message}`);
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

  // A terminal or a paste limit cuts text anywhere, mid-line included.
  const cutText = (text: string, fraction: number) => text.slice(0, Math.floor(text.length * fraction));
  const ipvsadm = ipvsOthers['ipvsadm.txt'];
  for (const fraction of [0.2, 0.5, 0.8]) {
    it(`ipvs mode: ipvsadm -Ln cut mid-line at ${fraction * 100}%: the virtual server it ends in is unknown (never no-endpoints), no finding the cut created`, async () => {
      const files = { 'iptables-save.txt': vipt, ...ipvsOthers };
      const full = await lintFiles(files);
      const part = { ...files, 'ipvsadm.txt': cutText(ipvsadm, fraction) };
      const r = await lintFiles(part);
      expect(created(full.findings, r.findings)).toEqual([]);
      const s = await snapshotOf(part);
      expect(s.ipvs[0].truncated).toBeDefined();
      const services = (await resolveServices(s)).services;
      const fullServices = (await resolveServices(await snapshotOf(files))).services;
      const cutOnes = services.filter((x) => x.problems.some((p) => p.code === 'listing-truncated'));
      expect(cutOnes.length).toBeGreaterThan(0);
      for (const x of cutOnes) {
        expect(['unknown', 'partial']).toContain(x.state);
        expect(x.endpoints.every((e) => e.probability === null)).toBe(true);
      }
      // Nothing is no-endpoints that was not so in the whole listing.
      const none = (list: typeof services) => new Set(list.filter((x) => x.state === 'no-endpoints').map((x) => x.id));
      const wasNone = none(fullServices);
      expect([...none(services)].filter((id) => !wasNone.has(id))).toEqual([]);
    });
  }

  it('ipvs mode: trace to the virtual server a cut listing ends in is UNKNOWN (listing-truncated), not DROP', async () => {
    const part = { 'iptables-save.txt': vipt, ...ipvsOthers, 'ipvsadm.txt': cutText(ipvsadm, 0.5) };
    const s = await snapshotOf(part);
    const vs = s.ipvs[0].virtualServers[s.ipvs[0].virtualServers.length - 1];
    const res = await resolveServices(s);
    const d = parseDestination(`${vs.address}:${vs.port}/${vs.protocol.toLowerCase()}`) as Destination;
    const t = tracePacket(s, res, d, d.protocol!, { from: 'pod', assumptions: { established: false, affinityHit: false } });
    expect(t.outcomes.map((o) => [o.verdict, o.unknown?.code])).toEqual([['UNKNOWN', 'listing-truncated']]);
  });

  // kube-proxy's iptables mode on iptables-nft, seen through `nft list ruleset` and cut mid-way.
  const viewText = readFileSync(new URL('../../samples/iptables-mode-node/nft-ruleset.txt', import.meta.url), 'utf8');
  const nodeFiles = { 'ip-addr.txt': readFileSync(new URL('../../samples/iptables-mode-node/ip-addr.txt', import.meta.url), 'utf8') };
  for (const fraction of [0.3, 0.5, 0.8]) {
    it(`the nft view of iptables-nft cut mid-way (${fraction * 100}%): chains past the cut are unknown, no finding the cut created`, async () => {
      const full = await lintFiles({ 'nft-ruleset.txt': viewText, ...nodeFiles });
      const part = { 'nft-ruleset.txt': cutText(viewText, fraction), ...nodeFiles };
      const r = await lintFiles(part);
      expect(created(full.findings, r.findings)).toEqual([]);
      const services = (await resolveServices(await snapshotOf(part))).services;
      const fullNone = new Set((await resolveServices(await snapshotOf({ 'nft-ruleset.txt': viewText, ...nodeFiles }))).services.filter((x) => x.state === 'no-endpoints').map((x) => x.id));
      expect(services.filter((x) => x.state === 'no-endpoints' && !fullNone.has(x.id)).map((x) => x.id)).toEqual([]);
    });
  }

  // kube-proxy's nftables mode: `nft list table ip kube-proxy` cut mid-way.
  const nft = nftListing(c);
  for (const fraction of [0.3, 0.5, 0.8]) {
    it(`nftables mode: the listing cut at ${fraction * 100}% gives no finding the cut created and no no-endpoints the cut created`, async () => {
      const full = await lintFiles({ 'nft.txt': nft, ...others });
      const part = { 'nft.txt': cutText(nft, fraction), ...others };
      const r = await lintFiles(part);
      expect(created(full.findings, r.findings)).toEqual([]);
      const fullNone = new Set((await resolveServices(await snapshotOf({ 'nft.txt': nft, ...others }))).services.filter((x) => x.state === 'no-endpoints').map((x) => x.id));
      const services = (await resolveServices(await snapshotOf(part))).services;
      expect(services.filter((x) => x.state === 'no-endpoints' && !fullNone.has(x.id)).map((x) => x.id)).toEqual([]);
    });
  }
});
