/**
 * The options of the iptables extensions kpx reads exactly as iptables does (issue 14): for each
 * match and target, its long options (getopt's table), how many words each takes, which may be
 * negated, which exclude each other and which are required — from iptables 1.8's `libxt_*.c` /
 * `libipt_*.c` `x6_options`/`opts` and `x6_fcheck` (checked against the real iptables-restore).
 *
 * An extension not listed here is read as before (any `--option` with the words that follow):
 * kpx cannot know its arity, and refusing it would refuse real dumps.
 *
 * Spec language, one string per option: `name[|alias…]:WORDS[!][*]`
 *  - WORDS: how many words the option takes (getopt's argument, plus the extra words some
 *    extensions read themselves from argv, e.g. `--tcp-flags MASK COMP`, `--match-set NAME FLAGS`);
 *  - `!`: the option may be negated (`! --dport 80`);
 *  - `*`: the option may be given more than once.
 * Aliases share one identity: `--sport 1 --source-port 2` is the same option given twice.
 */

export interface OptionSpec {
  /** The canonical spelling, with `--`. */
  readonly name: string;
  /** Every spelling (canonical first), with `--`. */
  readonly spellings: readonly string[];
  readonly words: number;
  readonly invert: boolean;
  readonly multi: boolean;
}

export interface ExtensionSpec {
  readonly name: string;
  readonly kind: 'match' | 'target';
  readonly options: readonly OptionSpec[];
  /** After the rule is read: what iptables' final check refuses, as a message (undefined: fine). */
  check?(given: ReadonlySet<string>, rule: RuleFacts): string | undefined;
  /** While each of its options is read (what the extension's parse function checks then). */
  parseCheck?(rule: RuleFacts): string | undefined;
}

/** What a final check may look at besides the extension's own options. */
export interface RuleFacts {
  /** The `-p` argument as written (lower-cased), undefined when absent. */
  readonly protocol: string | undefined;
  readonly protocolNegated: boolean;
  /** The argument of each given option of this extension instance, by canonical name. */
  readonly args: ReadonlyMap<string, readonly string[]>;
}

function opts(...specs: string[]): OptionSpec[] {
  return specs.map((s) => {
    const m = /^([\w|-]+):(\d)(!?)(\*?)$/.exec(s);
    if (!m) throw new Error(`bad option spec ${s}`);
    const spellings = m[1].split('|').map((n) => `--${n}`);
    return { name: spellings[0], spellings, words: Number(m[2]), invert: m[3] === '!', multi: m[4] === '*' };
  });
}

/** `a` and `b` given together → iptables' message. */
function exclusive(given: ReadonlySet<string>, ext: string, groups: readonly (readonly string[])[]): string | undefined {
  for (const g of groups) {
    const present = g.filter((o) => given.has(o));
    if (present.length > 1) return `${ext}: option "${present[0]}" cannot be used together with "${present[1]}"`;
  }
  return undefined;
}

function requireOne(given: ReadonlySet<string>, names: readonly string[], message: string): string | undefined {
  return names.some((n) => given.has(n)) ? undefined : message;
}

/** Protocol names iptables accepts for a port match, by number too (`-p 6`). */
const PROTOCOL_ALIASES: Record<string, string> = { '6': 'tcp', '17': 'udp', '132': 'sctp', '33': 'dccp', '136': 'udplite', '1': 'icmp', '58': 'ipv6-icmp', icmpv6: 'ipv6-icmp' };

export function protocolName(p: string | undefined): string | undefined {
  if (p === undefined) return undefined;
  const lower = p.toLowerCase();
  return PROTOCOL_ALIASES[lower] ?? lower;
}

/**
 * A protocol match (`-m tcp`) needs `-p` of its protocol (nft: userspace; legacy: the kernel).
 * With `! -p PROTO` the backends disagree (iptables-legacy's kernel check refuses the match;
 * iptables-nft accepts it or not depending on whether it can translate the match to native
 * nftables expressions): kpx does not refuse it.
 */
function needsProtocol(proto: string, label: string): (given: ReadonlySet<string>, rule: RuleFacts) => string | undefined {
  return (_given, rule) => (protocolName(rule.protocol) === proto ? undefined : `${label} match requires '-p ${proto === 'ipv6-icmp' ? 'icmpv6' : proto}'`);
}

