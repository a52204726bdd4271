/**
 * A rule's options read the way iptables' `do_parse()` reads its argv (issue 14): getopt_long
 * over iptables' own options plus the options of every extension loaded so far (newest first),
 * unique prefixes accepted, `!` before the option it negates, the protocol's match loaded
 * implicitly when an option no loaded extension knows follows `-p PROTO`, options of an
 * extension accepted anywhere after it is loaded (`-m tcp -p tcp -d VIP --dport 80 ! -s NET`).
 * What iptables refuses while parsing, this refuses with its reason.
 *
 * What decides the reading: token types, long-option spellings, and the words after `-m`, `-j`,
 * `-g`, `-p` and `--mode` (ShapeCache keys exactly these, see keysNextWord()). Argument values
 * iptables checks (ports, marks, probabilities) are recorded as ValueChecks and checked per
 * line, outside the shared plan.
 */
import type { IToken, TokenType } from '../common/chevrotain.js';
import * as T from './tokens.js';
import { GLOBAL_OPTIONS, matchSpec, protocolName, targetSpec, type ExtensionSpec, type GlobalOption, type OptionSpec, type RuleFacts } from './extensions.js';
import { memo, type GetoptFailure, type ItemPlan, type OptionPlan, type Tok, type ValueCheck, type ValueKind } from './plan.js';
import type { GenericOption } from '../common/iptables-syntax.js';

const BY_TOKEN = new Map<TokenType, GlobalOption>([
  [T.Source, 'source'],
  [T.Destination, 'destination'],
  [T.InInterface, 'in-interface'],
  [T.OutInterface, 'out-interface'],
  [T.Protocol, 'protocol'],
  [T.Fragment, 'fragment'],
  [T.Ipv4Flag, 'ipv4'],
  [T.Ipv6Flag, 'ipv6'],
  [T.MatchOpt, 'match'],
  [T.Jump, 'jump'],
  [T.Goto, 'goto'],
  [T.SetCounters, 'set-counters'],
]);

/** Protocols whose match iptables loads by the protocol's name (`load_proto()`). */
const PROTOCOL_MATCH: Record<string, string> = { tcp: 'tcp', udp: 'udp', udplite: 'udplite', sctp: 'sctp', dccp: 'dccp', icmp: 'icmp', 'ipv6-icmp': 'icmp6', esp: 'esp', ah: 'ah', mh: 'mh', 'ipv6-mh': 'mh' };

/** Argument values iptables checks while parsing, by `extension option`. */
const VALUE_KINDS = new Map<string, ValueKind>([
  ...['tcp', 'udp', 'sctp'].flatMap((m) => [[`${m} --sport`, 'port'], [`${m} --dport`, 'port']] as [string, ValueKind][]),
  ['multiport --sports', 'port-list'],
  ['multiport --dports', 'port-list'],
  ['multiport --ports', 'port-list'],
  ['MARK --set-xmark', 'mark-mask'],
  ['MARK --set-mark', 'mark-mask'],
  ['MARK --and-mark', 'mark'],
  ['MARK --or-mark', 'mark'],
  ['MARK --xor-mark', 'mark'],
  ['CONNMARK --set-xmark', 'mark-mask'],
  ['CONNMARK --set-mark', 'mark-mask'],
  ['CONNMARK --and-mark', 'mark'],
  ['CONNMARK --or-mark', 'mark'],
  ['CONNMARK --xor-mark', 'mark'],
  ['CONNMARK --mask', 'mark'],
  ['CONNMARK --ctmask', 'mark'],
  ['CONNMARK --nfmask', 'mark'],
  ['mark --mark', 'mark-mask'],
  ['connmark --mark', 'mark-mask'],
  ['statistic --probability', 'probability'],
  ['statistic --every', 'count'],
  ['statistic --packet', 'count'],
]);

const PORT_PROTOCOLS = new Set(['tcp', 'udp', 'sctp', 'dccp']);

