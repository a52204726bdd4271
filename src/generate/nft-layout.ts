/**
 * kube-proxy's nftables layouts since 1.29, as the generator writes them. Each layout is the
 * first release that wrote it; later releases keep it until the next entry.
 *
 * What each one rests on (kubernetes/kubernetes pkg/proxy/nftables/proxier.go unless said):
 *  - 1.29: proxier.go at commit 01d7de5464ba38091b53e0a4d5077ddde9553c08 (the `endpoints-check`
 *    era: one chain checks @no-endpoint-services and @no-endpoint-nodeports; no cluster-ips; the
 *    filter chains at `dstnat - 10`, `firewall-check` from filter-prerouting; firewall-ips elements
 *    carry the Service port's comment; `--nodeport-addresses` unset = every local address).
 *    The v1.29.0 tag itself wrote its filter chains at -101 and firewalled through
 *    `firewall`/`firewall-allow` sets (PRs #122614 and #122296, both in v1.30.0-alpha.1's
 *    changelog; PR #123162 on upgrading "from kube-proxy v1.29.0"): that first alpha shape is not
 *    generated.
 *  - 1.30: proxier.go at commit b0f823e6ccd8a10b3893fc75011b9981af39285c: `endpoints-check` split
 *    into service-endpoints-check / nodeport-endpoints-check, the `cluster-ips` set and
 *    `cluster-ips-check` (PR #122692), `filter-output-post-dnat` at `dstnat + 10`, base chains
 *    added and deleted once before being created (PR #123162), `--nodeport-addresses` defaulting
 *    to the primary node IP (PR #122724, CHANGELOG-1.30 "Change --nodeport-addresses behavior to
 *    default to primary node IP(s) only"). Unchanged in shape through 1.33.
 *  - 1.34: PR #132456 ("nftables short-circuit local traffic to external addresses"): pre-DNAT
 *    chains `filter-prerouting-pre-dnat` / `filter-output-pre-dnat` (dstnat - 10) for
 *    firewall-check, `filter-input` / `filter-forward` / `filter-output` moved to priority
 *    `filter` (0), `filter-output-post-dnat` merged into `filter-output`. The rule set is
 *    proxier_test.go's `baseRules` at commit 030880a5dc5449403c6d1f0aa146a7dc21d6c6dc. 1.35 keeps it.
 *  - 1.36: PR #135800 (CHANGELOG-1.36, v1.36.0-alpha.1: "The nftables mode of kube-proxy now uses
 *    less CPU when loading very large rulesets"): the `mark-for-masquerade` chain is gone, its
 *    `mark set mark or` inlined; PR #136499: one rule in `services` marks ClusterIP traffic from
 *    outside the pod network, the `hairpin-connections` set (endpoint . endpoint . proto . port)
 *    replaces the per-endpoint hairpin rule, and per-endpoint chains remain only for session
 *    affinity: other Services DNAT with `dnat ip addr . port to numgen random mod N map { … }`.
 *    The rule text follows a public `nft list table ip kube-proxy` of a v1.36.2 node
 *    (test/fixtures/nft-mode/v1.36-listing.nft).
 *  - 1.37: PR #140723 ("avoid numgen map for single-endpoint service DNAT", merged 2026-07-19;
 *    the release is inferred from the merge date): a Service port with one endpoint and no
 *    affinity DNATs with `meta l4proto P dnat to IP:PORT`, without a map.
 */

export type NftLayoutId = '1.29' | '1.30' | '1.34' | '1.36' | '1.37';

export const NFT_LAYOUTS: readonly NftLayoutId[] = ['1.29', '1.30', '1.34', '1.36', '1.37'];

/** [name, type, hook, priority] in setupNFTables() order. */
export type BaseChain = readonly [string, 'filter' | 'nat', string, number];
/** [destination chain, source base chain, match before `jump`]. */
export type JumpChain = readonly [string, string, string];

export interface NftLayout {
  readonly id: NftLayoutId;
  readonly baseChains: readonly BaseChain[];
  readonly jumps: readonly JumpChain[];
  /** `endpoints-check` (1.29) or service-endpoints-check + nodeport-endpoints-check. */
  readonly endpointsCheck: 'combined' | 'split';
  /** The `cluster-ips` set and `cluster-ips-check` chain. */
  readonly clusterIPs: boolean;
  /** `jump mark-for-masquerade` everywhere, or the mark inlined plus the hairpin set. */
  readonly masquerade: 'chain' | 'inline';
  /** Per-endpoint chains for every endpoint, or only for Services with session affinity. */
  readonly endpointChains: 'all' | 'affinity';
  /** A lone endpoint (no affinity): through the numgen map, or a plain `dnat to`. */
  readonly singleEndpoint: 'map' | 'direct';
  /** firewall-ips elements carry the `ns/svc:port` comment. */
  readonly firewallElementComment: boolean;
  /** add+delete every base chain once before creating it (PR #123162). */
  readonly recreateBaseChains: boolean;
  /** What an unset --nodeport-addresses means. */
  readonly defaultNodePortAddresses: 'all' | 'primary';
}

const NEW = 'ct state new';

