/**
 * kube-proxy's chain-name hashes (pkg/proxy/iptables/proxier.go portProtoHash and
 * servicePortEndpointChainName): base32(sha256(servicePortName + protocol [+ endpoint]))[:16].
 */
import * as crypto from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * RFC 4648 base32 (no padding) of `bytes` — a Uint8Array, or a latin1 string with a character per
 * byte (the cheap digest form below) — cut at `chars` characters: only those are encoded.
 */
export function base32(bytes: Uint8Array | string, chars = Infinity): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (let i = 0; i < bytes.length && out.length < chars; i++) {
    value = ((value << 8) | (typeof bytes === 'string' ? bytes.charCodeAt(i) : bytes[i])) & 0xfff; // at most 4 + 8 pending bits
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      bits -= 5;
      out += ALPHABET[(value >>> bits) & 31];
    }
  }
  if (bits > 0 && out.length < chars) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `ns/name:port` (or `ns/name` for an unnamed port), as ServicePortName.String() prints it. */
export function servicePortName(namespace: string, name: string, portName: string | null): string {
  return portName ? `${namespace}/${name}:${portName}` : `${namespace}/${name}`;
}

/**
 * Every form ServicePortName.String() has had, which the chain hashes are computed over: today
 * `ns/name` for an unnamed port (fmtPortName), but up to about 1.9 `fmt.Sprintf("%s:%s", …)`
 * kept the colon (`ns/name:`). A named port has always been `ns/name:port`. The current form first.
 */
export function servicePortNameGenerations(namespace: string, name: string, portName: string | null): readonly string[] {
  return portName ? [`${namespace}/${name}:${portName}`] : [`${namespace}/${name}`, `${namespace}/${name}:`];
}

// crypto.hash (Node ≥ 20.12) is the one-shot form: one call per endpoint adds up at 10k Services.
type OneShot = (alg: string, data: string, enc: 'buffer' | 'latin1') => Buffer | string;
const oneShot = (crypto as { hash?: OneShot }).hash;
export const sha256 = (text: string): Buffer => (oneShot ? (oneShot('sha256', text, 'buffer') as Buffer) : crypto.createHash('sha256').update(text).digest());

// The digest as a latin1 string (a character per byte): several times cheaper per call than a
// Buffer, whose allocation dominates hashing short names (~90k endpoint names at 10k Services).
const sha256Latin1 = (text: string): string => (oneShot ? (oneShot('sha256', text, 'latin1') as string) : crypto.createHash('sha256').update(text).digest('binary')); // binary = latin1

export function portProtoHash(spn: string, protocol: string): string {
  return base32(sha256Latin1(spn + protocol.toLowerCase()), 16);
}

export function endpointHash(spn: string, protocol: string, endpoint: string): string {
  return base32(sha256Latin1(spn + protocol.toLowerCase() + endpoint), 16);
}
