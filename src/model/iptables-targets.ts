/**
 * The target names iptables itself can load: the standard verdicts and the target extensions.
 * A `-j NAME` that is neither one of these nor a chain declared in its table is, for the real
 * tools, a jump to a chain that does not exist: iptables-legacy-restore says "Couldn't load
 * target `NAME'", iptables-nft-restore "Chain 'NAME' does not exist".
 *
 * Source: the iptables 1.8.9 tree (git.netfilter.org/iptables, tag v1.8.9), `extensions/`: every
 * target extension is a file with an uppercase name, `libxt_NAME.c` (both families),
 * `libipt_NAME.c` (IPv4 only) or `libip6t_NAME.c` (IPv6 only); libxt_CT.c also registers NOTRACK
 * and libxt_NAT (installed as libxt_NAT.so with DNAT/SNAT/MASQUERADE/REDIRECT symlinks) holds the
 * NAT targets. ACCEPT, DROP, QUEUE and RETURN are the standard verdicts (libiptc / nft's
 * `nft_is_standard_target`), not extensions. Checked against the installed iptables 1.8.9: every
 * name below loads in iptables-legacy-restore for its family, and names outside it
 * (MIRROR, SAME, ROUTE, TARPIT, JUMP, ERROR …) are refused as "Couldn't load target".
 * Left out on purpose: MIRROR and SAME (removed from iptables and the kernel long ago), and
 * xtables-addons' targets (TARPIT, DELUDE, CHAOS …): the stock tools refuse them.
 */

/** Standard verdicts: built into the rule format, no extension. */
export const STANDARD_VERDICTS: ReadonlySet<string> = new Set(['ACCEPT', 'DROP', 'QUEUE', 'RETURN']);

/** libxt_*: target extensions of both families. */
const XT_TARGETS = [
  'AUDIT', 'CHECKSUM', 'CLASSIFY', 'CONNMARK', 'CONNSECMARK', 'CT', 'DNAT', 'DSCP', 'HMARK', 'IDLETIMER', 'LED', 'LOG',
  'MARK', 'MASQUERADE', 'NETMAP', 'NFLOG', 'NFQUEUE', 'NOTRACK', 'RATEEST', 'REDIRECT', 'REJECT', 'SECMARK', 'SET',
  'SNAT', 'SYNPROXY', 'TCPMSS', 'TCPOPTSTRIP', 'TEE', 'TOS', 'TPROXY', 'TRACE',
];
/** libipt_*: IPv4 only (NETMAP and REJECT have a libipt_ and a libip6t_ file each: listed above). */
const IPT_TARGETS = ['CLUSTERIP', 'ECN', 'TTL', 'ULOG'];
/** libip6t_*: IPv6 only. */
const IP6T_TARGETS = ['DNPT', 'HL', 'SNPT'];

const V4: ReadonlySet<string> = new Set([...STANDARD_VERDICTS, ...XT_TARGETS, ...IPT_TARGETS]);
const V6: ReadonlySet<string> = new Set([...STANDARD_VERDICTS, ...XT_TARGETS, ...IP6T_TARGETS]);
const ANY: ReadonlySet<string> = new Set([...V4, ...V6]);

/**
 * Can iptables (family 4) or ip6tables (family 6) load `-j NAME` as a verdict or target
 * extension? Without a family: either of them. Names are case-sensitive, as in iptables.
 */
export function isTargetExtension(name: string, family?: 4 | 6): boolean {
  return (family === 4 ? V4 : family === 6 ? V6 : ANY).has(name);
}

/** Every name isTargetExtension() accepts for a family (for tests and documentation). */
export function targetExtensions(family?: 4 | 6): readonly string[] {
  return [...(family === 4 ? V4 : family === 6 ? V6 : ANY)].sort();
}
