/**
 * The typed reading of a rule's match modules (`-m NAME --opt …`), one reader per module, and the
 * match objects both readings of a rule share (the grammar's, iptables-rule.ts, and the token-free
 * one of kube-proxy's lines, iptables-kube-lines.ts). Unknown modules and options are kept as
 * `unsupported` matches (never dropped, never guessed).
 */
import { unquote, type OptionSyntax } from '../../grammars/common/iptables-syntax.js';
import type { Match, PortRange } from '../model/netfilter.js';
import { kernelProbability, parseMark, parsePortList, parsePortRange } from './iptables-values.js';

const PORT_MODULES = new Set(['tcp', 'udp', 'sctp', 'dccp', 'udplite']);

/** Modules kpx knows by name but does not evaluate; a packet's fate under them is "unknown". */
const KNOWN_UNDECIDABLE = new Set([
  'limit', 'hashlimit', 'connlimit', 'owner', 'time', 'length', 'ttl', 'hl', 'pkttype', 'mac', 'dscp', 'tos', 'ecn',
  'helper', 'policy', 'u32', 'string', 'rpfilter', 'ipvs', 'cgroup', 'bpf', 'devgroup', 'cpu', 'quota', 'nfacct',
  'rateest', 'realm', 'cluster', 'connbytes', 'connlabel', 'esp', 'ah', 'ipcomp', 'osf', 'tcpmss', 'frag', 'hbh',
  'dst', 'rt', 'mh', 'ipv6header', 'eui64', 'srh', 'state', 'conntrack', 'set', 'icmp6', 'sctp', 'dccp', 'multiport',
]);

export function optionText(o: OptionSyntax): string {
  return `${o.negated ? '! ' : ''}${o.name}${o.args.length ? ' ' + o.args.join(' ') : ''}`;
}

function unsupported(module: string, o: OptionSyntax | undefined, known: boolean): Match {
  return { kind: 'unsupported', module, text: o ? optionText(o) : `-m ${module}`, known };
}

// ---- matches both readings make -----------------------------------------------------------------

/** `-m comment --comment TEXT` (TEXT unquoted). */
export function commentMatch(text: string): Match {
  return { kind: 'comment', text };
}

/** `--dport`/`--sport` of a port protocol's match (`module` as loaded: `tcp`, `udp`, …). */
export function portMatch(module: string, dir: 'src' | 'dst', negated: boolean, range: PortRange): Match {
  return { kind: 'port', module, dir, negated, ranges: [range] };
}

/** `-m addrtype --src-type/--dst-type TYPES`. */
export function addrtypeMatch(dir: 'src' | 'dst', negated: boolean, types: string[], limitIface: 'in' | 'out' | undefined): Match {
  return { kind: 'addrtype', dir, negated, types, ...(limitIface ? { limitIface } : {}) };
}

const PROTOCOL_MATCHES = new Map<string, Match>();

/** `-p tcp` on 100k rules: one shared (read-only) match. */
export function protocolMatch(protocol: string): Match {
  let m = PROTOCOL_MATCHES.get(protocol);
  if (m === undefined) {
    m = { kind: 'protocol', negated: false, protocol };
    if (PROTOCOL_MATCHES.size < 256) PROTOCOL_MATCHES.set(protocol, m);
  }
  return m;
}

/** A ladder's probabilities repeat across Services (1/2, 1/3, …): one shared match per value. */
const RANDOM_MATCHES = new Map<number, Match>();

export function randomMatch(probability: number, negated: boolean): Match {
  if (negated) return { kind: 'statistic', mode: 'random', probability, negated };
  let m = RANDOM_MATCHES.get(probability);
  if (m === undefined) {
    m = { kind: 'statistic', mode: 'random', probability, negated: false };
    if (RANDOM_MATCHES.size < 4096) RANDOM_MATCHES.set(probability, m);
  }
  return m;
}

/** Forget the shared matches (after each dump, so they never keep its text alive). */
export function clearSharedMatches(): void {
  PROTOCOL_MATCHES.clear();
  RANDOM_MATCHES.clear();
}

// ---- one reader per module ----------------------------------------------------------------------

type ModuleReader = (mod: string, options: readonly OptionSyntax[], out: Match[], comments: string[]) => void;

function readComment(mod: string, options: readonly OptionSyntax[], out: Match[], comments: string[]): void {
  for (const o of options) {
    if (o.name === '--comment' && o.args.length === 1) {
      const text = unquote(o.args[0]);
      comments.push(text);
      out.push(commentMatch(text));
    } else out.push(unsupported(mod, o, true));
  }
}

function readStatistic(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
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
}

type RecentMatch = { -readonly [K in keyof Extract<Match, { kind: 'recent' }>]: Extract<Match, { kind: 'recent' }>[K] };

function readRecent(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  let op: RecentMatch['op'] | undefined;
  let negated = false;
  let name = 'DEFAULT';
  let seconds: number | undefined;
  let hitcount: number | undefined;
  let reap = false;
  let side: RecentMatch['side'] = 'rsource';
  for (const o of options) {
    switch (o.name) {
      case '--set':
      case '--rcheck':
      case '--update':
      case '--remove':
        op = o.name.slice(2) as RecentMatch['op'];
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
        side = o.name.slice(2) as RecentMatch['side'];
        break;
      case '--mask':
      case '--rttl':
        break;
      default:
        out.push(unsupported(mod, o, true));
    }
  }
  if (op) {
    const m: RecentMatch = { kind: 'recent', op, negated, name, reap, side };
    if (seconds !== undefined) m.seconds = seconds;
    if (hitcount !== undefined) m.hitcount = hitcount;
    out.push(m);
  } else out.push({ kind: 'unsupported', module: mod, text: options.map(optionText).join(' '), known: true });
}

