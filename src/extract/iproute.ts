/**
 * `ip route` text and `ip -j route` JSON → RouteDump. Both produce the same model so a text
 * dump and a JSON dump of one host compare equal (modulo `-d` details such as `proto boot`).
 */
import { parseIpRouteText, type RouteAttr, type RouteLineNode, type Tok } from '../../grammars/iproute/index.js';
import { scanJsonArray } from '../../grammars/iproute/json.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { parseCidr, parseIp, type Family } from '../model/addr.js';
import type { Gateway, Nexthop, Route, RouteDump, RouteUnsupported } from '../model/route.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const ONE_VALUE_FIELDS = new Set(['dev', 'proto', 'scope', 'src', 'table', 'tos', 'dsfield']);

interface Ctx {
  readonly file: string;
  readonly diagnostics: Diagnostic[];
  readonly unsupported: RouteUnsupported[];
}

function warn(ctx: Ctx, severity: 'error' | 'warning' | 'info', code: string, message: string, line: number, column: number, extra?: { expected?: string; found?: string }) {
  ctx.diagnostics.push(diagnostic(severity, code, message, ctx.file, line, column, extra));
}

/** `default`/`0/0`/`::/0`/prefix/host → Cidr; `default` needs the family. */
function dstCidr(text: string, family: Family) {
  if (text === 'default') return parseCidr(family === 4 ? '0.0.0.0/0' : '::/0');
  return parseCidr(text);
}

function gateway(ctx: Ctx, familyWord: string | undefined, tok: Tok, line: number): Gateway {
  const ip = parseIp(tok.text);
  const fam: Family = familyWord === 'inet6' ? 6 : familyWord === 'inet' ? 4 : ip?.family ?? (tok.text.includes(':') ? 6 : 4);
  if (!ip) {
    warn(ctx, 'warning', 'extract/bad-address', `next hop ${JSON.stringify(printable(tok.text))} is not an IP address; kept as text`, line, tok.column, {
      expected: 'an IPv4 or IPv6 address',
      found: printable(tok.text),
    });
    return { family: fam, address: tok.text };
  }
  return { family: ip.family, address: tok.text, ip };
}

function intValue(ctx: Ctx, tok: Tok, line: number, what: string): number | undefined {
  if (/^\d+$/.test(tok.text)) return Number(tok.text);
  warn(ctx, 'error', 'extract/bad-number', `${what} ${JSON.stringify(printable(tok.text))} is not a number`, line, tok.column, {
    expected: 'a non-negative integer',
    found: printable(tok.text),
  });
  return undefined;
}

interface Building {
  route: Mutable<Omit<Route, 'nexthops' | 'extra' | 'flags' | 'metrics' | 'lockedMetrics'>>;
  flags: string[];
  extra: Record<string, string>;
  metrics: Record<string, string>;
  locked: string[];
  nexthops: Nexthop[];
  /** The destination family is a guess (`default` without a next hop). */
  familyGuessed: boolean;
}

