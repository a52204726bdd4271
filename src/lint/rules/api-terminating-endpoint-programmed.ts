import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-terminating-endpoint-programmed',
  meta: {
    description: 'This node still sends new connections to a terminating endpoint while ready endpoints exist.',
    severity: 'warning',
    ...API_RULE,
    docs: [
      'kube-proxy uses serving-terminating endpoints only when a Service has no ready endpoint at all (separately for',
      'the Cluster and the Local set: pkg/proxy/topology.go CategorizeEndpoints). Here the API marks the endpoint',
      '`terminating: true` and lists ready ones, yet the node still balances new connections to it: the pod is',
      'shutting down and will refuse them once its grace period ends.',
      '',
      '**Fix:** kube-proxy on this node has not seen the pod\'s termination: check its log and restart it. A preStop',
      'sleep longer than kube-proxy\'s sync delay hides the window during rollouts.',
      '',
      '**Example** (kubernetes.io tutorial "Explore Termination Behavior for Pods And Their Endpoints"): during a',
      'rollout the EndpointSlice lists the old pod `ready: false, serving: true, terminating: true` beside the new',
      'ready one; kube-proxy should route only to the ready one.',
    ].join('\n'),
    messages: { terminating: 'Service {{service}}: this node sends new connections to terminating endpoint {{address}} although ready endpoints exist' },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['terminating-programmed'])) ctx.report(driftReport(d, 'terminating', {}, true));
  },
});