const PORT_PROTOCOLS = new Set(['tcp', 'udp', 'udplite', 'sctp', 'dccp']);

const SPECS: ExtensionSpec[] = [
  { name: 'comment', kind: 'match', options: opts('comment:1'), check: (g) => requireOne(g, ['--comment'], 'comment: option "--comment" must be specified') },
  {
    name: 'tcp',
    kind: 'match',
    options: opts('sport|source-port:1!', 'dport|destination-port:1!', 'syn:0!', 'tcp-flags:2!', 'tcp-option:1!'),
    check: (g, r) => needsProtocol('tcp', 'TCP')(g, r) ?? (g.has('--syn') && g.has('--tcp-flags') ? "Only one of `--syn' or `--tcp-flags' allowed" : undefined),
  },
  { name: 'udp', kind: 'match', options: opts('sport|source-port:1!', 'dport|destination-port:1!'), check: needsProtocol('udp', 'UDP') },
  { name: 'sctp', kind: 'match', options: opts('sport|source-port:1!', 'dport|destination-port:1!', 'chunk-types:2!'), check: needsProtocol('sctp', 'SCTP') },
  { name: 'icmp', kind: 'match', options: opts('icmp-type:1!'), check: needsProtocol('icmp', 'ICMP') },
  { name: 'icmp6', kind: 'match', options: opts('icmpv6-type:1!'), check: needsProtocol('ipv6-icmp', 'ICMPv6') },
  {
    name: 'multiport',
    kind: 'match',
    options: opts('sports|source-ports:1!', 'dports|destination-ports:1!', 'ports:1!'),
    // libxt_multiport checks the protocol while parsing its option: `-p` must come first.
    parseCheck: (r) => {
      const p = protocolName(r.protocol);
      if (p === undefined) return "multiport needs `-p tcp', `-p udp', `-p udplite', `-p sctp' or `-p dccp'";
      if (!PORT_PROTOCOLS.has(p) || r.protocolNegated) return 'multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP';
      return undefined;
    },
    check: (g) => (g.size === 0 ? 'multiport expects an option' : exclusive(g, 'multiport', [['--sports', '--dports', '--ports']])),
  },
  {
    name: 'conntrack',
    kind: 'match',
    options: opts(
      'ctstate:1!', 'ctproto:1!', 'ctorigsrc:1!', 'ctorigdst:1!', 'ctreplsrc:1!', 'ctrepldst:1!', 'ctorigsrcport:1!', 'ctorigdstport:1!',
      'ctreplsrcport:1!', 'ctrepldstport:1!', 'ctstatus:1!', 'ctexpire:1!', 'ctdir:1',
    ),
    check: (g) => (g.size === 0 ? 'conntrack: At least one option is required' : undefined),
  },
  { name: 'state', kind: 'match', options: opts('state:1!'), check: (g) => requireOne(g, ['--state'], 'state: option "--state" must be specified') },
  { name: 'mark', kind: 'match', options: opts('mark:1!'), check: (g) => requireOne(g, ['--mark'], 'mark: option "--mark" must be specified') },
  { name: 'connmark', kind: 'match', options: opts('mark:1!'), check: (g) => requireOne(g, ['--mark'], 'connmark: option "--mark" must be specified') },
  {
    name: 'addrtype',
    kind: 'match',
    options: opts('src-type:1!', 'dst-type:1!', 'limit-iface-in:0', 'limit-iface-out:0'),
    check: (g) =>
      requireOne(g, ['--src-type', '--dst-type'], 'addrtype: you must specify --src-type or --dst-type') ?? exclusive(g, 'addrtype', [['--limit-iface-in', '--limit-iface-out']]),
  },
  {
    name: 'statistic',
    kind: 'match',
    options: opts('mode:1', 'probability:1!', 'every:1!', 'packet:1'),
    check: (g, r) => {
      if (!g.has('--mode')) return 'statistic: option "--mode" must be specified';
      const bad = exclusive(g, 'statistic', [['--probability', '--every'], ['--probability', '--packet']]);
      if (bad) return bad;
      const mode = r.args.get('--mode')?.[0];
      if (mode === 'random') return g.has('--probability') ? undefined : '--probability must be specified when using random mode';
      if (mode === 'nth') return g.has('--every') ? undefined : '--every and --packet must be specified when using nth mode';
      return `Bad mode "${mode}"`;
    },
  },
  {
    name: 'recent',
    kind: 'match',
    options: opts('set:0!', 'rcheck:0!', 'update:0!', 'remove:0!', 'seconds:1', 'reap:0', 'hitcount:1', 'rttl:0', 'name:1', 'rsource:0', 'rdest:0', 'mask:1'),
    check: (g) =>
      exclusive(g, 'recent', [['--set', '--rcheck', '--update', '--remove'], ['--rsource', '--rdest']]) ??
      requireOne(g, ['--set', '--rcheck', '--update', '--remove'], "recent: you must specify one of `--set', `--rcheck' `--update' or `--remove'") ??
      (g.has('--reap') && !g.has('--seconds') ? 'recent: option "--reap" also requires "--seconds"' : undefined),
  },
  {
    name: 'physdev',
    kind: 'match',
    options: opts('physdev-in:1!', 'physdev-out:1!', 'physdev-is-in:0!', 'physdev-is-out:0!', 'physdev-is-bridged:0!'),
    check: (g) => (g.size === 0 ? 'PHYSDEV: no physdev option specified' : undefined),
  },
  { name: 'limit', kind: 'match', options: opts('limit:1', 'limit-burst:1') },
  {
    name: 'iprange',
    kind: 'match',
    options: opts('src-range:1!', 'dst-range:1!'),
    check: (g) => requireOne(g, ['--src-range', '--dst-range'], "iprange match: You must specify `--src-range' or `--dst-range'"),
  },
  {
    name: 'set',
    kind: 'match',
    options: opts('match-set|set:2!', 'return-nomatch:0', 'update-counters:0!', 'update-subcounters:0!', 'packets-eq:1!', 'packets-lt:1', 'packets-gt:1', 'bytes-eq:1!', 'bytes-lt:1', 'bytes-gt:1'),
    check: (g) => requireOne(g, ['--match-set'], 'You must specify `--match-set\' with proper arguments'),
  },

  { name: 'REJECT', kind: 'target', options: opts('reject-with:1') },
  { name: 'DNAT', kind: 'target', options: opts('to-destination:1', 'random:0', 'persistent:0'), check: (g) => requireOne(g, ['--to-destination'], 'DNAT: option "--to-destination" must be specified') },
  { name: 'SNAT', kind: 'target', options: opts('to-source:1', 'random:0', 'random-fully:0', 'persistent:0'), check: (g) => requireOne(g, ['--to-source'], 'SNAT: option "--to-source" must be specified') },
  { name: 'MASQUERADE', kind: 'target', options: opts('to-ports:1', 'random:0', 'random-fully:0') },
  { name: 'REDIRECT', kind: 'target', options: opts('to-ports:1', 'random:0') },
  {
    name: 'MARK',
    kind: 'target',
    options: opts('set-xmark:1', 'set-mark:1', 'and-mark:1', 'or-mark:1', 'xor-mark:1'),
    check: (g) => {
      const all = ['--set-xmark', '--set-mark', '--and-mark', '--or-mark', '--xor-mark'];
      return exclusive(g, 'MARK', [all]) ?? requireOne(g, all, 'MARK: One of the --set-xmark, --{and,or,xor,set}-mark options is required');
    },
  },
  {
    name: 'CONNMARK',
    kind: 'target',
    options: opts('set-xmark:1', 'set-mark:1', 'and-mark:1', 'or-mark:1', 'xor-mark:1', 'save-mark:0', 'restore-mark:0', 'mask:1', 'ctmask:1', 'nfmask:1'),
    check: (g) => {
      const ops = ['--set-xmark', '--set-mark', '--and-mark', '--or-mark', '--xor-mark', '--save-mark', '--restore-mark'];
      return exclusive(g, 'CONNMARK', [ops]) ?? requireOne(g, ops, 'CONNMARK target: No operation specified');
    },
  },
  { name: 'LOG', kind: 'target', options: opts('log-level:1', 'log-prefix:1', 'log-tcp-sequence:0', 'log-tcp-options:0', 'log-ip-options:0', 'log-uid:0', 'log-macdecode:0') },
  { name: 'NFLOG', kind: 'target', options: opts('nflog-group:1', 'nflog-prefix:1', 'nflog-range:1', 'nflog-size:1', 'nflog-threshold:1') },
  // Standard targets: iptables' built-in verdicts take no option.
  { name: 'ACCEPT', kind: 'target', options: [] },
  { name: 'DROP', kind: 'target', options: [] },
  { name: 'RETURN', kind: 'target', options: [] },
];

