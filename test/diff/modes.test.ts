/**
 * `kpx diff` across proxy modes (issue 31, acceptance 2): one generated cluster dumped by the
 * generator in iptables, IPVS and nftables mode. The proxy mode is not part of a Service's
 * identity: every pair of modes gives 0 Services added, removed or changed, the mode change said
 * once; a real change made on one side (through the generator's model, or an edit of one dump
 * where the generator cannot write it: an IPVS weight, a numgen key) is the only change reported.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster, groundTruth, SHAPES, writeBundle, type Cluster, type Mode, type NftOptions, type Service } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { diffSnapshots, type SnapshotDiff } from '../../src/diff/index.js';
import { renderDiffText } from '../../src/render/diff/text.js';
import { chalkInit } from '../../src/render/colors.js';

const tmp = mkdtempSync(join(tmpdir(), 'kpx-diff-modes-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function bundle(c: Cluster, mode: Mode, nft: NftOptions = {}, edit?: (dir: string) => void): string {
  const dir = join(tmp, `${mode}-${n++}`);
  writeBundle(c, mode, dir, { nft });
  for (const f of ['truth.json', 'ipset-save.txt', 'nft-script.nft']) rmSync(join(dir, f), { force: true });
  edit?.(dir);
  return dir;
}

async function diff(a: string, b: string): Promise<SnapshotDiff> {
  const sa = await loadSnapshot([a], { name: 'old' });
  const sb = await loadSnapshot([b], { name: 'new' });
  return diffSnapshots(sa, await resolveServices(sa), sb, await resolveServices(sb));
}

/** Replace one Service (by name) through the model. */
function withService(c: Cluster, name: string, edit: (s: Service) => Service): Cluster {
  const services = c.services.map((s) => (s.name === name ? edit(s) : s));
  const byName = new Map(services.map((s) => [s.name, s]));
  const syncOrder = c.syncOrder.map((r) => {
    const s = byName.get(r.service.name)!;
    return { service: s, port: s.ports[r.service.ports.indexOf(r.port)] };
  });
  return { ...c, services, syncOrder };
}

const MODES = ['iptables', 'ipvs', 'nftables'] as const;
const PAIRS: [Mode, Mode][] = [
  ['iptables', 'ipvs'],
  ['iptables', 'nftables'],
  ['ipvs', 'nftables'],
  ['nftables', 'iptables'],
];

for (const family of [4, 6] as const) {
  describe(`kpx diff across proxy modes, one generated cluster (IPv${family})`, () => {
    const cluster = generateCluster({ seed: 3, services: SHAPES.length + 20, family });
    const truth = groundTruth(cluster).services;
    const dirs = Object.fromEntries(MODES.map((m) => [m, bundle(cluster, m)])) as Record<Mode, string>;

    for (const [a, b] of PAIRS) {
      it(`${a} → ${b}: the mode change is said once, no Service added, removed or changed`, async () => {
        const d = await diff(dirs[a], dirs[b]);
        expect(d.modes?.old).toEqual([a]);
        expect(d.modes?.new).toEqual([b]);
        expect(d.services.added).toEqual([]);
        expect(d.services.removed).toEqual([]);
        expect(d.services.changed).toEqual([]);
        expect(d.services.unchanged).toBe(truth.length);
        // kube-proxy's own rules are set aside (counted), everything else is compared. The generator
        // writes flannel's iptables rules in iptables mode only (its IPVS-mode iptables-save has none,
        // its nftables bundle no iptables-save at all: not compared): iptables ↔ IPVS says they went.
        const flannel = new Set(['filter/FLANNEL-FWD', 'filter/FORWARD', 'nat/FLANNEL-POSTRTG', 'nat/POSTROUTING'].map((u) => `iptables v${family} ${u}`));
        const ipvsPair = new Set([a, b]).size === 2 && [a, b].includes('ipvs') && [a, b].includes('iptables');
        expect(d.rules.unexplained.map((u) => u.unit).sort()).toEqual(ipvsPair ? [...flannel].sort() : []);
        for (const u of d.rules.unexplained) expect([...u.added, ...u.removed].every((r) => /flannel/.test(r.text))).toBe(true);
        expect(d.rules.proxyRules!.old).toBeGreaterThan(0);
        expect(d.rules.proxyRules!.new).toBeGreaterThan(0);
        const text = renderDiffText(d, chalkInit(false));
        expect(text.match(/^Proxy mode: /gm)).toEqual(['Proxy mode: ']);
        expect(text).toContain(`Proxy mode: ${a} → ${b}`);
        expect(text).toMatch(/^Services: 0 added, 0 removed, 0 changed, \d+ unchanged/m);
        const ipvs = a === 'ipvs' || b === 'ipvs';
        expect(d.modes!.notCompared.some((x) => x.what === 'internalTrafficPolicy')).toBe(ipvs);
      });
    }

    it('every nftables layout since 1.29 against iptables mode: 0 changed', async () => {
      for (const layout of ['1.29', '1.34', '1.36', '1.37'] as const) {
        const d = await diff(dirs.iptables, bundle(cluster, 'nftables', { nftLayout: layout }));
        expect({ layout, added: d.services.added.length, removed: d.services.removed.length, changed: d.services.changed }).toEqual({ layout, added: 0, removed: 0, changed: [] });
        expect(d.services.unchanged).toBe(truth.length);
      }
    });
  });
}

