/**
 * Small, dependency-free helpers for the dump generator: a seeded PRNG, kube-proxy's chain-name
 * hashes, address arithmetic/formatting, exact decimal formatting, and a chunked text writer.
 */
import { createHash } from 'node:crypto';

// ---------------------------------------------------------------------------------------------
// PRNG: sfc32 seeded through splitmix32. Same seed → same sequence on every platform.

export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number;
  /** true with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: T[]): T[];
  /** A derived, independent generator (for sub-streams that must not disturb this one). */
  fork(label: string): Rng;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}

export function createRng(seed: number): Rng {
  const sm = splitmix32(seed);
  let a = sm();
  let b = sm();
  let c = sm();
  let d = sm();
  const raw = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) raw();
  const rng: Rng = {
    next: () => raw() / 4294967296,
    int: (lo, hi) => lo + Math.floor((raw() / 4294967296) * (hi - lo + 1)),
    chance: (p) => raw() / 4294967296 < p,
    pick: (items) => items[Math.floor((raw() / 4294967296) * items.length)],
    shuffle: (items) => {
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor((raw() / 4294967296) * (i + 1));
        const t = items[i];
        items[i] = items[j];
        items[j] = t;
      }
      return items;
    },
    fork: (label) => createRng((raw() ^ hashLabel(label)) >>> 0),
  };
  return rng;
}

