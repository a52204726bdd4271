/**
 * IPVS at LOCAL_IN: a packet for a virtual server (TCP/UDP/SCTP VIP:port, or a firewall mark)
 * goes to one of its real servers. The scheduler's shares are alternatives of the chain machine,
 * so they branch exactly as statistic and numgen shares do.
 */
import { parseIp } from '../model/addr.js';
import { cutVirtualServer, findFwmarkService, findVirtualServer, realServerShares, type VirtualServer } from '../model/ipvs.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { applyEffect, splitBranch, type Alternative, type Branch, type StepRef } from './chain-machine.js';
import type { PathState } from './match.js';

/** The virtual server that takes this packet, if any. */
export function virtualServerFor(snapshot: NodeSnapshot, st: PathState): { vs: VirtualServer; file: string; cutAt?: number } | undefined {
  for (const dump of snapshot.ipvs) {
    const vs = findVirtualServer(dump, st.protocol.toUpperCase() as 'TCP', st.dst, st.dport) ?? (st.mark ? findFwmarkService(dump, st.mark, st.family) : undefined);
    if (vs) return cutVirtualServer(dump) === vs ? { vs, file: vs.file, cutAt: dump.truncated!.line } : { vs, file: vs.file };
  }
  return undefined;
}

/** The scheduler's choice as alternatives: one per real server with a positive share, with its line. */
export function ipvsAlternatives(vs: VirtualServer): { alt: Alternative; line: number }[] {
  const out: { alt: Alternative; line: number }[] = [];
  for (const { realServer: rs, share } of realServerShares(vs)) {
    if (!(share > 0)) continue;
    const ip = rs.ip ?? parseIp(rs.address);
    if (!ip) {
      // `ipvsadm -L` without -n prints names (cut at the column width): where its share goes is unknown.
      out.push({ line: rs.line, alt: { share, effects: [{ kind: 'unknown', reason: { code: 'real-server-name', name: rs.address } }] } });
      continue;
    }
    out.push({
      line: rs.line,
      alt: {
      share,
      effects: [
        {
          kind: 'ipvs',
          ip,
          address: rs.address,
          ...(rs.port !== undefined ? { port: rs.port } : {}),
          ...(rs.forward !== undefined ? { forward: rs.forward } : {}),
          ...(rs.weight !== undefined ? { weight: rs.weight } : {}),
          probability: share,
          ...(vs.persistent !== undefined ? { persistent: vs.persistent } : {}),
        },
      ],
      },
    });
  }
  return out;
}

const whereOf = (vs: VirtualServer) => `${vs.protocol} ${vs.address ?? vs.fwmark}:${vs.port ?? ''} ${vs.scheduler ?? ''}`.trim();

/**
 * Returns undefined when no virtual server takes the packet, [] when one does but no real server
 * can (the branch is then ended: refused), else one branch per real server (ended UNKNOWN when the
 * real server is printed by name).
 *
 * A virtual server without a real server that takes new connections (none listed, or all at weight
 * 0) does not drop the packet: the scheduler finds no destination, and ip_vs_leave()
 * (net/netfilter/ipvs/ip_vs_core.c) "notif[ies] the client that the destination is unreachable":
 * icmp_send(ICMP_DEST_UNREACH, ICMP_PORT_UNREACH) (ICMPv6 port unreachable for IPv6), "no matter it
 * is TCP/UDP", then NF_DROP. The client gets "connection refused" at once, not a timeout.
 */
export function ipvsStage(snapshot: NodeSnapshot, b: Branch, budget: { branches: number }): Branch[] | undefined {
  const found = virtualServerFor(snapshot, b.st);
  if (!found) return undefined;
  const { vs, file } = found;
  const chain = whereOf(vs);
  if (found.cutAt !== undefined) {
    // The listing was cut inside this virtual server: its real servers (and shares) are not all in the evidence.
    const ref: StepRef = { dialect: 'ipvs', table: 'ipvs', chain, file, line: vs.line };
    applyEffect(b, { kind: 'unknown', reason: { code: 'listing-truncated', what: `virtual server ${chain}`, file, line: found.cutAt } }, ref, undefined, { masqSource: () => undefined });
    return [b];
  }
  const choices = ipvsAlternatives(vs);
  if (choices.length === 0) {
    b.steps.push({ dialect: 'ipvs', table: 'ipvs', chain, rule: vs.line, file, code: vs.realServers.length ? 'ipvs-draining' : 'ipvs-no-real-servers' });
    b.end = { verdict: 'REJECT' };
    return [];
  }
  const out: Branch[] = [];
  const lines = new Map(choices.map((c) => [c.alt, c.line]));
  for (const { branch, alt } of splitBranch(b, choices.map((c) => c.alt), budget)) {
    const ref: StepRef = { dialect: 'ipvs', table: 'ipvs', chain, file, line: lines.get(alt) ?? vs.line };
    for (const e of alt.effects) applyEffect(branch, e, ref, undefined, { masqSource: () => undefined });
    out.push(branch);
  }
  return out;
}
