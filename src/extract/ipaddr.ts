/**
 * `ip addr` text (full, `-o`, `-br`) and `ip -j addr` JSON → AddrDump.
 */
import { parseIpAddrText, type AddrLineNode, type AddrSyntaxLine, type Segment, type Tok } from '../../grammars/ipaddr/index.js';
import { scanJsonArray } from '../../grammars/ipaddr/json.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { parseCidr, parseIp } from '../model/addr.js';
import type { AddrDump, InterfaceAddress, LinkInfo, NetInterface } from '../model/iface.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Unsupported = { line: number; text: string; reason: string };

interface Ctx {
  readonly file: string;
  readonly diagnostics: Diagnostic[];
  readonly unsupported: Unsupported[];
}

function report(ctx: Ctx, severity: 'error' | 'warning' | 'info', code: string, message: string, line: number, column: number, extra?: { expected?: string; found?: string }) {
  ctx.diagnostics.push(diagnostic(severity, code, message, ctx.file, line, column, extra));
}

/** Header keywords taking one value (`mtu 1500 qdisc noqueue master br0 state UP mode DEFAULT group default qlen 1000`). */
const HEADER_VALUE_KEYS = new Set(['mtu', 'qdisc', 'master', 'state', 'mode', 'group', 'qlen', 'link-netnsid', 'netns', 'vrf', 'xdp', 'xdpgeneric', 'xdpdrv', 'xdpoffload']);
/** Address keywords taking one value. */
const ADDR_VALUE_KEYS = new Set(['peer', 'brd', 'any', 'scope', 'metric', 'proto']);
/** `print_ifa_flags()` words. */
const ADDR_FLAGS = new Set([
  'secondary', 'primary', 'temporary', 'deprecated', 'tentative', 'dadfailed', 'home', 'nodad', 'mngtmpaddr', 'noprefixroute', 'autojoin',
  'optimistic', 'dynamic', 'stable-privacy', 'permanent',
]);
const LINK_VALUE_KEYS = new Set(['brd', 'permaddr', 'link-netns', 'link-netnsid']);
const MAC = /^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})+$/;

interface IfaceBuild {
  iface: Mutable<Omit<NetInterface, 'addresses' | 'extra' | 'altnames' | 'linkInfo'>>;
  linkInfo?: Mutable<LinkInfo>;
  addresses: Mutable<InterfaceAddress>[];
  altnames: string[];
  extra: Record<string, string>;
}

function newIface(ctx: Ctx, line: number, index: Tok | undefined, nameTok: Tok): IfaceBuild {
  let name = nameTok.text.replace(/:$/, '');
  let link: string | undefined;
  const at = name.indexOf('@');
  if (at > 0) {
    link = name.slice(at + 1);
    name = name.slice(0, at);
  }
  const iface: IfaceBuild['iface'] = { name, flags: [], line, file: ctx.file };
  if (index) iface.index = Number(index.text.replace(/:$/, ''));
  if (link) iface.link = link;
  return { iface, addresses: [], altnames: [], extra: {} };
}

function int(ctx: Ctx, t: Tok, line: number, what: string): number | undefined {
  if (/^\d+$/.test(t.text)) return Number(t.text);
  report(ctx, 'error', 'extract/bad-number', `${what} ${JSON.stringify(printable(t.text))} is not a number`, line, t.column, { expected: 'an integer', found: printable(t.text) });
  return undefined;
}

function headerWords(ctx: Ctx, b: IfaceBuild, words: readonly Tok[], line: number) {
  for (let i = 0; i < words.length; i++) {
    const k = words[i].text;
    const v = words[i + 1];
    if (HEADER_VALUE_KEYS.has(k) && v) {
      i++;
      if (k === 'mtu') b.iface.mtu = int(ctx, v, line, 'mtu');
      else if (k === 'qlen') b.iface.qlen = int(ctx, v, line, 'qlen');
      else if (k === 'state') b.iface.state = v.text;
      else if (k === 'qdisc') b.iface.qdisc = v.text;
      else if (k === 'master') b.iface.master = v.text;
      else if (k === 'group') b.iface.group = v.text;
      else if (k === 'link-netnsid') b.iface.linkNetnsId = int(ctx, v, line, 'link-netnsid');
      else b.extra[k] = v.text;
    } else {
      b.extra.unknown = b.extra.unknown ? `${b.extra.unknown} ${k}` : k;
      report(ctx, 'warning', 'ip-addr/unknown-attribute', `unrecognised interface attribute ${JSON.stringify(printable(k))}; kept in extra.unknown`, line, words[i].column, {
        expected: 'mtu, qdisc, master, state, mode, group, qlen…',
        found: printable(k),
      });
    }
  }
}

