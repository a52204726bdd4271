/**
 * `bridge link` / `bridge -d link` text → syntax lines. Each port is an `ip link`-shaped header
 * (`4: veth1@if2: <FLAGS> mtu 1500 master cni0 state forwarding priority 32 cost 2`) and, with
 * `-d`, one line of `key value` words (`hairpin on guard off … learning on …`); the same Chevrotain
 * line grammar as `ip addr` reads both (grammars/ipaddr/parser.ts), with its positions.
 */
export { parseIpAddrText as parseBridgeLinkText, type AddrSyntaxLine as BridgeSyntaxLine, type Tok } from '../ipaddr/index.js';
