/**
 * kube-proxy's own rule lines read without tokens (issue 33). kube-proxy writes its iptables-save
 * lines in a handful of fixed shapes (kubernetes pkg/proxy/iptables/proxier.go: the dispatch
 * `-A KUBE-SERVICES -d VIP/32 -p tcp -m comment --comment "ns/name:port cluster IP" -m tcp --dport N
 * -j KUBE-SVC-…`, the balancing `-m statistic --mode random --probability P -j KUBE-SEP-…`, the
 * endpoint `-s IP/32 -j KUBE-MARK-MASQ` and `-p tcp -m tcp -j DNAT --to-destination IP:PORT`, the
 * masquerade `! -s CIDR -d VIP/32 … -j KUBE-MARK-MASQ` and the firewall and NodePort lines of
 * KUBE-EXT-/KUBE-FW-/KUBE-NODEPORTS/KUBE-EXTERNAL-SERVICES/KUBE-PROXY-FIREWALL), which are 90 % of
 * a big dump. decodeKubeRule() reads such a line straight into the model's matches, the same objects
 * the grammar's reading makes (the same constructors: iptables-match.ts, iptables-values.ts).
 *
 * It reads only what it is SURE of: one space between words, no indentation, no counters, names
 * and values from narrow character sets, the options in the order iptables-save prints them, no
 * negation but `! -s`/`! -d`, each module once, a port match only after its `-p`. Any other line —
 * and any line it has doubts about — is undefined here and goes to the grammar, which also makes
 * every diagnostic. A property test (test/grammars/iptables-kube-lines.test.ts and the corpus
 * test) checks that both readings give the same model on every line where this one answers.
 */
import type { OptionSyntax } from '../../grammars/common/iptables-syntax.js';
import type { Match } from '../model/netfilter.js';
import { addrtypeMatch, commentMatch, portMatch, protocolMatch, randomMatch } from './iptables-match.js';
import { NO_COMMENTS } from './iptables-rule.js';
import { looksLikeExtensionTarget } from './iptables-target.js';
import { AddressMatch, kernelProbability } from './iptables-values.js';

/** A decoded line: its chain, its matches, and its target by name (a chain or not is decided in order, by the reader). */
export interface KubeRule {
  readonly chain: string;
  readonly matches: Match[];
  readonly comments: string[];
  /** Undefined for a rule without `-j` (KUBE-FW-… comment-only rules). */
  readonly target: string | undefined;
  readonly targetOptions: readonly OptionSyntax[];
}

const NO_OPTIONS: readonly OptionSyntax[] = Object.freeze([]);

/** Characters of chain and target names: `[A-Za-z0-9_-]`. */
const NAME = new Uint8Array(128);
/** Characters of addresses: hex digits, `.`, `:`, `/`. */
const ADDRESS = new Uint8Array(128);
/** Characters inside a quoted comment: printable ASCII but `"` and `\`. */
const QUOTED = new Uint8Array(128);
/** Characters of a bare comment word: `[A-Za-z0-9_./:-]`. */
const BARE = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  NAME[c] = /[A-Za-z0-9_-]/.test(ch) ? 1 : 0;
  ADDRESS[c] = /[0-9A-Fa-f.:/]/.test(ch) ? 1 : 0;
  QUOTED[c] = c >= 0x20 && c <= 0x7e && ch !== '"' && ch !== '\\' ? 1 : 0;
  BARE[c] = /[A-Za-z0-9_./:-]/.test(ch) ? 1 : 0;
}

function allOf(set: Uint8Array, s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || set[c] === 0) return false;
  }
  return true;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** A chain or target name: name characters, not starting with `-`, not `COMMIT` (a token of its own). */
function isName(s: string): boolean {
  return allOf(NAME, s) && s.charCodeAt(0) !== 45 && s !== 'COMMIT';
}

/** An address as iptables-save prints it, starting with a hex digit (`:…` would lex as a chain declaration). */
function isAddress(s: string): boolean {
  const c = s.charCodeAt(0);
  return allOf(ADDRESS, s) && (isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70));
}

