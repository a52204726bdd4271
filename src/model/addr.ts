/**
 * IP addresses and prefixes. Parsing is ipaddr.js's (IPv6 text forms are easy to get wrong);
 * kpx keeps a compact form, a bigint per address, so prefix tests are cheap and exact.
 */
import ipaddr from 'ipaddr.js';

export type Family = 4 | 6;

export interface Ip {
  readonly family: Family;
  readonly value: bigint;
}

export interface Cidr {
  readonly family: Family;
  /** Network address with host bits cleared. */
  readonly network: bigint;
  readonly prefix: number;
}

const BITS: Record<Family, number> = { 4: 32, 6: 128 };

function toBigInt(bytes: number[]): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** Parse an IPv4 or IPv6 address (no prefix). Brackets around IPv6 are accepted. */
export function parseIp(text: string): Ip | undefined {
  let t = text;
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  const pct = t.indexOf('%');
  if (pct >= 0) t = t.slice(0, pct);
  if (ipaddr.IPv4.isValidFourPartDecimal(t)) {
    return { family: 4, value: toBigInt(ipaddr.IPv4.parse(t).toByteArray()) };
  }
  if (t.includes(':') && ipaddr.IPv6.isValid(t)) {
    return { family: 6, value: toBigInt(ipaddr.IPv6.parse(t).toByteArray()) };
  }
  return undefined;
}

/** Masks by family and prefix, made once: cidrContains() is asked per route per address. */
const MASKS: Record<Family, bigint[]> = { 4: [], 6: [] };

function maskOf(family: Family, prefix: number): bigint {
  if (prefix <= 0) return 0n;
  const table = MASKS[family];
  let m = table[prefix];
  if (m === undefined) {
    const bits = BITS[family];
    m = ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
    if (Number.isInteger(prefix) && prefix <= bits) table[prefix] = m;
  }
  return m;
}

/** Dotted IPv4 netmask → prefix length, or undefined when not contiguous. */
function dottedMaskToPrefix(mask: string): number | undefined {
  const ip = parseIp(mask);
  if (!ip || ip.family !== 4) return undefined;
  const ones = ip.value.toString(2).replace(/^0+/, '');
  if (ip.value === 0n) return 0;
  if (ones.length !== 32 || /01/.test(ones)) return undefined;
  return ones.indexOf('0') < 0 ? 32 : ones.indexOf('0');
}

/**
 * Parse `ADDR`, `ADDR/LEN` or `ADDR/DOTTED-MASK`. A bare address is a host prefix.
 * Host bits are cleared, as the kernel does when it stores a rule.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const addr = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!addr) return undefined;
  const bits = BITS[addr.family];
  let prefix = bits;
  if (slash >= 0) {
    const m = text.slice(slash + 1);
    if (/^\d{1,3}$/.test(m)) prefix = Number(m);
    else if (addr.family === 4) {
      const p = dottedMaskToPrefix(m);
      if (p === undefined) return undefined;
      prefix = p;
    } else return undefined;
    if (prefix > bits) return undefined;
  }
  return { family: addr.family, prefix, network: addr.value & maskOf(addr.family, prefix) };
}

export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  return cidr.family === ip.family && (ip.value & maskOf(cidr.family, cidr.prefix)) === cidr.network;
}

export function ipEquals(a: Ip, b: Ip): boolean {
  return a.family === b.family && a.value === b.value;
}

export function formatIp(ip: Ip): string {
  if (ip.family === 4) {
    const v = Number(ip.value);
    return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
  }
  const bytes: number[] = [];
  let v = ip.value;
  for (let i = 0; i < 16; i++) {
    bytes.unshift(Number(v & 255n));
    v >>= 8n;
  }
  return ipaddr.fromByteArray(bytes).toString();
}

export function formatCidr(c: Cidr): string {
  return `${formatIp({ family: c.family, value: c.network })}/${c.prefix}`;
}

/** `ip:port` with IPv6 in brackets, as kube-proxy and conntrack users write it. */
export function formatHostPort(ip: string, port: number | undefined): string {
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return port === undefined ? host : `${host}:${port}`;
}

/**
 * Split `ADDR:PORT`, `[V6]:PORT`, `ADDR` into parts. Returns undefined for text that is
 * not an address (e.g. a redaction placeholder).
 */
export function splitHostPort(text: string): { ip: Ip; host: string; port?: number; portEnd?: number } | undefined {
  let host = text;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest.startsWith(':')) portText = rest.slice(1);
    else if (rest !== '') return undefined;
  } else {
    const colons = text.split(':').length - 1;
    if (colons === 1) {
      const i = text.indexOf(':');
      host = text.slice(0, i);
      portText = text.slice(i + 1);
    }
  }
  const ip = parseIp(host);
  if (!ip) return undefined;
  if (portText === undefined) return { ip, host };
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(portText);
  if (!m) return undefined;
  const port = Number(m[1]);
  const portEnd = m[2] === undefined ? undefined : Number(m[2]);
  if (port > 65535 || (portEnd !== undefined && portEnd > 65535)) return undefined;
  return portEnd === undefined ? { ip, host, port } : { ip, host, port, portEnd };
}
