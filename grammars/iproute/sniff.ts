/**
 * Cheap content sniffers for `ip route` text and `ip -j route` JSON. They load no parser.
 * They must not confuse ip route with ip addr, iptables-save, ipvsadm, ipset or nft.
 */
/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const TYPES = 'unicast|local|broadcast|anycast|multicast|blackhole|unreachable|prohibit|throw|nat|xresolve';
/**
 * A destination: `default`, IPv4, or IPv6 (at least two colons, so an `ip rule` priority such as
 * `0:` or `100:` is never read as an IPv6 route).
 */
const DST = String.raw`(?:default|\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?|[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?:/\d{1,3})?)`;
const KEYS = 'via|dev|proto|scope|src|metric|table|nhid|tos|pref|expires|onlink|linkdown|mtu|advmss|realms|from|uid|initcwnd|encap';
/** A route head line: `[TYPE] DST KEYWORD …` or a bare `[TYPE] DST` (`prohibit 10.8.0.0/16`). */
const ROUTE = new RegExp(String.raw`^\s*(?:(?:${TYPES})\s+)?${DST}(?:\s+(?:${KEYS})\b.*|\s*)$`);
/** Lines that make the match certain: a keyword after the destination. */
const STRONG = new RegExp(String.raw`^\s*(?:(?:${TYPES})\s+)?${DST}\s+(?:${KEYS})\b`);
const CONTINUATION = /^\s*(?:nexthop\b|cache\b)/;
const NOISE = /^\s*(?:```|~~~|\$ |\[[^\]]+@[^\]]+\][#$]|[\w.-]+@[\w.-]+:\S*[#$]|\.\.\.|…|EOF$|Error:|RTNETLINK answers:)/;

export const ipRouteSniffer: Sniffer<'ip-route'> = {
  id: 'ip-route',
  sniff(lines) {
    let content = 0;
    let routes = 0;
    let strong = 0;
    for (const l of lines.slice(0, 200)) {
      if (l.trim() === '' || NOISE.test(l)) continue;
      content++;
      if (CONTINUATION.test(l)) routes++;
      else if (ROUTE.test(l)) {
        routes++;
        if (STRONG.test(l)) strong++;
      }
    }
    if (content === 0 || strong === 0) return 0;
    const ratio = routes / content;
    if (ratio < 0.5) return 0;
    return Math.min(1, 0.5 + ratio / 2) * (strong >= 2 || content === 1 ? 1 : 0.9);
  },
};

/** First non-noise characters of a JSON dump, at most ~4 KB. */
export function jsonHead(lines: readonly string[]): string {
  let out = '';
  for (const l of lines) {
    if (out === '' && (l.trim() === '' || NOISE.test(l))) continue;
    out += l + '\n';
    if (out.length > 4096) break;
  }
  return out.trimStart();
}

export const ipRouteJsonSniffer: Sniffer<'ip-route-json'> = {
  id: 'ip-route-json',
  sniff(lines) {
    const head = jsonHead(lines);
    if (!head.startsWith('[')) return 0;
    if (head.replace(/\s+/g, '') === '[]') return 0.3;
    if (!/^\[\s*\{\s*"(?:type|dst)"\s*:/.test(head)) return 0;
    // ip -j addr objects carry ifindex/ifname/addr_info; route objects carry dst + flags.
    if (/"(?:ifname|ifindex|addr_info)"\s*:/.test(head)) return 0;
    return /"flags"\s*:/.test(head) || /"(?:gateway|dev|protocol|prefsrc)"\s*:/.test(head) ? 1 : 0.7;
  },
};