/** Words whose text the reading depends on follow these options (and their abbreviations). */
const KEYED_LONG = ['--match', '--jump', '--goto', '--protocol', '--mode'];

/** Does the word after `prev` decide how the rest of the line is read (ShapeCache must key it)? */
export function keysNextWord(prev: IToken): boolean {
  const t = prev.tokenType;
  if (t === T.MatchOpt || t === T.Jump || t === T.Goto || t === T.Protocol) return true;
  if (t !== T.LongOption) return false;
  const image = prev.image;
  for (const k of KEYED_LONG) if (k.startsWith(image)) return true;
  return false;
}

/** How a target name is keyed: by name when it has a spec, else by what kind of reading it gets. */
export function targetKey(name: string): string {
  if (targetSpec(name) !== undefined) return name;
  return EXTENSION_LIKE.test(name) ? '#extension' : '#chain';
}

/** Target names read as an unknown extension (any options kept); anything else is a chain (no options). */
const EXTENSION_LIKE = /^[A-Z][A-Z0-9_]*$/;

/** A loaded match or target. */
interface Ext {
  readonly name: string;
  readonly spec: ExtensionSpec | undefined;
  readonly kind: 'match' | 'target';
  /** The rule item it is (its `-m`/`-j` block, or the implicit block it was loaded by). */
  readonly item: number;
  /** The token to point at when its final check fails. */
  readonly at: Tok;
  /** Option identities given (canonical names). */
  readonly given: Set<string>;
  readonly args: Map<string, string[]>;
  /** No spec: any `--option` with the words that follow is kept (the superset reading). */
  readonly open: boolean;
}

type Resolved =
  | { readonly k: 'global'; readonly id: GlobalOption; readonly name: string }
  | { readonly k: 'ext'; readonly ext: Ext; readonly option: OptionSpec }
  | { readonly k: 'ambiguous' }
  | { readonly k: 'unknown' };

type MutableItem = ItemPlan & { options?: OptionPlan[] };

class Walk {
  readonly items: MutableItem[] = [];
  readonly checks: ValueCheck[] = [];
  private readonly instances: Ext[] = [];
  /** The newest instance of each extension, and the newest open one: looked up per option, so kept, not searched (a rule may load 40,000 matches). */
  private readonly newest = new Map<string, Ext>();
  private newestOpen: Ext | undefined;
  /** Extension names in the order their options were merged into getopt's table (first load). */
  private readonly table: string[] = [];
  private current = -1;
  private protocol: string | undefined;
  private protocolNegated = false;
  private protoUsed = false;
  private target: Ext | undefined;
  private readonly generics = new Set<GenericOption | 'set-counters'>();
  /** The `--reject-with` argument (-1: none). */
  private rejectWith: Tok = -1;
  failure: GetoptFailure | undefined;

  constructor(
    private readonly tokens: readonly IToken[],
    private readonly end: Tok,
  ) {}

  private fail(at: Tok, expected: string, message: string): false {
    this.failure ??= { getopt: true, at, expected, message };
    return false;
  }

  /** Reads the options from token `i` on; false when iptables refuses them. */
  run(i: Tok): boolean {
    let bang: Tok = -1;
    while (i < this.end) {
      const t = this.tokens[i];
      const type = t.tokenType;
      if (type === T.Bang) {
        if (bang !== -1) return this.fail(i, 'an option', 'multiple consecutive ! not allowed');
        bang = i++;
        continue;
      }
      let global: GlobalOption | undefined = BY_TOKEN.get(type);
      let canonical: string | undefined;
      let resolved: Resolved | undefined;
      if (global === undefined && type === T.LongOption) {
        resolved = this.resolve(t.image, this.openOwner() !== undefined);
        if (resolved.k === 'global') {
          global = resolved.id;
          if (resolved.name !== t.image) canonical = resolved.name;
        }
      }
      if (global !== undefined) {
        const next = this.global(global, bang, i, canonical);
        if (next < 0) return false;
        i = next;
      } else if (type === T.LongOption) {
        const next = this.extensionOption(resolved!, bang, i);
        if (next < 0) return false;
        i = next;
      } else if (type === T.ShortOption) {
        return this.fail(i, 'an option', `invalid option ${t.image}`);
      } else if (T.ARG_LIKE_TYPES.has(type)) {
        return this.fail(i, 'an option or !', `Bad argument \`${t.image}'`);
      } else {
        // -A/-N/… inside a rule: a second command.
        return this.fail(i, 'an option', `${t.image} cannot be used inside a rule (only one command per line)`);
      }
      bang = -1;
    }
    if (bang !== -1) return this.fail(bang, 'an option after !', 'nothing appropriate following !');
    return this.finalChecks();
  }

