import { formatIp } from '../../model/addr.js';
import { sourceMode } from '../migration-util.js';
import { createRule, type Related } from '../rule.js';

/**
 * IPVS mode binds every Service address on the kube-ipvs0 dummy: they are local addresses, and a host
 * process listening on 0.0.0.0 answers on them (kubernetes#72236). nftables mode has no dummy interface,
 * and rejects ports of ClusterIPs no Service has (cluster-ips-check, PR #122692).
 */
export default createRule({
  id: 'migrate-ipvs-bound-vips',
  meta: {
    category: 'migration',
    description: 'Service addresses are bound on kube-ipvs0 today, so host processes may answer on them; in nftables mode they are not local addresses any more.',
    severity: 'warning',
    requires: ['addresses'],
    relevant: (ctx) => sourceMode(ctx) === 'ipvs',
    docs: [
      'IPVS mode adds every ClusterIP, externalIP and LoadBalancer IP to the `kube-ipvs0` dummy interface so the',
      'kernel accepts packets for them. They are then the node\'s own addresses: a host-network process listening',
      'on `0.0.0.0:PORT` answers on `CLUSTER-IP:PORT` for any port no Service uses (kubernetes#72236), and the',
      'node answers ARP/ping for them unless strictARP. nftables mode has no dummy interface: those addresses stop',
      'being local, a port of a ClusterIP that no Service defines is rejected (`cluster-ips-check`, from 1.30) and',
      'an unallocated ClusterIP is dropped. Whatever relied on reaching host daemons through a Service address',
      'stops working; `kube-ipvs0` is removed when kube-proxy cleans up IPVS mode.',
      '',
      'One finding for the node, at the kube-ipvs0 line of `ip addr`, with the first bound addresses.',
      '',
      "**Fix:** reach host daemons on the node's own address; check nothing (health checks, monitoring) probes",
      'a Service address on a port the Service does not define.',
    ].join('\n'),
    messages: {
      bound: '{{count}} Service address(es) are bound on kube-ipvs0 ({{sample}}): host processes listening on 0.0.0.0 answer on them today; in nftables mode they are not local addresses',
    },
  },
  check(ctx) {
    if (sourceMode(ctx) !== 'ipvs') return;
    const dummy = ctx.snapshot.interfaces.find((i) => i.name === 'kube-ipvs0');
    if (!dummy || dummy.addresses.length === 0) return;
    const related: Related[] = dummy.addresses.slice(0, 5).map((a) => ({ file: dummy.file, line: a.line, text: `kube-ipvs0: ${a.address}/${a.prefix}` }));
    const sample = dummy.addresses.slice(0, 3).map((a) => formatIp(a.ip)).join(', ') + (dummy.addresses.length > 3 ? ', …' : '');
    ctx.report({ messageId: 'bound', data: { count: dummy.addresses.length, sample }, file: dummy.file, line: dummy.line, text: `${dummy.index ?? ''}: kube-ipvs0`.trim(), related });
  },
});
