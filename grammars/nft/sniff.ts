/**
 * Cheap content sniffers for nft listings (no parser import).
 */

/** Same shape as FormatSniffer (src/load/format.ts); grammars do not import from src/. */
export interface NftSniffer {
  readonly id: 'nft' | 'nft-json';
  sniff(lines: readonly string[]): number;
}

const TABLE = /^\s*table\s+(ip|ip6|inet|arp|bridge|netdev)\s+\S+\s*\{/;
const OBJECT = /^\s*(chain|set|map)\s+\S+\s*\{\s*(#\s*handle\s+\d+)?\s*$/;
const CHAIN_SPEC = /^\s*type\s+(filter|nat|route)\s+hook\s+\w+/;
/**
 * `nft -f` transaction commands as kube-proxy (knftables) writes them: a verb, an nft object
 * keyword, then names (`add chain ip kube-proxy services`, `flush map ip kube-proxy service-ips`).
 * ipset save's `add SET MEMBER` / `create SET TYPE` never have an nft object keyword there.
 */
const COMMAND = /^\s*(add|create|insert|replace|delete|destroy|flush)\s+(table|chain|rule|set|map|element|ruleset)(\s+(ip|ip6|inet|arp|bridge|netdev))?(\s+("[^"]*"|[^\s{}";]+)){0,3}(\s|$)/;
const NFT_SHAPES = /(\bvmap\s+[@{]|\bnumgen\s+random\s+mod\b|\belements\s*=\s*\{|\bmeta\s+l4proto\b|\bct\s+state\b|\bxt\s+(match|target)\b|\bcounter\s+packets\s+\d+\s+bytes\s+\d+|\bfib\s+[sd]addr\b)/;

export const nftSniffer: NftSniffer = {
  id: 'nft',
  sniff(lines) {
    let score = 0;
    for (const l of lines.slice(0, 200)) {
      if (TABLE.test(l)) score += 0.6;
      else if (COMMAND.test(l)) score += 0.35;
      else if (CHAIN_SPEC.test(l)) score += 0.4;
      else if (OBJECT.test(l)) score += 0.25;
      else if (NFT_SHAPES.test(l)) score += 0.1;
      if (score >= 1) return 1;
    }
    return Math.min(score, 0.95);
  },
};

export const nftJsonSniffer: NftSniffer = {
  id: 'nft-json',
  sniff(lines) {
    const head = lines.slice(0, 20).join('\n').trimStart();
    if (!head.startsWith('{')) return 0;
    if (/"nftables"\s*:\s*\[/.test(head)) return /"metainfo"|"table"/.test(head) ? 1 : 0.8;
    return 0;
  },
};
