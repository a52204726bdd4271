/**
 * A cluster bundle: the snapshots of several nodes, each under its own name. Plain data.
 */
import type { NodeSnapshot, ProxyMode } from '../model/snapshot.js';
import type { Resolution } from '../kube/types.js';

export interface ClusterNode {
  /** The manifest's host when every node's host is distinct, else the folder name. */
  readonly name: string;
  /** The node's directory (or the path given for it). */
  readonly dir: string;
  /** `manifest.json` host, when the folder is a `kpx collect` bundle. */
  readonly host?: string;
  /**
   * The node's dumps. Loaded with `purpose: 'compare'` on worker threads, the rule sets
   * (iptables, nft, ipvs, ipsets) are left out (`partial: true`) and `resolution`/`modes` hold
   * what was computed from them.
   */
  readonly snapshot: NodeSnapshot;
  readonly partial?: boolean;
  readonly resolution?: Resolution;
  readonly modes?: readonly ProxyMode[];
}

export interface ClusterSnapshot {
  /** The bundle directory (or the paths joined with `, ` when nodes were given one by one). */
  readonly root: string;
  /** In name order. */
  readonly nodes: readonly ClusterNode[];
  /** How the nodes were parsed: worker threads, or in this thread. */
  readonly loadedWith: 'workers' | 'in-process';
  /** Nodes given that could not be read (a summary that is not one): said, and the others used. */
  readonly skipped?: readonly { readonly node: string; readonly dir: string; readonly reason: string }[];
}

export function nodeByName(cluster: ClusterSnapshot, name: string): ClusterNode | undefined {
  return cluster.nodes.find((n) => n.name === name);
}
