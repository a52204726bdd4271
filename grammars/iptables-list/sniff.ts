/**
 * Cheap content sniffer for `iptables -L` / `ip6tables -L` listings: `Chain X (policy …)` /
 * `Chain X (N references)` headers and the `target prot opt source destination` column header.
 * Beats iptables-save when both are present (a listing with `-A` lines pasted in it is a listing
 * with a grep beside it; kpx reads both in the listing reader). Loads no parser.
 */
import type { Sniffer } from '../k8s-api/sniff.js';

const CHAIN = /^\s*Chain \S+ \((policy \S+|\d+ references?)/;
const COLUMNS = /^\s*(num\s+)?(pkts\s+bytes\s+)?target\s+prot\s+opt\s+(in\s+out\s+)?source\s+destination\s*$/;
/** A rule row of a listing: `KUBE-SVC-X  tcp  --  0.0.0.0/0  10.96.0.10  /* … *\/ tcp dpt:53`. */
const ROW = /^\s*(\d+\s+)?(\d+[KMGT]?\s+\d+[KMGT]?\s+)?\S+\s+!?(all|tcp|udp|sctp|icmp|\d{1,3})\s+(--|-f|!f)\s+\S+\s+\S+/;

export const iptablesListSniffer: Sniffer<'iptables-list'> = {
  id: 'iptables-list',
  sniff(lines) {
    let chains = 0;
    let columns = 0;
    let rows = 0;
    for (const l of lines.slice(0, 200)) {
      if (CHAIN.test(l)) chains++;
      else if (COLUMNS.test(l)) columns++;
      else if (ROW.test(l)) rows++;
    }
    if (chains > 0 && columns > 0) return 1;
    if (chains > 0 || columns > 0) return rows > 0 ? 0.95 : 0.7;
    return rows >= 2 ? 0.5 : 0;
  },
};
