/**
 * Mode-neutral facts about one Service port, as a proxy-mode reader (iptables, IPVS, nftables)
 * found them in the dumps. Readers only say what the evidence shows — and, as explicitly, what it
 * does not show (absences); the one ServicePort builder (service-builder.ts) derives the state,
 * the problems that follow from the facts, the id, hash checks, locality and ownership.
 */
import type { Evidence, Protocol, ProxyModeName, TrafficPolicy } from './basics.js';
import type { ServiceProblem } from './problems.js';

export type FrontEndKind = 'cluster-ip' | 'external-ip' | 'load-balancer-ip' | 'node-port';

/** One address (or node port) that dispatches to this Service port, with the line that claims it. */
export interface FrontEnd {
  readonly kind: FrontEndKind;
  /** null for a NodePort (every node address). */
  readonly ip: string | null;
  readonly port: number | null;
  /** The dispatch rule, map element or virtual server that claims the address. */
  readonly evidence: Evidence;
}

/** One balancing target: an endpoint and its exact share of new connections. */
export interface Target {
  readonly ip: string;
  readonly port: number | null;
  /** null when the evidence hides it (iptables-nft's `xt match statistic` in an nft listing). */
  readonly share: number | null;
  /** Endpoint chain, real server key… */
  readonly via?: string;
  readonly weight?: number;
  /** What the mode itself says about locality (Local-policy chain membership, KUBE-LOOP-BACK); undefined: ask the locality module. */
  readonly local?: boolean | null;
  readonly evidence: Evidence[];
}

/**
 * A balancing target the rules name (an endpoint chain) whose address the evidence does not give:
 * the chain is not in the paste and no comment says where it goes. An endpoint nonetheless, with
 * its share when the ladder gives it.
 */
export interface UnresolvedTarget {
  readonly via: string;
  readonly share: number | null;
  readonly evidence: readonly Evidence[];
}

/** What the dumps do not show, though the rules that are there point at it. */
export type Absence =
  /** A balancing rule jumps to an endpoint chain the dump does not hold (cut out of a paste). */
  | { readonly code: 'endpoint-chain-absent'; readonly chain: string; readonly from: string }
  /** The dispatch rules go to a Service chain the dump does not hold. */
  | { readonly code: 'service-chain-absent'; readonly chain: string }
  /** The table has no COMMIT: chains whose rules would come after line `line` are unknown. */
  | { readonly code: 'table-truncated'; readonly table: string; readonly file: string; readonly line: number; readonly listing?: 'nft' }
  /** An `ipvsadm -Ln` listing ends mid-line at `line`: the real servers of the virtual server it ends in go on past the cut. */
  | { readonly code: 'listing-truncated'; readonly file: string; readonly line: number }
  /** An `ipvsadm` real server printed as a name (`-L` without `-n`), not an address: not an endpoint, and what it stands for is unknown. */
  | { readonly code: 'real-server-not-an-address'; readonly vs: string; readonly name: string; readonly file: string; readonly line: number };

/**
 * The dumps say the Service port has no endpoints (scope `all`: a "has no endpoints" REJECT, a
 * virtual server without real servers) or none on this node (scope `local`: a "has no local
 * endpoints" DROP, a Local-policy virtual server without local real servers).
 */
export interface NoEndpointFact {
  readonly scope: 'all' | 'local';
  /** What happens to the traffic: rejected, dropped, or no destination (IPVS). */
  readonly verdict: 'reject' | 'drop' | 'no-destination';
}

/** A chain (set, virtual server, map) the Service port owns, with its role. */
export interface OwnedObject {
  readonly role: ChainRole;
  readonly name: string;
  /** IPVS: the virtual server's address (one per node address for a NodePort). */
  readonly address?: string;
}

/**
 * Roles of the objects a Service port owns. iptables: svc, svl, ext, xlb, fw, endpoint (KUBE-SEP);
 * nftables: service, local, external, firewall, endpoint, affinity; IPVS: cluster-ip, node-port,
 * external-ip, load-balancer-ip (virtual servers).
 */
export type ChainRole =
  | 'svc'
  | 'svl'
  | 'ext'
  | 'xlb'
  | 'fw'
  | 'service'
  | 'local'
  | 'external'
  | 'firewall'
  | 'endpoint'
  | 'affinity'
  | 'cluster-ip'
  | 'node-port'
  | 'external-ip'
  | 'load-balancer-ip';

export interface Identity {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string | null;
  readonly by: 'comment' | 'hash' | 'set-comment';
}

/** kube-proxy chain names to check against the identity (iptables: every hash generation). */
export type HashClaim =
  | { readonly kind: 'service-chain'; readonly hash: string }
  | { readonly kind: 'endpoint-chain'; readonly chain: string; readonly ip: string; readonly port: number };

export interface ServiceFacts {
  readonly mode: ProxyModeName;
  readonly family: 4 | 6;
  /** A name unique among the mode's Service ports (chain hash, map key, virtual server), for ids when nothing else names it. */
  readonly anchor: string;
  readonly identity?: Identity;
  /** From the rules' own protocol matches; undefined when they do not say. */
  readonly protocol?: Protocol;
  readonly port?: number;
  readonly frontEnds: readonly FrontEnd[];
  readonly sourceRanges: readonly string[];
  readonly externalTrafficPolicy: TrafficPolicy;
  readonly internalTrafficPolicy: TrafficPolicy;
  /** Session affinity's timeout; null when affinity is on but its timeout is hidden (`xt match recent`). */
  readonly affinitySeconds?: number | null;
  readonly targets: readonly Target[];
  /** Endpoints the rules name whose address is not in the evidence. */
  readonly unresolved?: readonly UnresolvedTarget[];
  /** The balancing chain exists and holds no endpoint rule (nor a drop/reject for no endpoints). */
  readonly emptyBalancing?: string;
  readonly noEndpoints: readonly NoEndpointFact[];
  readonly absences: readonly Absence[];
  /** Inconsistencies the reader saw in the rules. */
  readonly problems: readonly ServiceProblem[];
  readonly owned: readonly OwnedObject[];
  readonly hashClaims: readonly HashClaim[];
  /** Set by a reader that checked its own names (nftables: the hash is in the name). */
  readonly hashVerified?: boolean | null;
  readonly evidence: Evidence[];
}