  /**
   * getopt_long's choice: an exact name, else the one option (or aliases of one) the prefix
   * names. With an extension loaded whose options kpx does not know, a name that is not exact
   * may be one of its own (`-m policy --pol ipsec`): it is left to that extension.
   */
  private resolve(image: string, open = false): Resolved {
    for (const g of GLOBAL_OPTIONS) if (g.name === image) return { k: 'global', id: g.id, name: g.name };
    for (let n = this.table.length - 1; n >= 0; n--) {
      const ext = this.latest(this.table[n]);
      for (const o of ext.spec!.options) if (o.spellings.includes(image)) return { k: 'ext', ext, option: o };
    }
    if (open) return { k: 'unknown' };
    let found: Resolved | undefined;
    let identity: string | undefined;
    for (const g of GLOBAL_OPTIONS) {
      if (!g.name.startsWith(image)) continue;
      const id = `global ${g.key} ${g.arg}`;
      if (identity === undefined) {
        identity = id;
        found = { k: 'global', id: g.id, name: g.name };
      } else if (identity !== id) return { k: 'ambiguous' };
    }
    for (let n = this.table.length - 1; n >= 0; n--) {
      const ext = this.latest(this.table[n]);
      for (const o of ext.spec!.options) {
        if (!o.spellings.some((s) => s.startsWith(image))) continue;
        const id = `${ext.name} ${o.name}`;
        if (identity === undefined) {
          identity = id;
          found = { k: 'ext', ext, option: o };
        } else if (identity !== id) return { k: 'ambiguous' };
      }
    }
    return found ?? { k: 'unknown' };
  }

  private latest(name: string): Ext {
    const ext = this.newest.get(name);
    if (ext === undefined) throw new Error(`extension ${name} not loaded`);
    return ext;
  }

  private load(name: string, kind: 'match' | 'target', item: number, at: Tok): Ext {
    const spec = kind === 'match' ? matchSpec(name) : targetSpec(name);
    const open = spec === undefined && (kind === 'match' || EXTENSION_LIKE.test(name));
    const ext: Ext = { name, spec, kind, item, at, given: new Set(), args: new Map(), open };
    this.instances.push(ext);
    this.newest.set(name, ext);
    if (open) this.newestOpen = ext;
    if (spec !== undefined && !this.table.includes(name)) this.table.push(name);
    return ext;
  }

