/**
 * Whether a conntrack entry already decides the traced flow. Rules see only a connection's first
 * packet; a packet whose 5-tuple has an entry is translated as the entry says (its reply source is
 * where it goes) until the entry expires. Typed result; src/render/trace/ words it.
 */
import { formatIp, type Ip } from '../model/addr.js';
import { CT_FLAG, IPPROTO } from '../model/conntrack.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { canonicalIp } from '../kube/conntrack.js';
import type { Resolution } from '../kube/types.js';
import type { TraceAssumption } from './types.js';

const PROTO: Readonly<Record<string, number>> = { tcp: IPPROTO.tcp, udp: IPPROTO.udp, sctp: IPPROTO.sctp };

export type ConntrackPin = Extract<TraceAssumption, { code: 'conntrack-pinned' }>;

/** The entry pinning (proto, src:sport → dst:dport), or a note that the dumps hold tables without one. */
export function conntrackFor(
  snapshot: NodeSnapshot,
  resolution: Resolution | undefined,
  flow: { protocol: string; src: Ip; sport: number; dst: Ip; dport: number },
  established: boolean,
  sportGiven = false,
): TraceAssumption | undefined {
  const tables = snapshot.conntrack?.tables ?? [];
  // Without a conntrack dump nothing is said: the `connection` assumption already states what is assumed.
  if (tables.length === 0) return undefined;
  const proto = PROTO[flow.protocol];
  const src = canonicalIp(formatIp(flow.src));
  const dst = canonicalIp(formatIp(flow.dst));
  for (const t of tables) {
    for (let i = 0; i < t.size; i++) {
      if (t.protoNum(i) !== proto || t.origSport(i) !== flow.sport || t.origDport(i) !== flow.dport) continue;
      if (canonicalIp(t.origSrc(i)) !== src || canonicalIp(t.origDst(i)) !== dst) continue;
      const e = t.entry(i);
      const to = e.reply.src;
      const toPort = e.reply.sport;
      // Is the pinned address still one of the Service's endpoints (null: no Service known here)?
      const svc = resolution?.services.filter((s) => s.protocol === flow.protocol && (s.clusterIP === dst || s.externalIPs.includes(dst) || s.loadBalancerIPs.includes(dst) || s.nodePort === flow.dport) && (s.nodePort === flow.dport || s.port === flow.dport));
      const current = !svc || svc.length === 0 ? null : svc.some((s) => s.endpoints.some((ep) => canonicalIp(ep.ip) === canonicalIp(to) && (ep.port === null || ep.port === toPort)));
      // The packet belongs to the entry's connection when it says so (--established), or when its source
      // port was chosen to match an entry still open (a TCP SYN reusing a closed entry's tuple starts anew).
      const closing = e.state === 'TIME_WAIT' || e.state === 'CLOSE';
      return {
        code: 'conntrack-pinned',
        applied: established || (sportGiven && !closing),
        file: t.file,
        line: e.line,
        to: toPort === undefined ? to : to.includes(':') ? `[${to}]:${toPort}` : `${to}:${toPort}`,
        translated: canonicalIp(to) !== dst,
        ...(e.timeout !== undefined ? { timeout: e.timeout } : {}),
        ...(e.state ? { state: e.state } : {}),
        unreplied: (t.flags(i) & CT_FLAG.unreplied) !== 0,
        assured: (t.flags(i) & CT_FLAG.assured) !== 0,
        current,
      };
    }
  }
  return { code: 'conntrack-no-entry', established, tables: tables.length };
}
