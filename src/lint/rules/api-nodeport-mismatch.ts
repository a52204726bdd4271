import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-nodeport-mismatch',
  meta: {
    description: "The node's NodePort for a Service port differs from the API's (or one of them has none).",
    severity: 'warning',
    ...API_RULE,
    docs: [
      'The Service in the API has NodePort N (type NodePort or LoadBalancer), and the node dispatches another port,',
      'or none, for that Service port: external clients and load balancers that use the API\'s NodePort reach',
      'nothing on this node (or another Service, if the port was reallocated).',
      '',
      '**Fix:** kube-proxy has not synced the Service change: check its log and restart it. A cloud load balancer',
      'health-checking the old port marks the node unhealthy.',
      '',
      '**Example** (kubernetes/kubernetes#102314): stale KUBE-SERVICES/KUBE-NODEPORTS rules stay on nodes after the',
      'Services they were made for changed.',
    ].join('\n'),
    messages: { mismatch: 'Service {{service}}: the API says NodePort {{expected}}, the node dispatches NodePort {{found}}' },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['node-port'])) ctx.report(driftReport(d, 'mismatch', { expected: d.expected ?? '', found: d.found ?? '' }, d.found !== 'none'));
  },
});
