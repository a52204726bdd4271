/**
 * A trace is data (ARCHITECTURE.md convention 9): steps, conditions, assumptions and outcomes
 * carry codes and typed fields; only src/render/trace/ turns them into words.
 */
import type { MtuHop, MtuShortfall, SwitchEvidence, SwitchName } from '../model/switches.js';

/** `UNKNOWN`: the evidence cannot say what happens (a chain or map it needs is missing, userspace decides…). */
export type Verdict = 'DNAT' | 'ACCEPT' | 'DROP' | 'REJECT' | 'NONE' | 'UNKNOWN';

/** Which rule language a step comes from (the renderer words iptables and nft steps each in its own idiom). */
export type Dialect = 'iptables' | 'nft' | 'ipvs' | 'kernel';

/** Why a branch carries part of the probability. */
export type Share =
  | { readonly kind: 'statistic'; readonly probability: number; readonly taken: boolean }
  | { readonly kind: 'numgen'; readonly key: string; readonly probability: number }
  /** A verdict map element chose the verdict (not a share: the element matched the packet). */
  | { readonly kind: 'map'; readonly map: string | null; readonly key: string; readonly comment?: string };

/** What kind of fact an undecided match needs; the renderer words the condition from it. */
export type QuestionCode =
  | 'in-interface'
  | 'out-interface'
  /** Is the address one of the node's own (addrtype LOCAL, fib … type local)? subject: the address. */
  | 'local-address'
  /** addrtype types other than LOCAL/UNICAST/BROADCAST/MULTICAST. */
  | 'address-type'
  | 'ipset-missing'
  | 'ipset-undecidable'
  | 'set-element'
  | 'limit'
  | 'physdev'
  | 'socket'
  /** A match or expression kpx does not evaluate (unknown modules, `xt` residue…). */
  | 'not-evaluated';

/**
 * A match the evidence cannot decide, and which way this scenario takes it. `match` is the match
 * as written; `file`/`line` the rule that holds it.
 */
export interface Condition {
  readonly code: QuestionCode;
  readonly holds: boolean;
  /** The interface, address, set or module the match is about. */
  readonly subject?: string;
  readonly match: string;
  readonly table: string;
  readonly chain: string;
  readonly file: string | null;
  readonly line: number | null;
}

/** Why an outcome is UNKNOWN. */
export type UnknownReason =
  | { readonly code: 'chain-missing'; readonly chain: string; readonly via: 'jump' | 'goto' }
  /** A hook's built-in chain a listing does not show (`iptables -L SOME-CHAIN`, issue 30): what the table does there is unknown. */
  | { readonly code: 'chain-not-listed'; readonly chain: string; readonly table: string; readonly file: string }
  /** The walk reached the end of a chain whose rules may go on past where a truncated table was cut. */
  | { readonly code: 'chain-truncated'; readonly chain: string; readonly table: string; readonly line: number }
  /**
   * The walk reached the end of a chain of a paste without `*table` (a grep): the rules the paste
   * left out decide what follows. `table`: the table kpx inferred for the paste (fragment-table.ts).
   */
  | { readonly code: 'chain-partial'; readonly chain: string; readonly table: string; readonly file: string }
  /**
   * The walk started at kube-proxy's dispatch chain because the hook's built-in chain is not in the
   * evidence (a grep, a restore payload) and reached its end: what the hook's other rules and its
   * policy do with the packet is not in the evidence.
   */
  | { readonly code: 'hook-unknown'; readonly chain: string; readonly table: string; readonly hook: string }
  | { readonly code: 'map-missing'; readonly map: string }
  /** A listing (`ipvsadm -Ln`) ends mid-line in the object the packet reached: what it holds past `line` is not in the evidence. */
  | { readonly code: 'listing-truncated'; readonly what: string; readonly file: string; readonly line: number }
  | { readonly code: 'userspace-verdict'; readonly target: string }
  | { readonly code: 'not-evaluated'; readonly what: string }
  /** An IPVS real server printed by name (`ipvsadm -L` without `-n`). */
  | { readonly code: 'real-server-name'; readonly name: string }
  | { readonly code: 'too-deep'; readonly limit: number }
  | { readonly code: 'too-many-branches'; readonly limit: number }
  /** More ways the undecided matches can go than the trace follows: the ways not followed are unknown. */
  | { readonly code: 'too-many-scenarios'; readonly limit: number; readonly notFollowed: number };

interface StepBase {
  readonly dialect: Dialect;
  /** iptables table, nft `family table`, or `ipvs`. */
  readonly table: string;
  readonly chain: string;
  /** Line of the rule (chain, virtual server) in its dump; null when the evidence has none. */
  readonly rule: number | null;
  readonly file: string | null;
  /** The rule as written, for evidence. */
  readonly text?: string;
  /** The share of the branch this step took (statistic, numgen, map element). */
  readonly share?: Share;
}

