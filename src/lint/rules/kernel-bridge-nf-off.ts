import { bridgeNfSwitch } from '../../model/switches.js';
import { bridges, decisive, evidenceLine } from '../kernel-util.js';
import { createRule } from '../rule.js';

export default createRule({
  id: 'kernel-bridge-nf-off',
  meta: {
    description: 'bridge-nf-call-iptables is off or br_netfilter is not loaded on a node with a pod bridge: a pod\'s reply to a Service client on the same bridge skips reverse NAT.',
    severity: 'error',
    requires: ['sysctl'],
    standalone: true,
    relevant: (ctx) => ctx.modes.length > 0,
    docs: [
      'With a bridge CNI (cni0, cbr0, docker0…) a pod calling a Service whose endpoint sits on the same bridge has its',
      'request routed through the node (DNAT happens), but the endpoint answers the client directly over the bridge.',
      'Bridged frames traverse iptables only with br_netfilter loaded and `net.bridge.bridge-nf-call-iptables=1`',
      '(`…-ip6tables` for IPv6, or the bridge\'s own `nf_call_iptables`): otherwise the reply skips conntrack\'s reverse',
      'NAT, arrives from the pod\'s address instead of the Service\'s, and the client drops it. A whole `sysctl -a`',
      'without any `net.bridge.*` key means the module is not loaded. `kpx trace` shows the same reading as',
      '`reply broken: bridge-nf-call-iptables off on cni0`.',
      '',
      '**Fix:** `modprobe br_netfilter`, list it in /etc/modules-load.d/, and set',
      '`net.bridge.bridge-nf-call-iptables=1` (and `…-ip6tables=1`) in /etc/sysctl.d/ (kubeadm\'s preflight checks both).',
    ].join('\n'),
    messages: {
      off: '{{why}} ({{evidence}}) with bridge {{bridge}}: replies from pods on it to Service clients on the same bridge skip reverse NAT',
    },
  },
  check(ctx) {
    const s = ctx.snapshot.sysctls;
    const list = bridges(ctx);
    // Without interfaces in the evidence a bridge may still be there; with them and none a bridge, nothing is bridged.
    const targets = list.length ? list : ctx.snapshot.interfaces.length ? [] : [undefined];
    const seen = new Set<string>();
    for (const family of [4, 6] as const) {
      if (family === 6 && !ctx.snapshot.rulesets.some((r) => r.family === 6)) continue;
      for (const br of targets) {
        const r = bridgeNfSwitch(s, family, br);
        if (!r.known || r.effect !== 'off') continue;
        const at = decisive(r.evidence);
        const key = `${family}:${r.evidence.map(evidenceLine).join()}:${br?.name ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const file = at?.file ?? br?.file ?? [...s.values()][0]?.file;
        if (!file) continue;
        ctx.report({
          messageId: 'off',
          data: {
            why:
              r.moduleLoaded === false
                ? at
                  ? 'br_netfilter is not loaded (sysctl says the key does not exist)'
                  : 'br_netfilter is not loaded (no net.bridge.* key in the sysctl dump)'
                : `${r.evidence[0]?.key ?? 'bridge-nf-call-iptables'} is off`,
            evidence: r.evidence.map(evidenceLine).join(', '),
            bridge: br?.name ?? '(any)',
          },
          file,
          line: at?.line ?? br?.line ?? 1,
          column: 1,
          text: at ? evidenceLine(at) : (r.evidence[0] ? evidenceLine(r.evidence[0]) : ''),
        });
      }
    }
  },
});
