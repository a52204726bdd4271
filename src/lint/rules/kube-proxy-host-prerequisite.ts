import type { KubeProxyEvent } from '../../model/kube-proxy.js';
import { createRule } from '../rule.js';
import { kubeProxyLogs, placeRelated } from '../kube-proxy-util.js';

type Missing = Extract<KubeProxyEvent, { kind: 'host-missing' }>;

export default createRule({
  id: 'kube-proxy-host-prerequisite',
  meta: {
    description: "kube-proxy's log says the host lacks something it needs: br_netfilter / bridge-nf-call-iptables, or the conntrack tool.",
    severity: 'warning',
    requires: ['kube-proxy-log'],
    standalone: true,
    relevant: () => false,
    docs: [
      'kube-proxy checks some of the host at start and says when something is missing:',
      '',
      '- `missing br-netfilter module or unset sysctl br-nf-call-iptables; proxy may not work as intended`',
      '  (pkg/proxy/iptables/proxier.go, 1.x–1.2x): with a bridge CNI, a pod\'s reply to a Service client on the',
      '  same bridge then skips conntrack\'s reverse NAT and the client drops it (`kernel-bridge-nf-off` says the same',
      '  from a sysctl dump).',
      '- `error looking for path of conntrack: … executable file not found in $PATH` (kube-proxy up to 1.28 ran the',
      '  conntrack tool): it cannot delete the conntrack entries of UDP endpoints that went away, so clients keep',
      '  sending to a dead pod (DNS queries to a CoreDNS pod that was replaced) until the entry times out.',
      '',
      '**Fix:** `modprobe br_netfilter` and `sysctl -w net.bridge.bridge-nf-call-iptables=1` (persist both); install',
      'the conntrack tool on the node or in the kube-proxy image (`conntrack` / `conntrack-tools`).',
      '',
      '**Example** (kubernetes-retired/contrib#1816): `kube-proxy[1111]: E0930 14:45:11.595540 1111 proxier.go:604]',
      'conntrack return with error: Error looking for path of conntrack: exec: "conntrack": executable file not found',
      'in $PATH`.',
    ].join('\n'),
    messages: {
      'br-netfilter': "kube-proxy's own check found br_netfilter not loaded or bridge-nf-call-iptables off: with a bridge CNI, replies from pods to Service clients on the same bridge skip reverse NAT",
      'conntrack-tool': 'kube-proxy cannot run the conntrack tool (not installed){{times}}: it cannot delete stale UDP conntrack entries, so clients keep sending to endpoints that are gone',
    },
  },
  check(ctx) {
    for (const log of kubeProxyLogs(ctx)) {
      const missing = log.events.filter((e): e is Missing => e.kind === 'host-missing');
      for (const what of ['br-netfilter', 'conntrack-tool'] as const) {
        const hits = missing.filter((e) => e.what === what);
        if (!hits.length) continue;
        ctx.report({ messageId: what, data: { times: hits.length > 1 ? ` (${hits.length} times)` : '' }, file: log.file, line: hits[0].at.line, column: 1, text: hits[0].at.text, related: hits.slice(1, 4).map((e) => placeRelated(e.at)) });
      }
    }
  },
});
