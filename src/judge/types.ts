/**
 * The judgement's data: what kpx concludes per Service port and per traced flow, each conclusion
 * with its reasons and the evidence they rest on. Typed codes and fields only; src/render words
 * them (src/render/judgement.ts).
 */
import type { Resolution, ServicePort, ServiceState } from '../kube/types.js';
import type { NodeSnapshot, ProxyMode, SecondView } from '../model/snapshot.js';
import type { StateReasonCode } from '../kube/state-reason.js';
import type { UnknownReason, Verdict } from '../trace/types.js';

/** A dump line a reason rests on (`file:line`, the line as written). */
export interface Cite {
  readonly file: string;
  readonly line: number;
  readonly text?: string;
}

/**
 * What the evidence behind one table (chain set, listing) is. Only `whole` evidence can support a
 * claim of absence; every other kind leaves out something that could be there.
 *  - `whole`: a complete dump (`iptables-save` with COMMIT, a closed nft table, a whole `ipvsadm -Ln`);
 *  - `cut`: a dump cut at `line` (no COMMIT, no closing brace, a listing ending mid-line);
 *  - `grep`: lines without their table header (`iptables-save | grep …`): lines are missing, the
 *    table was inferred (`inferred.basis` `default`: a pure guess);
 *  - `restore-input`: kube-proxy's iptables-restore payload: only its own chains, no hooks;
 *  - `edited`: looks whole but jumps to chains it does not hold, which the kernel refuses: it was
 *    cut or edited (`missing`);
 *  - `second-view`: a second view of a ruleset already read (read once: SecondView in the snapshot);
 *  - `missing`: the dumps show a proxy mode whose own listing is not among them (IPVS mode without
 *    `ipvsadm -Ln`): what that listing holds is not in the evidence.
 */
export type EvidenceKind = 'whole' | 'cut' | 'grep' | 'restore-input' | 'edited' | 'second-view' | 'missing';

export interface TableEvidence {
  readonly file: string;
  readonly dialect: 'iptables' | 'nft' | 'ipvs';
  readonly family?: 4 | 6;
  /** `nat`, `ip kube-proxy`, `ipvs`. */
  readonly table: string;
  readonly kind: EvidenceKind;
  /** `cut`: the last line read. */
  readonly line?: number;
  /** `grep`: how the table was inferred from the rules (src/extract/fragment-table.ts). */
  readonly inferred?: { readonly basis: 'content' | 'default'; readonly line?: number; readonly why?: string };
  /** `edited`: chains jumped to that the table does not hold, with the first rule naming each. */
  readonly missing?: readonly { readonly chain: string; readonly line: number; readonly text: string }[];
  /** `second-view`: the dump it is a view of. */
  readonly of?: string;
}

/**
 * One file's iptables tables shown only in part by the rules' own coverage (an `iptables -L` of some
 * chains, `-S` of one chain or through grep, a fragment without its `*table` line). Not yet an
 * evidence kind: TableEvidence calls a listing of some chains `whole` or `grep`, and making it a kind
 * of its own would change what every command concludes from such a paste (issue 32's report).
 */
export interface PartialListing {
  readonly file: string;
  readonly tables: readonly {
    readonly table: string;
    /** The table's name is guessed (from the chains and targets), not given by the paste. */
    readonly guessed: boolean;
    /** What the paste shows of it (none: a fragment of rules). */
    readonly shown?: { readonly source: 'listing' | 'rules'; readonly chains: readonly string[] };
  }[];
}

