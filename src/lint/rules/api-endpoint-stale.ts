import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-endpoint-stale',
  meta: {
    description: 'This node programs an endpoint the API no longer lists (traffic to a deleted pod), or one kube-proxy would not use here.',
    severity: 'error',
    ...API_RULE,
    docs: [
      'The node balances the Service\'s connections to an endpoint that no EndpointSlice of the Service lists: the pod',
      'was deleted, and kube-proxy on this node missed the update. Its share of new connections times out or is',
      'refused (or reaches whatever pod now has the address). This is an error.',
      '',
      'A warning when the API lists the endpoint but kube-proxy would not use it on this node: not ready (and not',
      'serving-terminating), hinted for another zone (topology hints), or on another node under',
      '`internalTrafficPolicy: Local`. IPVS real servers of weight 0 are being drained (graceful termination) and are',
      'not reported.',
      '',
      '**Fix:** kube-proxy\'s view is stale: check its log for watch or sync errors, restart it; compare with',
      '`kubectl get endpointslices -l kubernetes.io/service-name=NAME -n NS -o wide`.',
      '',
      '**Example** (kubernetes/kubernetes#67875, #28674): after an endpoint was removed, kube-proxy kept its',
      'iptables rules to the old address; requests failed with "no route to host".',
    ].join('\n'),
    messages: {
      stale: 'Service {{service}}: this node sends traffic to {{address}}, which the API no longer lists (a deleted pod)',
      notUsable: 'Service {{service}}: this node sends traffic to {{address}}, which kube-proxy would not use here ({{why}})',
    },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['endpoint-stale'])) ctx.report(driftReport(d, 'stale', {}, true));
    for (const d of driftItems(ctx, ['endpoint-not-usable'])) ctx.report(driftReport(d, 'notUsable', { why: d.why ?? '' }, true, 'warning'));
  },
});
