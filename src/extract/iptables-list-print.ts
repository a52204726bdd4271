/**
 * An `iptables -L` rule's match and target text read back into iptables-save options (issue 30),
 * so that kpx's one rule reader (./iptables-rule.ts interpretRule) gives it its meaning. Each
 * extension prints itself with its print() function (iptables/extensions/libxt_*.c,
 * libipt_*.c); the forms read here are those functions' output:
 *
 *   libxt_comment     ` /* TEXT *\/`
 *   libxt_tcp/udp     ` tcp spt:N` ` dpts:N:M` (`:!N` negated), ` flags:…` ` option=N`
 *   libxt_multiport   ` multiport dports N,M:O` (`dports !…`)
 *   libxt_statistic   ` statistic mode random [!] probability 0.50000000000`, ` mode nth every N packet M`
 *   libxt_recent      ` [!] recent: CHECK|SET|UPDATE|REMOVE [seconds: N] [reap] [hit_count: N] name: X side: source|dest mask: M`
 *   libxt_mark        ` mark match [!] 0xV/0xM`; libxt_connmark ` connmark match [!] 0xV/0xM`
 *   libxt_conntrack   ` [!] ctstate A,B`; libxt_state ` [!] state A,B`
 *   libxt_addrtype    ` ADDRTYPE match src-type [!]T dst-type [!]T [limit-in|limit-out]`
 *   libxt_set         ` [!] match-set NAME dst,dst`
 *   libxt_DNAT/SNAT   ` to:A[-B][:P[-Q]]` ` random` ` persistent` ` random-fully`
 *   libxt_MASQUERADE  ` masq ports: P[-Q]` ` random` ` random-fully`; libxt_REDIRECT ` redir ports P`
 *   libxt_REJECT      ` reject-with TYPE`; libxt_MARK ` MARK set|xset|or|and|xor V[/M]`
 *   libxt_LOG         ` LOG flags N level N [prefix "…"]` (without -n: ` LOG level NAME …`)
 *   libxt_icmp        ` icmp` + `type N [code C]` (printed without a space: `icmptype 8`), ` icmp [!]NAME`
 *   libip6t_icmp6     ` ipv6-icmp` + `type N [code C]`, ` ipv6-icmp [!]NAME`
 *   libxt_limit       ` limit: avg RATE burst N`; libxt_physdev ` PHYSDEV match [!] --physdev-in IF …`
 *   libxt_CONNMARK    ` CONNMARK save|restore [mask M]`, ` CONNMARK set|xset|… V[/M]`
 *   iptables          `[goto] ` before the matches of a rule that goes to (-g) its target
 *
 * Other targets' own text (` nflog-group 5`, ` TCPMSS clamp to PMTU`, ` CT notrack`) is the
 * target's, not a match: it starts with a word of that target's print function.
 *
 * Without -n, ports are service names (`dpt:domain`, read with the netbase /etc/services
 * numbers below) and addresses host or network names (kept as written: asked, never guessed).
 * Any text not in these forms becomes an `unsupported` match with its column: the trace asks it
 * as a question of its own, it is never dropped.
 */
import type { Tok } from '../../grammars/iptables-list/index.js';
import { SERVICE_PORTS } from './service-names.js';

/** A printed port (`53`, `domain`), or undefined. */
export function portNumber(text: string): number | undefined {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n <= 65535 ? n : undefined;
  }
  return Object.prototype.hasOwnProperty.call(SERVICE_PORTS, text) ? SERVICE_PORTS[text] : undefined;
}

/** Printed protocol (`6`, `tcp`, `0`, `all`) as iptables-save writes it (`tcp`, or undefined for all). */
export function protocolName(text: string): string | undefined {
  const t = text.toLowerCase();
  const byNumber: Record<string, string> = { '0': 'all', '1': 'icmp', '6': 'tcp', '17': 'udp', '33': 'dccp', '58': 'ipv6-icmp', '132': 'sctp', '136': 'udplite', '47': 'gre', '50': 'esp', '51': 'ah' };
  const name = byNumber[t] ?? (t === 'icmpv6' ? 'ipv6-icmp' : t);
  return name === 'all' ? undefined : name;
}