/** 1–5 digits, at most 65535 (what getopt's port check accepts and parsePortRange reads alike). */
function portNumber(s: string): number | undefined {
  if (s.length === 0 || s.length > 5) return undefined;
  for (let i = 0; i < s.length; i++) if (!isDigit(s.charCodeAt(i))) return undefined;
  const n = Number(s);
  return n <= 65535 ? n : undefined;
}

/** The probability forms getopt's check accepts (grammars/iptables-save/getopt.ts checkValue). */
const PROBABILITY = /^(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const NAT_V4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{1,5}$/;
const NAT_V6 = /^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/;
const PORT_PROTOCOLS = new Set(['tcp', 'udp', 'sctp']);
const ADDRESS_TYPES = new Set(['UNSPEC', 'UNICAST', 'LOCAL', 'BROADCAST', 'ANYCAST', 'MULTICAST', 'BLACKHOLE', 'UNREACHABLE', 'PROHIBIT', 'THROW', 'NAT', 'XRESOLVE']);
const REJECT_WITH = new Set(['icmp-port-unreachable', 'icmp6-port-unreachable']);

/** Words of a line split at single spaces; a quoted argument may hold spaces. Undefined on anything else. */
class Words {
  private at = 0;
  constructor(private readonly line: string) {}

  get done(): boolean {
    return this.at >= this.line.length;
  }

  /** The next word (one space after it unless it ends the line), or undefined when the spacing is not plain. */
  next(): string | undefined {
    const { line } = this;
    const start = this.at;
    if (start >= line.length) return undefined;
    let i = start;
    for (; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c === 32) break;
      if (c < 33 || c >= 127 || c === 34 /* " */ || c === 33 /* ! */ && i > start) return undefined;
    }
    return this.take(start, i);
  }

  /** Take the next word when it is `word` (and is followed by a space or the end). */
  accept(word: string): boolean {
    const end = this.at + word.length;
    if (!this.line.startsWith(word, this.at) || (end < this.line.length && this.line.charCodeAt(end) !== 32)) return false;
    return this.next() === word;
  }

  /** A comment argument: `"…"` without escapes, or a bare word; its text (unquoted). */
  comment(): string | undefined {
    const { line } = this;
    const start = this.at;
    if (line.charCodeAt(start) !== 34) {
      const w = this.next();
      return w !== undefined && allOf(BARE, w) && NAME[w.charCodeAt(0)] === 1 && w.charCodeAt(0) !== 45 && w !== 'COMMIT' ? w : undefined;
    }
    let i = start + 1;
    for (; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c === 34) break;
      if (c >= 128 || QUOTED[c] === 0) return undefined;
    }
    if (i >= line.length) return undefined;
    const word = this.take(start, i + 1);
    return word === undefined ? undefined : word.slice(1, -1);
  }

  private take(start: number, end: number): string | undefined {
    const { line } = this;
    if (end === start) return undefined;
    if (end < line.length) {
      // Exactly one space, and more to come (a trailing space is not plain).
      if (line.charCodeAt(end) !== 32 || end + 1 >= line.length || line.charCodeAt(end + 1) === 32) return undefined;
      this.at = end + 1;
    } else this.at = end;
    return line.slice(start, end);
  }
}

/** What a line read so far holds (the order of its parts is iptables-save's). */
interface Reading {
  protocol: string | undefined;
  readonly modules: Set<string>;
  readonly matches: Match[];
  comment: string | undefined;
}

/** `-m MODULE …` of kube-proxy's shapes; false when the block is not one of them. */
function readModule(w: Words, r: Reading): boolean {
  const mod = w.next();
  if (mod === undefined || r.modules.has(mod)) return false;
  r.modules.add(mod);
  switch (mod) {
    case 'comment': {
      if (w.next() !== '--comment' || r.comment !== undefined) return false;
      const text = w.comment();
      if (text === undefined) return false;
      r.comment = text;
      r.matches.push(commentMatch(text));
      return true;
    }
    case 'statistic': {
      if (w.next() !== '--mode' || w.next() !== 'random' || w.next() !== '--probability') return false;
      const p = w.next();
      if (p === undefined || !PROBABILITY.test(p)) return false;
      const value = Number(p);
      if (!(value >= 0 && value <= 1)) return false;
      r.matches.push(randomMatch(kernelProbability(value), false));
      return true;
    }
    case 'addrtype': {
      const option = w.next();
      if (option !== '--src-type' && option !== '--dst-type') return false;
      const type = w.next();
      if (type === undefined || !ADDRESS_TYPES.has(type)) return false;
      r.matches.push(addrtypeMatch(option === '--src-type' ? 'src' : 'dst', false, [type], undefined));
      return true;
    }
  }
  // `-m tcp [--dport N]` right after its own `-p tcp` (getopt refuses `-m tcp` without it).
  if (mod !== r.protocol) return false;
  if (w.done) return true;
  if (!w.accept('--dport')) return true;
  const port = w.next();
  const n = port === undefined ? undefined : portNumber(port);
  if (n === undefined) return false;
  r.matches.push(portMatch(mod, 'dst', false, { from: n, to: n }));
  return true;
}

