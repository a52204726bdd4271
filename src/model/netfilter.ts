/**
 * The iptables model: tables, chains and rules as the kernel sees them, each rule keeping its
 * lossless syntax (for re-emission and evidence) and a typed reading of what it matches and
 * does (for resolution, tracing and lint). Plain readonly data; helpers are free functions.
 */
import type { RuleItem, SaveComment } from '../../grammars/common/iptables-syntax.js';
import type { Cidr } from './addr.js';

export type { RuleItem, OptionSyntax, SaveComment } from '../../grammars/common/iptables-syntax.js';

export const BUILTIN_CHAINS: Readonly<Record<string, readonly string[]>> = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

export interface Counters {
  readonly packets: string;
  readonly bytes: string;
}

export interface PortRange {
  readonly from: number;
  readonly to: number;
}

export type Match =
  | { readonly kind: 'address'; readonly dir: 'src' | 'dst'; readonly negated: boolean; readonly text: string; readonly cidr?: Cidr }
  | { readonly kind: 'interface'; readonly dir: 'in' | 'out'; readonly negated: boolean; readonly name: string }
  | { readonly kind: 'protocol'; readonly negated: boolean; readonly protocol: string }
  | { readonly kind: 'fragment'; readonly negated: boolean }
  | { readonly kind: 'comment'; readonly text: string }
  | {
      readonly kind: 'port';
      readonly module: string;
      readonly dir: 'src' | 'dst' | 'any';
      readonly negated: boolean;
      readonly ranges: readonly PortRange[];
    }
  | { readonly kind: 'statistic'; readonly mode: 'random'; readonly probability: number; readonly negated: boolean }
  | { readonly kind: 'statistic'; readonly mode: 'nth'; readonly every: number; readonly packet: number; readonly negated: boolean }
  | {
      readonly kind: 'recent';
      readonly op: 'set' | 'rcheck' | 'update' | 'remove';
      readonly negated: boolean;
      readonly name: string;
      readonly seconds?: number;
      readonly reap: boolean;
      readonly hitcount?: number;
      readonly side: 'rsource' | 'rdest';
    }
  | {
      readonly kind: 'addrtype';
      readonly dir: 'src' | 'dst';
      readonly negated: boolean;
      readonly types: readonly string[];
      readonly limitIface?: 'in' | 'out';
    }
  | { readonly kind: 'ctstate'; readonly negated: boolean; readonly states: readonly string[] }
  | { readonly kind: 'mark'; readonly connmark: boolean; readonly negated: boolean; readonly value: number; readonly mask: number }
  | { readonly kind: 'set'; readonly negated: boolean; readonly name: string; readonly flags: readonly ('src' | 'dst')[] }
  | { readonly kind: 'tcp-flags'; readonly negated: boolean; readonly mask: readonly string[]; readonly comp: readonly string[] }
  | { readonly kind: 'physdev'; readonly option: string; readonly negated: boolean; readonly value?: string }
  | { readonly kind: 'socket'; readonly options: readonly string[] }
  | { readonly kind: 'icmp'; readonly negated: boolean; readonly type: string }
  | { readonly kind: 'iprange'; readonly dir: 'src' | 'dst'; readonly negated: boolean; readonly from: string; readonly to: string }
  /** A match kpx reads but cannot decide for a packet (limits, owners, time, …), or does not know. */
  | {
      readonly kind: 'unsupported';
      readonly module: string;
      readonly text: string;
      readonly known: boolean;
      /** iptables-nft residue (`xt match NAME` in an nft listing): the match is there, its options are not in the evidence. */
      readonly residue?: true;
    };

export interface NatTo {
  readonly text: string;
  readonly ip?: string;
  readonly ipEnd?: string;
  readonly port?: number;
  readonly portEnd?: number;
}

export type Target =
  | { readonly kind: 'jump' | 'goto'; readonly chain: string }
  | { readonly kind: 'accept' | 'drop' | 'return' | 'queue' }
  | { readonly kind: 'reject'; readonly with?: string }
  | { readonly kind: 'dnat'; readonly to: readonly NatTo[]; readonly random: boolean; readonly persistent: boolean }
  | { readonly kind: 'snat'; readonly to: readonly NatTo[]; readonly random: boolean; readonly randomFully: boolean; readonly persistent: boolean }
  | { readonly kind: 'masquerade'; readonly randomFully: boolean; readonly random: boolean; readonly toPorts?: string }
  | { readonly kind: 'redirect'; readonly toPorts?: string }
  /** MARK/CONNMARK --set-xmark value/mask: mark = (mark & ~mask) ^ value. */
  | { readonly kind: 'mark'; readonly connmark: boolean; readonly value: number; readonly mask: number }
  | { readonly kind: 'log'; readonly prefix?: string }
  /** Any other extension target: non-terminating unless listed in TERMINATING_EXTENSIONS. */
  | {
      readonly kind: 'extension';
      readonly name: string;
      readonly terminating: boolean;
      /** iptables-nft residue (`xt target NAME` in an nft listing): its parameters are not in the evidence. */
      readonly residue?: true;
    };

