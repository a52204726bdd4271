/** Deterministic generator of realistic kube-proxy node dumps with exact ground truth. */
export * from './cluster.js';
export * from './iptables.js';
export * from './ipvs.js';
export * from './nft.js';
export * from './nft-layout.js';
export * from './node.js';
export * from './truth.js';
export * from './bundle.js';
export * from './api-objects.js';
export { createRng, portProtoHash, endpointHash, savedProbability, kubeProxyProbability, formatFixed, saveString } from './util.js';
export type { Rng, Sink } from './util.js';
export * from './restore-payload.js';
