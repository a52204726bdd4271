/**
 * What a command's app function (src/app/<command>.ts) gets from the CLI and gives back: it loads
 * through the loader it is handed (the CLI shows a spinner for people), says what cannot wait for
 * the answer (inputs not used) through `notice`, and returns a typed result for the output
 * registry (src/render/registry.ts) with its exit code. It never writes to a stream itself.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import type { Result } from '../render/registry.js';

export interface AppIO {
  /** The snapshot of the inputs the command names (or of this node, collected). */
  load(positional: readonly string[]): Promise<NodeSnapshot>;
  /** A line for stderr, said now (before the answer). */
  notice(line: string): void;
}

export interface Outcome {
  /** What is rendered on stdout (or, for a target that names nothing, on stderr); none when all was said in notices. */
  readonly result?: Result;
  readonly exit: number;
}

/** Bad flags or arguments: exit 2 with a hint. */
export class UsageError extends Error {}
