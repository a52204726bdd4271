/**
 * Argument values of iptables rules as iptables and the kernel read them: addresses, protocols,
 * ports, marks, NAT destinations, probabilities. Shared by the grammar's reading of a rule
 * (iptables-rule.ts) and the token-free reading of kube-proxy's lines (iptables-kube-lines.ts), so
 * both make the same values.
 */
import { parseUint32 } from '../../grammars/iptables-save/getopt.js';
import { parseCidr, type Cidr } from '../model/addr.js';
import type { NatTo, PortRange } from '../model/netfilter.js';

/** `a.b.c.d` or `a.b.c.d/n` as iptables-save prints IPv4 addresses (no leading zeros). */
const IPV4_CIDR = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})(?:\/(\d{1,3}))?$/;

/**
 * parseCidr() with a fast path for the IPv4 forms that fill big dumps (ipaddr.js is exact but
 * slow for 100k addresses); anything else goes to parseCidr, so results are the same.
 */
function readCidr(text: string): Cidr | undefined {
  const m = IPV4_CIDR.exec(text);
  if (m === null) return parseCidr(text);
  const a = Number(m[1]);
  const b = Number(m[2]);
  const c = Number(m[3]);
  const d = Number(m[4]);
  if (a > 255 || b > 255 || c > 255 || d > 255) return parseCidr(text);
  const prefix = m[5] === undefined ? 32 : Number(m[5]);
  if (prefix > 32) return undefined;
  const value = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { family: 4, prefix, network: BigInt((value & mask) >>> 0) };
}

/**
 * `-s`/`-d ADDRESS`: the address is read as a CIDR when first asked for. A 10k-Service dump holds
 * 130k of them and `kpx services` looks at a tenth (the dispatch and firewall rules'); reading the
 * rest was a regex, an object and a BigInt each (issue 20). Read-only like every match; JSON
 * shows the fields it always showed.
 */
export class AddressMatch {
  readonly kind = 'address' as const;
  readonly dir: 'src' | 'dst';
  readonly negated: boolean;
  readonly text: string;
  /** null: not read yet. */
  #cidr: Cidr | undefined | null = null;

  constructor(dir: 'src' | 'dst', negated: boolean, text: string) {
    this.dir = dir;
    this.negated = negated;
    this.text = text;
  }

  get cidr(): Cidr | undefined {
    if (this.#cidr === null) this.#cidr = readCidr(this.text);
    return this.#cidr;
  }

  toJSON(): Record<string, unknown> {
    const cidr = this.cidr;
    return cidr ? { kind: this.kind, dir: this.dir, negated: this.negated, text: this.text, cidr } : { kind: this.kind, dir: this.dir, negated: this.negated, text: this.text };
  }
}

const PROTOCOL_NUMBERS: Record<string, string> = { '1': 'icmp', '6': 'tcp', '17': 'udp', '132': 'sctp', '58': 'ipv6-icmp', '33': 'dccp', '136': 'udplite' };

export function normalizeProtocol(p: string): string {
  const lower = p.toLowerCase();
  return PROTOCOL_NUMBERS[lower] ?? (lower === 'icmpv6' ? 'ipv6-icmp' : lower);
}

export function parsePortRange(text: string): PortRange | undefined {
  const m = /^(\d*)(?::(\d*))?$/.exec(text);
  if (!m) return undefined;
  if (m[2] === undefined) {
    if (m[1] === '') return undefined;
    const p = Number(m[1]);
    return p <= 65535 ? { from: p, to: p } : undefined;
  }
  const from = m[1] === '' ? 0 : Number(m[1]);
  const to = m[2] === '' ? 65535 : Number(m[2]);
  return from <= to && to <= 65535 ? { from, to } : undefined;
}

export function parsePortList(text: string): PortRange[] | undefined {
  const out: PortRange[] = [];
  for (const part of text.split(',')) {
    const r = parsePortRange(part);
    if (!r) return undefined;
    out.push(r);
  }
  return out.slice();
}

/** A mark as xtables reads it (strtoul base 0: `0x…` hex, a leading `0` octal, else decimal). */
export function parseNumber(text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseUint32(text);
}

/** `VALUE[/MASK]` as iptables prints marks. */
export function parseMark(text: string): { value: number; mask: number } | undefined {
  const [v, m] = text.split('/');
  const value = parseNumber(v);
  const mask = m === undefined ? 0xffffffff : parseNumber(m);
  if (value === undefined || mask === undefined) return undefined;
  return { value: value >>> 0, mask: mask >>> 0 };
}

/** DNAT/SNAT `--to-destination` forms: `1.2.3.4`, `1.2.3.4:80`, `1.2.3.4-1.2.3.9:80-90`, `[v6]:53`, `:80`. */
export function parseNatTo(text: string): NatTo {
  let host = text;
  let ports: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    host = text.slice(1, close < 0 ? undefined : close);
    const rest = close < 0 ? '' : text.slice(close + 1);
    if (rest.startsWith(':')) ports = rest.slice(1);
  } else if (text.indexOf(':') >= 0 && text.indexOf(':') === text.lastIndexOf(':')) {
    const i = text.indexOf(':');
    host = text.slice(0, i);
    ports = text.slice(i + 1);
  }
  const dash = host.indexOf('-');
  const ip = dash < 0 ? host : host.slice(0, dash);
  const ipEnd = dash < 0 ? undefined : host.slice(dash + 1, host.indexOf('-', dash + 1) < 0 ? undefined : host.indexOf('-', dash + 1));
  let port: number | undefined;
  let portEnd: number | undefined;
  if (ports !== undefined) {
    const pm = /^(\d+)(?:-(\d+))?/.exec(ports);
    if (pm) {
      port = Number(pm[1]);
      if (pm[2] !== undefined) portEnd = Number(pm[2]);
    }
  }
  // One shape for every NatTo (86k DNATs at 10k Services): absent parts are undefined fields,
  // which JSON leaves out as it left out the fields that were not added.
  return { text, ip: ip || undefined, ipEnd: ipEnd || undefined, port, portEnd };
}

/**
 * The kernel keeps a probability as a 31-bit fraction (libxt_statistic: lround(p × 2³¹)), and
 * iptables-save prints that with 11 decimals: `0.3333333333` and `0.33333333349` are one value.
 */
export function kernelProbability(p: number): number {
  return Number.isFinite(p) ? Math.round(p * 0x80000000) / 0x80000000 : p;
}
