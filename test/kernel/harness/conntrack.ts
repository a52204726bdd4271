/** Parsing of `conntrack -L` text (conntrack-tools 1.4.x default output). */

export interface Tuple {
  src: string;
  dst: string;
  sport?: number;
  dport?: number;
}
export interface CtEntry {
  proto: string;
  orig: Tuple;
  reply: Tuple;
  line: string;
}

const PROTOS = new Set(['tcp', 'udp', 'sctp', 'dccp', 'udplite', 'icmp', 'icmpv6', 'gre', 'unknown']);

/**
 * One entry per line; the first src/dst/sport/dport group is the original direction,
 * the second the reply direction. Lines that are not entries (summaries) are skipped.
 */
export function parseConntrack(text: string): CtEntry[] {
  const out: CtEntry[] = [];
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/);
    const proto = words.find((w) => PROTOS.has(w));
    if (!proto) continue;
    const tuples: Partial<Record<'src' | 'dst' | 'sport' | 'dport', string>>[] = [{}, {}];
    let idx = 0;
    for (const w of words) {
      const m = /^(src|dst|sport|dport)=(.*)$/.exec(w);
      if (!m) continue;
      const key = m[1] as 'src' | 'dst' | 'sport' | 'dport';
      if (tuples[idx][key] !== undefined) idx++;
      if (idx > 1) break;
      tuples[idx][key] = m[2];
    }
    const [o, r] = tuples;
    if (!o.src || !o.dst || !r.src || !r.dst) continue;
    const tuple = (t: typeof o): Tuple => ({
      src: t.src!,
      dst: t.dst!,
      ...(t.sport !== undefined ? { sport: Number(t.sport) } : {}),
      ...(t.dport !== undefined ? { dport: Number(t.dport) } : {}),
    });
    out.push({ proto, orig: tuple(o), reply: tuple(r), line });
  }
  return out;
}