// ---------------------------------------------------------------------------------------------
// kube-proxy hashes (pkg/proxy/iptables/proxier.go portProtoHash / servicePortEndpointChainName,
// pkg/proxy/nftables/proxier.go hashAndTruncate): base32(sha256(s)) with the RFC 4648 alphabet.

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Prefix(bytes: Uint8Array, chars: number): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length && out.length < chars; i++) {
    buffer = ((buffer << 8) | bytes[i]) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += B32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

export function sha256Base32(s: string, chars: number): string {
  return base32Prefix(createHash('sha256').update(s).digest(), chars);
}

/** `portProtoHash(servicePortName, protocol)`: 16 chars. */
export function portProtoHash(servicePortName: string, protocol: string): string {
  return sha256Base32(servicePortName + protocol, 16);
}

/** `KUBE-SEP-` hash: sha256(servicePortName + protocol + endpoint)[:16]. */
export function endpointHash(servicePortName: string, protocol: string, endpoint: string): string {
  return sha256Base32(servicePortName + protocol + endpoint, 16);
}

// ---------------------------------------------------------------------------------------------
// Addresses. IPv4 as unsigned 32-bit numbers, IPv6 as bigint.

export function v4ToString(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export function v4FromString(s: string): number {
  const p = s.split('.').map(Number);
  return (((p[0] << 24) >>> 0) + (p[1] << 16) + (p[2] << 8) + p[3]) >>> 0;
}

/** RFC 5952 text form (lower case, longest zero run of ≥2 groups compressed, first on ties). */
export function v6ToString(v: bigint): string {
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((v >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number) => g.toString(16);
  if (bestStart < 0) return groups.map(hex).join(':');
  const head = groups.slice(0, bestStart).map(hex).join(':');
  const tail = groups.slice(bestStart + bestLen).map(hex).join(':');
  return `${head}::${tail}`;
}

export function v6FromString(s: string): bigint {
  let head = s;
  let tail = '';
  const dc = s.indexOf('::');
  if (dc >= 0) {
    head = s.slice(0, dc);
    tail = s.slice(dc + 2);
  }
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = dc >= 0 ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(parseInt(g, 16));
  return v;
}

export function isV6(ip: string): boolean {
  return ip.includes(':');
}

/** `ip/32` or `ip/128`, as iptables-save prints host addresses. */
export function hostCidr(ip: string): string {
  return isV6(ip) ? `${ip}/128` : `${ip}/32`;
}

/** Go's net.JoinHostPort: brackets around IPv6. */
export function joinHostPort(ip: string, port: number): string {
  return isV6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Does the CIDR text contain the address text (same family)? */
export function cidrContainsText(cidr: string, ip: string): boolean {
  const [net, lenText] = cidr.split('/');
  const len = Number(lenText);
  if (isV6(net) !== isV6(ip)) return false;
  if (isV6(ip)) {
    const mask = len === 0 ? 0n : ((1n << BigInt(len)) - 1n) << BigInt(128 - len);
    return (v6FromString(net) & mask) === (v6FromString(ip) & mask);
  }
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return ((v4FromString(net) & mask) >>> 0) === ((v4FromString(ip) & mask) >>> 0);
}

/** Numeric comparison of two address texts (IPv4 before IPv6). */
export function compareIp(a: string, b: string): number {
  const a6 = isV6(a);
  const b6 = isV6(b);
  if (a6 !== b6) return a6 ? 1 : -1;
  if (a6) {
    const x = v6FromString(a);
    const y = v6FromString(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return v4FromString(a) - v4FromString(b);
}

// ---------------------------------------------------------------------------------------------
// Exact decimal formatting (C printf / Go fmt semantics: exact binary value, round half to even).

function doubleToRational(x: number): { num: bigint; den: bigint } {
  if (x === 0) return { num: 0n, den: 1n };
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (exp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = exp - 1075;
  }
  return e >= 0 ? { num: mant << BigInt(e), den: 1n } : { num: mant, den: 1n << BigInt(-e) };
}

/** `%.<digits>f` of num/den (non-negative), rounding half to even on exact ties. */
export function formatRationalFixed(num: bigint, den: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const scaled = num * scale;
  let q = scaled / den;
  const r = scaled % den;
  const twice = r * 2n;
  if (twice > den || (twice === den && q % 2n === 1n)) q += 1n;
  const s = q.toString().padStart(digits + 1, '0');
  return digits === 0 ? s : `${s.slice(0, s.length - digits)}.${s.slice(s.length - digits)}`;
}

/** printf("%.<digits>f", x) for a non-negative double, exactly as glibc/Go print it. */
export function formatFixed(x: number, digits: number): string {
  const { num, den } = doubleToRational(x);
  return formatRationalFixed(num, den, digits);
}

const probabilityCache = new Map<number, string>();

/**
 * The `--probability` text iptables-save prints for kube-proxy's rule i of n (`1/(n-i)`):
 * kube-proxy writes `%0.10f` of 1/m; libxt_statistic stores `lround(p * 2^31)`; iptables prints
 * the stored value over 2^31 with `%.11f`.
 */
export function savedProbability(m: number): string {
  let s = probabilityCache.get(m);
  if (s === undefined) {
    const written = formatFixed(1 / m, 10);
    const stored = Math.round(Number(written) * 2147483648);
    s = formatRationalFixed(BigInt(stored), 2147483648n, 11);
    probabilityCache.set(m, s);
  }
  return s;
}

/** The `%0.10f` text kube-proxy itself writes for 1/m. */
export function kubeProxyProbability(m: number): string {
  return formatFixed(1 / m, 10);
}

// ---------------------------------------------------------------------------------------------
// Output: collect text in bounded chunks so 1M+ lines never become one giant concatenation.

export type Sink = (chunk: string) => void;

export class ChunkWriter {
  private parts: string[] = [];
  private size = 0;
  constructor(private readonly sink: Sink, private readonly limit = 1 << 20) {}
  line(s: string): void {
    this.parts.push(s, '\n');
    this.size += s.length + 1;
    if (this.size >= this.limit) this.flush();
  }
  /** Text that already ends with '\n' (or is empty). */
  raw(text: string): void {
    if (!text) return;
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= this.limit) this.flush();
  }
  lines(items: readonly string[]): void {
    for (const s of items) this.line(s);
  }
  flush(): void {
    if (this.parts.length) {
      this.sink(this.parts.join(''));
      this.parts = [];
      this.size = 0;
    }
  }
}

/** Run a streaming producer and return its output as one string. */
export function collect(produce: (sink: Sink) => void): string {
  const chunks: string[] = [];
  produce((c) => chunks.push(c));
  return chunks.join('');
}

/** iptables' xtables_save_string(): bare when [A-Za-z0-9_-]+, else quoted with \" \\ \' escaped. */
export function saveString(s: string): string {
  if (s.length > 0 && /^[A-Za-z0-9_-]+$/.test(s)) return s;
  return `"${s.replace(/["\\']/g, (c) => `\\${c}`)}"`;
}