/** `-j NAME [options]` at the end of the line: the target's name and options, or undefined. */
function readTarget(w: Words, r: Reading): { name: string; options: readonly OptionSyntax[] } | undefined {
  const name = w.next();
  if (name === undefined || !isName(name)) return undefined;
  if (w.done) {
    // A verdict, or a chain (anything iptables does not know as a target extension), without options.
    if (name === 'ACCEPT' || name === 'DROP' || name === 'RETURN' || name === 'REJECT' || !looksLikeExtensionTarget(name)) return { name, options: NO_OPTIONS };
    return undefined;
  }
  const option = w.next();
  const arg = w.next();
  if (option === undefined || arg === undefined || !w.done) return undefined;
  if (name === 'DNAT' && option === '--to-destination' && r.protocol !== undefined && (NAT_V4.test(arg) || NAT_V6.test(arg))) {
    if (portNumber(arg.slice(arg.lastIndexOf(':') + 1)) === undefined) return undefined;
    return { name, options: [{ name: option, negated: false, args: [arg], column: 0 }] };
  }
  if (name === 'REJECT' && option === '--reject-with' && REJECT_WITH.has(arg)) return { name, options: [{ name: option, negated: false, args: [arg], column: 0 }] };
  return undefined;
}

/** `[!] -s ADDR`, `[!] -d ADDR`, `-p PROTO` in that order, each at most once; the next word after them. */
function readGeneric(w: Words, r: Reading): string | undefined | false {
  let word = w.next();
  let stage = 0;
  for (;;) {
    const negated = word === '!';
    if (negated) word = w.next();
    const rank = word === '-s' ? 1 : word === '-d' ? 2 : word === '-p' && !negated ? 3 : 0;
    if (rank === 0) return negated ? false : word;
    if (rank <= stage) return false;
    stage = rank;
    const arg = w.next();
    if (arg === undefined) return false;
    if (rank === 3) {
      if (!PORT_PROTOCOLS.has(arg)) return false;
      r.protocol = arg;
      r.matches.push(protocolMatch(arg));
    } else {
      if (!isAddress(arg)) return false;
      r.matches.push(new AddressMatch(rank === 1 ? 'src' : 'dst', negated, arg));
    }
    word = w.next();
  }
}

/** The line read as one of kube-proxy's rule shapes, or undefined (the grammar reads it). */
export function decodeKubeRule(line: string): KubeRule | undefined {
  if (line.charCodeAt(0) !== 45 || line.charCodeAt(1) !== 65 || line.charCodeAt(2) !== 32) return undefined; // `-A `
  const w = new Words(line);
  w.next();
  const chain = w.next();
  if (chain === undefined || !isName(chain) || w.done) return undefined;
  const r: Reading = { protocol: undefined, modules: new Set(), matches: [], comment: undefined };
  let word = readGeneric(w, r);
  while (word === '-m') {
    if (!readModule(w, r)) return undefined;
    word = w.next();
  }
  let target: { name: string; options: readonly OptionSyntax[] } | undefined;
  if (word === '-j') {
    target = readTarget(w, r);
    if (target === undefined) return undefined;
  } else if (word !== undefined || !w.done) return undefined;
  if (!w.done) return undefined;
  return {
    chain,
    matches: r.matches.slice(),
    comments: r.comment === undefined ? NO_COMMENTS : [r.comment],
    target: target?.name,
    targetOptions: target?.options ?? NO_OPTIONS,
  };
}
