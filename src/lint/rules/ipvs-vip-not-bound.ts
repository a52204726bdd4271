import { formatIp } from '../../model/addr.js';
import { createRule } from '../rule.js';
import { serviceOfVs, virtualServers, vsText } from '../ipvs-util.js';

export default createRule({
  id: 'ipvs-vip-not-bound',
  meta: {
    description: 'An IPVS virtual server\'s address is not on any interface of the node (kube-ipvs0), so IPVS never sees its packets.',
    severity: 'error',
    docs: [
      'IPVS hooks LOCAL_IN: it only sees packets the kernel delivers locally. kube-proxy therefore binds every',
      'cluster IP, external IP and load-balancer IP to the dummy interface kube-ipvs0. A virtual server whose',
      'address is on no interface is never reached: packets to it are routed away (usually to the default',
      'gateway) and the Service times out from this node.',
      '',
      '**Fix:** `ip addr show kube-ipvs0` should list the VIP; restart kube-proxy to re-add it. If kube-ipvs0',
      'itself is missing, something deleted it (a network manager that manages all interfaces: tell it to',
      'ignore kube-ipvs0). Needs an `ip addr` dump.',
    ].join('\n'),
    requires: ['addresses'],
    relevant: (ctx) => ctx.modes.includes('ipvs'),
    messages: {
      unbound: 'the address of virtual server {{vs}} is not on any interface of this node (kube-ipvs0): IPVS never receives its packets',
    },
  },
  check(ctx) {
    const snap = ctx.snapshot;
    const bound = new Set<string>();
    for (const i of snap.interfaces) for (const a of i.addresses) bound.add(formatIp(a.ip));
    for (const ip of snap.extraNodeIps) bound.add(formatIp(ip));
    for (const { key, vs } of virtualServers(ctx)) {
      if (!vs.ip || vs.protocol === 'FWM') continue;
      const ip = formatIp(vs.ip);
      if (bound.has(ip) || (vs.ip.family === 4 && vs.ip.value >> 24n === 127n)) continue;
      ctx.report({ messageId: 'unbound', data: { vs: key }, file: vs.file, line: vs.line, column: vs.column, text: vsText(vs), ...serviceOfVs(ctx, key) });
    }
  },
});
