/**
 * kpx's own Service types: what a node's dataplane implements, per Service port. These are
 * the node's view (which may disagree with the API server during an incident), not k8s API objects.
 * The JSON form of ServicePort is the stable `kpx services -o json` schema (docs/commands/services.md).
 */

import type { Evidence, Protocol, ProxyModeName, ServiceState, TrafficPolicy } from './basics.js';
import type { FrontEnd, OwnedObject, UnresolvedTarget } from './facts.js';
import type { ServiceProblem } from './problems.js';

export type { Evidence, Protocol, ProxyModeName, ServiceState, TrafficPolicy } from './basics.js';

export interface Endpoint {
  readonly ip: string;
  readonly port: number | null;
  /**
   * Share of NEW connections under Cluster policy (from the statistic ladder, IPVS weights or nft numgen);
   * null when the evidence hides it (the nft view of iptables-nft prints `xt match statistic` without its probability).
   */
  readonly probability: number | null;
  /** Whether the endpoint is on this node; null when the dumps do not say. */
  readonly local: boolean | null;
  /** KUBE-SEP-… chain, IPVS real server key, or nft endpoint chain. */
  readonly via?: string;
  /** IPVS weight (0 = draining). */
  readonly weight?: number;
  readonly evidence: readonly Evidence[];
}

export interface ServicePort {
  /** `ns/name:port/proto`, or `VIP:port/proto` when the dump names no Service. */
  readonly id: string;
  readonly namespace: string | null;
  readonly name: string | null;
  readonly portName: string | null;
  /** null when neither the rules nor the chain hash say. */
  readonly protocol: Protocol | null;
  readonly port: number;
  readonly clusterIP: string | null;
  readonly nodePort: number | null;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  readonly loadBalancerSourceRanges: readonly string[];
  readonly externalTrafficPolicy: TrafficPolicy;
  readonly internalTrafficPolicy: TrafficPolicy;
  /** timeoutSeconds null: affinity is on, its timeout is not in the evidence. */
  readonly sessionAffinity: { readonly timeoutSeconds: number | null } | null;
  readonly state: ServiceState;
  readonly endpoints: readonly Endpoint[];
  /**
   * Endpoints the rules name (an endpoint chain a balancing or affinity rule jumps to) whose address
   * the evidence does not hold, with their share when known (typed; the judgement's `unknown` says them in JSON).
   */
  readonly unresolvedEndpoints?: readonly UnresolvedTarget[];
  readonly mode: ProxyModeName;
  readonly family: 4 | 6;
  /** How the Service's name was found. */
  readonly identifiedBy: 'comment' | 'hash' | 'set-comment' | 'address' | 'api';
  /** Chains (or sets, virtual servers) this Service port owns, by role: the JSON form of `owned`. */
  readonly chains: Readonly<Record<string, string>>;
  /** The same, typed (not in the JSON). */
  readonly owned: readonly OwnedObject[];
  /** Every address that dispatches here, each with its claiming line (not in the JSON). */
  readonly frontEnds: readonly FrontEnd[];
  /** A mode-specific name unique among the Service ports (not in the JSON). */
  readonly anchor: string;
  /** Whether chain names match base32(sha256(servicePortName+protocol)); null when not checkable. */
  readonly hashVerified: boolean | null;
  /** Why the state is not healthy, and other inconsistencies found while resolving. */
  readonly problems: readonly ServiceProblem[];
  readonly evidence: readonly Evidence[];
}

/** A chain (or set, or virtual server) kpx did not attribute to any Service port. */
export interface ForeignObject {
  readonly kind: 'chain' | 'ipset' | 'virtual-server' | 'nft-chain';
  readonly table?: string;
  readonly name: string;
  /** kube-proxy (infrastructure), calico, cilium, docker, flannel, kind, firewalld, … or unknown. */
  readonly owner: string;
  readonly file: string;
  readonly line?: number;
  /** A kube-proxy Service chain nothing reaches from the hooks (reach.ts): a leftover, not live state. */
  readonly leftover?: true;
}

export interface Resolution {
  readonly services: readonly ServicePort[];
  readonly others: readonly ForeignObject[];
  /** Problems not tied to one Service (e.g. an IPVS virtual server with no ipset entry). */
  readonly problems: readonly { readonly problem: ServiceProblem; readonly evidence: readonly Evidence[] }[];
}

export function servicePortKey(s: Pick<ServicePort, 'namespace' | 'name' | 'portName' | 'protocol'>): string {
  return `${s.namespace ?? ''}/${s.name ?? ''}:${s.portName ?? ''}/${s.protocol ?? '?'}`;
}

/** Sort as the JSON schema promises: namespace, name, portName, protocol (nulls last), then port. */
export function compareServicePorts(a: ServicePort, b: ServicePort): number {
  const k = (s: ServicePort) => [s.namespace ?? '\uffff', s.name ?? '\uffff', s.portName ?? '', s.protocol ?? '\uffff', String(s.port).padStart(5, '0'), s.clusterIP ?? ''];
  const ka = k(a);
  const kb = k(b);
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 0;
}