const JUMPS_1_29: readonly JumpChain[] = [
  ['endpoints-check', 'filter-input', NEW],
  ['endpoints-check', 'filter-forward', NEW],
  ['endpoints-check', 'filter-output', NEW],
  ['firewall-check', 'filter-prerouting', NEW],
  ['firewall-check', 'filter-output', NEW],
  ['services', 'nat-output', ''],
  ['services', 'nat-prerouting', ''],
  ['masquerading', 'nat-postrouting', ''],
];

const JUMPS_1_30: readonly JumpChain[] = [
  ['nodeport-endpoints-check', 'filter-input', NEW],
  ['service-endpoints-check', 'filter-input', NEW],
  ['service-endpoints-check', 'filter-forward', NEW],
  ['service-endpoints-check', 'filter-output', NEW],
  ['firewall-check', 'filter-prerouting', NEW],
  ['firewall-check', 'filter-output', NEW],
  ['services', 'nat-output', ''],
  ['services', 'nat-prerouting', ''],
  ['masquerading', 'nat-postrouting', ''],
  ['cluster-ips-check', 'filter-forward', NEW],
  ['cluster-ips-check', 'filter-output-post-dnat', NEW],
];

const JUMPS_1_34: readonly JumpChain[] = [
  ['nodeport-endpoints-check', 'filter-input', NEW],
  ['service-endpoints-check', 'filter-input', NEW],
  ['service-endpoints-check', 'filter-forward', NEW],
  ['service-endpoints-check', 'filter-output', NEW],
  ['firewall-check', 'filter-prerouting-pre-dnat', NEW],
  ['firewall-check', 'filter-output-pre-dnat', NEW],
  ['services', 'nat-output', ''],
  ['services', 'nat-prerouting', ''],
  ['masquerading', 'nat-postrouting', ''],
  ['cluster-ips-check', 'filter-forward', NEW],
  ['cluster-ips-check', 'filter-output', NEW],
];

const NAT_CHAINS: readonly BaseChain[] = [
  ['nat-prerouting', 'nat', 'prerouting', -100],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
];

const BASE_1_29: readonly BaseChain[] = [
  ['filter-prerouting', 'filter', 'prerouting', -110],
  ['filter-input', 'filter', 'input', -110],
  ['filter-forward', 'filter', 'forward', -110],
  ['filter-output', 'filter', 'output', -110],
  ...NAT_CHAINS,
];

const BASE_1_30: readonly BaseChain[] = [...BASE_1_29.slice(0, 4), ['filter-output-post-dnat', 'filter', 'output', -90], ...NAT_CHAINS];

const BASE_1_34: readonly BaseChain[] = [
  ['filter-prerouting-pre-dnat', 'filter', 'prerouting', -110],
  ['filter-output-pre-dnat', 'filter', 'output', -110],
  ['filter-input', 'filter', 'input', 0],
  ['filter-forward', 'filter', 'forward', 0],
  ['filter-output', 'filter', 'output', 0],
  ...NAT_CHAINS,
];

const L_1_30: NftLayout = {
  id: '1.30',
  baseChains: BASE_1_30,
  jumps: JUMPS_1_30,
  endpointsCheck: 'split',
  clusterIPs: true,
  masquerade: 'chain',
  endpointChains: 'all',
  singleEndpoint: 'map',
  firewallElementComment: false,
  recreateBaseChains: true,
  defaultNodePortAddresses: 'primary',
};

const LAYOUTS: Readonly<Record<NftLayoutId, NftLayout>> = {
  '1.29': { ...L_1_30, id: '1.29', baseChains: BASE_1_29, jumps: JUMPS_1_29, endpointsCheck: 'combined', clusterIPs: false, firewallElementComment: true, recreateBaseChains: false, defaultNodePortAddresses: 'all' },
  '1.30': L_1_30,
  '1.34': { ...L_1_30, id: '1.34', baseChains: BASE_1_34, jumps: JUMPS_1_34 },
  '1.36': { ...L_1_30, id: '1.36', baseChains: BASE_1_34, jumps: JUMPS_1_34, masquerade: 'inline', endpointChains: 'affinity' },
  '1.37': { ...L_1_30, id: '1.37', baseChains: BASE_1_34, jumps: JUMPS_1_34, masquerade: 'inline', endpointChains: 'affinity', singleEndpoint: 'direct' },
};

/** The layout the generator writes by default (the one it wrote before layouts were selectable). */
export const DEFAULT_NFT_LAYOUT: NftLayoutId = '1.30';

/**
 * The layout a kube-proxy release writes: `1.31`, `v1.33.2`, `1.35.0-rc.1` → its layout;
 * undefined for a version before 1.29 or not a version at all.
 */
export function nftLayoutFor(version: string): NftLayoutId | undefined {
  const m = /^v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(version.trim());
  if (!m) return undefined;
  const minor = Number(m[1]);
  let found: NftLayoutId | undefined;
  for (const id of NFT_LAYOUTS) if (Number(id.split('.')[1]) <= minor) found = id;
  return found;
}

export function nftLayout(id: NftLayoutId): NftLayout {
  return LAYOUTS[id];
}