function readAddrtype(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  let limitIface: 'in' | 'out' | undefined;
  for (const o of options) if (o.name === '--limit-iface-in') limitIface = 'in';
  for (const o of options) if (o.name === '--limit-iface-out') limitIface = 'out';
  for (const o of options) {
    if (o.name === '--src-type' || o.name === '--dst-type') {
      const types = (o.args[0] ?? '').split(',').filter(Boolean);
      out.push(addrtypeMatch(o.name === '--src-type' ? 'src' : 'dst', o.negated, types, limitIface));
    } else if (o.name !== '--limit-iface-in' && o.name !== '--limit-iface-out') out.push(unsupported(mod, o, true));
  }
}

function readCtstate(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    if ((o.name === '--ctstate' || o.name === '--state') && o.args.length === 1) {
      out.push({ kind: 'ctstate', negated: o.negated, states: o.args[0].split(',') });
    } else out.push(unsupported(mod, o, true));
  }
}

function readMark(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    const m = o.name === '--mark' && o.args.length === 1 ? parseMark(o.args[0]) : undefined;
    if (m) out.push({ kind: 'mark', connmark: mod === 'connmark', negated: o.negated, ...m });
    else out.push(unsupported(mod, o, true));
  }
}

function readSet(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    if ((o.name === '--match-set' || o.name === '--set') && o.args.length === 2) {
      const flags = o.args[1].split(',').filter((f): f is 'src' | 'dst' => f === 'src' || f === 'dst');
      out.push({ kind: 'set', negated: o.negated, name: unquote(o.args[0]), flags });
    } else if (o.name === '--update-counters' || o.name === '--update-subcounters' || o.name === '--return-nomatch') {
      // These change counters or the nomatch verdict's bookkeeping, not whether a fresh packet matches.
    } else out.push(unsupported(mod, o, true));
  }
}

function readMultiport(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    const dir = o.name === '--dports' || o.name === '--destination-ports' ? 'dst' : o.name === '--sports' || o.name === '--source-ports' ? 'src' : o.name === '--ports' ? 'any' : undefined;
    const ranges = o.args.length === 1 ? parsePortList(o.args[0]) : undefined;
    if (dir && ranges) out.push({ kind: 'port', module: mod, dir, negated: o.negated, ranges });
    else out.push(unsupported(mod, o, true));
  }
}

function readPhysdev(_mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) out.push({ kind: 'physdev', option: o.name, negated: o.negated, ...(o.args[0] !== undefined ? { value: o.args[0] } : {}) });
}

function readSocket(_mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  out.push({ kind: 'socket', options: options.map(optionText) });
}

function readIcmp(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    if ((o.name === '--icmp-type' || o.name === '--icmpv6-type') && o.args.length === 1) out.push({ kind: 'icmp', negated: o.negated, type: o.args[0] });
    else out.push(unsupported(mod, o, true));
  }
}

function readIprange(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    const [from, to] = (o.args[0] ?? '').split('-');
    if ((o.name === '--src-range' || o.name === '--dst-range') && from && to) {
      out.push({ kind: 'iprange', dir: o.name === '--src-range' ? 'src' : 'dst', negated: o.negated, from, to });
    } else out.push(unsupported(mod, o, true));
  }
}

/** tcp, udp, sctp, dccp, udplite (loaded by `-m` or implicitly by `-p`): ports and TCP flags. */
function readPorts(mod: string, options: readonly OptionSyntax[], out: Match[]): void {
  for (const o of options) {
    const dir = o.name === '--dport' || o.name === '--destination-port' ? 'dst' : o.name === '--sport' || o.name === '--source-port' ? 'src' : undefined;
    const range = dir && o.args.length === 1 ? parsePortRange(o.args[0]) : undefined;
    if (dir && range) out.push(portMatch(mod, dir, o.negated, range));
    else if (o.name === '--tcp-flags' && o.args.length === 2) out.push({ kind: 'tcp-flags', negated: o.negated, mask: o.args[0].split(','), comp: o.args[1].split(',') });
    else if (o.name === '--syn') out.push({ kind: 'tcp-flags', negated: o.negated, mask: ['FIN', 'SYN', 'RST', 'ACK'], comp: ['SYN'] });
    else out.push(unsupported(mod, o, true));
  }
}

const MODULE_READERS = new Map<string, ModuleReader>([
  ['comment', readComment],
  ['statistic', readStatistic],
  ['recent', readRecent],
  ['addrtype', readAddrtype],
  ['conntrack', readCtstate],
  ['state', readCtstate],
  ['mark', readMark],
  ['connmark', readMark],
  ['set', readSet],
  ['multiport', readMultiport],
  ['physdev', readPhysdev],
  ['socket', readSocket],
  ['icmp', readIcmp],
  ['icmp6', readIcmp],
  ['iprange', readIprange],
]);

/** One `-m MODULE` block (or the protocol's implicit match, module `''` when there is none) into `out`. */
export function interpretModule(module: string, options: readonly OptionSyntax[], out: Match[], comments: string[]): void {
  const mod = module.toLowerCase();
  const reader = MODULE_READERS.get(mod) ?? (PORT_MODULES.has(mod) || mod === '' ? readPorts : undefined);
  if (reader !== undefined) return reader(mod, options, out, comments);
  const known = KNOWN_UNDECIDABLE.has(mod);
  if (options.length === 0) out.push(unsupported(mod, undefined, known));
  else out.push({ kind: 'unsupported', module: mod, text: `-m ${module} ${options.map(optionText).join(' ')}`, known });
}
