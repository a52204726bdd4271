/**
 * Cheap sniffers for `ip addr` text (full, `-o`, `-br`) and `ip -j addr` JSON. No parser is loaded.
 */
import { jsonHead } from '../iproute/sniff.js';

/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const NOISE = /^\s*(?:```|~~~|\$ |\[[^\]]+@[^\]]+\][#$]|[\w.-]+@[\w.-]+:\S*[#$]|\.\.\.|…|EOF$)/;
/** `2: eth0@if5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 …` */
const HEADER = /^\s*\d+:\s+[^\s:]+:\s+<[A-Z0-9_,-]*>/;
/** `-o`: `2: eth0    inet 10.0.0.5/24 …` */
const ONELINE = /^\s*\d+:\s+\S+\s+(?:inet6?\s+\S+|link\/\S+)/;
const BODY = /^\s+(?:link\/\S+|inet6?\s+[0-9a-fA-F.:]+(?:\/\d+|\s+peer)|valid_lft\s|altname\s)/;
/** `ip -d link` kind lines (`vxlan id 1 …`, `veth`, `bridge_slave state …`). */
const KIND = /^\s+(?:vxlan|ipip|sit|gre|gretap|ip6gre|ip6tnl|geneve|wireguard|veth|bridge|bridge_slave|bond|bond_slave|dummy|vlan|macvlan|ipvlan|tun|vrf|vrf_slave|netkit)(?:\s|$)/;
const BRIEF = /^\S+\s+(?:UP|DOWN|UNKNOWN|LOWERLAYERDOWN|DORMANT|NOTPRESENT|TESTING)(?:\s+|$)(?:[0-9a-fA-F.:]+(?:\/\d+)?(?:\s+peer\s+\S+)?\s*)*$/;

export const ipAddrSniffer: Sniffer<'ip-addr'> = {
  id: 'ip-addr',
  sniff(lines) {
    let content = 0;
    let hits = 0;
    let headers = 0;
    let brief = 0;
    for (const l of lines.slice(0, 200)) {
      if (l.trim() === '' || NOISE.test(l)) continue;
      content++;
      if (HEADER.test(l) || ONELINE.test(l)) {
        headers++;
        hits++;
      } else if (BODY.test(l) || KIND.test(l)) hits++;
      else if (BRIEF.test(l)) brief++;
    }
    if (content === 0) return 0;
    if (headers > 0) {
      const ratio = hits / content;
      return ratio >= 0.6 ? Math.min(1, 0.4 + ratio * 0.6) : ratio >= 0.3 ? 0.3 : 0;
    }
    // `ip -br addr`: every line a NAME STATE ADDR… row; needs at least one address to be sure.
    if (brief === content && lines.some((l) => /\s(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]*:[0-9a-f:]+)\/\d+/.test(l))) return 0.8;
    return 0;
  },
};


export const ipAddrJsonSniffer: Sniffer<'ip-addr-json'> = {
  id: 'ip-addr-json',
  sniff(lines) {
    const head = jsonHead(lines);
    if (!/^\[\s*\{/.test(head)) return 0;
    if (!/"ifname"\s*:/.test(head)) return 0;
    return /"addr_info"\s*:|"ifindex"\s*:/.test(head) ? 1 : 0.6;
  },
};
