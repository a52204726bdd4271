/** Cluster bundles: many nodes' snapshots, compared and traced across. */
export * from './types.js';
export { clusterNodeDirs, isClusterBundle, loadCluster, workerPlan, WORKER_MIN_BYTES, type ClusterLoadOptions, type ClusterProgress, type NodeDir } from './load.js';
export { nextHop, nodeClaims, ownerOf, ownAddresses, type NextHop, type OwnerKind, type Ownership, type PodOwner } from './owner.js';
export * from './compare.js';
export * from './trace.js';
