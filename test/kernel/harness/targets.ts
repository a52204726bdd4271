/**
 * Harness-only extraction of DNAT target addresses/ports from dump text (regex/tokens, not
 * kpx's grammars: the harness must not depend on the code it is testing).
 *   iptables:  --to-destination 10.1.1.1:80 | 10.1.1.1 | [fd00::1]:80 | fd00::1 | A-B:P1-P2
 *   nft:       dnat to 10.1.1.1:80 | dnat ip to ... | dnat ip6 to [fd00::1]:80 |
 *              dnat ip to numgen random mod 2 map { 0 : 10.1.1.1 . 80, 1 : ... }
 *   also IPVS-less "ipvs style" dumps only mark with ipset, so nothing else is parsed.
 */
import { isIP } from 'node:net';

export interface DnatTargets {
  addresses: string[];
  ports: number[];
}

function stripBrackets(s: string): string {
  return s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
}

/** Parse one `addr[:port]` / `[v6][:port]` / range token; pushes what it finds. */
function addToken(tok: string, addrs: Set<string>, ports: Set<number>): boolean {
  let host = tok;
  let port: string | undefined;
  const br = /^\[([^\]]+)\](?::(.+))?$/.exec(tok);
  if (br) {
    host = br[1];
    port = br[2];
  } else if (tok.split(':').length === 2) {
    [host, port] = tok.split(':');
  }
  const hosts = host.includes('-') ? host.split('-').map(stripBrackets) : [host];
  if (!hosts.every((h) => isIP(h) !== 0)) return false;
  hosts.forEach((h) => addrs.add(h.toLowerCase()));
  if (port) {
    for (const p of port.split('-')) {
      const n = Number(p);
      if (Number.isInteger(n) && n > 0 && n < 65536) ports.add(n);
    }
  }
  return true;
}

export function dnatTargets(texts: readonly (string | undefined)[]): DnatTargets {
  const addrs = new Set<string>();
  const ports = new Set<number>();
  for (const text of texts) {
    if (!text) continue;
    for (const m of text.matchAll(/--to-destination\s+(\S+)/g)) addToken(m[1], addrs, ports);
    // nft: from each `dnat` keyword to the end of its statement (newline at brace depth 0).
    for (const m of text.matchAll(/\bdnat\b/g)) {
      let i = (m.index ?? 0) + 4;
      let depth = 0;
      let end = text.length;
      for (; i < text.length; i++) {
        const ch = text[i];
        if (ch === '{') depth++;
        else if (ch === '}') {
          if (depth === 0) { end = i; break; }
          depth--;
        } else if ((ch === '\n' || ch === ';') && depth === 0) { end = i; break; }
      }
      const region = text.slice((m.index ?? 0) + 4, end);
      const toks = region.split(/[\s,{}]+/).filter(Boolean);
      for (let k = 0; k < toks.length; k++) {
        if (addToken(toks[k], addrs, ports) && toks[k + 1] === '.' && /^\d+$/.test(toks[k + 2] ?? '')) {
          ports.add(Number(toks[k + 2]));
        }
      }
    }
  }
  return { addresses: [...addrs].sort(), ports: [...ports].sort((a, b) => a - b) };
}
