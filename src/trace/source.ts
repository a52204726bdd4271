/**
 * Who sends the traced packet: a pod (an address in the pod network kube-proxy's rules reveal),
 * the node itself, an external client, or a given address — and the facts of a snapshot that
 * choice needs, computed once per snapshot.
 */
import { cidrContains, formatCidr, formatIp, parseCidr, parseIp, type Cidr, type Ip } from '../model/addr.js';
import { lookupRoute } from '../model/route.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { isLocalAddress, type TraceContext } from './context.js';
import type { TraceAssumption } from './types.js';

export type SourceSpec = 'pod' | 'external' | 'node' | { readonly ip: string };

export class TraceInputError extends Error {}

/** Facts of a snapshot every trace needs; computed once per snapshot, not per trace (10k-Service dumps). */
interface SnapshotFacts {
  readonly clusterCidr: Partial<Record<4 | 6, Cidr>>;
  readonly dnatTargets: ReadonlySet<string>;
}
const factsCache = new WeakMap<NodeSnapshot, SnapshotFacts>();

function snapshotFacts(snapshot: NodeSnapshot): SnapshotFacts {
  let f = factsCache.get(snapshot);
  if (f) return f;
  const clusterCidr: Partial<Record<4 | 6, Cidr>> = {};
  const dnat = new Set<string>();
  for (const rs of snapshot.rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        const detector = t.name === 'nat' && (c.name.startsWith('KUBE-SVC-') || c.name.startsWith('KUBE-EXT-')) && clusterCidr[rs.family] === undefined;
        for (const r of c.rules) {
          if (r.target?.kind === 'dnat' && r.target.to[0]?.ip) dnat.add(r.target.to[0].ip);
          if (!detector || clusterCidr[rs.family] !== undefined) continue;
          // kube-proxy's local detector: `! -s CLUSTER-CIDR … -j KUBE-MARK-MASQ` (or `-s CIDR` in KUBE-EXT).
          const src = r.matches.find((m) => m.kind === 'address' && m.dir === 'src');
          if (src && src.kind === 'address' && src.cidr && src.cidr.prefix < (rs.family === 4 ? 32 : 128)) clusterCidr[rs.family] = src.cidr;
        }
      }
    }
  }
  nftPodNetwork(snapshot, clusterCidr, dnat);
  f = { clusterCidr, dnatTargets: dnat };
  factsCache.set(snapshot, f);
  return f;
}

/**
 * kube-proxy's nftables local detector: `ip saddr != CLUSTER-CIDR jump mark-for-masquerade` in its
 * service-/external- chains; and the nft DNAT targets, so a pod source is not taken from them.
 */
function nftPodNetwork(snapshot: NodeSnapshot, clusterCidr: Partial<Record<4 | 6, Cidr>>, dnat: Set<string>): void {
  for (const n of snapshot.nft) {
    for (const t of n.tables) {
      if (t.fromIptablesNft) continue;
      for (const c of t.chains) {
        const detector = c.name.startsWith('service-') || c.name.startsWith('external-');
        for (const r of c.rules) {
          for (const e of r.exprs) if (e.kind === 'dnat' && e.to?.addr) dnat.add(e.to.addr.split('-')[0]);
          if (!detector || !r.exprs.some((e) => e.kind === 'verdict' && e.verdict === 'jump' && e.chain === 'mark-for-masquerade')) continue;
          for (const e of r.exprs) {
            if (e.kind !== 'match' || e.op !== '!=' || e.left.kind !== 'payload' || e.left.field !== 'saddr' || e.right.kind !== 'value') continue;
            const cidr = parseCidr(e.right.text);
            if (cidr && clusterCidr[cidr.family] === undefined && cidr.prefix < (cidr.family === 4 ? 32 : 128)) clusterCidr[cidr.family] = cidr;
          }
        }
      }
    }
  }
}

/** The pod network the rules reveal: kube-proxy's `! -s CIDR … -j KUBE-MARK-MASQ` (nft: `ip saddr != CIDR jump mark-for-masquerade`) local detector. */
export function clusterCidrFromRules(snapshot: NodeSnapshot, family: 4 | 6): Cidr | undefined {
  return snapshotFacts(snapshot).clusterCidr[family];
}

function nodeSourceFor(ctx: TraceContext, dst: Ip): Ip | undefined {
  // To 127.0.0.0/8 (a NodePort on localhost) the kernel's source is the loopback address itself.
  if (dst.family === 4 && dst.value >> 24n === 127n) return parseIp('127.0.0.1');
  if (dst.family === 6 && dst.value === 1n) return dst;
  const r = lookupRoute(ctx.snapshot.routes, dst);
  const src = r?.src ? parseIp(r.src) : undefined;
  if (src) return src;
  return ctx.localAddresses.find((a) => a.family === dst.family && !(a.family === 4 && a.value >> 24n === 127n) && !(a.family === 6 && a.value === 1n));
}

export interface Source {
  readonly ip: Ip;
  readonly local: boolean;
  readonly label: string;
  readonly assumption?: TraceAssumption;
}

export function chooseSource(ctx: TraceContext, spec: SourceSpec, dst: Ip): Source {
  const family = dst.family;
  if (typeof spec === 'object') {
    const ip = parseIp(spec.ip);
    if (!ip) throw new TraceInputError(`--from ${spec.ip}: not an IP address`);
    if (ip.family !== family) throw new TraceInputError(`--from ${spec.ip} is IPv${ip.family} but the destination is IPv${family}`);
    const local = isLocalAddress(ctx, ip);
    return { ip, local, label: formatIp(ip), ...(local ? { assumption: { code: 'source', kind: 'local-address', address: formatIp(ip) } } : {}) };
  }
  if (spec === 'node') {
    const ip = nodeSourceFor(ctx, dst);
    if (!ip) throw new TraceInputError("--from node needs the node's address: give an `ip addr` dump or --node-ip");
    return { ip, local: true, label: 'node', assumption: { code: 'source', kind: 'node', address: formatIp(ip) } };
  }
  if (spec === 'external') {
    const ip = parseIp(family === 4 ? '203.0.113.10' : '2001:db8::10')!;
    return { ip, local: false, label: 'external', assumption: { code: 'source', kind: 'external', address: formatIp(ip) } };
  }
  // pod: an address in the pod network the rules reveal, preferring this node's pod subnet.
  const cidr = clusterCidrFromRules(ctx.snapshot, family);
  const taken = snapshotFacts(ctx.snapshot).dnatTargets;
  const subnet = ctx.snapshot.routes.find((r) => r.dst.family === family && r.dev && /^(cni0|cbr0|docker0)$/.test(r.dev) && r.type === 'unicast' && (!cidr || cidrContains(cidr, { family, value: r.dst.network })));
  const base = subnet?.dst ?? cidr ?? parseCidr(family === 4 ? '10.244.0.0/16' : 'fd00:10:244::/56')!;
  let candidate = base.network + 10n;
  while (taken.has(formatIp({ family, value: candidate }))) candidate++;
  const ip: Ip = { family, value: candidate };
  const where = subnet ? { subnet: formatCidr(subnet.dst) } : cidr ? { podNetwork: formatCidr(cidr) } : { assumedNetwork: formatCidr(base) };
  return { ip, local: false, label: 'pod', assumption: { code: 'source', kind: 'pod', address: formatIp(ip), ...where } };
}
