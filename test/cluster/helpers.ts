/** Generated cluster bundles in temporary directories, removed after the test file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { generateCluster, type Cluster, type GenerateOptions } from '../../src/generate/index.js';
import { writeClusterBundle } from '../../src/generate/cluster-bundle.js';
import type { Mode } from '../../src/generate/bundle.js';
import { parseDestination, type Destination } from '../../src/trace/packet.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

export function tempDir(tag = 'cluster'): string {
  const d = mkdtempSync(join(tmpdir(), `kpx-${tag}-`));
  dirs.push(d);
  return d;
}

export const SMALL: GenerateOptions = { seed: 7, services: 8, nodes: 3, shapes: ['kubernetes', 'kube-dns', 'single-endpoint', 'three-endpoints', 'nodeport-local', 'internal-local'] };

export function bundle(opts: Partial<GenerateOptions> = {}, mode: Mode = 'iptables'): { cluster: Cluster; dir: string } {
  const cluster = generateCluster({ ...SMALL, ...opts });
  const dir = tempDir();
  writeClusterBundle(cluster, mode, dir);
  return { cluster, dir };
}

export function dest(text: string): Destination {
  const d = parseDestination(text);
  if (typeof d === 'string') throw new Error(d);
  return d;
}
