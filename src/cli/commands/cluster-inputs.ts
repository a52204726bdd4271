/**
 * Cluster bundles on the command line: `-i DIR` where DIR holds one folder per node, or several
 * `-i NODE_DIR` with `--nodes`. Single-node commands read one node of a bundle with `--node NAME`.
 */
import { isClusterBundle, loadCluster, type ClusterLoadOptions } from '../../cluster/load.js';
import { compareFleet, type FleetComparison } from '../../cluster/fleet.js';
import type { ClusterSnapshot } from '../../cluster/types.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { UsageError } from '../exit.js';
import { printable } from '../../source/index.js';
import { inputSettingsOf, type InputOptions } from '../input-options.js';
import { startProgress } from '../progress.js';
import { writeErr } from '../output.js';
import type { ClusterIO } from '../../app/io.js';

/** The input flags, as cluster commands read them (--node names the node to read or start from). */
export type ClusterInputOptions = InputOptions;

/** The one path among the inputs that is a cluster bundle, if any (it must then be the only input). */
export function clusterBundlePath(paths: readonly string[], follow: boolean): string | undefined {
  const bundles = paths.filter((p) => p !== '-' && isClusterBundle(p, follow));
  if (bundles.length === 0) return undefined;
  if (paths.length > 1) throw new UsageError(`${bundles[0]} is a cluster bundle (one folder per node): give it alone, not with other inputs`);
  return bundles[0];
}

/** The app's way to load a cluster and to say things now (src/app/io.ts): these loaders, with a spinner when `human`, and stderr. */
export function clusterIO(opts: ClusterInputOptions, human: boolean): ClusterIO {
  return {
    loadCluster: (positional) => loadClusterFromOptions(positional, opts, human),
    compareFleet: (positional) => compareFleetFromOptions(positional, opts, human),
    notice: (line) => writeErr(line + '\n'),
  };
}

/** Load a cluster from the inputs (a bundle, or several node folders), with a spinner for people. */
export async function loadClusterFromOptions(positional: readonly string[], opts: ClusterInputOptions, human: boolean, only?: readonly string[], purpose: 'full' | 'compare' = 'full'): Promise<ClusterSnapshot> {
  return withClusterInputs(positional, opts, human, (paths, load) => loadCluster(paths, { ...load, purpose, ...(only ? { only } : {}) }));
}

/** `services --nodes`: the nodes read and compared one at a time (src/cluster/fleet.ts), with a spinner for people. */
export async function compareFleetFromOptions(positional: readonly string[], opts: ClusterInputOptions, human: boolean): Promise<FleetComparison> {
  return withClusterInputs(positional, opts, human, (paths, load) => compareFleet(paths, load));
}

async function withClusterInputs<T>(positional: readonly string[], opts: ClusterInputOptions, human: boolean, run: (paths: string | readonly string[], load: ClusterLoadOptions) => Promise<T>): Promise<T> {
  const paths = [...positional, ...(opts.input ?? [])];
  if (paths.length === 0) throw new UsageError('a cluster needs -i DIR (one sub-directory per node, e.g. from `kpx collect -o DIR/NODE` on each node) or several -i NODE_DIR');
  const input = inputSettingsOf(opts);
  const bundle = clusterBundlePath(paths, input.followSymlinks);
  if (!bundle && paths.length < 2) throw new UsageError(`${paths[0]} is one node's dumps, not a cluster bundle (expected one sub-directory per node, or several -i NODE_DIR)`);
  const progress = await startProgress(human, 'reading the nodes');
  try {
    return await run(bundle ?? paths, {
      nodeIps: opts.nodeIp ?? [],
      input,
      onProgress: (p) => progress.update(p.phase === 'start' ? `parsing ${p.node} (${p.done}/${p.total} nodes done)` : `parsed ${p.node} (${p.done}/${p.total} nodes done)`),
    });
  } finally {
    progress.stop();
  }
}

/**
 * For single-node commands: when the inputs are a cluster bundle, the snapshot of the node named
 * by --node (only that node is parsed); undefined when they are not a cluster bundle.
 */
export async function nodeFromClusterInputs(paths: readonly string[], opts: ClusterInputOptions, human: boolean): Promise<NodeSnapshot | undefined> {
  const { followSymlinks } = inputSettingsOf(opts);
  const bundle = clusterBundlePath(paths, followSymlinks);
  if (!bundle) return undefined;
  if (!opts.node) {
    const { clusterNodeDirs } = await import('../../cluster/load.js');
    const names = clusterNodeDirs(bundle, followSymlinks).map((n) => n.name);
    throw new UsageError(`${printable(bundle, 4096)} is a cluster bundle of ${names.length} nodes (${names.map((n) => printable(n, 253)).join(', ')}): choose one with --node NAME`);
  }
  const cluster = await loadClusterFromOptions([bundle], { ...opts, input: [] }, human, [opts.node]);
  return cluster.nodes[0].snapshot;
}