function linkSegment(ctx: Ctx, b: IfaceBuild, s: Segment, line: number) {
  b.iface.linkType = s.head.text.slice('link/'.length);
  let i = 0;
  const w = s.words;
  if (w.length && !LINK_VALUE_KEYS.has(w[0].text)) {
    if (MAC.test(w[0].text)) b.iface.mac = w[0].text;
    else b.extra.linkAddress = w[0].text;
    i = 1;
  }
  const details: string[] = [];
  for (; i < w.length; i++) {
    const k = w[i].text;
    const v = w[i + 1];
    if (LINK_VALUE_KEYS.has(k) && v) {
      i++;
      if (k === 'link-netns') b.iface.linkNetns = v.text;
      else if (k === 'link-netnsid') b.iface.linkNetnsId = int(ctx, v, line, 'link-netnsid');
      else b.extra[k === 'brd' ? 'linkBrd' : k] = v.text;
    } else details.push(k);
  }
  // `ip -d`: `promiscuity 0 allmulti 0 minmtu 68 maxmtu 65535` follow on the link line.
  if (details.length) b.extra.details = [b.extra.details, details.join(' ')].filter(Boolean).join(' ');
}

/** `ip -d` kind lines (`vxlan id 1 local …`, `bridge_slave state forwarding … hairpin on …`): print_linkinfo's heads. */
const LINK_KINDS = new Set([
  'vxlan', 'ipip', 'sit', 'gre', 'gretap', 'ip6gre', 'ip6gretap', 'ip6tnl', 'geneve', 'wireguard', 'veth', 'bridge', 'dummy', 'vlan', 'macvlan', 'ipvlan',
  'bond', 'tun', 'vrf', 'ifb', 'netkit', 'vti', 'erspan', 'bareudp', 'macsec', 'xfrm', 'nlmon', 'team',
]);
const SLAVE_KINDS = new Set(['bridge_slave', 'bond_slave', 'team_slave', 'vrf_slave']);
const onOff = (v: string | undefined): boolean | undefined => (v === 'on' || v === '1' ? true : v === 'off' || v === '0' ? false : undefined);

/**
 * A kind line of `ip -d link`: the kind and the parameters kpx reasons with; the whole line stays
 * in extra.details. Keys are looked up by name (each takes the next word), so unknown flags and
 * parameters of newer iproute2 versions pass by. False when the line is not a kind line.
 */
function kindLine(ctx: Ctx, b: IfaceBuild, s: Segment, line: number): boolean {
  const head = s.head.text;
  if (!LINK_KINDS.has(head) && !SLAVE_KINDS.has(head)) return false;
  const words = s.words;
  const value = (k: string): Tok | undefined => {
    const i = words.findIndex((w) => w.text === k);
    return i >= 0 ? words[i + 1] : undefined;
  };
  const num = (k: string): number | undefined => {
    const t = value(k);
    return t === undefined ? undefined : int(ctx, t, line, k);
  };
  const info: Mutable<LinkInfo> = b.linkInfo ?? { line };
  if (LINK_KINDS.has(head)) {
    info.kind = head;
    info.line = line;
    const tunnel: Record<string, string | number | undefined> = { id: num('id'), local: value('local')?.text, remote: value('remote')?.text, group: value('group')?.text, dev: value('dev')?.text, dstport: num('dstport') };
    const set = Object.fromEntries(Object.entries(tunnel).filter(([, v]) => v !== undefined));
    if (head !== 'bridge' && head !== 'veth' && Object.keys(set).length) info.tunnel = set as LinkInfo['tunnel'];
    if (head === 'bridge') {
      const br: { nfCallIptables?: boolean; nfCallIp6tables?: boolean; vlanFiltering?: boolean } = {};
      const a = onOff(value('nf_call_iptables')?.text);
      const c = onOff(value('nf_call_ip6tables')?.text);
      const v = onOff(value('vlan_filtering')?.text);
      if (a !== undefined) br.nfCallIptables = a;
      if (c !== undefined) br.nfCallIp6tables = c;
      if (v !== undefined) br.vlanFiltering = v;
      info.bridge = br;
    }
  } else if (head === 'bridge_slave') {
    const port: { state?: string; hairpin?: boolean; learning?: boolean; line: number; bridge?: string; text?: string } = { line, text: `bridge_slave ${words.map((w) => w.text).join(' ')}` };
    const st = value('state')?.text;
    const hp = onOff(value('hairpin')?.text);
    const le = onOff(value('learning')?.text);
    if (st) port.state = st;
    if (hp !== undefined) port.hairpin = hp;
    if (le !== undefined) port.learning = le;
    if (b.iface.master) port.bridge = b.iface.master;
    info.bridgePort = port;
  }
  const minMtu = value('minmtu');
  const maxMtu = value('maxmtu');
  if (minMtu) info.minMtu = int(ctx, minMtu, line, 'minmtu');
  if (maxMtu) info.maxMtu = int(ctx, maxMtu, line, 'maxmtu');
  b.linkInfo = info;
  const detail = [s.head, ...words].map((w) => w.text).join(' ');
  b.extra.details = [b.extra.details, detail].filter(Boolean).join(' ');
  return true;
}

