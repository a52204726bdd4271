/**
 * nft's statement and selector vocabulary (nftables `src/parser_bison.y`, printers in
 * `src/expression.c`, `src/statement.c`), shared by the selector, operand and statement readers.
 */
import type { SynBinaryOp, SynRelOp } from '../common/nft-syntax.js';

/** Payload protocols: `PROTO FIELD`. */
export const PAYLOAD = new Set([
  'ip', 'ip6', 'tcp', 'udp', 'udplite', 'sctp', 'dccp', 'th', 'ether', 'vlan', 'arp', 'icmp', 'icmpv6',
  'igmp', 'ah', 'esp', 'comp', 'ipcomp', 'dst', 'hbh', 'frag', 'mh', 'srh', 'gre', 'geneve', 'vxlan', 'gretap',
]);
/** Meta keys nft prints without `meta` (`src/meta.c` meta_key_is_unqualified + common ones). */
export const META_UNQUALIFIED = new Set([
  'mark', 'iif', 'oif', 'iifname', 'oifname', 'iiftype', 'oiftype', 'skuid', 'skgid', 'nftrace', 'rtclassid',
  'ibriport', 'obriport', 'ibrname', 'obrname', 'pkttype', 'cpu', 'iifgroup', 'oifgroup', 'cgroup',
]);
export const VERDICTS = new Set(['accept', 'drop', 'continue', 'return']);
export const NAT_FLAGS = new Set(['random', 'persistent', 'fully-random', 'netmap', 'prefix']);
/** Words that start a statement; used to end an unsupported run. */
export const STMT_START = new Set([
  'accept', 'drop', 'continue', 'return', 'jump', 'goto', 'queue', 'counter', 'reject', 'dnat', 'snat',
  'masquerade', 'redirect', 'notrack', 'log', 'limit', 'xt', 'update', 'meter', 'quota', 'dup', 'fwd',
  'tproxy', 'synproxy', 'comment', 'flow',
]);
/** Statement words that cannot be a match's value (`ct status dnat` shows dnat/snat can). */
export const NEVER_VALUE = new Set([
  'accept', 'drop', 'continue', 'return', 'jump', 'goto', 'queue', 'counter', 'reject', 'masquerade', 'log',
  'limit', 'xt', 'update', 'meter', 'quota', 'comment', 'vmap', 'set',
]);
export const GENERIC_STATEMENTS = new Set(['notrack', 'meter', 'quota', 'dup', 'fwd', 'tproxy', 'synproxy', 'flow']);
export const REL_WORDS: Record<string, SynRelOp> = { eq: '==', ne: '!=', lt: '<', gt: '>', le: '<=', ge: '>=' };
export const REL_OPS = new Set(['==', '!=', '<', '>', '<=', '>=']);
export const BIN_WORDS: Record<string, SynBinaryOp> = { and: '&', or: '|', xor: '^', lshift: '<<', rshift: '>>' };
export const BIN_OPS = new Set(['&', '|', '^', '<<', '>>']);
export const SELECTOR_HEADS = new Set(['meta', 'ct', 'fib', 'numgen', 'jhash', 'symhash', 'rt', 'socket', 'osf', 'ipsec', 'exthdr']);
export const TCP_OPTION_FIELDS = new Set(['kind', 'length', 'size', 'count', 'left', 'right', 'tsval', 'tsecr', 'value']);