export interface PrintedRule {
  /** iptables-save words for the matches (`-m comment --comment "…" -m tcp --dport 53`). */
  readonly args: string[];
  /** iptables-save words for the target's options (`--to-destination 10.0.0.1:53`). */
  readonly targetArgs: string[];
  /** Text that is none of the known forms, with its column: kept as matches of their own. */
  readonly unknown: { text: string; column: number; line?: number }[];
  /** `[goto]`: the rule goes to its target (-g), not jumps. */
  goto?: true;
}

const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** A cursor over the text's tokens. */
class Words {
  i = 0;
  constructor(readonly toks: readonly Tok[]) {}
  peek(k = 0): string | undefined {
    return this.toks[this.i + k]?.text;
  }
  next(): Tok | undefined {
    return this.toks[this.i++];
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
}

type Reader = (w: Words, out: PrintedRule) => boolean;

/** ` tcp spt:N dpt:N dpts:N:M flags:… option=N` (the protocol's own match, as loaded by `-p`). */
function portMatch(w: Words, out: PrintedRule): boolean {
  const module = w.peek();
  if (module !== 'tcp' && module !== 'udp' && module !== 'sctp' && module !== 'udplite' && module !== 'dccp') return false;
  w.next();
  const args = ['-m', module!];
  for (let p = w.peek(); p !== undefined; p = w.peek()) {
    const m = /^(spts?|dpts?):(!?)([^:]+)(?::(.+))?$/.exec(p);
    if (!m) break;
    const from = portNumber(m[3]);
    const to = m[4] !== undefined ? portNumber(m[4]) : from;
    if (from === undefined || to === undefined) break;
    w.next();
    args.push(...(m[2] ? ['!'] : []), m[1].startsWith('s') ? '--sport' : '--dport', from === to ? String(from) : `${from}:${to}`);
  }
  for (let p = w.peek(); p !== undefined && /^(flags:|option=)/.test(p); p = w.peek()) {
    const at = w.next()!;
    const words = module === 'tcp' ? tcpExtra(p) : undefined;
    if (words) args.push(...words);
    else out.unknown.push({ text: `${module} ${p}`, column: at.column, ...(at.line ? { line: at.line } : {}) });
  }
  out.args.push(...args);
  return true;
}

const TCP_FLAGS = ['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG', 'ECE', 'CWR'];

/** TCP flags as iptables-save names them: `0x17` or `FIN,SYN,RST,ACK`; `NONE` for none. */
function tcpFlagNames(text: string): string | undefined {
  if (/^0x[0-9a-fA-F]{1,2}$/.test(text)) {
    const bits = Number.parseInt(text, 16);
    const names = TCP_FLAGS.filter((_, i) => bits & (1 << i));
    return names.length ? names.join(',') : 'NONE';
  }
  return /^[A-Z]+(,[A-Z]+)*$/.test(text) && text.split(',').every((f) => TCP_FLAGS.includes(f) || f === 'NONE' || f === 'ALL') ? text : undefined;
}

/** libxt_tcp's ` flags:[!]MASK/COMP` and ` option=[!]N` as iptables-save options. */
function tcpExtra(word: string): string[] | undefined {
  const f = /^flags:(!?)([^/]+)\/(.+)$/.exec(word);
  if (f) {
    const mask = tcpFlagNames(f[2]);
    const comp = tcpFlagNames(f[3]);
    return mask && comp ? [...(f[1] ? ['!'] : []), '--tcp-flags', mask, comp] : undefined;
  }
  const o = /^option=(!?)(\d+)$/.exec(word);
  return o ? [...(o[1] ? ['!'] : []), '--tcp-option', o[2]] : undefined;
}

/**
 * The ICMP type names `iptables -L` prints without -n, as iptables-save writes them (`type[/code]`):
 * every name `iptables -p icmp -h` and `ip6tables -p icmpv6 -h` list, each loaded into iptables
 * 1.8.9 and saved (libxt_icmp.c icmp_codes, libip6t_icmp6.c icmpv6_codes).
 */
const ICMP_NAMES: Record<string, string> = Object.fromEntries(
  'any any;echo-reply 0;pong 0;destination-unreachable 3;network-unreachable 3/0;host-unreachable 3/1;protocol-unreachable 3/2;port-unreachable 3/3;fragmentation-needed 3/4;source-route-failed 3/5;network-unknown 3/6;host-unknown 3/7;network-prohibited 3/9;host-prohibited 3/10;TOS-network-unreachable 3/11;TOS-host-unreachable 3/12;communication-prohibited 3/13;host-precedence-violation 3/14;precedence-cutoff 3/15;source-quench 4;redirect 5;network-redirect 5/0;host-redirect 5/1;TOS-network-redirect 5/2;TOS-host-redirect 5/3;echo-request 8;ping 8;router-advertisement 9;router-solicitation 10;time-exceeded 11;ttl-exceeded 11;ttl-zero-during-transit 11/0;ttl-zero-during-reassembly 11/1;parameter-problem 12;ip-header-bad 12/0;required-option-missing 12/1;timestamp-request 13;timestamp-reply 14;address-mask-request 17;address-mask-reply 18'
    .split(';')
    .map((e) => e.split(' ')),
);
const ICMP6_NAMES: Record<string, string> = Object.fromEntries(
  'destination-unreachable 1;no-route 1/0;communication-prohibited 1/1;beyond-scope 1/2;address-unreachable 1/3;port-unreachable 1/4;failed-policy 1/5;reject-route 1/6;packet-too-big 2;time-exceeded 3;ttl-exceeded 3;ttl-zero-during-transit 3/0;ttl-zero-during-reassembly 3/1;parameter-problem 4;bad-header 4/0;unknown-header-type 4/1;unknown-option 4/2;echo-request 128;ping 128;echo-reply 129;pong 129;router-solicitation 133;router-advertisement 134;neighbour-solicitation 135;neighbor-solicitation 135;neighbour-advertisement 136;neighbor-advertisement 136;redirect 137'
    .split(';')
    .map((e) => e.split(' ')),
);
const own = (table: Record<string, string>, name: string) => (Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined);

/** ` icmptype N [code C]`, ` icmp [!]NAME`, ` icmp !type N …`; the same with `ipv6-icmp`. */
function icmpMatch(w: Words, out: PrintedRule): boolean {
  const m = /^(icmp|ipv6-icmp)(type)?$/.exec(w.peek() ?? '');
  if (!m) return false;
  const v6 = m[1] === 'ipv6-icmp';
  let k = 1;
  let neg = false;
  let type: string | undefined;
  if (m[2]) type = w.peek(k++);
  else if (w.peek(k) === '!type') {
    neg = true;
    k++;
    type = w.peek(k++);
  } else {
    const name = w.peek(k++);
    if (!name || !/^!?[a-zA-Z][\w-]*$/.test(name)) return false;
    neg = name.startsWith('!');
    type = own(v6 ? ICMP6_NAMES : ICMP_NAMES, name.replace(/^!/, ''));
  }
  if (!type || (/^\d/.test(type) && !/^\d+(\/\d+)?$/.test(type))) return false;
  if (/^\d+$/.test(type) && w.peek(k) === 'code' && /^\d+$/.test(w.peek(k + 1) ?? '')) {
    type = `${type}/${w.peek(k + 1)}`;
    k += 2;
  }
  w.i += k;
  out.args.push('-m', v6 ? 'icmp6' : 'icmp', ...(neg ? ['!'] : []), v6 ? '--icmpv6-type' : '--icmp-type', type);
  return true;
}

/** ` limit: avg RATE burst N` (iptables-save leaves out the default burst, 5). */
function limitMatch(w: Words, out: PrintedRule): boolean {
  if (w.peek() !== 'limit:' || w.peek(1) !== 'avg' || !/^\d+\/\w+$/.test(w.peek(2) ?? '')) return false;
  const rate = w.peek(2)!;
  const burst = w.peek(3) === 'burst' && /^\d+$/.test(w.peek(4) ?? '') ? w.peek(4)! : undefined;
  w.i += burst !== undefined ? 5 : 3;
  out.args.push('-m', 'limit', '--limit', rate, ...(burst !== undefined && burst !== '5' ? ['--limit-burst', burst] : []));
  return true;
}

/** ` PHYSDEV match [!] --physdev-in IF [!] --physdev-is-bridged …`: the options are iptables-save's own. */
function physdevMatch(w: Words, out: PrintedRule): boolean {
  if (w.peek() !== 'PHYSDEV' || w.peek(1) !== 'match') return false;
  const start = w.i;
  w.i += 2;
  const args = ['-m', 'physdev'];
  for (;;) {
    const neg = w.peek() === '!';
    const opt = w.peek(neg ? 1 : 0) ?? '';
    if (/^--physdev-(in|out)$/.test(opt) && w.peek(neg ? 2 : 1) !== undefined) {
      args.push(...(neg ? ['!'] : []), opt, w.peek(neg ? 2 : 1)!);
      w.i += neg ? 3 : 2;
    } else if (/^--physdev-is-(in|out|bridged)$/.test(opt)) {
      args.push(...(neg ? ['!'] : []), opt);
      w.i += neg ? 2 : 1;
    } else break;
  }
  if (args.length === 2) {
    w.i = start;
    return false;
  }
  out.args.push(...args);
  return true;
}

function multiport(w: Words, out: PrintedRule): boolean {
  if (w.peek() !== 'multiport') return false;
  const kind = w.peek(1);
  const list = w.peek(2);
  if (!kind || !list || !/^(sports|dports|ports)$/.test(kind)) return false;
  const neg = list.startsWith('!');
  const ports = (neg ? list.slice(1) : list).split(',').map((p) => p.split(':').map(portNumber));
  if (ports.some((r) => r.some((x) => x === undefined))) return false;
  w.i += 3;
  out.args.push('-m', 'multiport', ...(neg ? ['!'] : []), `--${kind}`, ports.map((r) => r.join(':')).join(','));
  return true;
}

function statistic(w: Words, out: PrintedRule): boolean {
  if (w.peek() !== 'statistic' || w.peek(1) !== 'mode') return false;
  const mode = w.peek(2);
  const start = w.i;
  w.i += 3;
  const neg = w.peek() === '!';
  if (neg) w.next();
  if (mode === 'random' && w.peek() === 'probability' && /^\d*\.?\d+$/.test(w.peek(1) ?? '')) {
    const p = w.peek(1)!;
    w.i += 2;
    out.args.push('-m', 'statistic', '--mode', 'random', ...(neg ? ['!'] : []), '--probability', p);
    return true;
  }
  if (mode === 'nth' && w.peek() === 'every' && /^\d+$/.test(w.peek(1) ?? '')) {
    const every = w.peek(1)!;
    w.i += 2;
    const packet = w.peek() === 'packet' && /^\d+$/.test(w.peek(1) ?? '') ? w.peek(1)! : undefined;
    if (packet !== undefined) w.i += 2;
    out.args.push('-m', 'statistic', '--mode', 'nth', ...(neg ? ['!'] : []), '--every', every, ...(packet !== undefined ? ['--packet', packet] : []));
    return true;
  }
  w.i = start;
  return false;
}

const RECENT_OPS: Record<string, string> = { SET: '--set', CHECK: '--rcheck', UPDATE: '--update', REMOVE: '--remove' };

function recent(w: Words, out: PrintedRule): boolean {
  const neg = w.peek() === '!' && w.peek(1) === 'recent:';
  if (w.peek(neg ? 1 : 0) !== 'recent:') return false;
  const start = w.i;
  w.i += neg ? 2 : 1;
  const op = RECENT_OPS[w.peek() ?? ''];
  if (!op) {
    w.i = start;
    return false;
  }
  w.next();
  const args = ['-m', 'recent', ...(neg ? ['!'] : []), op];
  for (;;) {
    const k = w.peek();
    if ((k === 'seconds:' || k === 'hit_count:' || k === 'name:' || k === 'mask:') && w.peek(1) !== undefined) {
      args.push(`--${k === 'hit_count:' ? 'hitcount' : k.slice(0, -1)}`, w.peek(1)!);
      w.i += 2;
    } else if (k === 'side:' && (w.peek(1) === 'source' || w.peek(1) === 'dest')) {
      args.push(w.peek(1) === 'source' ? '--rsource' : '--rdest');
      w.i += 2;
    } else if (k === 'reap') {
      args.push('--reap');
      w.next();
    } else if (k === 'TTL-Match') {
      args.push('--rttl');
      w.next();
    } else break;
  }
  out.args.push(...args);
  return true;
}

/** ` mark match [!] 0xV[/0xM]`, ` connmark match [!] 0xV[/0xM]`. */
function markMatch(w: Words, out: PrintedRule): boolean {
  const which = w.peek();
  if ((which !== 'mark' && which !== 'connmark') || w.peek(1) !== 'match') return false;
  const neg = w.peek(2) === '!';
  const value = w.peek(neg ? 3 : 2);
  if (!value || !/^0x[0-9a-fA-F]+(\/0x[0-9a-fA-F]+)?$/.test(value)) return false;
  w.i += neg ? 4 : 3;
  out.args.push('-m', which!, ...(neg ? ['!'] : []), '--mark', value);
  return true;
}

/** libxt_conntrack's other ` [!] ctX VALUE` parts, as iptables-save's `--ctX VALUE`. */
const CONNTRACK_MORE = /^ct(orig|repl)(src|dst)(port)?$|^ct(proto|status|expire|dir)$/;

/** ` [!] ctstate A,B` (conntrack), ` [!] state A,B`; ` [!] ctorigdst A` and the like. */
function ctstate(w: Words, out: PrintedRule): boolean {
  const neg0 = w.peek() === '!';
  const more = w.peek(neg0 ? 1 : 0);
  if (more && CONNTRACK_MORE.test(more) && w.peek(neg0 ? 2 : 1) !== undefined) {
    out.args.push('-m', 'conntrack', ...(neg0 ? ['!'] : []), `--${more}`, w.peek(neg0 ? 2 : 1)!);
    w.i += neg0 ? 3 : 2;
    return true;
  }
  const neg = w.peek() === '!';
  const key = w.peek(neg ? 1 : 0);
  const states = w.peek(neg ? 2 : 1);
  if ((key !== 'ctstate' && key !== 'state') || !states || !/^[A-Z,]+$/.test(states)) return false;
  w.i += neg ? 3 : 2;
  out.args.push('-m', key === 'ctstate' ? 'conntrack' : 'state', ...(neg ? ['!'] : []), key === 'ctstate' ? '--ctstate' : '--state', states);
  return true;
}

/** ` ADDRTYPE match src-type [!]T dst-type [!]T [limit-in|limit-out]` (one match, both parts optional). */
function addrtype(w: Words, out: PrintedRule): boolean {
  if (w.peek() !== 'ADDRTYPE' || w.peek(1) !== 'match') return false;
  w.i += 2;
  const args = ['-m', 'addrtype'];
  for (;;) {
    const k = w.peek();
    const v = w.peek(1);
    if ((k === 'src-type' || k === 'dst-type') && v && /^!?[A-Z,]+$/.test(v)) {
      args.push(...(v.startsWith('!') ? ['!'] : []), `--${k}`, v.replace(/^!/, ''));
      w.i += 2;
    } else if (k === 'limit-in' || k === 'limit-out') {
      args.push(`--limit-iface-${k.slice(6)}`);
      w.next();
    } else break;
  }
  out.args.push(...args);
  return true;
}

/** ` [!] match-set NAME src,dst`. */
function matchSet(w: Words, out: PrintedRule): boolean {
  const neg = w.peek() === '!';
  if (w.peek(neg ? 1 : 0) !== 'match-set') return false;
  const name = w.peek(neg ? 2 : 1);
  const flags = w.peek(neg ? 3 : 2);
  if (!name || !flags || !/^(src|dst)(,(src|dst))*$/.test(flags)) return false;
  w.i += neg ? 4 : 3;
  out.args.push('-m', 'set', ...(neg ? ['!'] : []), '--match-set', name, flags);
  return true;
}

function comment(w: Words, out: PrintedRule): boolean {
  const t = w.toks[w.i];
  if (t?.kind !== 'comment') return false;
  w.next();
  out.args.push('-m', 'comment', '--comment', quote(t.text.slice(2, -2).trim()));
  return true;
}

const MATCH_READERS: readonly Reader[] = [comment, portMatch, multiport, statistic, recent, markMatch, ctstate, addrtype, matchSet, icmpMatch, limitMatch, physdevMatch];

/**
 * The first word each target's print function writes, for targets whose options kpx does not
 * read: what follows is the target's, never a match.
 */
const TARGET_TEXT: Record<string, RegExp> = {
  NFLOG: /^nflog-/,
  TCPMSS: /^TCPMSS$/,
  CT: /^(CT|NOTRACK)$/,
  NOTRACK: /^NOTRACK$/,
  TPROXY: /^TPROXY$/,
  CLASSIFY: /^CLASSIFY$/,
  DSCP: /^DSCP$/,
  TOS: /^TOS$/,
  NFQUEUE: /^NFQUEUE$/,
  SET: /^(add-set|del-set|map-set)$/,
  TEE: /^TEE$/,
  CHECKSUM: /^CHECKSUM$/,
  AUDIT: /^AUDIT$/,
  HMARK: /^HMARK$/,
  ULOG: /^ULOG$/,
};

/** The target's printed options, by target name; true when the rest of the text was all the target's. */
function targetText(target: string | undefined, w: Words, out: PrintedRule): boolean {
  const rest = w.toks.slice(w.i).map((t) => t.text);
  if (rest.length === 0) return true;
  const take = (args: string[]) => {
    out.targetArgs.push(...args);
    w.i = w.toks.length;
    return true;
  };
  switch (target) {
    case 'DNAT':
    case 'SNAT': {
      if (!rest.every((r) => /^to:\S+$/.test(r) || r === 'random' || r === 'persistent' || r === 'random-fully')) return false;
      const flag = target === 'DNAT' ? '--to-destination' : '--to-source';
      return take(rest.flatMap((r) => (r.startsWith('to:') ? [flag, r.slice(3)] : [`--${r}`])));
    }
    case 'MASQUERADE':
      if (rest[0] === 'masq' && rest[1] === 'ports:' && rest[2]) return take(['--to-ports', rest[2], ...rest.slice(3).map((r) => `--${r}`)]);
      return rest.every((r) => r === 'random' || r === 'random-fully') ? take(rest.map((r) => `--${r}`)) : false;
    case 'REDIRECT':
      return rest[0] === 'redir' && rest[1] === 'ports' && rest[2] && rest.length === 3 ? take(['--to-ports', rest[2]]) : false;
    case 'REJECT':
      return rest[0] === 'reject-with' && rest[1] && rest.length === 2 ? take(['--reject-with', rest[1]]) : false;
    case 'MARK':
    case 'CONNMARK': {
      const op: Record<string, string> = { set: '--set-mark', xset: '--set-xmark', or: '--or-mark', and: '--and-mark', xor: '--xor-mark' };
      if (rest[0] !== target) return false;
      if (op[rest[1] ?? ''] && rest[2] && rest.length === 3) return take([op[rest[1]], rest[2]]);
      // CONNMARK save|restore [mask M]: the mask is iptables-save's --nfmask/--ctmask pair.
      const sr = target === 'CONNMARK' && (rest[1] === 'save' || rest[1] === 'restore');
      if (sr && (rest.length === 2 || (rest.length === 4 && rest[2] === 'mask'))) return take([`--${rest[1]}-mark`, ...(rest[3] ? ['--nfmask', rest[3], '--ctmask', rest[3]] : [])]);
      return false;
    }
    case 'LOG': {
      const prefix = rest.indexOf('prefix');
      return rest[0] === 'LOG' ? take(prefix >= 0 && rest[prefix + 1] ? ['--log-prefix', rest[prefix + 1]] : []) : false;
    }
    default: {
      // A target whose options kpx does not read: its text is its own, not a condition.
      const own = target ? TARGET_TEXT[target] : undefined;
      if (!own?.test(rest[0])) return false;
      w.i = w.toks.length;
      return true;
    }
  }
}

/** Read a row's text after its destination column. */
export function readPrinted(rest: readonly Tok[], target: string | undefined): PrintedRule {
  const out: PrintedRule = { args: [], targetArgs: [], unknown: [] };
  const w = new Words(rest);
  if (w.peek() === '[goto]') {
    out.goto = true;
    w.next();
  }
  while (!w.done()) {
    if (MATCH_READERS.some((r) => r(w, out))) continue;
    if (targetText(target, w, out)) break;
    // Unknown text: up to the next form kpx knows or the target's own text (or the end), one match of its own.
    const start = w.next()!;
    const words = [start.text];
    while (!w.done()) {
      const save = w.i;
      const probe: PrintedRule = { args: [], targetArgs: [], unknown: [] };
      if (MATCH_READERS.some((r) => r(w, probe)) || targetText(target, w, probe)) {
        w.i = save;
        break;
      }
      words.push(w.next()!.text);
    }
    out.unknown.push({ text: words.join(' '), column: start.column, ...(start.line ? { line: start.line } : {}) });
  }
  return out;
}
