import { createRule } from '../rule.js';
import { evidenceRelated } from '../context.js';

export default createRule({
  id: 'service-no-endpoints',
  meta: {
    description: 'A Service port has no endpoints: kube-proxy rejects its traffic ("has no endpoints" REJECT rules).',
    severity: 'warning',
    docs: [
      'When a Service has no ready endpoints, kube-proxy installs filter-table rules that REJECT (ICMP port',
      'unreachable / TCP reset) traffic to its cluster IP, external IPs, load-balancer IPs and NodePort, with the',
      'comment `ns/name:port has no endpoints`. Clients see "connection refused" immediately. This is kube-proxy',
      'working as designed; the problem is upstream: no pod matches the selector, the pods are not Ready, or the',
      'EndpointSlices are not being published.',
      '',
      '**Fix:** `kubectl get endpointslices -l kubernetes.io/service-name=NAME -n NS`, check the selector against',
      'the pod labels (`kubectl get pods -l …`), and the pods\' readiness probes. If endpoints exist in the API',
      'but not on this node, kube-proxy is not syncing: check its logs.',
      '',
      'The message says the traffic is rejected only when the dumps hold the REJECT rule (or the nftables',
      'reject-chain element). A Service whose endpoint chains are not in the dumps (a grep, a truncated table)',
      'is `unknown`, not without endpoints, and is not reported.',
    ].join('\n'),
    messages: {
      none: 'Service {{service}} has no endpoints: connections to {{where}} are rejected',
      noneNoReject: 'Service {{service}} has no endpoints: nothing in these dumps delivers connections to {{where}}',
    },
  },
  check(ctx) {
    for (const s of ctx.resolution.services) {
      // IPVS mode has its own rule (ipvs-no-real-servers); iptables and nftables modes are read here.
      if (s.mode === 'ipvs' || s.state !== 'no-endpoints') continue;
      // Say "rejected" only when a rule in the dumps rejects (not for a Service chain with no endpoint rule).
      // (iptables: a `has no endpoints` REJECT rule; nftables: a no-endpoint map element to reject-chain).
      // (the nft view of iptables-nft prints kube-proxy's REJECT rule without its comment: `… tcp dport 80 … reject`).
      const rejecting = s.evidence.some((e) => (/has no endpoints/.test(e.text) && /-j REJECT\b/.test(e.text)) || /: (goto|jump) reject-chain$/.test(e.text) || /\sdport \d+ .*\breject( with [\w -]+)?$/.test(e.text));
      const reject = s.evidence.find((e) => /has no endpoints/.test(e.text)) ?? s.evidence[0];
      if (!reject) continue;
      const where = [s.clusterIP ? `${s.clusterIP}:${s.port}/${s.protocol}` : undefined, s.nodePort !== null ? `NodePort ${s.nodePort}` : undefined].filter(Boolean).join(', ') || `port ${s.port}`;
      const label = ctx.serviceLabel(s);
      ctx.report({
        messageId: rejecting ? 'none' : 'noneNoReject',
        data: { service: label, where },
        file: reject.file,
        line: reject.line,
        column: 1,
        text: reject.text,
        service: label,
        related: s.evidence.filter((e) => e !== reject && /has no endpoints/.test(e.text)).map(evidenceRelated),
      });
    }
  },
});
