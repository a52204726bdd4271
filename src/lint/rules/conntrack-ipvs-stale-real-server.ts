import { createRule } from '../rule.js';
import { SYSCTL_KEYS } from '../../model/sysctl.js';
import type { IpvsConnection, VirtualServer } from '../../model/ipvs.js';

/** IPVS connections (ipvsadm -Lnc) to a real server with weight 0 or no longer in the virtual server. */
export default createRule({
  id: 'conntrack-ipvs-stale-real-server',
  meta: {
    description: 'IPVS connections (ipvsadm -Lnc) to real servers with weight 0 or no longer listed, with the conn_reuse_mode / expire_nodest_conn settings that decide their fate.',
    severity: 'warning',
    docs: [
      'In IPVS mode kube-proxy removes an endpoint by setting its real server\'s weight to 0 (graceful termination)',
      'and deleting it once its connections are gone. Connections already in the IPVS table keep going to it:',
      '- with `net.ipv4.vs.expire_nodest_conn=0` (the default) packets of a connection whose real server was',
      '  deleted are dropped silently until the connection entry expires; with 1 the entry is expired at once and',
      '  the client gets a reset or a timeout it can retry;',
      '- with `net.ipv4.vs.conn_reuse_mode=0` a NEW connection that reuses a source port (busy clients, NAT) is',
      '  sent to the old real server — also one with weight 0 that is terminating; with 1 (default) IPVS',
      '  reschedules it, but on kernels before 5.9 that path drops the SYN and costs the client a 1-second',
      '  retransmit (the trade-off behind kube-proxy\'s sysctl choices).',
      'kpx reads the connection table and the virtual servers of the same `ipvsadm` dumps, and the sysctls when given.',
      '',
      'Public examples: kubernetes/kubernetes#71358 (with expire_nodest_conn=0 the connections of a removed real',
      'server are blackholed until they expire) and #81775 (the conn_reuse_mode trade-off under load).',
      '',
      '**Fix:** let the pods terminate gracefully (preStop), set `net.ipv4.vs.expire_nodest_conn=1` (and',
      '`expire_quiescent_template=1`), and on kernels ≥ 5.9 keep `conn_reuse_mode=1`.',
    ].join('\n'),
    requires: ['ipvs'],
    relevant: (ctx) => ctx.snapshot.ipvs.some((d) => (d.connections?.length ?? 0) > 0),
    messages: {
      weightZero: '{{proto}} connection {{source}} → {{virtual}} goes to real server {{dest}} whose weight is 0 (terminating); {{fate}}',
      gone: '{{proto}} connection {{source}} → {{virtual}} goes to {{dest}}, which is no longer a real server of that virtual service; {{fate}}',
    },
  },
  check(ctx) {
    const sys = (k: string): string | undefined => ctx.sysctlValues.get(k);
    const reuse = sys(SYSCTL_KEYS.connReuseMode);
    const nodest = sys(SYSCTL_KEYS.expireNodestConn);
    const fate = (gone: boolean, expire: number): string => {
      const parts: string[] = [];
      if (gone) {
        parts.push(
          nodest === undefined
            ? `expire_nodest_conn is not in the dumps (default 0: its packets are dropped for the ${expire}s the entry has left)`
            : nodest.trim() === '0'
              ? `expire_nodest_conn=0: its packets are dropped for the ${expire}s the entry has left`
              : `expire_nodest_conn=${nodest.trim()}: the entry is expired at the next packet and the client must reconnect`,
        );
      } else {
        parts.push(`the connection stays on it for the ${expire}s its entry has left`);
      }
      parts.push(
        reuse === undefined
          ? 'conn_reuse_mode is not in the dumps (default 1: a new connection reusing the source port is rescheduled)'
          : reuse.trim() === '0'
            ? 'conn_reuse_mode=0: a new connection reusing this source port is sent to the same real server'
            : `conn_reuse_mode=${reuse.trim()}: a new connection reusing this source port is rescheduled`,
      );
      return parts.join('; ');
    };
    // An IpvsDump does not carry its file: the n-th dump is the n-th ipvsadm file of the snapshot.
    const ipvsFiles = ctx.snapshot.files.filter((f) => f.format === 'ipvsadm').map((f) => f.path);
    for (const [n, d] of ctx.snapshot.ipvs.entries()) {
      const file = d.virtualServers[0]?.file ?? ipvsFiles[n] ?? 'ipvsadm';
      const conns = d.connections ?? [];
      if (conns.length === 0) continue;
      const vsByKey = new Map<string, VirtualServer>();
      for (const dump of ctx.snapshot.ipvs) for (const vs of dump.virtualServers) if (vs.ip && vs.port !== undefined) vsByKey.set(`${vs.protocol}/${vs.address}:${vs.port}`, vs);
      if (vsByKey.size === 0) return;
      const fmt = (e: IpvsConnection['source']): string => (e.port === undefined ? e.address : e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`);
      for (const c of conns) {
        const vs = vsByKey.get(`${c.protocol.toUpperCase()}/${c.virtual.address}:${c.virtual.port}`);
        if (!vs) continue;
        const rs = vs.realServers.find((r) => r.address === c.destination.address && r.port === c.destination.port);
        if (rs && rs.weight !== 0) continue;
        const data = { proto: c.protocol, source: fmt(c.source), virtual: fmt(c.virtual), dest: fmt(c.destination), fate: fate(!rs, c.expire) };
        ctx.report({ messageId: rs ? 'weightZero' : 'gone', data, file, line: c.line, column: c.column, related: rs ? [{ file: vs.file, line: rs.line, text: `-> ${rs.address}:${rs.port} weight ${rs.weight}` }] : [{ file: vs.file, line: vs.line, text: `${vs.protocol} ${vs.address}:${vs.port}` }] });
      }
    }
  },
});
