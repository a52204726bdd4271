import { routeLocalnetSwitch } from '../../model/switches.js';
import { decisive, evidenceLine } from '../kernel-util.js';
import { createRule } from '../rule.js';

export default createRule({
  id: 'kernel-route-localnet-off',
  meta: {
    description: 'route_localnet is off on an iptables-mode node with NodePorts: connections to 127.0.0.1:NODEPORT are refused at rerouting.',
    severity: 'warning',
    requires: ['sysctl'],
    relevant: (ctx) => ctx.modes.includes('iptables'),
    docs: [
      'In iptables mode kube-proxy serves NodePorts on 127.0.0.1 too (`--iptables-localhost-nodeports`, on by default)',
      'and sets `net.ipv4.conf.all.route_localnet=1` for it: after OUTPUT\'s DNAT sends a packet from 127.0.0.1 to a',
      'pod, the kernel lets a 127.0.0.0/8 source leave by a non-loopback interface only with route_localnet on it.',
      'Off, the connection fails (`kpx trace 127.0.0.1:NODEPORT --from node` shows `DROP: dropped by route_localnet off`).',
      '',
      '**Fix:** `sysctl -w net.ipv4.conf.all.route_localnet=1` (kube-proxy sets it at start: something reset it), or',
      'reach NodePorts on the node\'s own address instead of localhost.',
    ].join('\n'),
    messages: {
      off: 'route_localnet is off ({{evidence}}) and this node has {{count}} NodePort(s): connections to 127.0.0.1:NODEPORT are refused',
    },
  },
  check(ctx) {
    const nodePorts = ctx.resolution.services.filter((sv) => sv.nodePort !== null && sv.family === 4);
    if (nodePorts.length === 0 || !ctx.modes.includes('iptables')) return;
    const r = routeLocalnetSwitch(ctx.snapshot.sysctls, undefined);
    if (!r.known || r.effect !== 'drop') return;
    const at = decisive(r.evidence);
    if (!at) return;
    ctx.report({ messageId: 'off', data: { evidence: r.evidence.map(evidenceLine).join(', '), count: new Set(nodePorts.map((n) => n.nodePort)).size }, file: at.file, line: at.line, column: 1, text: evidenceLine(at) });
  },
});
