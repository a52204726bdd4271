/**
 * The packet a trace follows, and parsing `VIP:PORT[/proto]` destinations.
 */
import { parseIp, type Ip } from '../model/addr.js';

export type TraceProtocol = 'tcp' | 'udp' | 'sctp';

export interface Destination {
  readonly ip: Ip;
  readonly ipText: string;
  readonly port: number;
  readonly protocol?: TraceProtocol;
}

/** `10.96.0.10:53`, `10.96.0.10:53/udp`, `[fd00::a]:53/tcp`. */
export function parseDestination(text: string): Destination | string {
  const m = /^(?:\[([^\]]+)\]|([^:/\s]+)):(\d{1,5})(?:\/(tcp|udp|sctp))?$/i.exec(text.trim());
  if (!m) return `expected VIP:PORT[/tcp|udp|sctp] (IPv6 as [addr]:port), got ${text}`;
  const ipText = m[1] ?? m[2];
  const ip = parseIp(ipText);
  if (!ip) return `${ipText} is not an IP address`;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return `port ${port} is out of range`;
  const protocol = m[4]?.toLowerCase() as TraceProtocol | undefined;
  return protocol ? { ip, ipText, port, protocol } : { ip, ipText, port };
}

export interface Packet {
  readonly family: 4 | 6;
  readonly protocol: TraceProtocol;
  readonly src: Ip;
  readonly sport: number;
  readonly dst: Ip;
  readonly dport: number;
  /** Arrived on this interface (PREROUTING), when known. */
  readonly inInterface?: string;
  /** Sent by the node itself (OUTPUT path) rather than arriving (PREROUTING path). */
  readonly local: boolean;
}