function addrSegment(ctx: Ctx, b: IfaceBuild, s: Segment, line: number): Mutable<InterfaceAddress> | undefined {
  const family = s.head.text === 'inet6' ? 6 : 4;
  const w = s.words;
  if (!w.length) {
    report(ctx, 'error', 'parse/unexpected-token', `\`${s.head.text}\` without an address`, line, s.head.endColumn, { expected: 'an address', found: 'end of line' });
    ctx.unsupported.push({ line, text: s.head.text, reason: 'no address' });
    return undefined;
  }
  const localText = w[0].text;
  let peer: string | undefined;
  let peerTok: Tok | undefined;
  const flags: string[] = [];
  const values: Record<string, string> = {};
  const unknown: Tok[] = [];
  for (let i = 1; i < w.length; i++) {
    const k = w[i].text;
    if (ADDR_VALUE_KEYS.has(k) && w[i + 1]) {
      if (k === 'peer') {
        peerTok = w[i + 1];
        peer = peerTok.text;
      } else values[k] = w[i + 1].text;
      i++;
    } else if (ADDR_FLAGS.has(k)) flags.push(k);
    else unknown.push(w[i]);
  }
  // IPv4 prints the label last; anything else unknown is kept as a flag with a warning.
  let label: string | undefined;
  if (family === 4 && unknown.length && unknown[unknown.length - 1] === w[w.length - 1]) label = unknown.pop()!.text;
  for (const u of unknown) {
    flags.push(u.text);
    report(ctx, 'warning', 'ip-addr/unknown-flag', `unrecognised address word ${JSON.stringify(printable(u.text))}; kept as a flag`, line, u.column, { found: printable(u.text) });
  }
  // `inet 10.1.1.1 peer 10.1.1.2/32`: the prefix length is printed after the peer.
  const prefixText = peer !== undefined ? peer : localText;
  const slash = prefixText.indexOf('/');
  const localAddr = localText.includes('/') ? localText.slice(0, localText.indexOf('/')) : localText;
  const ip = parseIp(localAddr);
  const prefix = slash >= 0 ? Number(prefixText.slice(slash + 1)) : family === 4 ? 32 : 128;
  const cidr = parseCidr(`${slash >= 0 ? prefixText.slice(0, slash) : prefixText}/${prefix}`);
  if (!ip || !cidr || ip.family !== family) {
    const bad = !ip ? w[0] : peerTok ?? w[0];
    report(ctx, 'error', 'extract/bad-address', `${s.head.text} address ${JSON.stringify(printable(bad.text))} is not a valid ${family === 4 ? 'IPv4' : 'IPv6'} address/prefix`, line, bad.column, {
      expected: family === 4 ? 'an IPv4 address with /LEN' : 'an IPv6 address with /LEN',
      found: printable(bad.text),
    });
    ctx.unsupported.push({ line, text: `${s.head.text} ${w.map((x) => x.text).join(' ')}`, reason: 'bad address' });
    return undefined;
  }
  const a: Mutable<InterfaceAddress> = { family, address: localAddr, ip, prefix, cidr, flags, line };
  if (values.scope) a.scope = values.scope;
  if (values.brd) a.brd = values.brd;
  if (peer !== undefined) a.peer = peer.replace(/\/\d+$/, '');
  if (label) a.label = label;
  b.addresses.push(a);
  return a;
}

