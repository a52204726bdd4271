/**
 * The typed reading of one rule's syntax: what it matches and what it does.
 * Unknown modules and options are kept as `unsupported` matches (never dropped, never guessed).
 */
import { unquote, type OptionSyntax, type RuleItem } from '../../grammars/common/iptables-syntax.js';
import { parseUint32 } from '../../grammars/iptables-save/getopt.js';
import { parseCidr, type Cidr } from '../model/addr.js';
import type { Match, NatTo, PortRange, Target } from '../model/netfilter.js';
import { isTargetExtension } from '../model/iptables-targets.js';

/** `a.b.c.d` or `a.b.c.d/n` as iptables-save prints IPv4 addresses (no leading zeros). */
const IPV4_CIDR = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})(?:\/(\d{1,3}))?$/;

/**
 * parseCidr() with a fast path for the IPv4 forms that fill big dumps (ipaddr.js is exact but
 * slow for 100k addresses); anything else goes to parseCidr, so results are the same.
 */
function readCidr(text: string): Cidr | undefined {
  const m = IPV4_CIDR.exec(text);
  if (m === null) return parseCidr(text);
  const a = Number(m[1]);
  const b = Number(m[2]);
  const c = Number(m[3]);
  const d = Number(m[4]);
  if (a > 255 || b > 255 || c > 255 || d > 255) return parseCidr(text);
  const prefix = m[5] === undefined ? 32 : Number(m[5]);
  if (prefix > 32) return undefined;
  const value = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { family: 4, prefix, network: BigInt((value & mask) >>> 0) };
}

/**
 * `-s`/`-d ADDRESS`: the address is read as a CIDR when first asked for. A 10k-Service dump holds
 * 130k of them and `kpx services` looks at a tenth (the dispatch and firewall rules'); reading the
 * rest was a regex, an object and a BigInt each (issue 20). Read-only like every match; JSON
 * shows the fields it always showed.
 */
class AddressMatch {
  readonly kind = 'address' as const;
  readonly dir: 'src' | 'dst';
  readonly negated: boolean;
  readonly text: string;
  /** null: not read yet. */
  #cidr: Cidr | undefined | null = null;

  constructor(dir: 'src' | 'dst', negated: boolean, text: string) {
    this.dir = dir;
    this.negated = negated;
    this.text = text;
  }

