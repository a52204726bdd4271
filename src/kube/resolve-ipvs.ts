/** kube-proxy IPVS mode: the reader lives in ./ipvs/ (split by concern); this is its entry point. */
export { ipvsSetName, parseServicePortComment, resolveIpvs } from './ipvs/index.js';
