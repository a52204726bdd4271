/**
 * `kpx diff` when one side holds evidence the other lacks (issue 29): a bundle with `ip route`
 * against one without is not 28 Services changed; what only one side has is said once, and the
 * one real change (an endpoint removed from a 3-endpoint Service) shows with the shares it moved
 * (33.3% → 50% for the two that stay). Generated clusters, every proxy mode.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, groundTruth, writeBundle, type Cluster, type Mode, type Service } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { diffSnapshots, type SnapshotDiff } from '../../src/diff/index.js';
import { renderDiffText } from '../../src/render/diff/text.js';
import { chalkInit } from '../../src/render/colors.js';
import { SCHEMAS, versioned } from '../../src/render/schemas/index.js';

const SAMPLES = fileURLToPath(new URL('../../samples', import.meta.url));
const validDiff = new Ajv({ strict: false, allErrors: true }).compile(SCHEMAS.diff.schema);
/** The JSON document `kpx diff -o json` prints validates against `kpx schema diff`. */
function expectValid(d: SnapshotDiff) {
  const doc = JSON.parse(JSON.stringify(versioned('diff', d))) as unknown;
  expect(validDiff(doc), JSON.stringify(validDiff.errors)).toBe(true);
}

const tmp = mkdtempSync(join(tmpdir(), 'kpx-diff-evidence-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The cluster with the first endpoint of shapes/three-endpoints removed (through the model). */
function dropOneOfThree(c: Cluster): Cluster {
  const edit = (s: Service): Service => (s.name === 'three-endpoints' && s.namespace === 'shapes' ? { ...s, ports: s.ports.map((p) => ({ ...p, endpoints: p.endpoints.slice(1) })) } : s);
  const services = c.services.map(edit);
  const byName = new Map(services.map((s) => [`${s.namespace}/${s.name}`, s]));
  const syncOrder = c.syncOrder.map((r) => {
    const s = byName.get(`${r.service.namespace}/${r.service.name}`)!;
    return { service: s, port: s.ports[r.service.ports.indexOf(r.port)] };
  });
  return { ...c, services, syncOrder, totalEndpoints: syncOrder.reduce((n, r) => n + r.port.endpoints.length, 0) };
}

let n = 0;
function bundle(c: Cluster, mode: Mode, drop: readonly string[] = []): string {
  const dir = join(tmp, `${mode}-${n++}`);
  writeBundle(c, mode, dir);
  for (const f of ['truth.json', 'ipset-save.txt', 'nft-script.nft', ...drop]) rmSync(join(dir, f), { force: true });
  return dir;
}

async function diff(a: string, b: string): Promise<SnapshotDiff> {
  const sa = await loadSnapshot([a], { name: 'old' });
  const sb = await loadSnapshot([b], { name: 'new' });
  return diffSnapshots(sa, await resolveServices(sa), sb, await resolveServices(sb));
}

const before = generateCluster({ seed: 11, services: 30 });
const after = dropOneOfThree(before);
const three = groundTruth(before).services.find((s) => s.namespace === 'shapes' && s.name === 'three-endpoints')!;
const addr = (e: { ip: string; port: number }) => `${e.ip}:${e.port}`;

describe('kpx diff: evidence on one side only is not a change', () => {
  it('the fixture: three endpoints before, two after, and the old side has routes the new one lacks', () => {
    expect(three.endpoints.length).toBe(3);
    const afterThree = groundTruth(after).services.find((s) => s.namespace === 'shapes' && s.name === 'three-endpoints')!;
    expect(afterThree.endpoints.map(addr)).toEqual(three.endpoints.slice(1).map(addr));
  });

  for (const mode of ['iptables', 'ipvs', 'nftables'] as const) {
    it(`${mode} mode: without ip route / ip addr on the new side, only the one real change is reported, the missing evidence said once`, async () => {
      const d = await diff(bundle(before, mode), bundle(after, mode, ['ip-route.txt', 'ip-addr.txt']));
      // The one real change, and nothing else.
      expect(d.services.changed.length).toBe(1);
      const ch = d.services.changed[0];
      expect(ch.endpointsRemoved.map((e) => e.address)).toEqual([addr(three.endpoints[0])]);
      expect(ch.endpointsChanged.filter((e) => e.field === 'local')).toEqual([]);
      expect(d.services.added.length + d.services.removed.length).toBe(0);
      // Said once: which evidence only the old side has, and how many localities were left uncompared.
      expect(d.evidence?.oneSided.map((e) => [e.side, e.kind])).toEqual([
        ['old', 'ip route'],
        ['old', 'ip addr'],
      ]);
      expect(d.evidence!.localityNotCompared).toBeGreaterThan(10);
      // The shares that moved: the two endpoints that stay go from a third to a half.
      const shares = ch.endpointsChanged.filter((e) => e.field === 'share');
      expect(shares.map((e) => e.address).sort()).toEqual(three.endpoints.slice(1).map(addr).sort());
      for (const s of shares) {
        expect(s.old as number).toBeCloseTo(1 / 3, 6);
        expect(s.new as number).toBeCloseTo(1 / 2, 6);
      }
      const text = renderDiffText(d, chalkInit(false));
      expect(text.split('\n')[0]).toMatch(/^Evidence only in the old snapshot: ip route \(.*ip-route\.txt\); ip addr \(.*ip-addr\.txt\)$/);
      expect(text.match(/Evidence only in/g)?.length).toBe(1);
      expect(text).toContain(`share 33.3% → 50%: ${three.endpoints.slice(1).map(addr).join(', ')} (the endpoints that stay, as 3 → 2 endpoints share the traffic)`);
      expect(text).toMatch(/Services: 0 added, 0 removed, 1 changed/);
      expect(text).not.toMatch(/local: - →/);
      expectValid(d);
    });
  }

  it('a listing only one side has (ipset in IPVS mode) is counted as one-sided, not as sets removed', async () => {
    const d = await diff(bundle(before, 'ipvs'), bundle(before, 'ipvs', ['ipset-list.txt']));
    expect(d.services.changed).toEqual([]);
    // Without the listing IPVS mode cannot attach external/LoadBalancer front ends to their Service: not compared, not added.
    expect(d.services.added).toEqual([]);
    expect(d.services.removed).toEqual([]);
    expect(d.evidence!.frontEndsNotCompared).toBeGreaterThan(0);
    expect(d.evidence!.notCompared.map((n) => n.what)).toContain('externalTrafficPolicy');
    expect(d.rules.unexplained.filter((u) => u.kind === 'ipset')).toEqual([]);
    const one = d.rules.oneSided ?? [];
    expect(one.length).toBe(1);
    expect(one[0]).toMatchObject({ kind: 'ipset', side: 'old' });
    expect(one[0].items).toBeGreaterThan(5);
    expect(d.evidence?.oneSided.map((e) => [e.side, e.kind])).toEqual([['old', 'ipset']]);
    const text = renderDiffText(d, chalkInit(false));
    expect(text).toContain('ipset rules only in the old dumps');
    expect(text).not.toMatch(/^- ipset /m);
    expectValid(d);
  });

  it('the iptables-mode sample against its iptables dumps alone (no ip route, no ip addr): no Service changed', async () => {
    const node = join(SAMPLES, 'iptables-mode-node');
    const rulesOnly = join(tmp, 'rules-only');
    mkdirSync(rulesOnly);
    for (const f of ['iptables-save.txt', 'ip6tables-save.txt', 'nft-ruleset.txt', 'sysctl.txt']) copyFileSync(join(node, f), join(rulesOnly, f));
    const d = await diff(node, rulesOnly);
    expect(d.old.servicePorts).toBeGreaterThan(20);
    expect(d.services).toMatchObject({ added: [], removed: [], changed: [], unchanged: d.old.servicePorts });
    expect(d.evidence!.oneSided.map((e) => e.kind)).toEqual(['ip route', 'ip addr']);
    expect(d.evidence!.notCompared).toEqual([]);
    expect(d.evidence!.localityNotCompared).toBeGreaterThan(20);
    expect(d.rules.unexplained).toEqual([]);
    expectValid(d);
  });

  it('the same evidence on both sides says nothing about evidence', async () => {
    const d = await diff(bundle(before, 'iptables'), bundle(after, 'iptables'));
    expect(d.evidence).toBeUndefined();
    expect(renderDiffText(d, chalkInit(false))).not.toContain('Evidence only');
  });
});