function lftSegment(ctx: Ctx, b: IfaceBuild, s: Segment, line: number) {
  const last = b.addresses[b.addresses.length - 1];
  const w = [s.head, ...s.words];
  for (let i = 0; i + 1 < w.length; i += 2) {
    if (!last) break;
    if (w[i].text === 'valid_lft') last.validLft = w[i + 1].text;
    else if (w[i].text === 'preferred_lft') last.preferredLft = w[i + 1].text;
  }
  if (!last) {
    report(ctx, 'warning', 'ip-addr/orphan-lifetime', '`valid_lft` line with no address before it', line, s.head.column);
    ctx.unsupported.push({ line, text: w.map((x) => x.text).join(' '), reason: 'lifetime without address' });
  }
}

const BRIEF_STATES = new Set(['UP', 'DOWN', 'UNKNOWN', 'LOWERLAYERDOWN', 'DORMANT', 'NOTPRESENT', 'TESTING']);

function finishIface(b: IfaceBuild): NetInterface {
  const i: Mutable<NetInterface> = { ...b.iface, addresses: b.addresses, extra: b.extra };
  if (b.altnames.length) i.altnames = b.altnames;
  if (b.linkInfo) i.linkInfo = b.linkInfo;
  return i;
}

export function extractIpAddr(text: string, file: string): { dump: AddrDump; diagnostics: Diagnostic[] } {
  const syntax = parseIpAddrText(text);
  const diagnostics: Diagnostic[] = [];
  const unsupported: Unsupported[] = [];
  const ctx: Ctx = { file, diagnostics, unsupported };
  const r: Reading = { done: [], byKey: new Map(), current: undefined };
  const hasHeaders = syntax.lines.some((l) => l.kind === 'node' && l.node.header);
  for (const l of syntax.lines) {
    if (l.kind !== 'node') {
      skippedLine(ctx, l);
      continue;
    }
    const n: AddrLineNode = l.node;
    if (n.header) {
      const current = headerLine(ctx, r, n.header, l.line);
      for (const s of n.segments) segmentInto(ctx, current, s, l.line, l.text);
      continue;
    }
    const s = n.segments[0];
    if (!hasHeaders && s.kind === 'other' && briefLine(ctx, r, s, l.line)) continue;
    if (!r.current) {
      unsupported.push({ line: l.line, text: l.text, reason: 'line before any interface header' });
      report(ctx, 'error', 'ip-addr/no-interface', 'address or link line before any interface header', l.line, s.head.column, {
        expected: 'an interface header `INDEX: NAME: <FLAGS> …`',
        found: printable(s.head.text),
      });
      continue;
    }
    segmentInto(ctx, r.current, s, l.line, l.text);
  }
  const interfaces = r.done.map(finishIface);
  return { dump: { interfaces, unsupported }, diagnostics };
}

/** The interfaces read so far, by `INDEX NAME`, and the one the next lines belong to. */
interface Reading {
  readonly done: IfaceBuild[];
  readonly byKey: Map<string, IfaceBuild>;
  current: IfaceBuild | undefined;
}

/** Paste noise, an error message from ip, a line the grammar could not read. */
function skippedLine(ctx: Ctx, l: Exclude<AddrSyntaxLine, { kind: 'node' }>): void {
  if (l.kind === 'noise') {
    ctx.unsupported.push({ line: l.line, text: l.text, reason: `noise (${l.noise})` });
    report(ctx, 'info', 'input/noise', `skipped ${l.noise} line: ${printable(l.text.trim())}`, l.line, 1);
  } else if (l.kind === 'stderr') {
    ctx.unsupported.push({ line: l.line, text: l.text, reason: 'stderr message' });
    report(ctx, 'warning', 'input/stderr', `skipped an error message from ip: ${printable(l.text.trim())}`, l.line, 1);
  } else {
    const e = l.errors[0];
    ctx.unsupported.push({ line: l.line, text: l.text, reason: 'syntax error' });
    report(ctx, 'error', 'parse/unexpected-token', `cannot read this as an ip addr line: ${printable(e.message, 160)}`, l.line, e.column, {
      expected: e.expected,
      found: e.found === undefined ? undefined : printable(e.found),
    });
  }
}