/** Lines of the inputs kpx could not read (a listing pasted among save lines, noise) that name an address. */
export interface Mention {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** kube-proxy's syncs are failing (its log): the rules shown may be those of the last good sync. */
export interface StaleRules {
  readonly file: string;
  readonly line: number;
  readonly tool: string;
  readonly count: number;
  /** When the failures began and the last one (as the log writes time). */
  readonly since: string;
  readonly last: string;
  /**
   * The payload line the tool refused (the latest failure's), when the log says it: with its text and
   * Service when the payload is logged; `named`: every line the failures named, when the payload is not.
   */
  readonly refused?: { readonly line: number; readonly text?: string; readonly service?: string; readonly why?: 'missing-chain' | 'unknown-option'; readonly name?: string; readonly named?: readonly number[] };
}

/** Why a share, a state or a claim is what it is: one code, its fields, its evidence. */
export type Reason =
  /** Endpoint chains the rules jump to are not in the evidence (their DNAT, and their share's fate, unknown). */
  | { readonly code: 'endpoint-chains-absent'; readonly chains: readonly string[]; readonly cites: readonly Cite[] }
  /** …and the dump holding the jump looks whole: it cannot be an unedited iptables-save (the kernel refuses such a jump). */
  | { readonly code: 'dump-not-whole'; readonly file: string; readonly table: string; readonly chains: readonly string[]; readonly cites: readonly Cite[] }
  /** Endpoints the rules name whose address (and share) the evidence does not give. */
  | { readonly code: 'endpoint-address-unknown'; readonly chains: readonly string[]; readonly cites: readonly Cite[] }
  /** The Service's rules are in a paste whose table kpx inferred (basis `default`: guessed). */
  | { readonly code: 'table-inferred'; readonly file: string; readonly table: string; readonly basis: 'content' | 'default'; readonly line?: number; readonly why?: string }
  /** The Service's chains are in a table cut before its end. */
  | { readonly code: 'table-cut'; readonly file: string; readonly table: string; readonly line: number }
  /** The trace could not follow every way undecided matches can go (the scenario cap). */
  | { readonly code: 'scenarios-not-followed'; readonly limit: number }
  /** A trace outcome the walk itself could not decide (its UnknownReason, src/trace/types.ts). */
  | { readonly code: 'walk-unknown'; readonly unknown: UnknownReason; readonly cites: readonly Cite[] };

/** Something true of the answer that an SRE must read with it (not a change of state). */
export type Caveat =
  | ({ readonly code: 'rules-may-be-stale' } & StaleRules)
  /**
   * IPVS real servers at weight 0 (draining) behind the Service: no new connection is scheduled to
   * them, but with `net.ipv4.vs.conn_reuse_mode=0` a new connection reusing the source port of one of
   * their connections is sent to them (`connReuseMode` null: not in the dumps, kernel default 1).
   */
  | { readonly code: 'draining-real-servers'; readonly servers: readonly string[]; readonly connReuseMode: string | null; readonly connections: number; readonly cites: readonly Cite[] }
  /** The answer was read from one view of a ruleset given twice; the other view's lines that differ. */
  | { readonly code: 'second-view'; readonly file: string; readonly of: string; readonly kind: string; readonly rules: number; readonly differing: number; readonly first?: Cite };

/** The unknown part of an answer: the share the evidence cannot give (null: not a share), and why. */
export interface UnknownPart {
  readonly share: number | null;
  readonly reasons: readonly Reason[];
}

/** The judgement of one Service port: the one STATE and REASON every command prints. */
export interface ServiceJudgement {
  readonly state: ServiceState;
  /** The REASON column: the resolver's reason code, or the judgement's own (`dump-not-whole`, `table-inferred`…). */
  readonly reason: StateReasonCode | Reason['code'] | null;
  /** How many other reasons (`+N`). */
  readonly more: number;
  /** The share of new connections (and the endpoints) the evidence cannot account for. */
  readonly unknown: UnknownPart | null;
  readonly caveats: readonly Caveat[];
}

/** A conntrack entry decides the flow: where it goes, and what becomes of it. */
export interface Pin {
  readonly to: string;
  /** `blackholed`: the entry's destination is no endpoint now; `endpoint`: it is a current endpoint; `unknown`: no Service known here. */
  readonly fate: 'blackholed' | 'endpoint' | 'unknown' | 'untranslated';
  /** Seconds the entry has left (restarted by each packet). */
  readonly seconds?: number;
  readonly cite: Cite;
}

/**
 * The judgement of one traced flow: the verdict line's content. `verdict` is the answer's first
 * word: the single verdict when there is one, `PINNED` when a conntrack entry decides, `DEPENDS`
 * when scenarios (undecided matches) disagree, `MIXED` when one scenario splits between verdicts.
 */
export interface FlowJudgement {
  readonly verdict: Verdict | 'PINNED' | 'DEPENDS' | 'MIXED';
  /** Verdicts and their shares of the first scenario (all scenarios when they agree); the UNKNOWN share is one of them. */
  readonly shares: readonly { readonly verdict: Verdict; readonly share: number }[];
  readonly unknown: UnknownPart | null;
  readonly pinned?: Pin;
  /**
   * No Service matched the destination: `complete` when the evidence for the dispatch is whole;
   * else `partial`, and `mentions` are the lines kpx could not read that name the destination.
   */
  readonly noService?: { readonly evidence: 'complete' | 'partial'; readonly mentions: readonly Mention[]; readonly partial: readonly TableEvidence[] };
  /** Caveats per outcome (by index into the trace's outcomes) and for the flow. */
  readonly caveats: readonly Caveat[];
  readonly outcomeCaveats: readonly { readonly outcome: number; readonly caveat: Caveat }[];
  /** Nothing about this flow can be told from the evidence: `kpx trace` exits 3. */
  readonly cannotTell: boolean;
}

/** kube-proxy chains no hook reaches, said once (the resolver's `leftover-service-chains`). */
export interface Leftovers {
  readonly file: string;
  readonly table: string;
  readonly chains: number;
  readonly servicePorts: number;
  readonly example: string;
  readonly cite?: Cite;
}

export interface NodeJudgement {
  readonly snapshot: NodeSnapshot;
  /** The Service ports as judged: `state` is the judgement's (the resolver's reading, where it differs, is in the reasons). */
  readonly resolution: Resolution;
  readonly evidence: readonly TableEvidence[];
  /** iptables tables the rules show only in part by their own coverage (evidence.ts partialListings). */
  readonly listings: readonly PartialListing[];
  readonly stale?: StaleRules;
  readonly secondViews: readonly SecondView[];
  readonly leftovers: readonly Leftovers[];
  /** Proxy modes whose rules the hooks reach (the live dataplane), and those only leftovers show. */
  readonly liveModes: readonly ProxyMode[];
  readonly leftoverModes: readonly ProxyMode[];
  judgementOf(s: ServicePort): ServiceJudgement;
}
