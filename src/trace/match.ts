/**
 * Does one iptables match hold for a packet on this path? A fact the evidence does not give
 * (the input interface, whether an address is the node's…) is asked of the scenario, which
 * answers it once for the whole run. State-dependent matches are decided by the trace's stated
 * assumptions, never silently.
 */
import { cidrContains, formatIp, parseIp, type Ip } from '../model/addr.js';
import { ipsetMatches } from '../model/ipset.js';
import type { Match } from '../model/netfilter.js';
import { isLocalAddress, type TraceContext } from './context.js';
import type { TraceProtocol } from './packet.js';
import { ifaceMatches } from './scenario.js';
import type { QuestionCode } from './types.js';

export interface PathState {
  readonly family: 4 | 6;
  readonly protocol: TraceProtocol;
  src: Ip;
  sport: number;
  dst: Ip;
  dport: number;
  inInterface?: string;
  outInterface?: string;
  mark: number;
  connmark: number;
  /** conntrack status bits set so far on this path (DNAT, SNAT). */
  dnatDone: boolean;
  snatDone: boolean;
  /** Which hook the walk is in, for rules only valid in some hooks. */
  hook: 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING';
}

/** A fact a match needs that the evidence does not give; `key` names the fact (shared by every rule asking it). */
export interface Undecided {
  readonly code: QuestionCode;
  readonly key: string;
  readonly subject?: string;
}

/** Answers an undecided fact for this scenario. */
export type Ask = (u: Undecided) => boolean;

const isMulticast = (ip: Ip) => (ip.family === 4 && ip.value >> 28n === 14n) || (ip.family === 6 && ip.value >> 120n === 0xffn);

/** Is `ip` one of the node's addresses? Asked when the node's addresses are not in the evidence. */
export function isLocal(ctx: TraceContext, ip: Ip, ask: Ask): boolean {
  if (ctx.knowsLocal) return isLocalAddress(ctx, ip);
  const text = formatIp(ip);
  return ask({ code: 'local-address', key: `local:${text}`, subject: text });
}

function addrType(ctx: TraceContext, ip: Ip, types: readonly string[], ask: Ask): boolean {
  for (const t of types) {
    switch (t) {
      case 'LOCAL':
        if (isLocal(ctx, ip, ask)) return true;
        break;
      case 'MULTICAST':
        if (isMulticast(ip)) return true;
        break;
      case 'BROADCAST':
        if ((ip.family === 4 && ip.value === 0xffffffffn) || ctx.broadcast.some((b) => b.value === ip.value)) return true;
        break;
      case 'UNICAST':
        // Not local/broadcast/multicast; a routable unicast address (what RTN_UNICAST means for a route lookup).
        if (!isMulticast(ip) && ip.value !== 0xffffffffn && !isLocal(ctx, ip, ask)) return true;
        break;
      default:
        if (ask({ code: 'address-type', key: `addrtype:${t}:${formatIp(ip)}`, subject: `${formatIp(ip)} ${t}` })) return true;
    }
  }
  return false;
}

