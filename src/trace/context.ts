/**
 * What a trace knows about the node beyond the packet: its own addresses (addrtype LOCAL),
 * its routes, its ipsets, and the assumptions the user can change.
 */
import type { Ip } from '../model/addr.js';
import { lookupRoute } from '../model/route.js';
import type { IpSet } from '../model/ipset.js';
import type { NodeSnapshot } from '../model/snapshot.js';

export interface TraceAssumptions {
  /** conntrack state of the packet's connection: the first packet of a NEW one unless --established. */
  readonly established: boolean;
  /** `-m recent --rcheck/--update` finds the source (session affinity entry exists). */
  readonly affinityHit: boolean;
  /**
   * A conntrack entry holds the packet's 5-tuple (src/trace/conntrack.ts): its NAT binding, not the
   * nat chains, decides where the packet goes (the destination its reply comes from). Set by the trace.
   */
  readonly pinnedTo?: { readonly ip: Ip; readonly port?: number; readonly file: string; readonly line: number };
}

export interface TraceContext {
  readonly snapshot: NodeSnapshot;
  readonly localAddresses: readonly Ip[];
  /** `family:value` keys of localAddresses, for constant-time membership. */
  readonly localKeys: ReadonlySet<string>;
  /** Whether kpx knows the node's addresses at all (else addrtype LOCAL is undecidable). */
  readonly knowsLocal: boolean;
  readonly broadcast: readonly Ip[];
  readonly ipsets: ReadonlyMap<string, IpSet>;
  readonly assumptions: TraceAssumptions;
}

const localCache = new WeakMap<NodeSnapshot, { local: Ip[]; broadcast: Ip[]; keys: Set<string> }>();

/** The node's own and broadcast addresses, computed once per snapshot. */
function addressesOf(snapshot: NodeSnapshot): { local: Ip[]; broadcast: Ip[]; keys: Set<string> } {
  let c = localCache.get(snapshot);
  if (c) return c;
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
  c = { local, broadcast, keys: new Set(local.map((ip) => `${ip.family}:${ip.value}`)) };
  localCache.set(snapshot, c);
  return c;
}

export function buildContext(snapshot: NodeSnapshot, assumptions: TraceAssumptions): TraceContext {
  const { local, broadcast, keys } = addressesOf(snapshot);
  const knowsLocal = local.length > 0;
  return { snapshot, localAddresses: local, localKeys: keys, knowsLocal, broadcast, ipsets: snapshot.ipsetsByName, assumptions };
}

function parseBrd(text: string): Ip | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!m) return undefined;
  return { family: 4, value: BigInt(((+m[1] << 24) >>> 0) + (+m[2] << 16) + (+m[3] << 8) + +m[4]) };
}

/** Is this one of the node's own addresses (or in a `local` route range such as 127.0.0.0/8)? */
export function isLocalAddress(ctx: TraceContext, ip: Ip): boolean {
  if (ctx.localKeys.has(`${ip.family}:${ip.value}`)) return true;
  if (ip.family === 4 && ip.value >> 24n === 127n) return true;
  if (ip.family === 6 && ip.value === 1n) return true;
  return lookupRoute(ctx.snapshot.routes, ip, { tables: ['local'] })?.type === 'local';
}
