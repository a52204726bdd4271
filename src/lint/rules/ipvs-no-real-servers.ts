import { createRule } from '../rule.js';
import { cutListings, serviceOfVs, virtualServers, vsText } from '../ipvs-util.js';

export default createRule({
  id: 'ipvs-no-real-servers',
  meta: {
    description: 'An IPVS virtual server has no real servers: connections to the Service fail.',
    severity: 'warning',
    docs: [
      'In IPVS mode kube-proxy keeps a virtual server for every Service address even when the Service has no',
      'ready endpoints. With no real server, IPVS has no destination for a new connection: `ip_vs_leave()`',
      '(net/netfilter/ipvs/ip_vs_core.c) sends ICMP port unreachable back to the client, for TCP and UDP alike,',
      'and drops the packet, so clients see "connection refused" at once (as with iptables mode\'s REJECT), not a',
      'timeout. Either the Service really has no ready endpoints, or kube-proxy failed to add them.',
      '',
      '**Fix:** check the Service\'s EndpointSlices and the pods\' readiness; if endpoints exist in the API, check',
      'kube-proxy\'s logs on this node (`ipvsadm -Ln -t VIP:PORT` should list them after a sync).',
    ].join('\n'),
    messages: {
      empty: 'virtual server {{vs}} has no real servers: new connections to it are refused (ICMP port unreachable)',
    },
  },
  check(ctx) {
    const { cut } = cutListings(ctx);
    for (const { key, vs } of virtualServers(ctx)) {
      if (vs.realServers.length > 0 || cut.has(vs)) continue; // a cut listing's last virtual server: its real servers are past the cut
      ctx.report({ messageId: 'empty', data: { vs: key }, file: vs.file, line: vs.line, column: vs.column, text: vsText(vs), ...serviceOfVs(ctx, key) });
    }
  },
});
