import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-endpoint-not-programmed',
  meta: {
    description: 'An endpoint kube-proxy would use here (from the EndpointSlices) is not programmed on this node.',
    severity: 'warning',
    ...API_RULE,
    docs: [
      'The endpoint set is computed the way kube-proxy computes it (pkg/proxy/topology.go CategorizeEndpoints): ready',
      'endpoints, narrowed by topology hints for this node\'s zone, falling back to serving-terminating endpoints when',
      'none is ready; with a Local traffic policy, this node\'s own endpoints. An endpoint in that set has no',
      'KUBE-SEP chain, real server or endpoint element here: this node sends the Service\'s traffic to fewer pods',
      '(or none) than the rest of the cluster.',
      '',
      'With a Local policy and this node not found among the API\'s Nodes (by name or address), which endpoints are',
      'local is unknown: only the Cluster set is checked.',
      '',
      '**Fix:** kube-proxy has missed EndpointSlice updates: check its log and its API connection, restart it.',
      '',
      '**Example** (kubernetes/kubernetes#70493): the same virtual server has a real server on some nodes and none',
      'on others.',
    ].join('\n'),
    messages: { missing: 'Service {{service}}: endpoint {{address}} is listed in the API but not programmed on this node' },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['endpoint-not-programmed'])) ctx.report(driftReport(d, 'missing', {}, false));
  },
});