/** `INDEX: NAME: <FLAGS> …` starts an interface; `ip -o addr` repeats it on each of its lines. */
function headerLine(ctx: Ctx, r: Reading, h: NonNullable<AddrLineNode['header']>, line: number): IfaceBuild {
  const oneLine = h.flags === undefined && !h.name.text.endsWith(':');
  if (oneLine) {
    // `ip -o addr`: one line per address; lines of one interface share INDEX: NAME.
    const key = `${h.index.text} ${h.name.text}`;
    let b = r.byKey.get(key);
    if (!b) {
      b = newIface(ctx, line, h.index, h.name);
      r.byKey.set(key, b);
      r.done.push(b);
    }
    r.current = b;
    return b;
  }
  const current = newIface(ctx, line, h.index, h.name);
  r.current = current;
  r.byKey.set(`${h.index.text} ${h.name.text.replace(/:$/, '').replace(/@.*$/, '')}`, current);
  r.done.push(current);
  if (h.flags) current.iface.flags = h.flags.text.slice(1, -1).split(',').filter(Boolean);
  headerWords(ctx, current, h.words, line);
  return current;
}

/** `ip -br addr`: NAME STATE ADDR/LEN… — false when the line is not one. */
function briefLine(ctx: Ctx, r: Reading, s: Segment, line: number): boolean {
  const state = s.words[0];
  if (!state || !BRIEF_STATES.has(state.text)) return false;
  const b = newIface(ctx, line, undefined, s.head);
  b.iface.state = state.text;
  const rest = s.words.slice(1);
  for (let i = 0; i < rest.length; i++) {
    const words = [rest[i]];
    if (rest[i + 1]?.text === 'peer' && rest[i + 2]) {
      words.push(rest[i + 1], rest[i + 2]);
      i += 2;
    }
    addrSegment(ctx, b, { kind: 'addr', head: { text: rest[i].text.includes(':') ? 'inet6' : 'inet', column: rest[i].column, endColumn: rest[i].column }, words }, line);
  }
  r.done.push(b);
  return true;
}

function segmentInto(ctx: Ctx, b: IfaceBuild, s: Segment, line: number, text: string): void {
  switch (s.kind) {
    case 'addr':
      addrSegment(ctx, b, s, line);
      break;
    case 'link':
      linkSegment(ctx, b, s, line);
      break;
    case 'lft':
      lftSegment(ctx, b, s, line);
      break;
    case 'altname':
      for (const w of s.words) b.altnames.push(w.text);
      break;
    case 'other': {
      if (kindLine(ctx, b, s, line)) break;
      // `ip -d`/`-s` detail lines (`veth numtxqueues 1 …`, `RX: bytes packets …`): understood, not modelled.
      const detail = [s.head, ...s.words].map((w) => w.text).join(' ');
      b.extra.details = [b.extra.details, detail].filter(Boolean).join(' ');
      ctx.unsupported.push({ line, text, reason: 'interface detail (ip -d / -s)' });
      report(ctx, 'info', 'ip-addr/detail', `interface detail kept as text in extra.details: ${printable(detail)}`, line, s.head.column);
      break;
    }
  }
}

function counts(d: AddrDump): Record<string, number> {
  return { interfaces: d.interfaces.length, addresses: d.interfaces.reduce((n, i) => n + i.addresses.length, 0) };
}

export const ipAddrParser: FormatParser<AddrDump> = {
  id: 'ip-addr',
  parse(text: string, file: string): ParsedInput<AddrDump> {
    const { dump, diagnostics } = extractIpAddr(text, file);
    return { format: 'ip-addr', file, data: dump, diagnostics, counts: counts(dump) };
  },
};

// ---------------------------------------------------------------------------------------------
// JSON

type Json = Record<string, unknown>;
const FOREVER = 4294967295;
const lft = (v: unknown): string | undefined => (typeof v === 'number' ? (v === FOREVER ? 'forever' : `${v}sec`) : undefined);
const JSON_ADDR_KNOWN = new Set(['family', 'local', 'address', 'prefixlen', 'broadcast', 'scope', 'label', 'valid_life_time', 'preferred_life_time']);