  /** iptables' own options; returns the next token index, or -1. */
  private global(id: GlobalOption, bang: Tok, i: Tok, canonical: string | undefined): number {
    const spelled = this.tokens[i].image;
    switch (id) {
      case 'match':
      case 'jump':
      case 'goto': {
        if (bang !== -1) this.fail(bang, 'an option', id === 'match' ? 'unexpected ! flag before --match' : `cannot have ! before ${spelled}`);
        if (i + 1 >= this.end) this.fail(-1, id === 'match' ? 'a match module name' : 'a target name', `option "${spelled}" requires an argument`);
        if (this.failure) return -1;
        const item = this.items.length;
        if (id === 'match') {
          this.load(this.tokens[i + 1].image, 'match', item, i);
          this.items.push({ k: 'match', m: i, name: i + 1, options: [], module: memo() });
        } else {
          if (this.target !== undefined) return this.fail(i, 'an option', `multiple ${spelled} flags not allowed`), -1;
          this.target = this.load(this.tokens[i + 1].image, 'target', item, i);
          this.items.push({ k: 'target', j: i, goto: id === 'goto', name: i + 1, options: [], target: memo() });
        }
        this.current = item;
        return i + 2;
      }
      case 'set-counters': {
        if (i + 2 >= this.end) return this.fail(-1, 'packet and byte counters', `option "${spelled}" requires two arguments`), -1;
        this.items.push({ k: 'set-counters', opt: i, a: i + 1, b: i + 2 });
        this.current = -1;
        return i + 3;
      }
      case 'other':
        return this.fail(i, 'an option', `${canonical ?? spelled} cannot be used inside a rule`), -1;
      default: {
        const option = id as GenericOption;
        if (this.generics.has(option)) return this.fail(i, 'an option', `multiple ${spelled} flags not allowed`), -1;
        this.generics.add(option);
        this.current = -1;
        if (option === 'fragment' || option === 'ipv4' || option === 'ipv6') {
          this.items.push({ k: 'flag', option, bang, opt: i });
          return i + 1;
        }
        // `-s ! 10.0.0.0/8`: the negation iptables ≤ 1.4.2 wrote after the option.
        let late: Tok = -1;
        let arg = i + 1;
        if (bang === -1 && arg + 1 < this.end && this.tokens[arg].tokenType === T.Bang) {
          late = arg;
          arg++;
        }
        if (arg >= this.end) return this.fail(-1, 'an argument', `option "${spelled}" requires an argument`), -1;
        if (option === 'protocol') {
          this.protocol = this.tokens[arg].image.toLowerCase();
          this.protocolNegated = bang !== -1 || late !== -1;
        }
        this.items.push({ k: 'generic', option, bang, opt: i, late, arg, args: memo() });
        return arg + 1;
      }
    }
  }

  /** An option of a loaded extension (or of the protocol's match, loaded now); next index or -1. */
  private extensionOption(resolved: Resolved, bang: Tok, i: Tok): number {
    const image = this.tokens[i].image;
    if (resolved.k !== 'ext') {
      // getopt did not know it: iptables loads the protocol's match once and asks again.
      const proto = protocolName(this.protocol);
      const implicit = proto === undefined ? undefined : PROTOCOL_MATCH[proto];
      const open = this.openOwner();
      if (implicit !== undefined && !this.protoUsed && (open === undefined || knows(matchSpec(implicit), image))) {
        this.protoUsed = true;
        const item = this.items.length;
        this.items.push({ k: 'implicit', options: [] });
        this.current = item;
        const ext = this.load(implicit, 'match', item, i);
        if (ext.open) return this.openOption(ext, bang, i);
        return this.extensionOption(this.resolve(image), bang, i);
      }
      if (open !== undefined && resolved.k === 'unknown') return this.openOption(open, bang, i);
      return this.fail(i, 'an option', `unknown option "${image}"`), -1;
    }
    const { ext, option } = resolved;
    if (bang !== -1 && !option.invert) return this.fail(bang, 'an option that can be negated', `${ext.name}: option "${option.name}" cannot be inverted`), -1;
    if (ext.given.has(option.name) && !option.multi) return this.fail(i, 'an option not given before', `${ext.name}: option "${option.name}" can only be used once`), -1;
    const now = ext.spec?.parseCheck?.(this.facts(ext));
    if (now !== undefined) return this.fail(i, `-p before ${option.name}`, now), -1;
    ext.given.add(option.name);
    let legacy = false;
    let first = i + 1;
    // `--dport ! 80`: iptables ≤ 1.4.2's negation (later versions take `!` for the value).
    if (option.words > 0 && option.invert && bang === -1 && first + option.words < this.end && this.tokens[first].tokenType === T.Bang) {
      legacy = true;
      first++;
    }
    if (first + option.words > this.end) return this.fail(-1, `${option.words === 2 ? 'two arguments' : 'an argument'} for ${option.name}`, `option "${image}" requires an argument`), -1;
    let args: Tok[] | undefined;
    if (option.words > 0) {
      args = [];
      for (let k = 0; k < option.words; k++) args.push(first + k);
      ext.args.set(option.name, args.map((a) => this.tokens[a].image));
      const kind = VALUE_KINDS.get(`${ext.name} ${option.name}`) ?? this.natPorts(ext.name, option.name);
      if (kind !== undefined) this.checks.push({ tok: args[0], kind, ext: ext.name, option: option.name });
      // The kernel sends a TCP reset only for rules matching TCP (REJECT's checkentry): decided
      // once the whole rule is read, wherever `-p` is.
      if (ext.name === 'REJECT' && option.name === '--reject-with') this.rejectWith = args[0];
    }
    this.place({ bang, name: i, legacy, args, owner: -1, canonical: option.spellings.includes(image) ? undefined : option.name }, ext.item);
    return first + option.words;
  }

