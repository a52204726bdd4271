/**
 * What a trace knows about the node beyond the packet: its own addresses (addrtype LOCAL),
 * its routes, its ipsets, and the assumptions the user can change.
 */
import { cidrContains, ipEquals, type Ip } from '../model/addr.js';
import type { IpSet } from '../model/ipset.js';
import type { NodeSnapshot } from '../model/snapshot.js';

export interface TraceAssumptions {
  /** conntrack state of the packet's connection: the first packet of a NEW one unless --established. */
  readonly established: boolean;
  /** `-m recent --rcheck/--update` finds the source (session affinity entry exists). */
  readonly affinityHit: boolean;
}

export interface TraceContext {
  readonly snapshot: NodeSnapshot;
  readonly localAddresses: readonly Ip[];
  /** Whether kpx knows the node's addresses at all (else addrtype LOCAL is undecidable). */
  readonly knowsLocal: boolean;
  readonly broadcast: readonly Ip[];
  readonly ipsets: ReadonlyMap<string, IpSet>;
  readonly assumptions: TraceAssumptions;
}

export function buildContext(snapshot: NodeSnapshot, assumptions: TraceAssumptions): TraceContext {
  const local: Ip[] = [...snapshot.extraNodeIps];
  const broadcast: Ip[] = [];
  for (const i of snapshot.interfaces) {
    for (const a of i.addresses) {
      local.push(a.ip);
      if (a.brd) {
        const b = parseBrd(a.brd);
        if (b) broadcast.push(b);
      }
    }
  }
  for (const r of snapshot.routes) {
    if (r.type === 'local' && r.dst.prefix === (r.dst.family === 4 ? 32 : 128)) local.push({ family: r.dst.family, value: r.dst.network });
  }
  const knowsLocal = local.length > 0;
  return { snapshot, localAddresses: local, knowsLocal, broadcast, ipsets: snapshot.ipsetsByName, assumptions };
}

function parseBrd(text: string): Ip | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!m) return undefined;
  return { family: 4, value: BigInt(((+m[1] << 24) >>> 0) + (+m[2] << 16) + (+m[3] << 8) + +m[4]) };
}

/** Is this one of the node's own addresses (or in a `local` route range such as 127.0.0.0/8)? */
export function isLocalAddress(ctx: TraceContext, ip: Ip): boolean {
  if (ctx.localAddresses.some((a) => ipEquals(a, ip))) return true;
  if (ip.family === 4 && ip.value >> 24n === 127n) return true;
  if (ip.family === 6 && ip.value === 1n) return true;
  return ctx.snapshot.routes.some((r) => r.type === 'local' && r.table === 'local' && cidrContains(r.dst, ip));
}