export interface Rule {
  readonly table: string;
  readonly chain: string;
  /** 0-based position in its chain (evaluation order). */
  readonly index: number;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The line as written (indentation removed). */
  readonly raw: string;
  readonly counters?: Counters;
  readonly items: readonly RuleItem[];
  readonly matches: readonly Match[];
  readonly target?: Target;
  /** Text of the first comment match, unquoted. */
  readonly comment?: string;
  /** Every comment match (Calico rules carry two). */
  readonly comments: readonly string[];
}

export interface Chain {
  readonly table: string;
  readonly name: string;
  readonly builtin: boolean;
  /** ACCEPT/DROP for built-ins, '-' for user chains; undefined when only rules mention it. */
  readonly policy?: string;
  readonly counters?: Counters;
  /** Where it was declared (`:NAME …`); undefined when never declared. */
  readonly line?: number;
  readonly rules: readonly Rule[];
}

/**
 * How much of a table the evidence shows when it is not a whole dump: an `iptables -L` listing or
 * `iptables -S` output (issue 30). Kept apart from the table's chains so issue 28's completeness
 * model can absorb it: a chain not in `listed` is UNKNOWN, never empty; a table known only from
 * its chain names is an assumption, said where it is used.
 */
export interface TableCoverage {
  /** `listing`: `iptables -L`; `rules`: `iptables -S`. */
  readonly source: 'listing' | 'rules';
  /** How the table's name is known: the command's `-t`, iptables' default (`filter`, no -t), or guessed from the chains and targets. */
  readonly tableFrom: 'command' | 'default' | 'guessed';
  /** Chains shown with all their rules (a listing prints a chain whole, unless `elided` says otherwise). */
  readonly listed: ReadonlySet<string>;
  /** Chains whose listing the author cut (an elision inside it): their rules are not all shown. */
  readonly elided: ReadonlySet<string>;
  /** Every chain of the table is shown (`iptables -L` without a chain name, nothing cut out). */
  readonly allChains: boolean;
  /** `-i`/`-o` matches are not shown (a listing without -v): rules are read as if they had none, an assumption. */
  readonly interfacesHidden: boolean;
  /** Where the listing's command was, when the paste shows it. */
  readonly commandLine?: number;
}

export interface Table {
  readonly name: string;
  readonly file: string;
  readonly line: number;
  readonly endLine?: number;
  readonly committed: boolean;
  /** Rules pasted without a `*table` line: the table name was inferred. */
  readonly implicit: boolean;
  /**
   * A fragment's table (implicit): how its name was inferred — `content` from the rule at `line`
   * (`why`: `-j DNAT`, `chain KUBE-SVC-…`), or `default` when no rule said (a guess: filter).
   */
  readonly inferred?: { readonly basis: 'content' | 'default'; readonly line?: number; readonly why?: string };
  /**
   * Chains the table's rules jump or go to that it does not hold (recorded as the rules are read, so
   * no pass over them is needed): iptables-restore refuses such a table, and the kernel cannot hold it.
   */
  readonly missingChains?: readonly string[];
  readonly generatedBy?: Extract<SaveComment, { kind: 'generated' }>;
  /** Less than a whole dump: a listing or `-S` output (absent for iptables-save dumps). */
  readonly coverage?: TableCoverage;
  /** Chains in declaration order (built-ins first as iptables-save prints them). */
  readonly chains: readonly Chain[];
  readonly chainsByName: ReadonlyMap<string, Chain>;
  /**
   * Chains that restore input deletes (`-X CHAIN`: kube-proxy removes a stale Service's chains so,
   * after declaring them to flush them). As after iptables-restore, they are not in `chains`;
   * kept here so that `kpx dump` writes the deletion back. Absent when nothing was deleted.
   */
  readonly deletedChains?: readonly DeletedChain[];
}

/** A chain `-X` deleted: its declaration (when the input had one) and the deleting line. */
export interface DeletedChain {
  /** The chain; absent only for a bare `-X` that found no user chain to delete. */
  readonly name?: string;
  /** Deleted by a bare `-X`, which deletes every user chain of the table. */
  readonly all?: true;
  /** Its `:NAME …` declaration line, when it was declared before the deletion. */
  readonly line?: number;
  readonly policy?: string;
  readonly counters?: Counters;
  /** Rules it still had: iptables-restore refuses such a deletion (an error says so); kept for the round trip. */
  readonly rules?: readonly Rule[];
  /** The `-X` line, and the option as spelled there (`-X` or `--delete-chain`). */
  readonly deletedAt: number;
  readonly spelled: string;
}