function jsonAddress(ctx: Ctx, o: Json, line: number, column: number): Mutable<InterfaceAddress> | undefined {
  const fam = o.family === 'inet6' ? 6 : o.family === 'inet' ? 4 : undefined;
  const local = typeof o.local === 'string' ? o.local : undefined;
  if (fam === undefined || local === undefined) {
    // Non-IP families (e.g. `mpls`) or malformed entries.
    ctx.unsupported.push({ line, text: printable(JSON.stringify(o), 200), reason: 'not an inet/inet6 address' });
    report(ctx, 'warning', 'ip-addr-json/unsupported-address', `address entry of family ${JSON.stringify(o.family)} skipped`, line, column);
    return undefined;
  }
  const prefix = typeof o.prefixlen === 'number' ? o.prefixlen : fam === 4 ? 32 : 128;
  const peer = typeof o.address === 'string' && o.address !== local ? o.address : undefined;
  const ip = parseIp(local);
  const cidr = parseCidr(`${peer ?? local}/${prefix}`);
  if (!ip || !cidr) {
    report(ctx, 'error', 'extract/bad-address', `address ${JSON.stringify(printable(local))}/${prefix} is not valid`, line, column);
    ctx.unsupported.push({ line, text: `${local}/${prefix}`, reason: 'bad address' });
    return undefined;
  }
  const flags = Object.entries(o)
    .filter(([k, v]) => !JSON_ADDR_KNOWN.has(k) && v === true)
    .map(([k]) => k);
  const a: Mutable<InterfaceAddress> = { family: fam, address: local, ip, prefix, cidr, flags, line };
  if (typeof o.scope === 'string') a.scope = o.scope;
  if (typeof o.label === 'string') a.label = o.label;
  if (typeof o.broadcast === 'string') a.brd = o.broadcast;
  if (peer) a.peer = peer;
  const v = lft(o.valid_life_time);
  const p = lft(o.preferred_life_time);
  if (v) a.validLft = v;
  if (p) a.preferredLft = p;
  return a;
}

const JSON_IFACE_KNOWN = new Set([
  'ifindex', 'link', 'ifname', 'flags', 'mtu', 'qdisc', 'master', 'operstate', 'group', 'txqlen', 'link_type', 'address', 'broadcast', 'altnames',
  'link_netnsid', 'link_netns', 'addr_info', 'linkinfo',
]);

/** `ip -d -j link`'s `linkinfo` object → LinkInfo (info_kind/info_data, info_slave_kind/info_slave_data). */
function jsonLinkInfo(o: Json, line: number, master: string | undefined): LinkInfo | undefined {
  const li = o.linkinfo;
  if (!li || typeof li !== 'object') return undefined;
  const l = li as Json;
  const info: Mutable<LinkInfo> = { line };
  const data = (l.info_data && typeof l.info_data === 'object' ? l.info_data : {}) as Json;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const numv = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const boolv = (v: unknown) => (typeof v === 'boolean' ? v : typeof v === 'number' ? v !== 0 : undefined);
  if (typeof l.info_kind === 'string') {
    info.kind = l.info_kind;
    if (l.info_kind === 'bridge') {
      const br: { nfCallIptables?: boolean; nfCallIp6tables?: boolean; vlanFiltering?: boolean } = {};
      const a = boolv(data.nf_call_iptables);
      const c = boolv(data.nf_call_ip6tables);
      const v = boolv(data.vlan_filtering);
      if (a !== undefined) br.nfCallIptables = a;
      if (c !== undefined) br.nfCallIp6tables = c;
      if (v !== undefined) br.vlanFiltering = v;
      info.bridge = br;
    } else if (l.info_kind !== 'veth') {
      const t = { id: numv(data.id), local: str(data.local), remote: str(data.remote), group: str(data.group), dev: str(data.link), dstport: numv(data.port) };
      const set = Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined));
      if (Object.keys(set).length) info.tunnel = set as LinkInfo['tunnel'];
    }
  }
  if (l.info_slave_kind === 'bridge' && l.info_slave_data && typeof l.info_slave_data === 'object') {
    const d = l.info_slave_data as Json;
    const port: { state?: string; hairpin?: boolean; learning?: boolean; line: number; bridge?: string } = { line };
    if (typeof d.state === 'string') port.state = d.state;
    const hp = boolv(d.hairpin);
    const le = boolv(d.learning);
    if (hp !== undefined) port.hairpin = hp;
    if (le !== undefined) port.learning = le;
    if (master) port.bridge = master;
    info.bridgePort = port;
  }
  if (typeof o.min_mtu === 'number') info.minMtu = o.min_mtu;
  if (typeof o.max_mtu === 'number') info.maxMtu = o.max_mtu;
  return info;
}

