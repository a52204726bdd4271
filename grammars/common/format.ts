/**
 * The contract every input format implements. A format is sniffed by content (never by file
 * name) with a cheap function that loads no parser; the parser itself is imported lazily, so
 * a run pays Chevrotain's start-up only for the formats present.
 */
import type { Diagnostic } from './source.js';
import type { TextStream } from './stream.js';

export type FormatId =
  | 'iptables-save'
  | 'ipset-list'
  | 'ipset-save'
  | 'ipvsadm'
  | 'ip-route'
  | 'ip-route-json'
  | 'ip-addr'
  | 'ip-addr-json'
  | 'ip-rule'
  | 'ip-rule-json'
  | 'sysctl'
  | 'bridge-link'
  | 'sysfs-net'
  | 'uname'
  | 'nft'
  | 'nft-json'
  | 'kube-proxy-log'
  | 'kube-proxy-config'
  | 'k8s-api'
  | 'kubectl'
  | 'iptables-list'
  | 'paste'
  | 'conntrack'
  | 'conntrack-stats'
  /** Recognised, not read: Cilium's load-balancer tables, packet captures (not kube-proxy's dataplane). */
  | 'foreign';

export interface ParsedInput<T = unknown> {
  readonly format: FormatId;
  readonly file: string;
  readonly data: T;
  readonly diagnostics: readonly Diagnostic[];
  /**
   * The input's form when a format has several (`transaction`: `nft -f` input, commands to be
   * applied, not a listing). `kpx inspect` shows it beside the format.
   */
  readonly variant?: string;
  /** Human-meaningful counts for `kpx inspect` (tables, chains, rules, sets, members, …). */
  readonly counts: Readonly<Record<string, number>>;
}

export interface FormatSniffer {
  readonly id: FormatId;
  /**
   * How sure we are that these (first ~200, already BOM/CRLF-normalised) lines are this
   * format: 0 = not at all, 1 = certain. Must not load a parser.
   */
  sniff(lines: readonly string[]): number;
}

/** Lines read so far, of how many. Called synchronously, mid-parse: keep it cheap. */
export type ParseProgress = (linesDone: number, linesTotal: number) => void;

export interface FormatParser<T = unknown> {
  readonly id: FormatId;
  /**
   * Never throws on user input: problems become diagnostics. Parsers of formats whose dumps
   * get big (iptables-save) report how far they are through `progress`, now and then.
   */
  parse(text: string, file: string, progress?: ParseProgress): ParsedInput<T>;
  /**
   * Readers that can read as the text streams in (issue 23) implement this too, and kpx then
   * calls it instead of parse(): blocks of whole lines arrive as the file is read (linesOf()
   * gives them line by line, numbered), so memory follows what the reader keeps. The text is
   * the same parse() would get; a stream may stop with an error (a limit reached, a read
   * failing): let it propagate. Readers without it get the whole text, up to --max-input-size.
   */
  parseStream?(text: TextStream, file: string, progress?: ParseProgress): Promise<ParsedInput<T>>;
}
