/**
 * kube-proxy's chain-name hashes (pkg/proxy/iptables/proxier.go portProtoHash and
 * servicePortEndpointChainName): base32(sha256(servicePortName + protocol [+ endpoint]))[:16].
 */
import * as crypto from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `ns/name:port` (or `ns/name` for an unnamed port), as ServicePortName.String() prints it. */
export function servicePortName(namespace: string, name: string, portName: string | null): string {
  return portName ? `${namespace}/${name}:${portName}` : `${namespace}/${name}`;
}

// crypto.hash (Node ≥ 20.12) is the one-shot form: one call per endpoint adds up at 10k Services.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'buffer') => Buffer }).hash;
export const sha256 = (text: string): Buffer => (oneShot ? oneShot('sha256', text, 'buffer') : crypto.createHash('sha256').update(text).digest());

export function portProtoHash(spn: string, protocol: string): string {
  return base32(sha256(spn + protocol.toLowerCase())).slice(0, 16);
}

export function endpointHash(spn: string, protocol: string, endpoint: string): string {
  return base32(sha256(spn + protocol.toLowerCase() + endpoint)).slice(0, 16);
}