const MATCHES = new Map<string, ExtensionSpec>();
const TARGETS = new Map<string, ExtensionSpec>();
for (const s of SPECS) (s.kind === 'match' ? MATCHES : TARGETS).set(s.name, s);

export function matchSpec(name: string): ExtensionSpec | undefined {
  return MATCHES.get(name);
}

export function targetSpec(name: string): ExtensionSpec | undefined {
  return TARGETS.get(name);
}

/** The names whose text decides how a rule's options are read (ShapeCache keys them). */
export function isSpecName(name: string): boolean {
  return MATCHES.has(name) || TARGETS.has(name);
}

/** The match iptables loads for `-p PROTO` when an option no loaded extension knows follows. */
export function implicitMatchFor(protocol: string | undefined): string | undefined {
  const p = protocolName(protocol);
  if (p === undefined) return undefined;
  if (p === 'ipv6-icmp') return 'icmp6';
  return MATCHES.has(p) ? p : undefined;
}

/**
 * iptables' own long options (xshared.c `original_opts`), the ones a rule line may hold, and
 * the ones it refuses there: an abbreviation is resolved against all of them (`--d` is
 * ambiguous between `--delete` and `--destination`).
 */
export type GlobalOption = 'source' | 'destination' | 'in-interface' | 'out-interface' | 'protocol' | 'fragment' | 'jump' | 'goto' | 'match' | 'set-counters' | 'ipv4' | 'ipv6' | 'other';

