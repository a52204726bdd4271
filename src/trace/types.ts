/** A trace is data (ARCHITECTURE.md convention 9); text is one rendering of it. */

export type Verdict = 'DNAT' | 'ACCEPT' | 'DROP' | 'REJECT' | 'NONE';

export interface TraceStep {
  /** iptables table or nft `family table`, `ipvs`, or `route`. */
  readonly table: string;
  readonly chain: string;
  /** Line of the rule in its dump (null for policies and built-in decisions). */
  readonly rule: number | null;
  readonly file: string | null;
  /** What happened: `jump KUBE-SVC-…`, `DNAT to 10.244.0.3:53`, `statistic: taken (p=0.5)`, `policy ACCEPT`… */
  readonly action: string;
  /** The rule as written, for evidence. */
  readonly text?: string;
}

export interface RouteInfo {
  readonly destination: string;
  readonly type: string;
  readonly dev?: string;
  readonly via?: string;
  readonly src?: string;
  readonly table: string;
  /** The `ip rule` that chose the table, when not one of the default rules. */
  readonly policyRule?: string;
  /** pod-veth, bridge, tunnel, physical… */
  readonly interfaceRole?: string;
  /** `local pod interface`, `another node via 172.18.0.3`, `blackhole`… */
  readonly summary: string;
  readonly line: number;
  readonly file: string;
  readonly problem?: string;
}

export interface TraceOutcome {
  readonly probability: number;
  readonly verdict: Verdict;
  /** Destination after NAT (the original when not NATed), `ip:port`. */
  readonly destination: string;
  readonly masquerade: boolean;
  /** SNAT/MASQUERADE source address when known. */
  readonly snatTo?: string;
  readonly route: RouteInfo | null;
  /** Matches kpx could not decide on this path (the outcome holds if they went this way). */
  readonly conditions: readonly string[];
  /** Where the packet ends: delivered locally, forwarded, or stopped. */
  readonly delivery: 'forward' | 'local' | 'stopped';
  readonly steps: readonly TraceStep[];
}

export interface TracePacketJson {
  readonly protocol: string;
  readonly family: 4 | 6;
  readonly src: string;
  readonly sport: number;
  readonly dst: string;
  readonly dport: number;
  readonly from: string;
  readonly inInterface?: string;
  readonly local: boolean;
}

export interface Trace {
  readonly packet: TracePacketJson;
  /** The Service(s) this destination belongs to, by name (`ns/name:port`), when known. */
  readonly services: readonly string[];
  readonly assumptions: readonly string[];
  readonly outcomes: readonly TraceOutcome[];
}
