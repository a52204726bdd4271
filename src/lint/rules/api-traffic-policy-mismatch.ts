import { createRule } from '../rule.js';
import { API_RULE, driftItems, driftReport } from '../api-util.js';

export default createRule({
  id: 'api-traffic-policy-mismatch',
  meta: {
    description: "The node's externalTrafficPolicy, internalTrafficPolicy or session affinity differs from the Service in the API.",
    severity: 'warning',
    ...API_RULE,
    docs: [
      'The rules show a traffic policy or a session affinity that the Service in the API no longer has (or does not',
      'have yet). `externalTrafficPolicy: Local` is read from the XLB/EXT chains (iptables, nftables) or the',
      'KUBE-NODE-PORT-LOCAL/KUBE-LB-INGRESS-LOCAL sets (IPVS), and compared only for Services with a NodePort,',
      'external or load-balancer address; `internalTrafficPolicy` from the SVL chains (not visible in IPVS mode, where',
      'only the endpoint set shows it); `sessionAffinity: ClientIP` and its timeout from the `recent` matches, the',
      'affinity sets or the virtual server\'s persistence. Clients then lose their source IP, or keep it, or stick to',
      'a pod, against the Service\'s spec.',
      '',
      '**Fix:** kube-proxy has not synced the Service change: check its log and restart it.',
      '',
      '**Example** (kubernetes/kubernetes#97238): externalTrafficPolicy Local changes which endpoints a node may use',
      'for external traffic; a node that has not applied it still forwards to remote pods and SNATs the client.',
    ].join('\n'),
    messages: {
      policy: 'Service {{service}} ({{address}}): the API says {{expected}}, the node implements {{found}}',
      affinity: 'Service {{service}} ({{address}}): the API says session affinity {{expected}}, the node implements {{found}}',
    },
  },
  check(ctx) {
    for (const d of driftItems(ctx, ['traffic-policy'])) ctx.report(driftReport(d, 'policy', { expected: d.expected ?? '', found: d.found ?? '' }, true));
    for (const d of driftItems(ctx, ['session-affinity'])) ctx.report(driftReport(d, 'affinity', { expected: d.expected ?? '', found: d.found ?? '' }, true));
  },
});
