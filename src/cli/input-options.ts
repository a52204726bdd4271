/**
 * The input flags every command that reads dumps shares (-i/--input, --node-ip, --node, colour):
 * a types module below both the node loader (./inputs.ts) and the cluster loader
 * (./commands/cluster-inputs.ts), which each read them.
 */
export interface InputOptions {
  input?: string[];
  nodeIp?: string[];
  /** With a cluster bundle: the node to read (single-node commands) or to start from (trace). */
  node?: string;
  color?: boolean;
}
