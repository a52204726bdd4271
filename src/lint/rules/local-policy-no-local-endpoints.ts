import { createRule } from '../rule.js';
import { evidenceRelated } from '../context.js';

export default createRule({
  id: 'local-policy-no-local-endpoints',
  meta: {
    description: 'A Service with a Local traffic policy has no endpoint on this node, so this node drops its traffic.',
    severity: 'warning',
    docs: [
      'With `externalTrafficPolicy: Local` (or `internalTrafficPolicy: Local`), kube-proxy only sends traffic to',
      'endpoints on the same node. On a node without one, it DROPs the traffic (`has no local endpoints`) instead of',
      'forwarding it to another node. That is intended when a load balancer health-checks the node',
      '(healthCheckNodePort) and stops sending to it; it is an outage when the load balancer or the clients',
      'ignore the health check, or for NodePort traffic sent to arbitrary nodes.',
      '',
      '**Fix:** make sure the load balancer uses the Service\'s healthCheckNodePort; or schedule an endpoint on',
      'this node (a DaemonSet, topology spread); or use `externalTrafficPolicy: Cluster` if client source IPs',
      'need not be preserved.',
    ].join('\n'),
    messages: {
      drop: 'Service {{service}} has a Local traffic policy and no endpoint on this node: {{what}} to it is dropped here',
    },
  },
  check(ctx) {
    for (const s of ctx.resolution.services) {
      if (s.mode === 'ipvs' || s.state !== 'no-local-endpoints') continue;
      const anchor = s.evidence.find((e) => /has no local endpoints/.test(e.text)) ?? s.evidence.find((e) => /KUBE-(SVL|EXT|XLB)-/.test(e.text)) ?? s.evidence[0];
      if (!anchor) continue;
      const label = ctx.serviceLabel(s);
      const what = s.internalTrafficPolicy === 'Local' && s.externalTrafficPolicy === 'Local' ? 'all traffic' : s.internalTrafficPolicy === 'Local' ? 'cluster-internal traffic' : 'external traffic (NodePort, external and load-balancer IPs)';
      ctx.report({
        messageId: 'drop',
        data: { service: label, what },
        file: anchor.file,
        line: anchor.line,
        column: 1,
        text: anchor.text,
        service: label,
        related: s.evidence.filter((e) => e !== anchor && /has no local endpoints/.test(e.text)).map(evidenceRelated),
      });
    }
  },
});