function applyAttrs(
  ctx: Ctx,
  attrs: readonly RouteAttr[],
  line: number,
  target: { set(key: string, value: string | number | Gateway): void; flags: string[]; extra: Record<string, string>; metrics?: Record<string, string>; locked?: string[] },
  where: 'route' | 'nexthop' | 'cache',
) {
  const unknown: Tok[] = [];
  for (const a of attrs) {
    switch (a.kind) {
      case 'flag':
        target.flags.push(a.key);
        break;
      case 'via':
        target.set('via', gateway(ctx, a.family?.text, a.values[0], line));
        break;
      case 'metric':
        if (target.metrics) {
          target.metrics[a.key] = a.values[0].text;
          if (a.locked) target.locked?.push(a.key);
        } else target.extra[a.key] = (a.locked ? 'lock ' : '') + a.values[0].text;
        break;
      case 'encap':
        target.extra.encap = a.values.map((v) => v.text).join(' ');
        break;
      case 'unknown':
        unknown.push(a.keyTok);
        break;
      case 'value': {
        const v = a.values[0];
        if (a.key === 'metric' && where !== 'cache') {
          const n = intValue(ctx, v, line, 'metric');
          if (n !== undefined) target.set('metric', n);
        } else if (a.key === 'weight' && where === 'nexthop') {
          const n = intValue(ctx, v, line, 'weight');
          if (n !== undefined) target.set('weight', n);
        } else if (a.key === 'nhid' && where === 'route') {
          const n = intValue(ctx, v, line, 'nhid');
          if (n !== undefined) target.set('nhid', n);
        } else if ((where === 'route' && ONE_VALUE_FIELDS.has(a.key)) || (where === 'nexthop' && a.key === 'dev')) {
          target.set(a.key === 'dsfield' ? 'tos' : a.key, v.text);
        } else target.extra[a.key] = v.text;
        break;
      }
    }
  }
  if (unknown.length) {
    const text = unknown.map((u) => u.text).join(' ');
    target.extra.unknown = target.extra.unknown ? `${target.extra.unknown} ${text}` : text;
    if (where !== 'cache') {
      warn(ctx, 'warning', 'ip-route/unknown-attribute', `unrecognised route attribute ${JSON.stringify(printable(text))}; kept in extra.unknown`, line, unknown[0].column, {
        expected: 'an ip route keyword (via, dev, proto, scope, src, metric, table, …)',
        found: printable(unknown[0].text),
      });
    }
  }
}

function startRoute(ctx: Ctx, node: Extract<RouteLineNode, { kind: 'route' }>, line: number, prevFamily: Family | undefined): Building | undefined {
  const b: Building = {
    route: { type: node.type?.text ?? 'unicast', dst: undefined as never, dstText: node.dst.text, family: 4, table: 'main', line, file: ctx.file },
    flags: [],
    extra: {},
    metrics: {},
    locked: [],
    nexthops: [],
    familyGuessed: false,
  };
  const r = b.route;
  applyAttrs(
    ctx,
    node.attrs,
    line,
    {
      set: (k, v) => {
        (r as Record<string, unknown>)[k] = v;
      },
      flags: b.flags,
      extra: b.extra,
      metrics: b.metrics,
      locked: b.locked,
    },
    'route',
  );
  let family: Family | undefined;
  if (node.dst.text !== 'default') {
    const c = parseCidr(node.dst.text);
    if (!c) {
      warn(ctx, 'error', 'extract/bad-address', `route destination ${JSON.stringify(printable(node.dst.text))} is not \`default\`, an address or a prefix`, line, node.dst.column, {
        expected: '`default`, an IP address or a prefix',
        found: printable(node.dst.text),
      });
      ctx.unsupported.push({ line, text: node.dst.text, reason: 'bad destination' });
      return undefined;
    }
    family = c.family;
  } else {
    const src = r.src ? parseIp(r.src) : undefined;
    family =
      r.via?.family ??
      src?.family ??
      (b.extra.pref !== undefined || b.extra.expires !== undefined ? 6 : undefined);
    if (family === undefined) {
      family = prevFamily ?? 4;
      b.familyGuessed = true;
    }
  }
  r.family = family;
  r.dst = dstCidr(node.dst.text, family)!;
  return b;
}

function finish(b: Building): Route {
  const r: Mutable<Route> = { ...b.route, flags: b.flags, extra: b.extra };
  if (b.nexthops.length) {
    r.nexthops = b.nexthops;
    if (b.route.family === 4 && b.route.dstText === 'default' && b.familyGuessed && b.nexthops[0].via) r.family = b.nexthops[0].via.family;
  }
  if (Object.keys(b.metrics).length) r.metrics = b.metrics;
  if (b.locked.length) r.lockedMetrics = b.locked;
  if (b.familyGuessed && r.dstText === 'default') r.dst = dstCidr('default', r.family)!;
  // `ip route get` answers: IPv4 prints `uid N` (and a `cache` line); IPv6 prints `from ::`/`from ADDR`
  // without a prefix length (a source-specific table entry prints `from PREFIX/LEN`).
  if (r.extra.uid !== undefined || (r.extra.from !== undefined && !r.extra.from.includes('/'))) r.origin = 'get';
  return r;
}