export type TraceStep = StepBase &
  (
    | { readonly code: 'jump' | 'goto'; readonly target: string }
    | { readonly code: 'return' | 'accept' | 'drop' }
    | { readonly code: 'reject'; readonly with?: string }
    | { readonly code: 'dnat' | 'redirect'; readonly to: string; readonly ports?: string; readonly firstOfRange?: boolean; readonly flags?: readonly string[] }
    | { readonly code: 'snat' | 'masquerade'; readonly to?: string; readonly flags: readonly string[] }
    | { readonly code: 'mark'; readonly which: 'meta' | 'ct'; readonly before: number; readonly after: number }
    | { readonly code: 'log'; readonly prefix?: string }
    /** A non-terminating target kpx does not model (the walk continues). */
    | { readonly code: 'extension'; readonly name: string }
    /** The rule matched but has no target / verdict. */
    | { readonly code: 'matched' }
    /** The share that did not take this rule (statistic miss, numgen values without an element). */
    | { readonly code: 'not-taken'; readonly probability: number; readonly missing?: { readonly values: number; readonly of: number } }
    /** An undecided match, decided by the scenario's condition. */
    | { readonly code: 'assumed'; readonly condition: Condition }
    /** End of a built-in / base chain. */
    | { readonly code: 'policy'; readonly policy: 'ACCEPT' | 'DROP'; readonly base: 'built-in' | 'base' | 'assumed-entry' }
    /** nft `dnat … map`: no element for this packet. */
    | { readonly code: 'nat-map-miss'; readonly nat: 'dnat' | 'snat' }
    /** A conntrack entry's NAT binding rewrote the destination (the packet belongs to that connection): `to`, from the entry at file:rule. */
    | { readonly code: 'conntrack-nat'; readonly to: string }
    /** The walk ends here without a verdict the evidence can give. */
    | { readonly code: 'unknown'; readonly reason: UnknownReason }
    | {
        readonly code: 'ipvs-real-server';
        readonly forward: string;
        readonly address: string;
        readonly port?: number;
        readonly weight?: number;
        readonly probability: number;
        readonly persistent?: number;
      }
    | { readonly code: 'ipvs-no-real-servers' | 'ipvs-draining' }
    /**
     * A kernel switch consulted where the kernel does (dialect `kernel`, chain = the place:
     * `routing`, `rerouting`, `bridge`): what it did to the packet, on which sysctl or bridge lines.
     */
    | { readonly code: 'kernel-switch'; readonly switch: SwitchName; readonly effect: SwitchStepEffect; readonly value?: number; readonly iface?: string; readonly evidence: readonly SwitchEvidence[]; readonly moduleLoaded?: boolean }
    /** The MTUs along the way and the largest packet that crosses them unfragmented; a tunnel without room for its encapsulation. */
    | { readonly code: 'mtu'; readonly hops: readonly MtuHop[]; readonly largest?: number; readonly shortfall?: MtuShortfall; readonly underlayUnknown?: string }
  );

/**
 * What a kernel switch did: `pass`; `drop` (the kernel drops the packet here); `reply-bypasses-nat`
 * (br_netfilter off: the endpoint's reply is bridged straight to the client without conntrack's
 * reverse NAT, so it comes from the pod's address, not the Service's, and the client discards it);
 * `unknown` (the dumps cannot say which way: e.g. which bridge port a pod is behind).
 */
export type SwitchStepEffect = 'pass' | 'drop' | 'reply-bypasses-nat' | 'unknown';

/**
 * How a kernel switch decided an outcome, for the answer's first line ("dropped by forwarding off
 * on eth0"): the switch, what it did, and its evidence. Present only when a switch decided.
 */
export interface KernelFate {
  readonly code: 'dropped-forwarding-off' | 'dropped-rp-filter' | 'dropped-route-localnet' | 'dropped-hairpin-off' | 'reply-bypasses-nat';
  readonly switch: SwitchName;
  readonly iface?: string;
  readonly value?: number;
  readonly evidence: readonly SwitchEvidence[];
  readonly moduleLoaded?: boolean;
}

export type StepCode = TraceStep['code'];

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
  /** Share of new connections that end this way, given this outcome's conditions (see Trace.scenarios). */
  readonly probability: number;
  readonly verdict: Verdict;
  /** Destination after NAT (the original when not NATed), `ip:port`. */
  readonly destination: string;
  readonly masquerade: boolean;
  /** SNAT/MASQUERADE source address when known. */
  readonly snatTo?: string;
  readonly route: RouteInfo | null;
  /** The undecided matches this outcome depends on (its scenario's conditions). */
  readonly conditions: readonly Condition[];
  /** Where the packet ends: delivered locally, forwarded, stopped, or unknown. */
  readonly delivery: 'forward' | 'local' | 'stopped' | 'unknown';
  /** Why the verdict is UNKNOWN. */
  readonly unknown?: UnknownReason;
  /** A kernel switch that decided this end (dropped by forwarding off, rp_filter, …), beside the verdict. */
  readonly fate?: KernelFate;
  /** How many roads (branches) end this way when more than one: their shares are added, the likeliest's steps kept. */
  readonly roads?: number;
  readonly steps: readonly TraceStep[];
}

