/**
 * nftables identity: kube-proxy's object names (proxier.go constants) and the per-Service-port /
 * per-endpoint chain and set names `<role>-<HASH8>-ns/svc/proto/portname[__IP/PORT]`, which carry the
 * Service port in clear behind the hash of the rest (hashAndTruncate()).
 */
import type { NftTable } from '../../model/nft.js';
import { parseIp } from '../../model/addr.js';
import { base32, sha256 } from '../hash.js';
import { problem } from '../problems.js';
import type { Protocol } from '../types.js';

/** kube-proxy's nftables object names (proxier.go constants). */
export const nftNames = {
  table: 'kube-proxy',
  servicesChain: 'services',
  serviceIPsMap: 'service-ips',
  serviceNodePortsMap: 'service-nodeports',
  nodePortIPsSet: 'nodeport-ips',
  clusterIPsSet: 'cluster-ips',
  clusterIPsCheckChain: 'cluster-ips-check',
  noEndpointServicesMap: 'no-endpoint-services',
  noEndpointNodePortsMap: 'no-endpoint-nodeports',
  rejectChain: 'reject-chain',
  firewallIPsMap: 'firewall-ips',
  markMasqChain: 'mark-for-masquerade',
} as const;

export type NftChainRole = 'service' | 'local' | 'external' | 'firewall' | 'endpoint' | 'affinity';

export interface NftObjectName {
  readonly role: NftChainRole;
  readonly hash: string;
  /** Everything after `<role>-<HASH>-`: what the hash is computed over. */
  readonly hashed: string;
  /** `ns/svc/proto/portname` (the Service port part), when the name parses. */
  readonly key: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly protocol?: Protocol;
  readonly portName?: string | null;
  /** Endpoint / affinity names: the endpoint from the name (IPv6 `.` turned back into `:`). */
  readonly endpointIp?: string;
  readonly endpointPort?: number;
  /** The name was cut by hashAndTruncate (ends with `...`). */
  readonly truncated: boolean;
}

const OBJECT_NAME = /^(service|local|external|firewall|endpoint|affinity)-([A-Z2-7]+)-(.+)$/;
const NAME_PROTOCOL = /^(tcp|udp|sctp)$/;
const NAME_ENDPOINT = /^(.+)\/(\d{1,5})$/;
/** A dotted-quad IPv4 address as parseIp() accepts it (no leading zeros, octets ≤ 255). */
const DOTTED_QUAD = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** parseIp(text) !== undefined, without parsing the common IPv4 case into a BigInt. */
export function isIpText(text: string): boolean {
  return DOTTED_QUAD.test(text) || parseIp(text) !== undefined;
}

/**
 * Parse a per-Service-port / per-endpoint chain or set name. Called for every chain and map
 * target (200k names at 10k Services): each result is one object literal, never a spread of
 * another object plus fields (V8 builds those through a slow path, microseconds apiece).
 */
export function parseNftObjectName(text: string): NftObjectName | undefined {
  const m = OBJECT_NAME.exec(text);
  if (!m) return undefined;
  const role = m[1] as NftChainRole;
  const hash = m[2];
  const hashed = m[3];
  const truncated = hashed.endsWith('...');
  const perEndpoint = role === 'endpoint' || role === 'affinity';
  const sep = perEndpoint ? hashed.lastIndexOf('__') : -1;
  const key = sep >= 0 ? hashed.slice(0, sep) : hashed;
  const parts = key.split('/');
  if (parts.length !== 4 || !NAME_PROTOCOL.test(parts[2]) || !parts[0] || !parts[1]) return { role, hash, hashed, truncated, key };
  const namespace = parts[0];
  const name = parts[1];
  const protocol = parts[2] as Protocol;
  const portName = parts[3] === '' ? null : parts[3];
  if (sep >= 0) {
    const ep = NAME_ENDPOINT.exec(hashed.slice(sep + 2));
    if (ep) {
      const ipText = ep[1].split('.').length === 4 && /^[\d.]+$/.test(ep[1]) ? ep[1] : ep[1].replaceAll('.', ':');
      if (isIpText(ipText)) return { role, hash, hashed, truncated, key, namespace, name, protocol, portName, endpointIp: ipText, endpointPort: Number(ep[2]) };
    }
  }
  return { role, hash, hashed, truncated, key, namespace, name, protocol, portName };
}

/** base32(sha256(name))[:8], kube-proxy's hashAndTruncate() prefix. */
export function nftNameHash(name: string): string {
  // Only the 8 characters kept are encoded (base32 of the whole digest is 52).
  return base32(sha256(name), 8);
}

/** A table kube-proxy's nftables proxier wrote (or a pasted fragment of one). */
export function isKubeProxyNftTable(t: NftTable): boolean {
  if (t.fromIptablesNft) return false;
  if (t.name === nftNames.table && (t.family === 'ip' || t.family === 'ip6')) return true;
  if (!t.implicit) return false;
  return t.sets.some((s) => s.name === nftNames.serviceIPsMap || s.name === nftNames.serviceNodePortsMap) || t.chains.some((c) => parseNftObjectName(c.name)?.role === 'service');
}

/** Whether the chain and set names' hashes are what kube-proxy computes over the names (null: none checked). */
export class HashCheck {
  verified: boolean | null = null;
  constructor(private readonly problems: { push(p: ReturnType<typeof hashMismatch>): unknown }) {}

  verify(chainName: string, n: NftObjectName | undefined): void {
    if (!n || n.truncated) return;
    const want = nftNameHash(n.hashed);
    if (n.hash === want) this.verified ??= true;
    else {
      this.verified = false;
      this.problems.push(hashMismatch(chainName, n.hash, want));
    }
  }
}

function hashMismatch(chain: string, hash: string, expected: string) {
  return problem('nft-hash-mismatch', { chain, hash, expected });
}