export function extractIpRoute(text: string, file: string): { dump: RouteDump; diagnostics: Diagnostic[] } {
  const syntax = parseIpRouteText(text);
  const diagnostics: Diagnostic[] = [];
  const unsupported: RouteUnsupported[] = [];
  const ctx: Ctx = { file, diagnostics, unsupported };
  const routes: Route[] = [];
  let current: Building | undefined;
  let prevFamily: Family | undefined;
  const flush = () => {
    if (current) {
      const r = finish(current);
      routes.push(r);
      prevFamily = r.family;
    }
    current = undefined;
  };
  for (const l of syntax.lines) {
    switch (l.kind) {
      case 'noise':
        flush();
        unsupported.push({ line: l.line, text: l.text, reason: `noise (${l.noise})` });
        warn(ctx, 'info', 'input/noise', `skipped ${l.noise} line: ${printable(l.text.trim())}`, l.line, 1);
        break;
      case 'stderr':
        flush();
        unsupported.push({ line: l.line, text: l.text, reason: 'stderr message' });
        warn(ctx, 'warning', 'input/stderr', `skipped an error message from ip: ${printable(l.text.trim())}`, l.line, 1);
        break;
      case 'error': {
        flush();
        const e = l.errors[0];
        unsupported.push({ line: l.line, text: l.text, reason: 'syntax error' });
        warn(ctx, 'error', 'parse/unexpected-token', `cannot read this as an ip route line: ${printable(e.message, 160)}`, l.line, e.column, {
          expected: e.expected,
          found: e.found === undefined ? undefined : printable(e.found),
        });
        break;
      }
      case 'node': {
        const n = l.node;
        if (n.kind === 'route') {
          flush();
          current = startRoute(ctx, n, l.line, prevFamily);
        } else if (n.kind === 'nexthop') {
          if (!current) {
            unsupported.push({ line: l.line, text: l.text, reason: 'nexthop without a route' });
            warn(ctx, 'error', 'ip-route/orphan-nexthop', '`nexthop` line with no route line before it', l.line, n.keyTok.column, { expected: 'a route line before the nexthop lines' });
            break;
          }
          const hop: Mutable<Nexthop> = { flags: [], line: l.line };
          const extra: Record<string, string> = {};
          applyAttrs(ctx, n.attrs, l.line, { set: (k, v) => ((hop as Record<string, unknown>)[k] = v), flags: hop.flags as string[], extra }, 'nexthop');
          if (Object.keys(extra).length) {
            for (const [k, v] of Object.entries(extra)) current.extra[`nexthop${current.nexthops.length + 1}.${k}`] = v;
          }
          current.nexthops.push(hop);
        } else {
          if (!current) {
            unsupported.push({ line: l.line, text: l.text, reason: 'cache line without a route' });
            warn(ctx, 'warning', 'ip-route/orphan-cache', '`cache` line with no route line before it', l.line, n.keyTok.column);
            break;
          }
          const parts = [n.cacheFlags?.text, ...n.attrs.flatMap((a) => [...(a.locked && a.kind === 'metric' ? [a.key, 'lock'] : [a.key]), ...(a.family ? [a.family.text] : []), ...a.values.map((v) => v.text)])].filter(
            (x): x is string => x !== undefined,
          );
          current.extra.cache = parts.join(' ');
          if (current.extra.uid === undefined) current.route.origin = 'cache';
          warn(ctx, 'info', 'ip-route/not-a-table-entry', 'route with a `cache` line: an `ip route get` answer or a cache entry, not a table entry (ignored by route lookup)', current.route.line, 1);
        }
        break;
      }
    }
  }
  flush();
  if (syntax.missingFinalNewline && routes.length && routes[routes.length - 1].line === syntax.lines[syntax.lines.length - 1]?.line) {
    warn(ctx, 'info', 'input/missing-final-newline', 'the last line has no newline; it may be truncated', routes[routes.length - 1].line, 1);
  }
  return { dump: { routes, unsupported }, diagnostics };
}