/**
 * One way the undecided matches can go: under `conditions`, the outcomes listed (indexes into
 * Trace.outcomes) happen with their probabilities, which sum to 1. Without undecided matches there
 * is one scenario with no conditions.
 */
export interface Scenario {
  readonly conditions: readonly Condition[];
  readonly outcomes: readonly number[];
  /**
   * The ways the trace did not follow (its scenario cap): their conditions are not listed and their
   * one outcome is UNKNOWN (too-many-scenarios): never a lost outcome.
   */
  readonly notFollowed?: number;
}

/** What kpx assumed to trace at all; typed so renderers word it. */
export type TraceAssumption =
  | { readonly code: 'source'; readonly kind: 'pod'; readonly address: string; readonly subnet?: string; readonly podNetwork?: string; readonly assumedNetwork?: string }
  | { readonly code: 'source'; readonly kind: 'node'; readonly address: string }
  | { readonly code: 'source'; readonly kind: 'external'; readonly address: string }
  | { readonly code: 'source'; readonly kind: 'local-address'; readonly address: string }
  /** Cross-node traces: one of the node's own pods, by its /32 route or the node's pod block. */
  | { readonly code: 'source'; readonly kind: 'node-pod'; readonly address: string; readonly node: string; readonly route?: { readonly interface?: string; readonly file: string; readonly line: number }; readonly block?: string }
  | { readonly code: 'source-port'; readonly port: number }
  | { readonly code: 'connection'; readonly established: boolean }
  | { readonly code: 'affinity'; readonly hit: boolean }
  | { readonly code: 'node-addresses-unknown' }
  | { readonly code: 'no-routes' }
  | { readonly code: 'no-ruleset'; readonly family: 4 | 6 }
  | { readonly code: 'in-interface'; readonly dev: string }
  /**
   * The evidence has kube-proxy's dispatch chain (or map) but not the built-in hook that reaches
   * it (a grep, a restore payload): the walk starts there.
   */
  | { readonly code: 'entry-assumed'; readonly dialect: 'iptables' | 'nft'; readonly table: string; readonly start: string; readonly startKind: 'chain' | 'map'; readonly hook: string }
  | { readonly code: 'too-many-scenarios'; readonly limit: number }
  /**
   * The walk uses a table the evidence gives without its `*table` line (a grep): kpx inferred which
   * table its rules are (`basis` content: from the rule at `line`, `why`), or guessed (`default`).
   */
  | { readonly code: 'table-inferred'; readonly file: string; readonly table: string; readonly basis: 'content' | 'default'; readonly line?: number; readonly why?: string }
  /**
   * The table is an `iptables -L` listing without -v (issue 30): it does not show the rules' -i/-o
   * interface matches, and the walk takes each rule as if it had none.
   */
  | { readonly code: 'listing-interfaces-hidden'; readonly table: string; readonly file: string }
  /**
   * A kernel switch the packet meets that the dumps do not show (no sysctl -a, no bridge -d link):
   * the trace takes the value kube-proxy needs and says so.
   */
  | { readonly code: 'switch-assumed'; readonly switch: SwitchName | 'mtu'; readonly assumed: string; readonly iface?: string }
  /** An IPVS virtual server's address, taken as the node's (kube-ipvs0 holds it) without an ip addr showing it. */
  | { readonly code: 'ipvs-address-local'; readonly address: string }
  /**
   * A conntrack entry (`conntrack -L` / /proc/net/nf_conntrack) holds this 5-tuple: the flow's packets
   * are translated as the entry says, to `to`, not by the rules. `current`: `to` is still an endpoint
   * of the Service (null: no Service known for the destination). `timeout`: seconds left at dump time,
   * restarted by each packet.
   */
  | {
      readonly code: 'conntrack-pinned';
      readonly file: string;
      readonly line: number;
      readonly to: string;
      readonly translated: boolean;
      readonly timeout?: number;
      readonly state?: string;
      readonly unreplied: boolean;
      readonly assured: boolean;
      readonly current: boolean | null;
      /**
       * The entry decides the traced packet (it belongs to that connection: --established, or the
       * source port given and the entry open): the trace follows its NAT binding, not the nat chains.
       */
      readonly applied: boolean;
    }
  /** Conntrack tables are in the dumps but none holds this 5-tuple: a packet of it would be NEW. */
  | { readonly code: 'conntrack-no-entry'; readonly established: boolean; readonly tables: number }
  /** `kpx trace nodeport:PORT`: the node address the packet is sent to, and where kpx took it from (`assumed`: none was known). */
  | { readonly code: 'node-address'; readonly address: string; readonly from: 'ip-addr' | 'node-ip' | 'assumed' };

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
  readonly assumptions: readonly TraceAssumption[];
  readonly outcomes: readonly TraceOutcome[];
  readonly scenarios: readonly Scenario[];
}