describe('kpx diff across proxy modes: a real change on one side is the only change', () => {
  // Each change is made on the new side of every pair of modes; the changed Service is all that is reported.
  const cluster = generateCluster({ seed: 3, services: SHAPES.length + 20 });
  const base = Object.fromEntries(MODES.map((m) => [m, bundle(cluster, m)])) as Record<Mode, string>;

  /** Every pair, the change made on the new side; the changed Service is the only one reported. */
  async function onlyChange(changed: Cluster | ((mode: Mode) => string), name: string) {
    const out: Record<string, SnapshotDiff> = {};
    for (const [a, b] of PAIRS) {
      const nb = typeof changed === 'function' ? changed(b) : bundle(changed, b);
      const d = await diff(base[a], nb);
      expect({ pair: `${a}→${b}`, added: d.services.added.length, removed: d.services.removed.length, changed: d.services.changed.map((c) => c.key) }).toEqual({ pair: `${a}→${b}`, added: 0, removed: 0, changed: [name] });
      out[`${a}→${b}`] = d;
    }
    return out;
  }

  it('an endpoint removed', async () => {
    const after = withService(cluster, 'three-endpoints', (s) => ({ ...s, ports: s.ports.map((p) => ({ ...p, endpoints: p.endpoints.filter((e) => e !== p.endpoints.find((x) => !x.local)) })) }));
    const gone = cluster.services.find((s) => s.name === 'three-endpoints')!.ports[0].endpoints.find((x) => !x.local)!;
    const ds = await onlyChange(after, 'shapes/three-endpoints:http/tcp');
    for (const d of Object.values(ds)) expect(d.services.changed[0].endpointsRemoved.map((e) => e.address)).toEqual([`${gone.ip}:${gone.port}`]);
  });

  it('a NodePort renumbered', async () => {
    const after = withService(cluster, 'nodeport', (s) => ({ ...s, ports: s.ports.map((p) => ({ ...p, nodePort: 32555 })) }));
    const ds = await onlyChange(after, 'shapes/nodeport:http/tcp');
    for (const d of Object.values(ds)) expect(d.services.changed[0].fields.filter((f) => f.field === 'nodePort').map((f) => f.new)).toEqual([32555]);
  });

  it('a traffic policy flipped (externalTrafficPolicy Cluster → Local, endpoints elsewhere too)', async () => {
    const svc = cluster.services.find((s) => s.name === 'nodeport')!;
    expect(svc.ports[0].endpoints.some((e) => !e.local)).toBe(true);
    const after = withService(cluster, 'nodeport', (s) => ({ ...s, externalTrafficPolicy: 'Local' }));
    const ds = await onlyChange(after, 'shapes/nodeport:http/tcp');
    for (const d of Object.values(ds)) expect(d.services.changed[0].fields.find((f) => f.field === 'externalTrafficPolicy')).toEqual({ field: 'externalTrafficPolicy', old: 'Cluster', new: 'Local' });
  });

  it("an endpoint's share changed (an IPVS weight, a numgen key, a statistic ladder edited)", async () => {
    const svc = cluster.services.find((s) => s.name === 'three-endpoints')!;
    const [e0] = svc.ports[0].endpoints;
    const edits: Record<Mode, (dir: string) => void> = {
      // ipvsadm -Ln: the first real server at weight 0 (what kube-proxy does to a terminating endpoint): rr skips it.
      ipvs: (dir) => {
        const f = join(dir, 'ipvsadm-Ln.txt');
        const lines = readFileSync(f, 'utf8').split('\n');
        const vs = lines.findIndex((l) => l.startsWith(`TCP  ${svc.clusterIP}:80 `));
        const rs = lines.findIndex((l, i) => i > vs && l.includes(`-> ${e0.ip}:${e0.port}`));
        expect(vs).toBeGreaterThan(0);
        const edited = lines[rs].replace(/(Masq\s+)1(\s)/, (_m, a: string, b: string) => `${a}0${b}`);
        expect(edited).not.toBe(lines[rs]);
        lines[rs] = edited;
        writeFileSync(f, lines.join('\n'));
      },
      // The numgen vmap: mod 4, the new key 3 to the first endpoint (1/2, 1/4, 1/4).
      nftables: (dir) => {
        const f = join(dir, 'nft-ruleset.txt');
        const text = readFileSync(f, 'utf8');
        const re = new RegExp(`numgen random mod 3 vmap \\{ (0 : goto (endpoint-[^,]*__${e0.ip.replaceAll('.', '\\.')}/${e0.port}), [^}]*) \\}`);
        expect(text).toMatch(re);
        writeFileSync(f, text.replace(re, (_m, els: string, first: string) => `numgen random mod 4 vmap { ${els}, 3 : goto ${first} }`));
      },
      // The ladder's first rule: probability 1/3 → 0.5 (the rest of the ladder splits what is left).
      iptables: (dir) => {
        const f = join(dir, 'iptables-save.txt');
        const text = readFileSync(f, 'utf8');
        const line = text.split('\n').find((l) => l.includes(`-A KUBE-SVC-`) && l.includes('shapes/three-endpoints:http') && l.includes('--probability 0.33333333349'))!;
        expect(line).toBeDefined();
        writeFileSync(f, text.replace(line, line.replace('--probability 0.33333333349', '--probability 0.50000000000')));
      },
    };
    const ds = await onlyChange((mode) => bundle(cluster, mode, {}, edits[mode]), 'shapes/three-endpoints:http/tcp');
    for (const d of Object.values(ds)) {
      const share = d.services.changed[0].endpointsChanged.filter((e) => e.field === 'share');
      expect(share.length).toBeGreaterThanOrEqual(2);
      expect(d.services.changed[0].endpointsAdded).toEqual([]);
      expect(d.services.changed[0].endpointsRemoved).toEqual([]);
    }
  });
});
