import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-service-stale',
  meta: {
    description: 'This node still implements a Service port the API server no longer has.',
    severity: 'warning',
    ...API_RULE,
    docs: [
      'A Service port is programmed on the node (its cluster IP, port and protocol) but the API objects given beside',
      'the dumps have no such Service port: it was deleted, or re-created with another cluster IP, and kube-proxy',
      'has not caught up. Traffic to the old address still reaches the old endpoints, which may be gone.',
      '',
      '**Fix:** check kube-proxy\'s log for sync errors and restart it; if another proxy replaced kube-proxy, clean',
      'up its rules (`kube-proxy --cleanup`). Make sure the API objects were taken from the same cluster, at about the',
      'same time as the dumps.',
      '',
      '**Example** (kubernetes/kubernetes#119265): after kube-proxy was replaced, its KUBE-SVC rules for Services',
      'stayed on the nodes.',
    ].join('\n'),
    messages: { stale: 'Service {{service}} ({{address}}) is programmed on this node but the API has no such Service port' },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['service-stale'])) ctx.report(driftReport(d, 'stale', {}, true));
  },
});