function counts(d: RouteDump): Record<string, number> {
  return { routes: d.routes.length };
}

export const ipRouteParser: FormatParser<RouteDump> = {
  id: 'ip-route',
  parse(text: string, file: string): ParsedInput<RouteDump> {
    const { dump, diagnostics } = extractIpRoute(text, file);
    return { format: 'ip-route', file, data: dump, diagnostics, counts: counts(dump) };
  },
};

// ---------------------------------------------------------------------------------------------
// JSON

type Json = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

function jsonGateway(ctx: Ctx, o: Json, line: number, column: number): Gateway | undefined {
  if (typeof o.gateway === 'string') {
    const ip = parseIp(o.gateway);
    if (!ip) warn(ctx, 'warning', 'extract/bad-address', `gateway ${JSON.stringify(printable(o.gateway))} is not an IP address`, line, column);
    return ip ? { family: ip.family, address: o.gateway, ip } : { family: o.gateway.includes(':') ? 6 : 4, address: o.gateway };
  }
  if (o.via && typeof o.via === 'object') {
    const v = o.via as Json;
    const host = str(v.host);
    if (host === undefined) return undefined;
    const ip = parseIp(host);
    const fam: Family = v.family === 'inet6' ? 6 : v.family === 'inet' ? 4 : ip?.family ?? 4;
    return ip ? { family: ip.family, address: host, ip } : { family: fam, address: host };
  }
  return undefined;
}

const JSON_KNOWN = new Set([
  'type', 'dst', 'tos', 'table', 'nhid', 'gateway', 'via', 'dev', 'protocol', 'scope', 'prefsrc', 'metric', 'flags', 'nexthops', 'metrics',
]);

function jsonFlags(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function jsonRoute(ctx: Ctx, o: Json, line: number, column: number, prevFamily: Family | undefined): Route | undefined {
  const dstText = str(o.dst);
  if (dstText === undefined) {
    warn(ctx, 'error', 'ip-route-json/missing-dst', 'route object without "dst"', line, column, { expected: '"dst"' });
    ctx.unsupported.push({ line, text: printable(JSON.stringify(o), 200), reason: 'no dst' });
    return undefined;
  }
  const via = jsonGateway(ctx, o, line, column);
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) {
    if (JSON_KNOWN.has(k)) continue;
    if (k === 'flow' && v && typeof v === 'object') {
      const f = v as Json;
      extra.realms = f.from !== undefined ? `${str(f.from)}/${str(f.to)}` : `${str(f.to)}`;
    } else if (k === 'expires' && typeof v === 'number') extra.expires = `${v}sec`;
    else if (k === 'cache') extra.cache = Array.isArray(v) ? v.join(',') : JSON.stringify(v);
    else extra[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  let family: Family;
  if (dstText === 'default') {
    const src = typeof o.prefsrc === 'string' ? parseIp(o.prefsrc) : undefined;
    const hops = Array.isArray(o.nexthops) ? (o.nexthops as Json[]) : [];
    const hopVia = hops.length ? jsonGateway(ctx, hops[0], line, column) : undefined;
    const f = via?.family ?? src?.family ?? hopVia?.family ?? (o.pref !== undefined || o.expires !== undefined ? 6 : undefined);
    family = f ?? prevFamily ?? 4;
  } else {
    const c = parseCidr(dstText);
    if (!c) {
      warn(ctx, 'error', 'extract/bad-address', `route destination ${JSON.stringify(printable(dstText))} is not \`default\`, an address or a prefix`, line, column);
      ctx.unsupported.push({ line, text: dstText, reason: 'bad destination' });
      return undefined;
    }
    family = c.family;
  }
  const r: Mutable<Route> = {
    type: str(o.type) ?? 'unicast',
    dst: dstCidr(dstText, family)!,
    dstText,
    family,
    table: str(o.table) ?? 'main',
    flags: jsonFlags(o.flags),
    extra,
    line,
    file: ctx.file,
  };
  if (o.tos !== undefined) r.tos = str(o.tos);
  if (via) r.via = via;
  if (typeof o.dev === 'string') r.dev = o.dev;
  if (o.protocol !== undefined) r.proto = str(o.protocol);
  if (typeof o.scope === 'string') r.scope = o.scope;
  if (typeof o.prefsrc === 'string') r.src = o.prefsrc;
  if (typeof o.metric === 'number') r.metric = o.metric;
  if (typeof o.nhid === 'number') r.nhid = o.nhid;
  if (Array.isArray(o.metrics) && o.metrics.length && typeof o.metrics[0] === 'object') {
    const m: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.metrics[0] as Json)) m[k] = String(v);
    r.metrics = m;
  }
  if (Array.isArray(o.nexthops)) {
    r.nexthops = (o.nexthops as Json[]).map((h) => {
      const hop: Mutable<Nexthop> = { flags: jsonFlags(h.flags), line };
      const g = jsonGateway(ctx, h, line, column);
      if (g) hop.via = g;
      if (typeof h.dev === 'string') hop.dev = h.dev;
      if (typeof h.weight === 'number') hop.weight = h.weight;
      return hop;
    });
  }
  if (o.uid !== undefined) r.origin = 'get';
  else if (o.cache !== undefined) r.origin = 'cache';
  return r;
}

