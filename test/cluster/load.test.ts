/** Cluster bundles: detection, node names, progress, workers vs this thread. */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clusterNodeDirs, isClusterBundle, loadCluster, workerPlan } from '../../src/cluster/load.js';
import { InputError } from '../../src/load/index.js';
import { bundle, tempDir } from './helpers.js';

const NAMES = ['k8s-control-plane', 'k8s-worker', 'k8s-worker2'];

describe('isClusterBundle', () => {
  const { dir } = bundle();
  it('a folder of kpx collect bundles is one; a node folder, a dump file and a missing path are not', () => {
    expect(isClusterBundle(dir)).toBe(true);
    expect(isClusterBundle(join(dir, 'k8s-worker'))).toBe(false);
    expect(isClusterBundle(join(dir, 'k8s-worker', 'iptables-save.txt'))).toBe(false);
    expect(isClusterBundle(join(dir, 'nope'))).toBe(false);
  });
  it('without manifests: two folders of dumps are a cluster, one is not; dumps at the top make it one node', () => {
    const plain = tempDir('plain');
    cpSync(join(dir, 'k8s-worker'), join(plain, 'a'), { recursive: true });
    rmSync(join(plain, 'a', 'manifest.json'));
    expect(isClusterBundle(plain)).toBe(false);
    cpSync(join(plain, 'a'), join(plain, 'b'), { recursive: true });
    mkdirSync(join(plain, 'notes'));
    writeFileSync(join(plain, 'notes', 'todo.txt'), 'look at node b\n');
    expect(isClusterBundle(plain)).toBe(true);
    expect(clusterNodeDirs(plain).map((n) => n.name)).toEqual(['a', 'b']);
    writeFileSync(join(plain, 'iptables-save.txt'), readFileSync(join(plain, 'a', 'iptables-save.txt')));
    expect(isClusterBundle(plain)).toBe(false);
  });
});

describe('loadCluster', () => {
  const { dir, cluster } = bundle();
  it('names nodes by manifest host, keeps each snapshot apart, reports progress', async () => {
    const seen: string[] = [];
    const c = await loadCluster(dir, { workers: 'never', onProgress: (p) => seen.push(`${p.phase} ${p.node} ${p.done}/${p.total}`) });
    expect(c.loadedWith).toBe('in-process');
    expect(c.nodes.map((n) => n.name)).toEqual(NAMES);
    expect(seen).toEqual(NAMES.flatMap((n, i) => [`start ${n} ${i}/3`, `done ${n} ${i + 1}/3`]));
    for (const [i, n] of c.nodes.entries()) {
      expect(n.snapshot.name).toBe(n.name);
      expect(n.host).toBe(n.name);
      expect(n.snapshot.files.every((f) => f.path.startsWith(join(dir, n.name)))).toBe(true);
      const eth0 = n.snapshot.interfaces.find((x) => x.name === 'eth0')!;
      expect(eth0.addresses.map((a) => a.address)).toEqual([cluster.nodes[i].ip]);
    }
  });
  it('uses folder names when hosts repeat (namespaces of one machine share its hostname)', () => {
    const copy = tempDir('dup');
    for (const [i, n] of NAMES.entries()) {
      cpSync(join(dir, n), join(copy, `node${i}`), { recursive: true });
      const m = JSON.parse(readFileSync(join(copy, `node${i}`, 'manifest.json'), 'utf8'));
      writeFileSync(join(copy, `node${i}`, 'manifest.json'), JSON.stringify({ ...m, host: 'buildbox' }));
    }
    expect(clusterNodeDirs(copy).map((n) => [n.name, n.host])).toEqual([['node0', 'buildbox'], ['node1', 'buildbox'], ['node2', 'buildbox']]);
  });
  it('several node folders given one by one; `only`; errors for unknown nodes and paths', async () => {
    const c = await loadCluster([join(dir, 'k8s-worker2'), join(dir, 'k8s-worker')], { only: ['k8s-worker'] });
    expect(c.nodes.map((n) => n.name)).toEqual(['k8s-worker']);
    await expect(loadCluster(dir, { only: ['nope'] })).rejects.toThrow(/no node named nope in this bundle \(nodes: k8s-control-plane, k8s-worker, k8s-worker2\)/);
    await expect(loadCluster(join(dir, 'k8s-worker'))).rejects.toBeInstanceOf(InputError);
    await expect(loadCluster(join(dir, 'missing'))).rejects.toThrow(/no such file or directory/);
  });
  it('auto never copies full snapshots from workers; compare loads use them only for big dumps', () => {
    const nodes = clusterNodeDirs(dir);
    expect(workerPlan(nodes, 'auto', 'full').workers).toBe(0);
    expect(workerPlan(nodes, 'auto', 'compare').reason).toMatch(/only \d+ bytes of dumps|no compiled worker|one CPU/);
    expect(workerPlan(nodes, 'never', 'compare').workers).toBe(0);
  });
});

describe('worker threads (compiled build)', () => {
  const dist = fileURLToPath(new URL('../../dist/src/cluster/load.js', import.meta.url));
  it('workers give the same snapshots as this thread; compare loads carry resolutions', async () => {
    expect(existsSync(dist), `${dist} is missing: build first (npm test does)`).toBe(true);
    const { dir } = bundle({ seed: 9 });
    const mod = (await import(pathToFileURL(dist).href)) as typeof import('../../src/cluster/load.js');
    const here = await mod.loadCluster(dir, { workers: 'never' });
    const there = await mod.loadCluster(dir, { workers: 2 });
    expect(there.loadedWith).toBe('workers');
    expect(there.nodes.map((n) => n.name)).toEqual(here.nodes.map((n) => n.name));
    for (let i = 0; i < here.nodes.length; i++) expect(there.nodes[i].snapshot).toEqual(here.nodes[i].snapshot);
    const cmpLoad = await mod.loadCluster(dir, { workers: 'always', purpose: 'compare' });
    expect(cmpLoad.loadedWith).toBe('workers');
    for (const n of cmpLoad.nodes) {
      expect(n.partial).toBe(true);
      expect(n.snapshot.rulesets).toEqual([]);
      expect(n.modes).toEqual(['iptables']);
      expect(n.resolution!.services.length).toBeGreaterThan(5);
      expect(n.snapshot.routes.length).toBeGreaterThan(3);
    }
  });
});
