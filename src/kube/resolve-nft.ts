/** kube-proxy nftables mode: the reader lives in ./nft/ (split by concern); this is its entry point. */
export { isKubeProxyNftTable, nftNameHash, nftNames, parseNftObjectName, resolveNft, type NftChainRole, type NftObjectName } from './nft/index.js';
