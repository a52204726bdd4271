/**
 * IPVS at LOCAL_IN: a packet for a virtual server (TCP/UDP/SCTP VIP:port, or a firewall mark)
 * is sent to one of its real servers, split by the scheduler's shares. Returns undefined when no
 * virtual server takes the packet, [] when one does but has no usable real server.
 */
import { parseIp } from '../model/addr.js';
import { findFwmarkService, findVirtualServer, realServerShares } from '../model/ipvs.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { cloneBranch, formatPct, type Branch } from './iptables.js';

export function ipvsStage(snapshot: NodeSnapshot, b: Branch): Branch[] | undefined {
  for (const dump of snapshot.ipvs) {
    const vs = findVirtualServer(dump, b.st.protocol.toUpperCase() as 'TCP', b.st.dst, b.st.dport) ?? (b.st.mark ? findFwmarkService(dump, b.st.mark, b.st.family) : undefined);
    if (!vs) continue;
    const where = `${vs.protocol} ${vs.address ?? vs.fwmark}:${vs.port ?? ''} ${vs.scheduler ?? ''}`.trim();
    const shares = realServerShares(vs).filter((s) => s.share > 0);
    if (shares.length === 0) {
      b.steps.push({ table: 'ipvs', chain: where, rule: vs.line, file: vs.file, action: vs.realServers.length ? 'virtual server: every real server has weight 0 (draining): no new connections' : 'virtual server has no real servers: the packet is dropped' });
      return [];
    }
    const out: Branch[] = [];
    for (const { realServer: rs, share } of shares) {
      const ip = rs.ip ?? parseIp(rs.address);
      if (!ip) continue;
      const nb = cloneBranch(b);
      nb.probability *= share;
      nb.st.dst = ip;
      if (rs.port !== undefined) nb.st.dport = rs.port;
      nb.st.dnatDone = rs.forward === undefined || rs.forward === 'Masq';
      nb.claimed = true;
      nb.steps.push({
        table: 'ipvs',
        chain: where,
        rule: rs.line,
        file: vs.file,
        action: `${rs.forward ?? 'Masq'} to ${rs.address}:${rs.port ?? ''} (weight ${rs.weight ?? '?'}, ${formatPct(share)})${vs.persistent ? `; persistent ${vs.persistent}s: a client sticks to its first real server` : ''}`,
      });
      out.push(nb);
    }
    return out;
  }
  return undefined;
}
