/**
 * Keyed, prefix-preserving address permutation (the Crypto-PAn construction with HMAC-SHA256 as
 * the pseudo-random function): output bit i = input bit i XOR f(key, first i input bits). Two
 * addresses that share their first n bits map to addresses that share exactly their first n
 * bits, so subnets stay subnets, containment and prefix lengths are kept, and the map is a
 * bijection (same input → same output, different inputs → different outputs).
 *
 * Address classes that carry meaning for the dataplane are kept:
 *  - verbatim: 0.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16, 224.0.0.0/3 (multicast, reserved,
 *    broadcast, and dotted netmasks), ::, ::1, ff00::/8;
 *  - block kept, rest permuted: 10/8, 172.16/12, 192.168/16, 100.64/10, 198.18/15, the
 *    documentation nets, fe80::/64, fc00::/7, 2001:db8::/32, ::ffff:0:0/96.
 * A block is kept by never flipping a bit while the input is still inside the block's prefix;
 * the map stays a bijection and maps each block onto itself. Addresses outside every block
 * keep the few leading bits they share with the blocks (a documented leak, see docs/commands/redact.md).
 *
 * Networks stay networks, and a network's own address stays its network's address: a network
 * learned before mapping (learnNetwork: every `addr/len` of the bundle with its host bits zero)
 * never has a bit flipped below its prefix along its own all-zero path (nor its all-one path: the
 * broadcast address stays the broadcast address), so `10.244.0.0` maps to the mapped network's
 * first address wherever it appears (`10.244.0.0/24 via 10.244.0.0`, as
 * flannel writes routes, stays a route via the network's own address). Any choice of flips gives
 * a prefix-preserving bijection; this one only fixes the flips on those paths.
 */
import { createHmac } from 'node:crypto';
import { formatIp, parseIp, type Ip } from '../model/addr.js';

interface Block {
  readonly family: 4 | 6;
  readonly value: bigint;
  readonly prefix: number;
}

function block(text: string): Block {
  const [addr, len] = text.split('/');
  const ip = parseIp(addr)!;
  return { family: ip.family, value: ip.value, prefix: Number(len) };
}

const VERBATIM: readonly Block[] = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '224.0.0.0/3', '::/127', 'ff00::/8'].map(block);
const KEPT: readonly Block[] = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '198.18.0.0/15',
  '192.0.2.0/24',
  '198.51.100.0/24',
  '203.0.113.0/24',
  'fe80::/64',
  'fc00::/7',
  '2001:db8::/32',
  '::ffff:0:0/96',
].map(block);

const bitsOf = (f: 4 | 6) => (f === 4 ? 32 : 128);

function inBlock(ip: Ip, b: Block): boolean {
  if (ip.family !== b.family) return false;
  const shift = BigInt(bitsOf(b.family) - b.prefix);
  return ip.value >> shift === b.value >> shift;
}

export class IpMapper {
  private readonly cache = new Map<string, bigint>();
  private readonly bitCache = new Map<string, number>();
  /** `family/len/prefix` of every prefix on a learned network's all-zero (or all-one) host path: never flipped. */
  private readonly zeroPaths = new Set<string>();

  constructor(private readonly key: string) {}

  /**
   * A network seen in the inputs (host bits zero): its address will map to the mapped network's
   * address. Must be called before any address is mapped (the map is fixed by its first use).
   */
  learnNetwork(addr: string, len: number): void {
    const ip = parseIp(addr);
    if (!ip || this.cache.size > 0) return;
    const bits = bitsOf(ip.family);
    if (len <= 0 || len >= bits) return;
    const hostMask = (1n << BigInt(bits - len)) - 1n;
    if ((ip.value & hostMask) !== 0n) return;
    // The network's address and its broadcast address (all host bits one) both stay what they are for the mapped network.
    for (const end of [ip.value, ip.value | hostMask]) for (let l = len; l < bits; l++) this.zeroPaths.add(`${ip.family}/${l}/${(end >> BigInt(bits - l)).toString(16)}`);
  }

  /** Is the first `len` bits of `value` a proper prefix of a kept/verbatim block's prefix? */
  private frozen(family: 4 | 6, value: bigint, len: number): boolean {
    const bits = bitsOf(family);
    for (const b of [...VERBATIM, ...KEPT]) {
      if (b.family !== family || len >= b.prefix) continue;
      const shift = BigInt(bits - len);
      if (len === 0 || value >> shift === b.value >> shift) return true;
    }
    return false;
  }

  private flip(family: 4 | 6, value: bigint, len: number): number {
    const bits = bitsOf(family);
    const prefix = len === 0 ? 0n : value >> BigInt(bits - len);
    const k = `${family}/${len}/${prefix.toString(16)}`;
    let f = this.bitCache.get(k);
    if (f === undefined) {
      f = this.frozen(family, value, len) || this.zeroPaths.has(k) ? 0 : createHmac('sha256', this.key).update(`ip|${k}`).digest()[0] & 1;
      this.bitCache.set(k, f);
    }
    return f;
  }

  map(ip: Ip): Ip {
    if (VERBATIM.some((b) => inBlock(ip, b))) return ip;
    const ck = `${ip.family}|${ip.value.toString(16)}`;
    const hit = this.cache.get(ck);
    if (hit !== undefined) return { family: ip.family, value: hit };
    const bits = bitsOf(ip.family);
    let out = 0n;
    for (let i = 0; i < bits; i++) {
      const bit = Number((ip.value >> BigInt(bits - 1 - i)) & 1n);
      out = (out << 1n) | BigInt(bit ^ this.flip(ip.family, ip.value, i));
    }
    this.cache.set(ck, out);
    return { family: ip.family, value: out };
  }

  /** Map an address written as text; undefined when it is not an address. */
  mapText(text: string): string | undefined {
    const ip = parseIp(text);
    if (!ip) return undefined;
    return formatIp(this.map(ip));
  }

  /**
   * Map `addr/len`: a network (host bits zero) stays a network with the same prefix length (the
   * mapped address with its host bits cleared: every address inside maps inside it); an
   * interface address (`10.244.1.1/24`) is mapped as an address.
   */
  mapCidrText(addr: string, len: number): string | undefined {
    const ip = parseIp(addr);
    if (!ip) return undefined;
    const bits = bitsOf(ip.family);
    if (len < 0 || len > bits) return undefined;
    const hostMask = len === bits ? 0n : (1n << BigInt(bits - len)) - 1n;
    const mapped = this.map(ip);
    if ((ip.value & hostMask) === 0n && len < bits) return `${formatIp({ family: ip.family, value: mapped.value & ~hostMask })}/${len}`;
    return `${formatIp(mapped)}/${len}`;
  }
}