export interface UnsupportedLine {
  readonly line: number;
  readonly column: number;
  readonly text: string;
  readonly reason: string;
}

export interface RestoreCommand {
  readonly line: number;
  readonly command: string;
  readonly spelled: string;
  readonly table?: string;
  readonly args: readonly string[];
}

export interface Ruleset {
  readonly file: string;
  /** 6 when written by ip6tables-save or holding IPv6 addresses; 4 otherwise. */
  readonly family: 4 | 6;
  readonly backend: 'nf_tables' | 'legacy' | 'unknown';
  readonly tables: readonly Table[];
  readonly headers: readonly Extract<SaveComment, { kind: 'generated' }>[];
  /** `# Warning: iptables-legacy tables present` was seen: another backend holds rules too. */
  readonly legacyTablesWarning: boolean;
  /** Tables iptables-nft could not print (`# Table `x' is incompatible`). */
  readonly incompatibleTables: readonly string[];
  readonly comments: readonly { readonly line: number; readonly text: string }[];
  readonly commands: readonly RestoreCommand[];
  readonly unsupported: readonly UnsupportedLine[];
  readonly noise: readonly { readonly line: number; readonly text: string; readonly noise: string }[];
  readonly ruleCount: number;
  /**
   * `iptables-restore --noflush` input (kube-proxy's payload), not a dump: its tables declare
   * only some user chains and no built-in chain, so chains it does not declare (built-ins,
   * other programs' chains such as kubelet's KUBE-MARK-DROP) may exist in the kernel and are
   * unknown, not missing. Set by src/load (restore-input.ts); absent for dumps.
   */
  readonly restoreInput?: true;
  /**
   * Read from `nft list ruleset` of the tables iptables-nft wrote (src/extract/iptables-nft-view.ts),
   * not from iptables-save: rule text and lines are the nft listing's, `items` are empty, and matches
   * nft shows only as `xt` residue are `residue` (their options unknown).
   */
  readonly viewOf?: 'nft';
}

/**
 * A ruleset made of tables another reader built (an `iptables -L` listing, the nft view of
 * iptables-nft's tables): none of iptables-save's header, warning, comment or command lines.
 */
export function rulesetOfTables(file: string, family: 4 | 6, backend: Ruleset['backend'], tables: readonly Table[]): Ruleset {
  return {
    file,
    family,
    backend,
    tables,
    headers: [],
    legacyTablesWarning: false,
    incompatibleTables: [],
    comments: [],
    commands: [],
    unsupported: [],
    noise: [],
    ruleCount: tables.reduce((n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0), 0),
  };
}

export function findTable(rs: Ruleset, name: string): Table | undefined {
  return rs.tables.find((t) => t.name === name);
}

export function isTerminal(t: Target | undefined): boolean {
  if (!t) return false;
  switch (t.kind) {
    case 'accept':
    case 'drop':
    case 'reject':
    case 'dnat':
    case 'snat':
    case 'masquerade':
    case 'redirect':
    case 'queue':
      return true;
    case 'extension':
      return t.terminating;
    default:
      return false;
  }
}

/**
 * Is this chain's rule list whole in the evidence? False for a chain of a listing that was not
 * listed (only referenced) or was cut by the author, and for chains of a fragment (a grep).
 */
export function chainShownWhole(t: Table, chain: string): boolean {
  if (t.coverage) return t.coverage.listed.has(chain) && !t.coverage.elided.has(chain);
  return !t.implicit;
}

/** Does the evidence show this table whole (a dump, or a listing of every chain with nothing cut)? */
export function tableShownWhole(t: Table): boolean {
  if (t.coverage) return t.coverage.allChains && t.coverage.elided.size === 0;
  return !t.implicit;
}

/**
 * In a table cut before COMMIT (a truncated dump), the chains whose rules may be missing: the chain
 * holding the last rule read (its tail may be past the cut) and every chain after it (iptables-save
 * prints rules in chain order), with the last line read. Empty for a committed table or a fragment.
 */
export function chainsPastCut(t: Table | undefined): { readonly chains: ReadonlySet<Chain>; readonly line: number } {
  const chains = new Set<Chain>();
  if (!t || t.committed || t.implicit) return { chains, line: 0 };
  let at = -1;
  let line = t.line;
  t.chains.forEach((c, i) => {
    if (c.line !== undefined && c.line > line) line = c.line;
    const r = c.rules[c.rules.length - 1];
    if (r && r.line >= line) {
      line = r.line;
      at = i;
    }
  });
  for (let i = Math.max(at, 0); i < t.chains.length; i++) chains.add(t.chains[i]);
  return { chains, line };
}