  /**
   * NAT targets take ports only with `-p tcp|udp|sctp|dccp` before them (iptables: "Need TCP,
   * UDP, SCTP or DCCP with port specification"); the protocol is part of the shape, the ports
   * are in the value.
   */
  private natPorts(ext: string, option: string): ValueKind | undefined {
    const nat = (ext === 'DNAT' && option === '--to-destination') || (ext === 'SNAT' && option === '--to-source');
    const ports = (ext === 'MASQUERADE' || ext === 'REDIRECT') && option === '--to-ports';
    if (!nat && !ports) return undefined;
    // Only `-p` is looked at, not its negation (iptables-restore accepts `! -p tcp … --to-ports 80`).
    const p = protocolName(this.protocol);
    if (p !== undefined && PORT_PROTOCOLS.has(p)) return undefined;
    return nat ? 'nat-no-ports' : 'ports-need-protocol';
  }

  /** The newest extension kpx has no option table for: unknown options are kept as its own. */
  private openOwner(): Ext | undefined {
    return this.newestOpen;
  }

  /** `[!] --name [!] word*` of an extension without a table (kpx's superset reading). */
  private openOption(ext: Ext, bang: Tok, i: Tok): number {
    let j = i + 1;
    let legacy = false;
    if (bang === -1 && j + 1 < this.end && this.tokens[j].tokenType === T.Bang && T.ARG_LIKE_TYPES.has(this.tokens[j + 1].tokenType)) {
      legacy = true;
      j++;
    }
    let args: Tok[] | undefined;
    while (j < this.end && T.ARG_LIKE_TYPES.has(this.tokens[j].tokenType)) (args ??= []).push(j++);
    this.place({ bang, name: i, legacy, args, owner: -1, canonical: undefined }, ext.item);
    return j;
  }

  /** Writes an option in the block it appears in, saying which item it belongs to when another. */
  private place(option: OptionPlan, ownerItem: number): void {
    if (this.current === -1) {
      this.current = this.items.length;
      this.items.push({ k: 'implicit', options: [] });
    }
    const block = this.items[this.current] as { options: OptionPlan[] };
    block.options.push(ownerItem === this.current ? option : { ...option, owner: ownerItem });
  }

  private facts(ext: Ext): RuleFacts {
    return { protocol: this.protocol, protocolNegated: this.protocolNegated, args: ext.args };
  }

  private finalChecks(): boolean {
    if (this.rejectWith !== -1 && !(protocolName(this.protocol) === 'tcp' && !this.protocolNegated)) {
      this.checks.push({ tok: this.rejectWith, kind: 'reset-needs-tcp', ext: 'REJECT', option: '--reject-with' });
    }
    for (const ext of this.instances) {
      const problem = ext.spec?.check?.(ext.given, this.facts(ext));
      if (problem !== undefined) return this.fail(ext.at, `options ${ext.name} accepts`, problem);
    }
    return true;
  }
}