  get cidr(): Cidr | undefined {
    if (this.#cidr === null) this.#cidr = readCidr(this.text);
    return this.#cidr;
  }

  toJSON(): Record<string, unknown> {
    const cidr = this.cidr;
    return cidr ? { kind: this.kind, dir: this.dir, negated: this.negated, text: this.text, cidr } : { kind: this.kind, dir: this.dir, negated: this.negated, text: this.text };
  }
}

const PROTOCOL_NUMBERS: Record<string, string> = { '1': 'icmp', '6': 'tcp', '17': 'udp', '132': 'sctp', '58': 'ipv6-icmp', '33': 'dccp', '136': 'udplite' };

export function normalizeProtocol(p: string): string {
  const lower = p.toLowerCase();
  return PROTOCOL_NUMBERS[lower] ?? (lower === 'icmpv6' ? 'ipv6-icmp' : lower);
}

const PORT_MODULES = new Set(['tcp', 'udp', 'sctp', 'dccp', 'udplite']);

/** Modules kpx knows by name but does not evaluate; a packet's fate under them is "unknown". */
const KNOWN_UNDECIDABLE = new Set([
  'limit', 'hashlimit', 'connlimit', 'owner', 'time', 'length', 'ttl', 'hl', 'pkttype', 'mac', 'dscp', 'tos', 'ecn',
  'helper', 'policy', 'u32', 'string', 'rpfilter', 'ipvs', 'cgroup', 'bpf', 'devgroup', 'cpu', 'quota', 'nfacct',
  'rateest', 'realm', 'cluster', 'connbytes', 'connlabel', 'esp', 'ah', 'ipcomp', 'osf', 'tcpmss', 'frag', 'hbh',
  'dst', 'rt', 'mh', 'ipv6header', 'eui64', 'srh', 'state', 'conntrack', 'set', 'icmp6', 'sctp', 'dccp', 'multiport',
]);

const TERMINATING_EXTENSIONS = new Set(['TPROXY', 'NETMAP', 'SYNPROXY', 'NFQUEUE', 'REDIRECT', 'DNAT', 'SNAT', 'MASQUERADE', 'REJECT', 'QUEUE', 'CLUSTERIP']);

function parsePortRange(text: string): PortRange | undefined {
  const m = /^(\d*)(?::(\d*))?$/.exec(text);
  if (!m) return undefined;
  if (m[2] === undefined) {
    if (m[1] === '') return undefined;
    const p = Number(m[1]);
    return p <= 65535 ? { from: p, to: p } : undefined;
  }
  const from = m[1] === '' ? 0 : Number(m[1]);
  const to = m[2] === '' ? 65535 : Number(m[2]);
  return from <= to && to <= 65535 ? { from, to } : undefined;
}

function parsePortList(text: string): PortRange[] | undefined {
  const out: PortRange[] = [];
  for (const part of text.split(',')) {
    const r = parsePortRange(part);
    if (!r) return undefined;
    out.push(r);
  }
  return out.slice();
}

/** A mark as xtables reads it (strtoul base 0: `0x…` hex, a leading `0` octal, else decimal). */
function parseNumber(text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseUint32(text);
}

/** `VALUE[/MASK]` as iptables prints marks. */
function parseMark(text: string): { value: number; mask: number } | undefined {
  const [v, m] = text.split('/');
  const value = parseNumber(v);
  const mask = m === undefined ? 0xffffffff : parseNumber(m);
  if (value === undefined || mask === undefined) return undefined;
  return { value: value >>> 0, mask: mask >>> 0 };
}

/** DNAT/SNAT `--to-destination` forms: `1.2.3.4`, `1.2.3.4:80`, `1.2.3.4-1.2.3.9:80-90`, `[v6]:53`, `:80`. */
export function parseNatTo(text: string): NatTo {
  let host = text;
  let ports: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    host = text.slice(1, close < 0 ? undefined : close);
    const rest = close < 0 ? '' : text.slice(close + 1);
    if (rest.startsWith(':')) ports = rest.slice(1);
  } else if (text.indexOf(':') >= 0 && text.indexOf(':') === text.lastIndexOf(':')) {
    const i = text.indexOf(':');
    host = text.slice(0, i);
    ports = text.slice(i + 1);
  }
  const dash = host.indexOf('-');
  const ip = dash < 0 ? host : host.slice(0, dash);
  const ipEnd = dash < 0 ? undefined : host.slice(dash + 1, host.indexOf('-', dash + 1) < 0 ? undefined : host.indexOf('-', dash + 1));
  let port: number | undefined;
  let portEnd: number | undefined;
  if (ports !== undefined) {
    const pm = /^(\d+)(?:-(\d+))?/.exec(ports);
    if (pm) {
      port = Number(pm[1]);
      if (pm[2] !== undefined) portEnd = Number(pm[2]);
    }
  }
  // One shape for every NatTo (86k DNATs at 10k Services): absent parts are undefined fields,
  // which JSON leaves out as it left out the fields that were not added.
  return { text, ip: ip || undefined, ipEnd: ipEnd || undefined, port, portEnd };
}

function optionText(o: OptionSyntax): string {
  return `${o.negated ? '! ' : ''}${o.name}${o.args.length ? ' ' + o.args.join(' ') : ''}`;
}

function unsupported(module: string, o: OptionSyntax | undefined, known: boolean): Match {
  return { kind: 'unsupported', module, text: o ? optionText(o) : `-m ${module}`, known };
}

