/**
 * How nft stores (and then lists) address intervals: an anonymous set of addresses, prefixes
 * and ranges becomes the merged list of the intervals it covers, each printed as an address (a
 * host), a prefix (an aligned power-of-two block) or `a-b` (nftables src/segtree.c: interval
 * sets are merged into non-overlapping ranges; `{ 10.0.0.0/24, 10.0.1.0/24, 10.0.2.7/32,
 * 10.0.2.8 }` lists as `{ 10.0.0.0/23, 10.0.2.7-10.0.2.8 }`).
 */
import { formatCidr, formatIp, parseCidr, parseIp, type Family } from '../model/addr.js';

const BITS: Record<Family, bigint> = { 4: 32n, 6: 128n };
const ADDRESS_SHAPED = /^(\d+\.\d+\.\d+\.\d+|[0-9a-fA-F]*:[0-9a-fA-F:.]*)(\/\d+)?$/;

/** An address value as nft prints it: host bits cleared, a host prefix as the bare address. */
export function canonicalAddress(text: string): string | undefined {
  // Most values are ports, protocols and names: only address-shaped text goes to the parser.
  if (!ADDRESS_SHAPED.test(text)) return undefined;
  const c = parseCidr(text);
  if (!c) return undefined;
  return BigInt(c.prefix) === BITS[c.family] ? formatIp({ family: c.family, value: c.network }) : formatCidr(c);
}

function interval(text: string): { family: Family; start: bigint; end: bigint } | undefined {
  const dash = text.indexOf('-');
  if (dash > 0 && !text.includes('/')) {
    const a = parseIp(text.slice(0, dash));
    const b = parseIp(text.slice(dash + 1));
    if (!a || !b || a.family !== b.family || a.value > b.value) return undefined;
    return { family: a.family, start: a.value, end: b.value };
  }
  const c = parseCidr(text);
  if (!c) return undefined;
  const size = 1n << (BITS[c.family] - BigInt(c.prefix));
  return { family: c.family, start: c.network, end: c.network + size - 1n };
}

function print(family: Family, start: bigint, end: bigint): string {
  const size = end - start + 1n;
  let len = BITS[family];
  let block = 1n;
  while (block < size) {
    block <<= 1n;
    len -= 1n;
  }
  if (block === size && start % size === 0n) return len === BITS[family] ? formatIp({ family, value: start }) : formatCidr({ family, network: start, prefix: Number(len) });
  return `${formatIp({ family, value: start })}-${formatIp({ family, value: end })}`;
}

/** The merged, printed intervals of these keys, or undefined when they are not all addresses of one family. */
export function mergeAddressIntervals(keys: readonly string[]): string[] | undefined {
  const ivs = keys.map(interval);
  if (ivs.length === 0 || ivs.some((x) => x === undefined) || new Set(ivs.map((x) => x!.family)).size !== 1) return undefined;
  const family = ivs[0]!.family;
  const sorted = (ivs as { start: bigint; end: bigint }[]).slice().sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: { start: bigint; end: bigint }[] = [];
  for (const iv of sorted) {
    const last = merged[merged.length - 1];
    if (last && iv.start <= last.end + 1n) {
      if (iv.end > last.end) last.end = iv.end;
    } else merged.push({ ...iv });
  }
  return merged.map((m) => print(family, m.start, m.end));
}