export function extractIpRouteJson(text: string, file: string): { dump: RouteDump; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const unsupported: RouteUnsupported[] = [];
  const ctx: Ctx = { file, diagnostics, unsupported };
  const scan = scanJsonArray(text);
  for (const o of scan.outside) {
    unsupported.push({ line: o.line, text: o.text, reason: o.noise ? 'noise' : 'text outside the JSON array' });
    warn(ctx, o.noise ? 'info' : 'warning', o.noise ? 'input/noise' : 'ip-route-json/outside-json', `skipped line outside the JSON array: ${printable(o.text.trim())}`, o.line, 1);
  }
  const routes: Route[] = [];
  if (scan.error || !scan.value) {
    const e = scan.error ?? { line: 1, column: 1, message: 'no JSON' };
    warn(ctx, 'error', 'parse/bad-json', `cannot read ip -j route output: ${printable(e.message.replace(/, ".*" is not valid JSON$/s, ''), 160)}`, e.line, e.column, { expected: 'a JSON array of route objects' });
    return { dump: { routes, unsupported }, diagnostics };
  }
  let prev: Family | undefined;
  scan.value.forEach((o, i) => {
    const pos = scan.elements[i] ?? { line: 1, column: 1 };
    if (!o || typeof o !== 'object' || Array.isArray(o)) {
      warn(ctx, 'error', 'ip-route-json/not-an-object', 'array element is not a route object', pos.line, pos.column, { expected: 'an object' });
      unsupported.push({ line: pos.line, text: printable(JSON.stringify(o)), reason: 'not an object' });
      return;
    }
    const r = jsonRoute(ctx, o as Json, pos.line, pos.column, prev);
    if (r) {
      routes.push(r);
      prev = r.family;
    }
  });
  return { dump: { routes, unsupported }, diagnostics };
}

export const ipRouteJsonParser: FormatParser<RouteDump> = {
  id: 'ip-route-json',
  parse(text: string, file: string): ParsedInput<RouteDump> {
    const { dump, diagnostics } = extractIpRouteJson(text, file);
    return { format: 'ip-route-json', file, data: dump, diagnostics, counts: counts(dump) };
  },
};