function interpretModule(module: string, options: readonly OptionSyntax[], out: Match[], comments: string[]): void {
  const mod = module.toLowerCase();
  switch (mod) {
    case 'comment':
      for (const o of options) {
        if (o.name === '--comment' && o.args.length === 1) {
          const text = unquote(o.args[0]);
          comments.push(text);
          out.push({ kind: 'comment', text });
        } else out.push(unsupported(mod, o, true));
      }
      return;
    case 'statistic': {
      let mode: string | undefined;
      let probability: number | undefined;
      let every: number | undefined;
      let packet = 0;
      let negated = false;
      for (const o of options) {
        if (o.name === '--mode') mode = o.args[0];
        else if (o.name === '--probability') {
          probability = kernelProbability(Number(o.args[0]));
          negated ||= o.negated;
        } else if (o.name === '--every') {
          every = Number(o.args[0]);
          negated ||= o.negated;
        } else if (o.name === '--packet') packet = Number(o.args[0]);
        else out.push(unsupported(mod, o, true));
      }
      if (mode === 'random' && probability !== undefined && Number.isFinite(probability)) out.push(randomMatch(probability, negated));
      else if (mode === 'nth' && every !== undefined && every > 0) out.push({ kind: 'statistic', mode: 'nth', every, packet, negated });
      else out.push({ kind: 'unsupported', module: mod, text: options.map(optionText).join(' '), known: true });
      return;
    }
    case 'recent': {
      let op: 'set' | 'rcheck' | 'update' | 'remove' | undefined;
      let negated = false;
      let name = 'DEFAULT';
      let seconds: number | undefined;
      let hitcount: number | undefined;
      let reap = false;
      let side: 'rsource' | 'rdest' = 'rsource';
      for (const o of options) {
        switch (o.name) {
          case '--set':
          case '--rcheck':
          case '--update':
          case '--remove':
            op = o.name.slice(2) as typeof op;
            negated = o.negated;
            break;
          case '--name':
            name = unquote(o.args[0] ?? name);
            break;
          case '--seconds':
            seconds = Number(o.args[0]);
            break;
          case '--hitcount':
            hitcount = Number(o.args[0]);
            break;
          case '--reap':
            reap = true;
            break;
          case '--rsource':
          case '--rdest':
            side = o.name.slice(2) as typeof side;
            break;
          case '--mask':
          case '--rttl':
            break;
          default:
            out.push(unsupported(mod, o, true));
        }
      }
      if (op) {
        const m: { -readonly [K in keyof Extract<Match, { kind: 'recent' }>]: Extract<Match, { kind: 'recent' }>[K] } = { kind: 'recent', op, negated, name, reap, side };
        if (seconds !== undefined) m.seconds = seconds;
        if (hitcount !== undefined) m.hitcount = hitcount;
        out.push(m);
      } else out.push({ kind: 'unsupported', module: mod, text: options.map(optionText).join(' '), known: true });
      return;
    }
    case 'addrtype': {
      let limitIface: 'in' | 'out' | undefined;
      for (const o of options) if (o.name === '--limit-iface-in') limitIface = 'in';
      for (const o of options) if (o.name === '--limit-iface-out') limitIface = 'out';
      for (const o of options) {
        if (o.name === '--src-type' || o.name === '--dst-type') {
          const types = (o.args[0] ?? '').split(',').filter(Boolean);
          out.push({ kind: 'addrtype', dir: o.name === '--src-type' ? 'src' : 'dst', negated: o.negated, types, ...(limitIface ? { limitIface } : {}) });
        } else if (o.name !== '--limit-iface-in' && o.name !== '--limit-iface-out') out.push(unsupported(mod, o, true));
      }
      return;
    }
    case 'conntrack':
    case 'state':
      for (const o of options) {
        if ((o.name === '--ctstate' || o.name === '--state') && o.args.length === 1) {
          out.push({ kind: 'ctstate', negated: o.negated, states: o.args[0].split(',') });
        } else out.push(unsupported(mod, o, true));
      }
      return;
    case 'mark':
    case 'connmark':
      for (const o of options) {
        const m = o.name === '--mark' && o.args.length === 1 ? parseMark(o.args[0]) : undefined;
        if (m) out.push({ kind: 'mark', connmark: mod === 'connmark', negated: o.negated, ...m });
        else out.push(unsupported(mod, o, true));
      }
      return;
    case 'set':
      for (const o of options) {
        if ((o.name === '--match-set' || o.name === '--set') && o.args.length === 2) {
          const flags = o.args[1].split(',').filter((f): f is 'src' | 'dst' => f === 'src' || f === 'dst');
          out.push({ kind: 'set', negated: o.negated, name: unquote(o.args[0]), flags });
        } else if (o.name === '--update-counters' || o.name === '--update-subcounters' || o.name === '--return-nomatch') {
          // These change counters or the nomatch verdict's bookkeeping, not whether a fresh packet matches.
        } else out.push(unsupported(mod, o, true));
      }
      return;
    case 'multiport':
      for (const o of options) {
        const dir = o.name === '--dports' || o.name === '--destination-ports' ? 'dst' : o.name === '--sports' || o.name === '--source-ports' ? 'src' : o.name === '--ports' ? 'any' : undefined;
        const ranges = o.args.length === 1 ? parsePortList(o.args[0]) : undefined;
        if (dir && ranges) out.push({ kind: 'port', module: mod, dir, negated: o.negated, ranges });
        else out.push(unsupported(mod, o, true));
      }
      return;
    case 'physdev':
      for (const o of options) out.push({ kind: 'physdev', option: o.name, negated: o.negated, ...(o.args[0] !== undefined ? { value: o.args[0] } : {}) });
      return;
    case 'socket':
      out.push({ kind: 'socket', options: options.map(optionText) });
      return;
    case 'icmp':
    case 'icmp6':
      for (const o of options) {
        if ((o.name === '--icmp-type' || o.name === '--icmpv6-type') && o.args.length === 1) out.push({ kind: 'icmp', negated: o.negated, type: o.args[0] });
        else out.push(unsupported(mod, o, true));
      }
      return;
    case 'iprange':
      for (const o of options) {
        const [from, to] = (o.args[0] ?? '').split('-');
        if ((o.name === '--src-range' || o.name === '--dst-range') && from && to) {
          out.push({ kind: 'iprange', dir: o.name === '--src-range' ? 'src' : 'dst', negated: o.negated, from, to });
        } else out.push(unsupported(mod, o, true));
      }
      return;
  }
  if (PORT_MODULES.has(mod) || mod === '') {
    for (const o of options) {
      const dir =
        o.name === '--dport' || o.name === '--destination-port' ? 'dst' : o.name === '--sport' || o.name === '--source-port' ? 'src' : undefined;
      const range = dir && o.args.length === 1 ? parsePortRange(o.args[0]) : undefined;
      if (dir && range) out.push({ kind: 'port', module: mod, dir, negated: o.negated, ranges: [range] });
      else if (o.name === '--tcp-flags' && o.args.length === 2) out.push({ kind: 'tcp-flags', negated: o.negated, mask: o.args[0].split(','), comp: o.args[1].split(',') });
      else if (o.name === '--syn') out.push({ kind: 'tcp-flags', negated: o.negated, mask: ['FIN', 'SYN', 'RST', 'ACK'], comp: ['SYN'] });
      else out.push(unsupported(mod, o, true));
    }
    return;
  }
  const known = KNOWN_UNDECIDABLE.has(mod);
  if (options.length === 0) out.push(unsupported(mod, undefined, known));
  else out.push({ kind: 'unsupported', module: mod, text: `-m ${module} ${options.map(optionText).join(' ')}`, known });
}

