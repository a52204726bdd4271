/**
 * One Service port of an iptables ruleset while it is read: the chains that share its hash
 * (KUBE-SVC/SVL/EXT/FW/XLB-<hash>), what the dispatch and filter rules claim for it, and the
 * evidence so far. Dispatch, firewall, balancing and identity readers fill it; facts.ts turns it
 * into the mode-neutral facts.
 */
import type { Chain } from '../../model/netfilter.js';
import type { PerServiceRole } from '../chains.js';
import type { CommentIdentity } from '../comments.js';
import type { FrontEnd } from '../facts.js';
import type { Evidence, Protocol } from '../types.js';

export interface Group {
  hash: string;
  /** For a group without kube-proxy chains or a name (a REJECT/DROP read by its shape): what names it. */
  anchor?: string;
  family: 4 | 6;
  // The nat table's chains of this Service port by role (a later chain of the same role wins).
  svc?: Chain;
  svl?: Chain;
  ext?: Chain;
  xlb?: Chain;
  /** Whether any of its chains (FW included) is in nat. */
  inNat: boolean;
  /** FW chains, in nat (≤1.24) or filter (≥1.25): one per table, in the order the tables come. */
  fw?: { table: string; chain: Chain }[];
  identity?: CommentIdentity;
  protocol?: Protocol;
  port?: number;
  clusterIP?: string;
  clusterTarget?: string;
  nodePort?: number;
  /** Every dispatch claim, in rule order (made on first use). */
  frontEnds?: FrontEnd[];
  /** Dispatch rules jump to a per-Service chain of this group that the dump does not hold. */
  absentChain?: string;
  // Address sets are made on first use: most Service ports have none.
  externalIPs?: Set<string>;
  loadBalancerIPs?: Set<string>;
  sourceRanges?: Set<string>;
  noEndpoints: boolean;
  noLocalEndpoints: boolean;
  internalLocal?: boolean;
  /** External addresses known only from REJECT/DROP rules, which are the same for externalIPs and LoadBalancer IPs. */
  ambiguousExternal?: boolean;
  /** Dispatch rules in nat KUBE-SERVICES / KUBE-NODEPORTS name this Service port. */
  natDispatch?: boolean;
  /** Filter chains whose rules name this Service port (KUBE-SERVICES, KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL). */
  filterChains?: Set<string>;
  externalLocal?: boolean;
  /** Evidence so far; buildServicePort appends the chains' rules and hands it to the ServicePort. */
  evidence: Evidence[];
}

/** The groups of one ruleset by hash (or by the anchor of an unnamed REJECT/DROP), made on first use. */
export class Groups {
  readonly byHash = new Map<string, Group>();
  constructor(private readonly family: 4 | 6) {}

  of(hash: string): Group {
    let g = this.byHash.get(hash);
    if (!g) {
      g = { hash, family: this.family, inNat: false, noEndpoints: false, noLocalEndpoints: false, evidence: [] };
      this.byHash.set(hash, g);
    }
    return g;
  }
}

export function addChain(g: Group, table: string, role: PerServiceRole, c: Chain): void {
  if (table === 'nat') g.inNat = true;
  if (role === 'FW') {
    const fw = (g.fw ??= []);
    const same = fw.find((f) => f.table === table);
    if (same) same.chain = c;
    else fw.push({ table, chain: c });
    return;
  }
  if (table !== 'nat') return;
  if (role === 'SVC') g.svc = c;
  else if (role === 'SVL') g.svl = c;
  else if (role === 'EXT') g.ext = c;
  else g.xlb = c;
}

export function hasNatFirewall(g: Group): boolean {
  return g.fw?.some((f) => f.table === 'nat') ?? false;
}

export function frontEnd(g: Group, kind: FrontEnd['kind'], ip: string | null, port: number | null, evidence: Evidence): void {
  (g.frontEnds ??= []).push({ kind, ip, port, evidence });
}

export function added(set: Set<string> | undefined, value: string): Set<string> {
  return (set ?? new Set<string>()).add(value);
}
