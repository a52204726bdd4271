/**
 * The real pastes of issue 30 (kube-proxy logs and configuration as pasted, sysctl and `ip -d link`
 * among prompts, conntrack excerpts, listings that are not kube-proxy's) through services, trace and
 * lint: none may carry a claim the paste cannot. Alone, services and trace cannot tell (no Service is
 * invented) and lint runs only the rules that judge a paste on its own, each finding pointing at a line
 * of that paste; beside a ruleset, the paste changes no Service and its findings stay what they were.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { resolveServices } from '../../src/kube/resolve.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { RULES } from '../../src/lint/index.js';
import { cannotTell } from '../../src/cli/evidence.js';
import type { ServicePort } from '../../src/kube/types.js';
import { snapshotOf } from '../lint/helpers.js';
import { cli } from '../helpers/cli.js';

const DIRS = ['kube-proxy-pastes', 'kube-proxy-config-pastes', 'kernel-pastes', 'conntrack-pastes', 'foreign-pastes'];
const PASTES = DIRS.flatMap((d) =>
  readdirSync(new URL(`../fixtures/${d}`, import.meta.url))
    .filter((f) => !f.endsWith('.source'))
    .map((f) => `test/fixtures/${d}/${f}`),
);
const text = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');
const NODE = (f: string) => text(`samples/iptables-mode-node/${f}`);
const STANDALONE = RULES.filter((r) => r.meta.standalone);
const STANDALONE_IDS = new Set(STANDALONE.map((r) => r.id));

const key = (s: ServicePort) => JSON.stringify([s.id, s.state, s.clusterIP, s.nodePort, s.endpoints.map((e) => [e.ip, e.port, e.probability, e.local])]);

describe('pastes alone: services and trace cannot tell, lint says only what the paste shows', () => {
  it('there are pastes of every form (one per directory at least)', () => {
    for (const d of DIRS) expect(PASTES.some((p) => p.includes(`/${d}/`)), d).toBe(true);
    expect(PASTES.length).toBeGreaterThan(40);
  });

  for (const path of PASTES)
    it(path.replace('test/fixtures/', ''), async () => {
      const body = text(path);
      const lines = body.split(/\r?\n/);
      const snap = await snapshotOf({ [path]: body });
      // services and trace: "cannot tell", and no Service comes out of a paste that holds no rules.
      expect(cannotTell(snap, 'which Services this node implements')).toBeDefined();
      expect(cannotTell(snap, 'where it goes', 4)).toBeDefined();
      expect((await resolveServices(snap)).services).toEqual([]);
      // lint: only rules that judge a paste on their own; every finding at a line of this paste, quoting it.
      const alone = await lintSnapshot(snap, { rules: STANDALONE });
      for (const f of alone.findings) {
        expect(STANDALONE_IDS.has(f.ruleId), f.ruleId).toBe(true);
        expect(f.file, f.ruleId).toBe(path);
        expect(f.line, `${f.ruleId} line`).toBeGreaterThanOrEqual(1);
        expect(f.line, `${f.ruleId} line`).toBeLessThanOrEqual(lines.length);
        // The finding's text renders the line (`key = value`, `key (absent)` for sysctl's "cannot stat
        // /proc/sys/…"): the line holds what it names first.
        const norm = (x: string) => x.replace(/\//g, '.');
        if (f.text !== undefined) expect(norm(lines[f.line - 1]), `${f.ruleId} text`).toContain(norm(f.text.trim().split(/\s+/)[0]));
        expect(f.service, f.ruleId).toBeUndefined();
      }
      // Beside a ruleset (the iptables-mode node's), the paste changes no Service, and what it alone
      // showed is still said, at the same lines.
      const base = { 'iptables-save.txt': NODE('iptables-save.txt'), 'ip-addr.txt': NODE('ip-addr.txt'), 'ip-route.txt': NODE('ip-route.txt') };
      const without = await resolveServices(await snapshotOf(base));
      const withSnap = await snapshotOf({ ...base, [path]: body });
      const withPaste = await resolveServices(withSnap);
      expect(withPaste.services.map(key)).toEqual(without.services.map(key));
      const together = await lintSnapshot(withSnap, { resolution: withPaste });
      const at = (f: { ruleId: string; file: string; line: number }) => `${f.ruleId} ${f.file}:${f.line}`;
      const togetherAt = new Set(together.findings.map(at));
      for (const f of alone.findings) expect(togetherAt.has(at(f)), at(f)).toBe(true);
    });
});

describe('through the commands (one paste of each form): exit 3 for services and trace, lint by its findings', () => {
  const CASES: [string, number][] = [
    // A failing nftables sync in a CRI log file: lint fails at --fail-on error (exit 1).
    ['test/fixtures/kube-proxy-pastes/cri-nftables-sync-failed.log', 1],
    // kubeadm's embedded v1alpha3 configuration: nothing wrong shown on its own → 3 (no clean bill).
    ['test/fixtures/kube-proxy-config-pastes/kubeadm-v1alpha3-embedded.yaml', 3],
    // bridge-nf-call-iptables = 0 after modprobe: the bridge finding (error) → 1.
    ['test/fixtures/kernel-pastes/sysctl-bridge-after-modprobe.txt', 1],
    // A Cilium table: said, not used; no rule runs → 3.
    ['test/fixtures/foreign-pastes/cilium-dbg-bpf-lb-list-flags.txt', 3],
  ];
  for (const [path, lintCode] of CASES)
    it(path.replace('test/fixtures/', ''), async () => {
      for (const args of [['services', '-i', path], ['trace', '10.96.0.10:53/udp', '-i', path]]) {
        const r = await cli(args);
        expect(r.code, args.join(' ')).toBe(3);
        expect(r.stdout, args.join(' ')).toBe('');
        expect(r.stderr.split('\n').filter((l) => l.startsWith('kpx: cannot tell')).length, args.join(' ')).toBe(1);
      }
      const l = await cli(['lint', '--fail-on', 'error', '-i', path]);
      expect(l.code, l.stderr).toBe(lintCode);
    });
});
