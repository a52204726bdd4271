import { createRule } from '../rule.js';
import { cutListings, serviceOfVs, virtualServers, vsText } from '../ipvs-util.js';

export default createRule({
  id: 'ipvs-all-weights-zero',
  meta: {
    description: 'Every real server of an IPVS virtual server has weight 0: no new connection is accepted.',
    severity: 'error',
    docs: [
      'kube-proxy sets a real server\'s weight to 0 while its endpoint terminates (graceful termination) and',
      'deletes it once its connections are gone. Weight 0 means "no new connections". When every real server',
      'of a virtual server has weight 0, the Service accepts no new connection at all: all endpoints are',
      'terminating (a rollout without surge, a scale to zero), or kube-proxy\'s graceful-termination list is stuck.',
      '',
      '**Fix:** check that the Service has ready (not only terminating) endpoints; if it does, restart',
      'kube-proxy so it re-adds them with weight 1. Also check `net.ipv4.vs.expire_nodest_conn` (see `ipvs-sysctl`).',
    ].join('\n'),
    messages: {
      zero: 'all {{n}} real servers of {{vs}} have weight 0: it accepts no new connections',
    },
  },
  check(ctx) {
    const { cut } = cutListings(ctx);
    for (const { key, vs } of virtualServers(ctx)) {
      if (cut.has(vs) || vs.realServers.length === 0 || vs.realServers.some((r) => r.weight === undefined || r.weight > 0)) continue;
      ctx.report({
        messageId: 'zero',
        data: { vs: key, n: vs.realServers.length },
        file: vs.file,
        line: vs.line,
        column: vs.column,
        text: vsText(vs),
        ...serviceOfVs(ctx, key),
        related: vs.realServers.slice(0, 8).map((r) => ({ file: vs.file, line: r.line, column: r.column, text: `-> ${r.address}${r.port !== undefined ? `:${r.port}` : ''} weight ${r.weight}` })),
      });
    }
  },
});
