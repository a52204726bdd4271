import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-external-ip-mismatch',
  meta: {
    description: "An external IP or load-balancer ingress IP of the Service is missing on the node, or the node has one the API does not.",
    severity: 'warning',
    ...API_RULE,
    docs: [
      'kube-proxy dispatches each `spec.externalIPs` address and each `status.loadBalancer.ingress[].ip` of a',
      'Service (of its IP family). An address the API has and the node does not: traffic to it arriving at this node',
      'is not forwarded. An address the node has and the API does not: the node still captures that traffic for',
      'the Service (an IP since given to something else is unreachable from this node). Without endpoints,',
      'iptables rejects external and load-balancer IPs with the same rule, so the two are compared as one set.',
      '',
      '**Fix:** kube-proxy has not synced the Service change: check its log and restart it.',
      '',
      '**Example** (kubernetes/kubernetes#102314): rules for addresses of changed Services stay behind on nodes.',
    ].join('\n'),
    messages: {
      missing: 'Service {{service}}: {{kind}} {{address}} is in the API but not programmed on this node',
      extra: 'Service {{service}}: the node programs {{kind}} {{address}}, which the API no longer has',
    },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['external-ip', 'load-balancer-ip'])) {
      const kind = d.kind === 'load-balancer-ip' ? 'load-balancer IP' : 'external IP';
      ctx.report(driftReport(d, d.found === 'missing' ? 'missing' : 'extra', { kind }, d.found !== 'missing'));
    }
  },
});