/** Does this extension have the option (exactly or as the prefix of one)? */
function knows(spec: ExtensionSpec | undefined, image: string): boolean {
  return spec === undefined || spec.options.some((o) => o.spellings.some((s) => s.startsWith(image)));
}

/** The items of a rule from token `from` to `end` (indices in the line), or why iptables refuses them. */
export function readRuleOptions(tokens: readonly IToken[], from: Tok, end: Tok): { items: ItemPlan[]; checks: ValueCheck[] } | GetoptFailure {
  const walk = new Walk(tokens, end);
  if (!walk.run(from)) return walk.failure!;
  return { items: walk.items, checks: walk.checks };
}

const UINT32 = /^(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)$/;

/** strtoul(…, 0) as xtables reads marks: hex, octal with a leading 0, else decimal; undefined above 32 bits. */
export function parseUint32(text: string): number | undefined {
  if (!UINT32.test(text)) return undefined;
  const n = text.length > 1 && text[0] === '0' && text[1] !== 'x' && text[1] !== 'X' ? parseInt(text, 8) : Number(text);
  return n <= 0xffffffff ? n : undefined;
}

const NEED_PORT_PROTOCOL = 'Need TCP, UDP, SCTP or DCCP with port specification';

/** `1.2.3.4:80`, `[fd00::1]:80`, `:80` name ports; a bare IPv6 address has colons but no port. */
function natHasPorts(text: string): boolean {
  if (text.startsWith('[')) return text.includes(']:');
  const first = text.indexOf(':');
  return first >= 0 && first === text.lastIndexOf(':');
}

const PORT = /^(?:\d+|[A-Za-z][\w.-]*)$/;

function portOk(text: string): boolean {
  if (!PORT.test(text)) return false;
  return !/^\d+$/.test(text) || Number(text) <= 65535;
}

function portRangeOk(text: string): boolean {
  const parts = text.split(':');
  if (parts.length > 2) return false;
  if (parts.length === 1) return portOk(parts[0]);
  const [a, b] = parts;
  if ((a !== '' && !portOk(a)) || (b !== '' && !portOk(b))) return false;
  return !(/^\d+$/.test(a) && /^\d+$/.test(b) && Number(a) > Number(b));
}

/** Does iptables accept this argument value? (the message when not) */
export function checkValue(kind: ValueKind, text: string, ext: string, option: string): string | undefined {
  const bad = `${ext}: bad value for option "${option}"`;
  switch (kind) {
    case 'port':
      return portRangeOk(text) ? undefined : `invalid port/service \`${text}' specified`;
    case 'port-list': {
      const parts = text.split(',');
      let n = 0;
      for (const p of parts) {
        if (!portRangeOk(p)) return `invalid port/service \`${p}' specified`;
        n += p.includes(':') ? 2 : 1;
      }
      return n > 15 ? 'too many ports specified' : undefined;
    }
    case 'mark':
      return parseUint32(text) === undefined ? bad : undefined;
    case 'mark-mask': {
      const slash = text.indexOf('/');
      if (slash < 0) return parseUint32(text) === undefined ? bad : undefined;
      return parseUint32(text.slice(0, slash)) === undefined || parseUint32(text.slice(slash + 1)) === undefined ? bad : undefined;
    }
    case 'probability': {
      const p = /^(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(text) ? Number(text) : NaN;
      return p >= 0 && p <= 1 ? undefined : `${ext}: invalid probability "${text}"`;
    }
    case 'count':
      return parseUint32(text) === undefined ? bad : undefined;
    case 'nat-no-ports':
      return natHasPorts(text) ? NEED_PORT_PROTOCOL : undefined;
    case 'ports-need-protocol':
      return NEED_PORT_PROTOCOL;
    case 'reset-needs-tcp':
      return text === 'tcp-reset' ? 'REJECT: tcp-reset is only valid for rules matching TCP (-p tcp)' : undefined;
  }
}
