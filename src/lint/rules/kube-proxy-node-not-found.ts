import type { KubeProxyEvent } from '../../model/kube-proxy.js';
import { createRule, type Related } from '../rule.js';
import { kubeProxyLogs, placeRelated } from '../kube-proxy-util.js';

type NodeLookup = Extract<KubeProxyEvent, { kind: 'node-lookup-failed' }>;
type IpFallback = Extract<KubeProxyEvent, { kind: 'node-ip-fallback' }>;

export default createRule({
  id: 'kube-proxy-node-not-found',
  meta: {
    description: "kube-proxy's log says it found no Node under its name (host name or --hostname-override differs from the Node's name), or fell back to 127.0.0.1 as the node IP.",
    severity: 'warning',
    requires: ['kube-proxy-log'],
    standalone: true,
    relevant: () => false,
    docs: [
      'kube-proxy looks up its own Node by name: the host name, or `--hostname-override` (`hostnameOverride`). When',
      'the kubelet registered the Node under another name (an FQDN against a short name, an EC2 private DNS name,',
      'an IP), the lookup fails (`Failed to retrieve node info: nodes "NAME" not found`) and kube-proxy goes on',
      'without its Node: it takes 127.0.0.1 as the node IP (`invalid nodeIP, initializing kube-proxy with 127.0.0.1 as',
      'nodeIP`; `Can\'t determine this node\'s IP, assuming loopback` in 1.28+), and it judges which endpoints are',
      'local by comparing their nodeName with its own name. No endpoint is then local: Services with',
      '`externalTrafficPolicy: Local` (or `internalTrafficPolicy: Local`) drop traffic on this node and their health',
      'check NodePort reports no endpoints. The node IP decides the IP family kube-proxy assumes (1.1x–1.2x) and is',
      'the node\'s own address where its rules need one (a load balancer\'s source ranges allowing the node).',
      'kube-proxy 1.16 exited instead (`unable to get node IP for hostname …`). When the lookup failed because the API',
      'server did not answer, `kube-proxy-api-unreachable` says so.',
      '',
      '**Fix:** give kube-proxy the Node\'s name: `--hostname-override=$(NODE_NAME)` with NODE_NAME from the pod\'s',
      '`spec.nodeName` (kubeadm\'s DaemonSet does this), or `hostnameOverride` in its configuration; then restart it and',
      'check that the log no longer says the Node is not found.',
      '',
      '**Example** (kubernetes/kubernetes#57518): `W1220 16:46:26.875651 1 server.go:580] Failed to retrieve node',
      'info: nodes "node07.example.com" not found` then `invalid nodeIP, initializing kube-proxy with 127.0.0.1 as',
      'nodeIP` — the host name was the FQDN, the Node the short name.',
    ].join('\n'),
    messages: {
      notFound: 'kube-proxy found no Node named "{{node}}"{{times}}{{fallback}}: its host name (or --hostname-override) is not this node\'s Node name, so no endpoint counts as local here and Services with a Local traffic policy drop traffic on this node',
      fallback: 'kube-proxy took {{ip}} as the node IP (it could not read its Node{{why}}): it runs without this node\'s own address (the IP family it assumes, the node\'s address where its rules need it)',
    },
  },
  check(ctx) {
    for (const log of kubeProxyLogs(ctx)) {
      const lookups = log.events.filter((e): e is NodeLookup => e.kind === 'node-lookup-failed');
      const fallbacks = log.events.filter((e): e is IpFallback => e.kind === 'node-ip-fallback');
      const missing = lookups.filter((e) => e.notFound && e.node !== undefined);
      const fb = fallbacks[0];
      if (missing.length) {
        const first = missing[0];
        const related: Related[] = [...missing.slice(1, 4), ...fallbacks.slice(0, 1)].map((e) => placeRelated(e.at));
        ctx.report({
          messageId: 'notFound',
          data: {
            node: first.node!,
            times: missing.length > 1 ? ` (${missing.length} times)` : '',
            fallback: fb ? ` and took ${fb.ip} as its node IP` : '',
          },
          file: log.file,
          line: first.at.line,
          column: 1,
          text: first.at.text,
          related,
        });
        continue;
      }
      if (!fb) continue;
      const api = lookups.find((e) => !e.notFound);
      ctx.report({
        messageId: 'fallback',
        data: { ip: fb.ip, why: api ? `: ${api.reason.slice(0, 200)}` : '' },
        file: log.file,
        line: fb.at.line,
        column: 1,
        text: fb.at.text,
        related: api ? [placeRelated(api.at)] : [],
      });
    }
  },
});
