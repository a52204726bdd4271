/** Generated node bundles on disk (deleted by the caller's cleanup), loaded as snapshots. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCluster, groundTruth, writeBundle, type Mode } from '../../src/generate/index.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';

export interface GeneratedNode {
  readonly dir: string;
  readonly snapshot: NodeSnapshot;
  readonly truth: ReturnType<typeof groundTruth>;
  cleanup(): void;
}

export async function generatedNode(mode: Mode, opts: Parameters<typeof generateCluster>[0]): Promise<GeneratedNode> {
  const cluster = generateCluster(opts);
  const dir = mkdtempSync(join(tmpdir(), 'kpx-gen-'));
  writeBundle(cluster, mode, dir);
  // A node bundle holds each fact once: drop the truth and the alternative forms of the same state.
  for (const f of ['truth.json', 'ipset-save.txt', 'nft-script.nft']) rmSync(join(dir, f), { force: true });
  const snapshot = await loadSnapshot([dir]);
  return { dir, snapshot, truth: groundTruth(cluster), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The schema fields of `kpx services -o json` that ground truth also has. */
export const SCHEMA_FIELDS = [
  'namespace',
  'name',
  'portName',
  'protocol',
  'port',
  'clusterIP',
  'nodePort',
  'externalIPs',
  'loadBalancerIPs',
  'loadBalancerSourceRanges',
  'externalTrafficPolicy',
  'internalTrafficPolicy',
  'sessionAffinity',
  'state',
] as const;
