/**
 * `kpx services --nodes` as a stream: the nodes are read one at a time (a summary, or a node's
 * dumps) and folded into the comparison as they come, so a fleet of 1,000 summaries needs memory
 * for one node at a time plus the aggregate (one group per Service port, the distinct views of it),
 * not for every node's Services with their evidence.
 */
import { clusterNodes, type ClusterLoadOptions, type ClusterReadReport, type SkippedNode } from './load.js';
import { NodeComparer, type NodeComparison } from './compare.js';

export interface FleetComparison {
  readonly comparison: NodeComparison;
  /** Nodes given that could not be read: said, and the others compared. */
  readonly skipped: readonly SkippedNode[];
  /** Nodes whose inputs had error diagnostics (by name, in name order). */
  readonly inputErrors: readonly string[];
}

/** Read and compare the nodes of a cluster bundle (or several node paths), one node at a time. */
export async function compareFleet(paths: string | readonly string[], opts: Omit<ClusterLoadOptions, 'purpose'> = {}): Promise<FleetComparison> {
  const report: ClusterReadReport = { skipped: [], loadedWith: 'in-process' };
  const comparer = new NodeComparer();
  const inputErrors: string[] = [];
  for await (const n of clusterNodes(paths, { ...opts, purpose: 'compare' }, report)) {
    await comparer.add(n);
    if (n.snapshot.files.some((f) => f.diagnostics.some((d) => d.severity === 'error'))) inputErrors.push(n.name);
  }
  return { comparison: comparer.finish(), skipped: report.skipped, inputErrors };
}
