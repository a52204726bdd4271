/**
 * What a command's app function (src/app/<command>.ts) gets from the CLI and gives back: it loads
 * through the loader it is handed (the CLI shows a spinner for people), says what cannot wait for
 * the answer (inputs not used) through `notice`, and returns a typed result for the output
 * registry (src/render/registry/index.ts) with its exit code. It never writes to a stream itself.
 */
import type { FleetComparison } from '../cluster/fleet.js';
import type { ClusterSnapshot } from '../cluster/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { Result } from '../render/registry/index.js';

export interface AppIO {
  /** The snapshot of the inputs the command names (or of this node, collected). */
  load(positional: readonly string[]): Promise<NodeSnapshot>;
  /** A line for stderr, said now (before the answer). */
  notice(line: string): void;
}

/** The loaders of a command over a cluster bundle (-i DIR, or several -i NODE_DIR): the CLI's, with a spinner for people. */
export interface ClusterIO {
  /** Every node of the cluster the inputs name. */
  loadCluster(positional: readonly string[]): Promise<ClusterSnapshot>;
  /** The nodes read and compared one at a time (src/cluster/fleet.ts). */
  compareFleet(positional: readonly string[]): Promise<FleetComparison>;
  /** A line for stderr, said now (before the answer). */
  notice(line: string): void;
}

export interface Outcome {
  /** What is rendered on stdout (or, for a target that names nothing, on stderr); none when all was said in notices. */
  readonly result?: Result;
  readonly exit: number;
  /** Lines for stderr said after the answer (where to look for more), as notices are said before it. */
  readonly afterward?: readonly string[];
}

/** Bad flags or arguments: exit 2 with a hint. */
export class UsageError extends Error {}