export function evaluateMatch(m: Match, st: PathState, ctx: TraceContext, ask: Ask): boolean {
  switch (m.kind) {
    case 'comment':
      return true;
    case 'address': {
      // An address kpx cannot read: the match is asked as written.
      if (!m.cidr) return ask({ code: 'not-evaluated', key: `match:${m.negated ? '!' : ''}${m.dir}:${m.text}`, subject: m.text });
      if (m.cidr.family !== st.family) return false;
      return cidrContains(m.cidr, m.dir === 'src' ? st.src : st.dst) !== m.negated;
    }
    case 'protocol':
      return (m.protocol === st.protocol) !== m.negated;
    case 'fragment':
      return m.negated; // a traced packet is the first, unfragmented one
    case 'port': {
      const ports = m.dir === 'src' ? [st.sport] : m.dir === 'dst' ? [st.dport] : [st.sport, st.dport];
      const hit = ports.some((p) => m.ranges.some((r) => p >= r.from && p <= r.to));
      return hit !== m.negated;
    }
    case 'interface': {
      if (m.dir === 'in' && (st.hook === 'OUTPUT' || st.hook === 'POSTROUTING')) return m.negated;
      if (m.dir === 'out' && (st.hook === 'PREROUTING' || st.hook === 'INPUT')) return m.negated;
      const name = m.dir === 'in' ? st.inInterface : st.outInterface;
      // The question is the fact (does it arrive on NAME?); `!` applies to its answer.
      const on = name !== undefined ? ifaceMatches(m.name, name) : ask({ code: m.dir === 'in' ? 'in-interface' : 'out-interface', key: `iface:${m.dir}:${m.name}`, subject: m.name });
      return on !== m.negated;
    }
    case 'statistic':
      // Shares are the dialect's business; reaching here means "evaluate as certain".
      return true;
    case 'recent': {
      if (m.op === 'set' || m.op === 'remove') return !m.negated;
      return ctx.assumptions.affinityHit !== m.negated;
    }
    case 'addrtype':
      return addrType(ctx, m.dir === 'src' ? st.src : st.dst, m.types, ask) !== m.negated;
    case 'ctstate': {
      const states = new Set<string>([ctx.assumptions.established ? 'ESTABLISHED' : 'NEW']);
      if (st.dnatDone) states.add('DNAT');
      if (st.snatDone) states.add('SNAT');
      return m.states.some((s) => states.has(s)) !== m.negated;
    }
    case 'mark': {
      const value = m.connmark ? st.connmark : st.mark;
      return (((value & m.mask) >>> 0) === m.value >>> 0) !== m.negated;
    }
    case 'set': {
      const set = ctx.ipsets.get(m.name);
      const key = `ipset:${m.name}:${m.flags.join(',')}`;
      if (!set) return ask({ code: 'ipset-missing', key, subject: m.name }) !== m.negated;
      const r = ipsetMatches(set, { src: st.src, dst: st.dst, proto: st.protocol, sport: st.sport, dport: st.dport }, m.flags, ctx.ipsets);
      const member = r === 'unknown' ? ask({ code: 'ipset-undecidable', key, subject: m.name }) : r;
      return member !== m.negated;
    }
    case 'tcp-flags': {
      if (st.protocol !== 'tcp') return false;
      const flags = new Set(ctx.assumptions.established ? ['ACK'] : ['SYN']);
      const masked = m.mask.filter((f) => f === 'ALL' || flags.has(f));
      const want = new Set(m.comp.includes('NONE') ? [] : m.comp);
      const hit = masked.length === want.size && masked.every((f) => want.has(f));
      return hit !== m.negated;
    }
    case 'iprange': {
      const from = parseIp(m.from);
      const to = parseIp(m.to);
      const ip = m.dir === 'src' ? st.src : st.dst;
      if (!from || !to) return ask({ code: 'not-evaluated', key: `match:${m.negated ? '!' : ''}iprange:${m.dir}:${m.from}-${m.to}`, subject: `${m.from}-${m.to}` });
      return (ip.family === from.family && ip.value >= from.value && ip.value <= to.value) !== m.negated;
    }
    case 'icmp':
      return false; // traced packets are TCP/UDP/SCTP
    case 'physdev':
      return ask({ code: 'physdev', key: `physdev:${m.option}:${m.value ?? ''}`, subject: `${m.option}${m.value !== undefined ? ` ${m.value}` : ''}` }) !== m.negated;
    case 'socket':
      return ask({ code: 'socket', key: `match:socket:${m.options.join(' ')}`, subject: 'socket' });
    case 'unsupported':
      // Each such match (a rate limit, an owner…) is its own fact: asked as written.
      return ask({ code: m.module === 'limit' ? 'limit' : 'not-evaluated', key: `match:${m.text}`, subject: m.module || m.text });
  }
}
