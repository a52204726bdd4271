import type { KubeProxyEvent } from '../../model/kube-proxy.js';
import { createRule } from '../rule.js';
import { kubeProxyLogs, placeRelated } from '../kube-proxy-util.js';

type Unreachable = Extract<KubeProxyEvent, { kind: 'api-unreachable' }> | Extract<KubeProxyEvent, { kind: 'node-lookup-failed' }>;

export default createRule({
  id: 'kube-proxy-api-unreachable',
  meta: {
    description: "kube-proxy's log shows it failing to reach the API server (lists of Services and endpoints, its Node): changes made meanwhile are not in its rules.",
    severity: 'warning',
    requires: ['kube-proxy-log'],
    standalone: true,
    relevant: () => false,
    docs: [
      'kube-proxy writes rules from what it watches on the API server: Services, EndpointSlices (Endpoints before',
      '1.19), its Node. When the API server does not answer — connection refused, an i/o timeout, a certificate it',
      'does not trust, a kubeconfig pointing at the wrong address, RBAC denying `system:kube-proxy` — its',
      'informers log `Failed to list *v1.Service: …` (`Failed to watch`), and the Node lookup fails with the same',
      'error. Until it gets through, Services and endpoints created, changed or deleted are not in its rules;',
      'right after start-up there may be no Service rules at all.',
      '',
      '**Fix:** check the address in kube-proxy\'s kubeconfig (`clientConnection.kubeconfig`, or the in-cluster',
      'KUBERNETES_SERVICE_HOST) against the API server\'s, the network path to it from the node, and the',
      'ClusterRoleBinding `system:node-proxier`; then check that the errors stop.',
      '',
      '**Example** (rootsongjc/kubernetes-handbook#45): `E0906 14:15:54.103792 896 reflector.go:201]',
      'k8s.io/kubernetes/pkg/proxy/config/api.go:46: Failed to list *api.Service: Get http://10.20.1.241:8080/…`',
      'every second.',
    ].join('\n'),
    messages: {
      unreachable: 'kube-proxy could not reach the API server {{when}}{{what}}: {{reason}} — Service and endpoint changes made while it could not are not in its rules',
    },
  },
  check(ctx) {
    for (const log of kubeProxyLogs(ctx)) {
      const errs = log.events.filter((e): e is Unreachable => e.kind === 'api-unreachable' || (e.kind === 'node-lookup-failed' && e.apiError));
      if (!errs.length) continue;
      const first = errs[0];
      const last = errs[errs.length - 1];
      const when = (e: KubeProxyEvent) => e.at.wallTime ?? e.at.time;
      const resources = [...new Set(errs.map((e) => (e.kind === 'api-unreachable' ? e.resource : 'Node')).filter((r): r is string => r !== undefined))];
      ctx.report({
        messageId: 'unreachable',
        data: {
          when: errs.length === 1 ? `at ${when(first)}` : `${errs.length} times, from ${when(first)} to ${when(last)}`,
          what: resources.length ? ` (${resources.join(', ')})` : '',
          reason: last.reason.replace(/\s*\n\s*/g, ' ').slice(0, 240) + (last.at.cutAt !== undefined ? '… (the terminal cut the line)' : ''),
        },
        file: log.file,
        line: first.at.line,
        column: 1,
        text: first.at.text,
        related: errs.length > 1 ? [placeRelated(last.at)] : [],
      });
    }
  },
});