// Targets are read-only data, so rules share equal ones: a big dump has 100k jumps to
// KUBE-MARK-MASQ and as many ACCEPTs, one object each is enough.
const ACCEPT: Target = { kind: 'accept' };
const DROP: Target = { kind: 'drop' };
const RETURN: Target = { kind: 'return' };
const QUEUE: Target = { kind: 'queue' };
const JUMPS = new Map<string, Target>();
const GOTOS = new Map<string, Target>();
const SHARED_LIMIT = 1 << 16;

const PROTOCOL_MATCHES = new Map<string, Match>();

/** `-p tcp` on 100k rules: one shared (read-only) match. */
function protocolMatch(protocol: string): Match {
  let m = PROTOCOL_MATCHES.get(protocol);
  if (m === undefined) {
    m = { kind: 'protocol', negated: false, protocol };
    if (PROTOCOL_MATCHES.size < 256) PROTOCOL_MATCHES.set(protocol, m);
  }
  return m;
}

/** Forget the shared jump targets (after each dump, so they never keep its text alive). */
export function clearSharedTargets(): void {
  JUMPS.clear();
  GOTOS.clear();
  PROTOCOL_MATCHES.clear();
  RANDOM_MATCHES.clear();
}

/**
 * The kernel keeps a probability as a 31-bit fraction (libxt_statistic: lround(p × 2³¹)), and
 * iptables-save prints that with 11 decimals: `0.3333333333` and `0.33333333349` are one value.
 */