export const GLOBAL_OPTIONS: readonly { readonly name: string; readonly id: GlobalOption; readonly key: string; readonly arg: 0 | 1 | 2 }[] = [
  ['append', 'other', 'A', 1], ['delete', 'other', 'D', 1], ['check', 'other', 'C', 1], ['insert', 'other', 'I', 1], ['replace', 'other', 'R', 1],
  ['list', 'other', 'L', 2], ['list-rules', 'other', 'S', 2], ['flush', 'other', 'F', 2], ['zero', 'other', 'Z', 2], ['new-chain', 'other', 'N', 1],
  ['delete-chain', 'other', 'X', 2], ['rename-chain', 'other', 'E', 1], ['policy', 'other', 'P', 1],
  ['source', 'source', 's', 1], ['destination', 'destination', 'd', 1], ['src', 'source', 's', 1], ['dst', 'destination', 'd', 1],
  ['protocol', 'protocol', 'p', 1], ['in-interface', 'in-interface', 'i', 1], ['jump', 'jump', 'j', 1], ['table', 'other', 't', 1],
  ['match', 'match', 'm', 1], ['numeric', 'other', 'n', 0], ['out-interface', 'out-interface', 'o', 1], ['verbose', 'other', 'v', 0],
  ['wait', 'other', 'w', 2], ['wait-interval', 'other', 'W', 2], ['exact', 'other', 'x', 0], ['fragments', 'fragment', 'f', 0],
  ['version', 'other', 'V', 0], ['help', 'other', 'h', 2], ['line-numbers', 'other', '0', 0], ['modprobe', 'other', 'M', 1],
  ['set-counters', 'set-counters', 'c', 1], ['goto', 'goto', 'g', 1], ['ipv4', 'ipv4', '4', 0], ['ipv6', 'ipv6', '6', 0],
].map(([name, id, key, arg]) => ({ name: `--${name as string}`, id: id as GlobalOption, key: key as string, arg: arg as 0 | 1 | 2 }));
