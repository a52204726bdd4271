/**
 * Does one iptables match hold for a packet on this path? `true`, `false`, or `unknown` with the
 * reason (the walk then follows both outcomes, labelled). State-dependent matches are decided by
 * the trace's stated assumptions, never silently.
 */
import { cidrContains, parseIp, type Ip } from '../model/addr.js';
import { ipsetMatches } from '../model/ipset.js';
import type { Match } from '../model/netfilter.js';
import { isLocalAddress, type TraceContext } from './context.js';
import type { TraceProtocol } from './packet.js';

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

export type MatchResult = boolean | { readonly unknown: string };

const unknown = (reason: string): MatchResult => ({ unknown: reason });

function ifaceMatches(pattern: string, name: string): boolean {
  return pattern.endsWith('+') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

function addrType(ctx: TraceContext, ip: Ip, types: readonly string[]): MatchResult {
  let sawUnknown: string | undefined;
  for (const t of types) {
    switch (t) {
      case 'LOCAL':
        if (!ctx.knowsLocal) sawUnknown = "the node's addresses are unknown (give ip addr or --node-ip)";
        else if (isLocalAddress(ctx, ip)) return true;
        break;
      case 'MULTICAST':
        if ((ip.family === 4 && ip.value >> 28n === 14n) || (ip.family === 6 && ip.value >> 120n === 0xffn)) return true;
        break;
      case 'BROADCAST':
        if ((ip.family === 4 && ip.value === 0xffffffffn) || ctx.broadcast.some((b) => b.value === ip.value)) return true;
        break;
      case 'UNICAST':
        // Not local/broadcast/multicast; a routable unicast address (what RTN_UNICAST means for a route lookup).
        if (!ctx.knowsLocal) sawUnknown = "the node's addresses are unknown";
        else if (!isLocalAddress(ctx, ip) && !((ip.family === 4 && ip.value >> 28n === 14n) || ip.value === 0xffffffffn)) return true;
        break;
      default:
        sawUnknown = `addrtype ${t} needs the node's route types`;
    }
  }
  return sawUnknown ? unknown(sawUnknown) : false;
}

function negate(r: MatchResult, negated: boolean): MatchResult {
  return typeof r === 'boolean' ? r !== negated : r;
}

export function evaluateMatch(m: Match, st: PathState, ctx: TraceContext): MatchResult {
  switch (m.kind) {
    case 'comment':
      return true;
    case 'address': {
      if (!m.cidr) return unknown(`address ${m.text} cannot be read`);
      if (m.cidr.family !== st.family) return false;
      return negate(cidrContains(m.cidr, m.dir === 'src' ? st.src : st.dst), m.negated);
    }
    case 'protocol':
      return negate(m.protocol === st.protocol, m.negated);
    case 'fragment':
      return m.negated; // a traced packet is the first, unfragmented one
    case 'port': {
      const ports = m.dir === 'src' ? [st.sport] : m.dir === 'dst' ? [st.dport] : [st.sport, st.dport];
      const hit = ports.some((p) => m.ranges.some((r) => p >= r.from && p <= r.to));
      return negate(hit, m.negated);
    }
    case 'interface': {
      const name = m.dir === 'in' ? st.inInterface : st.outInterface;
      if (m.dir === 'in' && (st.hook === 'OUTPUT' || st.hook === 'POSTROUTING')) return m.negated;
      if (m.dir === 'out' && (st.hook === 'PREROUTING' || st.hook === 'INPUT')) return m.negated;
      if (name === undefined) return unknown(`the ${m.dir === 'in' ? 'input' : 'output'} interface is not known`);
      return negate(ifaceMatches(m.name, name), m.negated);
    }
    case 'statistic':
      // Branching is handled by the walker; reaching here means "evaluate as certain".
      return true;
    case 'recent': {
      if (m.op === 'set' || m.op === 'remove') return negate(true, m.negated);
      return negate(ctx.assumptions.affinityHit, m.negated);
    }
    case 'addrtype':
      return negate(addrType(ctx, m.dir === 'src' ? st.src : st.dst, m.types), m.negated);
    case 'ctstate': {
      const states = new Set<string>([ctx.assumptions.established ? 'ESTABLISHED' : 'NEW']);
      if (st.dnatDone) states.add('DNAT');
      if (st.snatDone) states.add('SNAT');
      return negate(
        m.states.some((s) => states.has(s)),
        m.negated,
      );
    }
    case 'mark': {
      const value = m.connmark ? st.connmark : st.mark;
      return negate(((value & m.mask) >>> 0) === m.value >>> 0, m.negated);
    }
    case 'set': {
      const set = ctx.ipsets.get(m.name);
      if (!set) return unknown(`ipset ${m.name} is not in the dumps (give ipset list)`);
      const r = ipsetMatches(set, { src: st.src, dst: st.dst, proto: st.protocol, sport: st.sport, dport: st.dport }, m.flags, ctx.ipsets);
      return r === 'unknown' ? unknown(`membership in ipset ${m.name} cannot be decided`) : negate(r, m.negated);
    }
    case 'tcp-flags': {
      if (st.protocol !== 'tcp') return false;
      const flags = new Set(ctx.assumptions.established ? ['ACK'] : ['SYN']);
      const masked = m.mask.filter((f) => f === 'ALL' || flags.has(f));
      const want = new Set(m.comp.includes('NONE') ? [] : m.comp);
      const hit = masked.length === want.size && masked.every((f) => want.has(f));
      return negate(hit, m.negated);
    }
    case 'iprange': {
      const from = parseIp(m.from);
      const to = parseIp(m.to);
      if (!from || !to) return unknown(`iprange ${m.from}-${m.to} cannot be read`);
      const ip = m.dir === 'src' ? st.src : st.dst;
      return negate(ip.family === from.family && ip.value >= from.value && ip.value <= to.value, m.negated);
    }
    case 'icmp':
      return false; // traced packets are TCP/UDP/SCTP
    case 'physdev':
      return unknown(`-m physdev ${m.option}: bridge ports are not in the dumps`);
    case 'socket':
      return unknown('-m socket depends on local sockets');
    case 'unsupported':
      return unknown(`${m.module ? `-m ${m.module}` : 'option'} (${m.text}) is not evaluated by kpx`);
  }
}
