/**
 * Routes as `ip route` / `ip -j route` show them (iproute2 `print_route()`), and a kernel-like
 * lookup over them. Plain readonly data; helpers are free functions.
 */
import { type Cidr, type Family, type Ip } from './addr.js';

export interface Gateway {
  readonly family: Family;
  /** As printed (may be a redaction placeholder, then `ip` is absent). */
  readonly address: string;
  readonly ip?: Ip;
}

export interface Nexthop {
  readonly via?: Gateway;
  readonly dev?: string;
  readonly weight?: number;
  readonly flags: readonly string[];
  readonly line: number;
}

export interface Route {
  /** `unicast` when not printed. */
  readonly type: string;
  readonly dst: Cidr;
  /** `default` or the destination as printed. */
  readonly dstText: string;
  readonly family: Family;
  /** `main` when not printed; otherwise the name or number as printed (`local`, `100`). */
  readonly table: string;
  readonly tos?: string;
  readonly via?: Gateway;
  readonly dev?: string;
  /** Name or number as printed (`bird`, `kernel`, `250`); see protoNumber()/protoName(). */
  readonly proto?: string;
  readonly scope?: string;
  /** Preferred source (`src` in text, `prefsrc` in JSON). */
  readonly src?: string;
  readonly metric?: number;
  /** `onlink`, `linkdown`, `dead`, … */
  readonly flags: readonly string[];
  readonly nhid?: number;
  /** Multipath hops (`⇥nexthop …` lines / JSON `nexthops`). */
  readonly nexthops?: readonly Nexthop[];
  /** Route metrics: `mtu 1450` → { mtu: '1450' }; `rtt 10ms` stays `10ms` in text, JSON gives `10`. */
  readonly metrics?: Readonly<Record<string, string>>;
  /** Metrics printed with `lock` (`mtu lock 1400`). */
  readonly lockedMetrics?: readonly string[];
  /**
   * Where the line came from when it is not a routing-table entry: `get` (an `ip route get`
   * answer, recognised by `uid N`), `cache` (followed by a `cache …` line without `uid`).
   * lookupRoute() ignores such routes.
   */
  readonly origin?: 'get' | 'cache';
  /** Everything else, as printed: pref, expires, realms, from, error, encap, uid, cache, unknown words… */
  readonly extra: Readonly<Record<string, string>>;
  readonly line: number;
  readonly file: string;
}

export interface RouteUnsupported {
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

export interface RouteDump {
  readonly routes: readonly Route[];
  readonly unsupported: readonly RouteUnsupported[];
}

/** Types for which the kernel does not forward the packet. */
export const REJECT_TYPES: ReadonlySet<string> = new Set(['blackhole', 'unreachable', 'prohibit', 'throw']);

/** Debian 12 / iproute2 6.1 `/etc/iproute2/rt_protos` (FORMATS.md §4.1). */
export const RT_PROTOS: Readonly<Record<string, number>> = {
  unspec: 0, redirect: 1, kernel: 2, boot: 3, static: 4, gated: 8, ra: 9, mrt: 10, zebra: 11, bird: 12, dnrouted: 13,
  xorp: 14, ntk: 15, dhcp: 16, keepalived: 18, babel: 42, openr: 99, bgp: 186, isis: 187, ospf: 188, rip: 189, eigrp: 192,
};
const PROTO_BY_NUMBER = new Map(Object.entries(RT_PROTOS).map(([k, v]) => [v, k]));

/** `bird` → 12, `12` → 12, unknown name → undefined. */
export function protoNumber(proto: string): number | undefined {
  if (/^\d+$/.test(proto)) return Number(proto);
  return RT_PROTOS[proto];
}

/** `12` → `bird`, `bird` → `bird`, `250` → `250` (no name). */
export function protoName(proto: string): string {
  if (/^\d+$/.test(proto)) return PROTO_BY_NUMBER.get(Number(proto)) ?? proto;
  return proto;
}

/** Reserved table numbers → names (`/etc/iproute2/rt_tables`): 255 local, 254 main, 253 default. */
export function normalizeTable(table: string): string {
  switch (table) {
    case '255':
      return 'local';
    case '254':
      return 'main';
    case '253':
      return 'default';
    default:
      return table;
  }
}

/** Is this a route the kernel would forward with (a unicast route, possibly multipath)? */
export function isForwarding(r: Route): boolean {
  return r.type === 'unicast';
}

/**
 * Kernel-like lookup (default policy rules: table `local`, then `main`, then `default`; or the
 * given tables in order). Within a table: longest prefix, then lowest metric, then first
 * printed. Routes with a TOS are skipped (a packet with TOS 0 is assumed), as are `ip route get`
 * answers and cache entries. `throw`, `unreachable`, `blackhole` and `prohibit` routes are
 * returned as such (the caller decides what they mean; `throw` would continue with the next
 * policy rule in the kernel).
 */
export function lookupRoute(routes: readonly Route[], dst: Ip, opts?: { tables?: readonly string[] }): Route | undefined {
  const index = routeIndex(routes);
  const tables = opts?.tables ? opts.tables.map(normalizeTable) : DEFAULT_TABLES;
  for (const table of tables) {
    const byPrefix = index.get(`${table}/${dst.family}`);
    if (!byPrefix) continue;
    for (const { mask, routes: byNetwork } of byPrefix) {
      const best = byNetwork.get(dst.value & mask);
      if (best) return best;
    }
  }
  return undefined;
}

const DEFAULT_TABLES = ['local', 'main', 'default'];

/** Per table and family: prefix lengths (longest first), each a map network → the route that wins there. */
type RouteIndex = Map<string, { prefix: number; mask: bigint; routes: Map<bigint, Route> }[]>;
const indexes = new WeakMap<readonly Route[], RouteIndex>();

/**
 * Lookups on big snapshots (tens of thousands of endpoints) must not scan every route each time:
 * the index is built once per route list. Within one network the lowest metric wins, then the
 * first printed — the same order a scan gives.
 */
function routeIndex(routes: readonly Route[]): RouteIndex {
  let idx = indexes.get(routes);
  if (idx) return idx;
  const build = new Map<string, Map<number, Map<bigint, Route>>>();
  for (const r of routes) {
    if (r.origin !== undefined || r.tos !== undefined) continue;
    const key = `${normalizeTable(r.table)}/${r.family}`;
    let byPrefix = build.get(key);
    if (!byPrefix) build.set(key, (byPrefix = new Map()));
    let byNetwork = byPrefix.get(r.dst.prefix);
    if (!byNetwork) byPrefix.set(r.dst.prefix, (byNetwork = new Map()));
    const prev = byNetwork.get(r.dst.network);
    if (!prev || (r.metric ?? 0) < (prev.metric ?? 0)) byNetwork.set(r.dst.network, r);
  }
  idx = new Map();
  for (const [key, byPrefix] of build) {
    const bits = key.endsWith('/4') ? 32 : 128;
    const list = [...byPrefix.entries()]
      .sort((a, b) => b[0] - a[0])
      .map(([prefix, routesByNetwork]) => ({ prefix, mask: prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix), routes: routesByNetwork }));
    idx.set(key, list);
  }
  indexes.set(routes, idx);
  return idx;
}

/** Routes of one table (normalised name), in printed order. */
export function routesInTable(routes: readonly Route[], table: string): Route[] {
  const t = normalizeTable(table);
  return routes.filter((r) => normalizeTable(r.table) === t);
}