function kernelProbability(p: number): number {
  return Number.isFinite(p) ? Math.round(p * 0x80000000) / 0x80000000 : p;
}

/** A ladder's probabilities repeat across Services (1/2, 1/3, …): one shared match per value. */
const RANDOM_MATCHES = new Map<number, Match>();

function randomMatch(probability: number, negated: boolean): Match {
  if (negated) return { kind: 'statistic', mode: 'random', probability, negated };
  let m = RANDOM_MATCHES.get(probability);
  if (m === undefined) {
    m = { kind: 'statistic', mode: 'random', probability, negated: false };
    if (RANDOM_MATCHES.size < 4096) RANDOM_MATCHES.set(probability, m);
  }
  return m;
}

function jumpTo(chain: string, goto: boolean): Target {
  // Per-Service chain names are long and used once or twice: not worth a shared copy.
  if (chain.length > 16) return { kind: goto ? 'goto' : 'jump', chain };
  const cache = goto ? GOTOS : JUMPS;
  let t = cache.get(chain);
  if (t === undefined) {
    t = { kind: goto ? 'goto' : 'jump', chain };
    if (cache.size < SHARED_LIMIT) cache.set(chain, t);
  }
  return t;
}

function findOption(options: readonly OptionSyntax[], name: string): OptionSyntax | undefined {
  for (let i = 0; i < options.length; i++) if (options[i].name === name) return options[i];
  return undefined;
}

/**
 * The `-j NAME`/`-g NAME` target when NAME is a chain (the reader knows its chains and may hand
 * out one shared target per chain), else undefined.
 */
export type ChainTarget = (name: string, goto: boolean) => Target | undefined;

/** A jump or goto to a chain known only by its name (shared for short names). */
export function chainJump(name: string, goto: boolean): Target {
  return jumpTo(name, goto);
}