export function extractIpAddrJson(text: string, file: string): { dump: AddrDump; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const unsupported: Unsupported[] = [];
  const ctx: Ctx = { file, diagnostics, unsupported };
  const scan = scanJsonArray(text);
  for (const o of scan.outside) {
    unsupported.push({ line: o.line, text: o.text, reason: o.noise ? 'noise' : 'text outside the JSON array' });
    report(ctx, o.noise ? 'info' : 'warning', o.noise ? 'input/noise' : 'ip-addr-json/outside-json', `skipped line outside the JSON array: ${printable(o.text.trim())}`, o.line, 1);
  }
  const interfaces: NetInterface[] = [];
  if (scan.error || !scan.value) {
    const e = scan.error ?? { line: 1, column: 1, message: 'no JSON' };
    report(ctx, 'error', 'parse/bad-json', `cannot read ip -j addr output: ${printable(e.message.replace(/, ".*" is not valid JSON$/s, ''), 160)}`, e.line, e.column, { expected: 'a JSON array of interface objects' });
    return { dump: { interfaces, unsupported }, diagnostics };
  }
  scan.value.forEach((raw, idx) => {
    const pos = scan.elements[idx] ?? { line: 1, column: 1 };
    if (!raw || typeof raw !== 'object' || Array.isArray(raw) || typeof (raw as Json).ifname !== 'string') {
      report(ctx, 'error', 'ip-addr-json/not-an-interface', 'array element is not an interface object (no "ifname")', pos.line, pos.column, { expected: 'an object with "ifname"' });
      unsupported.push({ line: pos.line, text: printable(JSON.stringify(raw), 200), reason: 'not an interface' });
      return;
    }
    const o = raw as Json;
    const extra: Record<string, string> = {};
    for (const [k, v] of Object.entries(o)) if (!JSON_IFACE_KNOWN.has(k)) extra[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
    const i: Mutable<NetInterface> = {
      name: o.ifname as string,
      flags: Array.isArray(o.flags) ? o.flags.filter((f): f is string => typeof f === 'string') : [],
      addresses: [],
      extra,
      line: pos.line,
      file,
    };
    if (typeof o.ifindex === 'number') i.index = o.ifindex;
    if (typeof o.link === 'string') i.link = o.link;
    else if (typeof o.link_index === 'number') i.link = `if${o.link_index}`;
    if (typeof o.operstate === 'string') i.state = o.operstate;
    if (typeof o.mtu === 'number') i.mtu = o.mtu;
    if (typeof o.qdisc === 'string') i.qdisc = o.qdisc;
    if (typeof o.group === 'string') i.group = o.group;
    if (typeof o.txqlen === 'number') i.qlen = o.txqlen;
    if (typeof o.link_type === 'string') i.linkType = o.link_type;
    if (typeof o.address === 'string') {
      if (MAC.test(o.address)) i.mac = o.address;
      else extra.linkAddress = o.address;
    }
    if (typeof o.broadcast === 'string') extra.linkBrd = o.broadcast;
    if (typeof o.master === 'string') i.master = o.master;
    if (Array.isArray(o.altnames)) i.altnames = o.altnames.filter((x): x is string => typeof x === 'string');
    if (typeof o.link_netnsid === 'number') i.linkNetnsId = o.link_netnsid;
    if (typeof o.link_netns === 'string') i.linkNetns = o.link_netns;
    const li = jsonLinkInfo(o, pos.line, i.master);
    if (li) i.linkInfo = li;
    if (Array.isArray(o.addr_info)) {
      i.addresses = (o.addr_info as unknown[])
        .map((a) => (a && typeof a === 'object' ? jsonAddress(ctx, a as Json, pos.line, pos.column) : undefined))
        .filter((a): a is Mutable<InterfaceAddress> => a !== undefined);
    }
    interfaces.push(i);
  });
  return { dump: { interfaces, unsupported }, diagnostics };
}

export const ipAddrJsonParser: FormatParser<AddrDump> = {
  id: 'ip-addr-json',
  parse(text: string, file: string): ParsedInput<AddrDump> {
    const { dump, diagnostics } = extractIpAddrJson(text, file);
    return { format: 'ip-addr-json', file, data: dump, diagnostics, counts: counts(dump) };
  },
};
