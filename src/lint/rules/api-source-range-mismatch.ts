import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-source-range-mismatch',
  meta: {
    description: "The node's loadBalancerSourceRanges for a Service differ from the API's: clients allowed or refused against the spec.",
    severity: 'warning',
    ...API_RULE,
    docs: [
      'kube-proxy filters traffic to a load-balancer IP by `spec.loadBalancerSourceRanges` (the KUBE-FW chain in',
      'iptables mode, the KUBE-LOAD-BALANCER-SOURCE-CIDR set in IPVS mode, the firewall set in nftables mode). A',
      'range the API has and the node lacks refuses those clients here; a range the node has and the API dropped',
      'still lets them in: an access-control difference, checked only where both sides have a load-balancer IP.',
      '',
      '**Fix:** kube-proxy has not synced the Service change: check its log and restart it.',
      '',
      '**Example** (kubernetes/kubernetes#33033): "Service loadBalancerSourceRanges doesn\'t respect updates" — after',
      '`kubectl edit` added a range, the iptables rules did not appear; #88698 reports the same in IPVS mode.',
    ].join('\n'),
    messages: {
      missing: 'Service {{service}}: source range {{address}} is in the API but not programmed on this node (those clients are refused here)',
      extra: 'Service {{service}}: the node allows source range {{address}}, which the API no longer has',
    },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['source-range'])) ctx.report(driftReport(d, d.found === 'missing' ? 'missing' : 'extra', {}, d.found !== 'missing'));
  },
});