function interpretTarget(name: string, options: readonly OptionSyntax[], goto: boolean, chainTarget: ChainTarget): Target {
  const jump = chainTarget(name, goto);
  if (jump !== undefined) return jump;
  const opt = (n: string) => findOption(options, n);
  const has = (n: string) => findOption(options, n) !== undefined;
  switch (name) {
    case 'ACCEPT':
      return ACCEPT;
    case 'DROP':
      return DROP;
    case 'RETURN':
      return RETURN;
    case 'QUEUE':
      return QUEUE;
    case 'REJECT': {
      const w = opt('--reject-with')?.args[0];
      return w ? { kind: 'reject', with: w } : { kind: 'reject' };
    }
    case 'DNAT':
      return {
        kind: 'dnat',
        to: options.filter((o) => o.name === '--to-destination' || o.name === '--to').map((o) => parseNatTo(o.args[0] ?? '')),
        random: has('--random'),
        persistent: has('--persistent'),
      };
    case 'SNAT':
      return {
        kind: 'snat',
        to: options.filter((o) => o.name === '--to-source' || o.name === '--to').map((o) => parseNatTo(o.args[0] ?? '')),
        random: has('--random'),
        randomFully: has('--random-fully'),
        persistent: has('--persistent'),
      };
    case 'MASQUERADE': {
      const ports = opt('--to-ports')?.args[0];
      return { kind: 'masquerade', randomFully: has('--random-fully'), random: has('--random'), ...(ports ? { toPorts: ports } : {}) };
    }
    case 'REDIRECT': {
      const ports = opt('--to-ports')?.args[0];
      return ports ? { kind: 'redirect', toPorts: ports } : { kind: 'redirect' };
    }
    case 'MARK':
    case 'CONNMARK': {
      const connmark = name === 'CONNMARK';
      const x = opt('--set-xmark');
      if (x) {
        const m = parseMark(x.args[0] ?? '');
        if (m) return { kind: 'mark', connmark, ...m };
      }
      const set = opt('--set-mark');
      if (set) {
        const m = parseMark(set.args[0] ?? '');
        if (m) return { kind: 'mark', connmark, value: m.value, mask: (m.mask | m.value) >>> 0 };
      }
      const or = opt('--or-mark');
      if (or) {
        const v = parseNumber(or.args[0]);
        if (v !== undefined) return { kind: 'mark', connmark, value: v >>> 0, mask: v >>> 0 };
      }
      const and = opt('--and-mark');
      if (and) {
        const v = parseNumber(and.args[0]);
        if (v !== undefined) return { kind: 'mark', connmark, value: 0, mask: ~v >>> 0 };
      }
      const xor = opt('--xor-mark');
      if (xor) {
        const v = parseNumber(xor.args[0]);
        if (v !== undefined) return { kind: 'mark', connmark, value: v >>> 0, mask: 0 };
      }
      return { kind: 'extension', name, terminating: false };
    }
    case 'LOG':
    case 'NFLOG':
    case 'ULOG': {
      const p = opt('--log-prefix') ?? opt('--nflog-prefix') ?? opt('--ulog-prefix');
      return p ? { kind: 'log', prefix: unquote(p.args[0] ?? '') } : { kind: 'log' };
    }
  }
  return { kind: 'extension', name, terminating: TERMINATING_EXTENSIONS.has(name) };
}

export interface RuleMeaning {
  readonly matches: Match[];
  readonly target?: Target;
  readonly comments: string[];
}

/** Is this target name something other than a chain (a standard verdict or a target extension iptables knows)? */
export function looksLikeExtensionTarget(name: string): boolean {
  return isTargetExtension(name);
}

/** The order iptables-save prints generic options in (`-s -d -i -o -p -f`), for the reading's order. */
const GENERIC_RANK: Record<string, number> = { source: 0, destination: 1, 'in-interface': 2, 'out-interface': 3, protocol: 4, fragment: 5 };

/** Does any option belong to another item, or carry an abbreviation? (restore input in its own order) */
function scattered(items: readonly RuleItem[]): boolean {
  for (const item of items) {
    if (item.kind !== 'match' && item.kind !== 'target') continue;
    for (const o of item.options) if (o.owner !== undefined || o.canonical !== undefined) return true;
  }
  return false;
}

/**
 * Each match and target with all its options, by their full names, in the order iptables
 * loaded them: the rule as iptables-save would print it. Blocks that only held options of
 * earlier items go.
 */
