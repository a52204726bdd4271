/** kube-proxy iptables mode: the reader lives in ./iptables/ (split by concern); this is its entry point. */
export { evidenceOf, ladderShares, resolveIptables, unrepeated } from './iptables/index.js';