function regroup(items: readonly RuleItem[]): RuleItem[] {
  const owned = new Map<number, OptionSyntax[]>();
  items.forEach((item) => {
    if (item.kind !== 'match' && item.kind !== 'target') return;
    for (const o of item.options) {
      if (o.owner === undefined) continue;
      let list = owned.get(o.owner);
      if (list === undefined) owned.set(o.owner, (list = []));
      list.push(o);
    }
  });
  const full = (o: OptionSyntax): OptionSyntax => (o.canonical === undefined ? o : { ...o, name: o.canonical });
  const out: RuleItem[] = [];
  items.forEach((item, k) => {
    if (item.kind !== 'match' && item.kind !== 'target') {
      out.push(item);
      return;
    }
    const own = item.options.filter((o) => o.owner === undefined);
    if (item.kind === 'match' && item.spelled === undefined && own.length === 0) return;
    out.push({ ...item, options: [...own, ...(owned.get(k) ?? [])].map(full) });
  });
  return out;
}

/** The match `-p PROTO` loads implicitly (`-p icmpv6 --icmpv6-type …` is icmp6's). */
function implicitModule(protocol: string | undefined): string {
  return protocol === 'ipv6-icmp' ? 'icmp6' : (protocol ?? '');
}

export function interpretRule(written: readonly RuleItem[], chainTarget: ChainTarget): RuleMeaning {
  const items = scattered(written) ? regroup(written) : written;
  // Generic options' matches first, in iptables-save's order, then the modules' in load order:
  // the same reading whatever order the line was written in.
  const generic: Match[] = [];
  const matches: Match[] = [];
  let rank = -1;
  let sortGeneric = false;
  const comments: string[] = [];
  let target: Target | undefined;
  let protocol: string | undefined;
  for (const item of items) {
    switch (item.kind) {
      case 'generic': {
        const r = GENERIC_RANK[item.option] ?? 6;
        if (r < rank) sortGeneric = true;
        rank = r;
        const arg = item.args[0] ?? '';
        switch (item.option) {
          case 'source':
          case 'destination': {
            generic.push(new AddressMatch(item.option === 'source' ? 'src' : 'dst', item.negated, arg));
            break;
          }
          case 'in-interface':
          case 'out-interface':
            generic.push({ kind: 'interface', dir: item.option === 'in-interface' ? 'in' : 'out', negated: item.negated, name: arg });
            break;
          case 'protocol': {
            const p = normalizeProtocol(arg);
            if (!(p === 'all' || p === '0') || item.negated) {
              protocol = p;
              generic.push(item.negated ? { kind: 'protocol', negated: true, protocol: p } : protocolMatch(p));
            }
            break;
          }
          case 'fragment':
            generic.push({ kind: 'fragment', negated: item.negated });
            break;
          case 'ipv4':
          case 'ipv6':
            break;
          default:
            generic.push({ kind: 'unsupported', module: '', text: `${item.negated ? '! ' : ''}${item.spelled} ${item.args.join(' ')}`.trim(), known: false });
        }
        break;
      }
      case 'match':
        interpretModule(item.module === '' ? implicitModule(protocol) : item.module, item.options, matches, comments);
        break;
      case 'target':
        target = interpretTarget(item.name, item.options, item.goto, chainTarget);
        break;
      case 'set-counters':
        break;
    }
  }
  if (sortGeneric) generic.sort((a, b) => genericRank(a) - genericRank(b));
  // Arrays of exactly their length: an array grown by push() keeps room for more (V8), which for
  // 300k rules is a real share of the model.
  const m = generic.length === 0 ? (matches.length === 0 ? matches : matches.slice()) : generic.concat(matches);
  const c = comments.length === 0 ? NO_COMMENTS : comments.slice();
  return target ? { matches: m, target, comments: c } : { matches: m, comments: c };
}

function genericRank(m: Match): number {
  switch (m.kind) {
    case 'address':
      return m.dir === 'src' ? 0 : 1;
    case 'interface':
      return m.dir === 'in' ? 2 : 3;
    case 'protocol':
      return 4;
    case 'fragment':
      return 5;
    default:
      return 6;
  }
}

/** Shared by every rule without a comment (the model is read-only). */
const NO_COMMENTS: string[] = Object.freeze([]) as unknown as string[];
