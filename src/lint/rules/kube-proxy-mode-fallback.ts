import type { KubeProxyEvent } from '../../model/kube-proxy.js';
import { createRule, type Related } from '../rule.js';
import { kubeProxyLogs, placeRelated } from '../kube-proxy-util.js';

export default createRule({
  id: 'kube-proxy-mode-fallback',
  meta: {
    description: 'kube-proxy was asked for IPVS and fell back to another mode (its log says why: kernel modules, ipset, the scheduler).',
    severity: 'warning',
    requires: ['kube-proxy-log'],
    standalone: true,
    relevant: () => false,
    docs: [
      'Asked for `--proxy-mode=ipvs`, kube-proxy checks the kernel first (the `ip_vs*` modules and the scheduler\'s',
      'module, `nf_conntrack`, the ipset version). When the check fails it does not stop: it logs why and starts',
      'the iptables proxier (`Using iptables Proxier`). The cluster then runs a mode nobody chose on this node:',
      'IPVS-only settings (scheduler, strictARP, timeouts) do nothing, and nodes of one cluster differ.',
      '',
      '**Fix:** load the modules the log names (`modprobe ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack`, and list',
      'them in /etc/modules-load.d/), or mount /lib/modules into the kube-proxy pod; then restart kube-proxy and',
      'check that it logs `Using ipvs Proxier`.',
      '',
      '**Example** (kubernetes/kubernetes#55864): `W1116 09:02:43.496621 1 server_others.go:264] Can\'t use ipvs',
      'proxier, trying iptables proxier` then `Using iptables Proxier.`',
    ].join('\n'),
    messages: {
      fellBack: 'kube-proxy was asked for {{requested}} and runs {{chosen}} instead: {{reason}}',
    },
  },
  check(ctx) {
    for (const log of kubeProxyLogs(ctx)) {
      const ev = log.events;
      ev.forEach((e, i) => {
        if (e.kind !== 'mode-fallback') return;
        const chosen = ev.slice(i + 1).find((x): x is Extract<KubeProxyEvent, { kind: 'proxier' }> => x.kind === 'proxier');
        // Module failures the same process logged just before: the reason older versions do not repeat.
        const mods = ev.slice(0, i).filter((x): x is Extract<KubeProxyEvent, { kind: 'module-load-failed' }> => x.kind === 'module-load-failed' && x.at.pid === e.at.pid);
        const reasons = [e.reason, ...mods.map((m) => (m.module ? `module ${m.module}: ${m.reason}` : m.reason))].filter((r) => r && !/^Can't use/i.test(r));
        const related: Related[] = mods.slice(-5).map((m) => placeRelated(m.at));
        if (chosen) related.push(placeRelated(chosen.at));
        ctx.report({
          messageId: 'fellBack',
          data: {
            requested: e.requested,
            chosen: chosen ? chosen.mode : 'another mode (the log does not say which)',
            reason: reasons.length ? reasons.join('; ').replace(/\s*\n\s*/g, ' ').slice(0, 400) : 'the log gives no reason (kube-proxy before 1.10 did not say)',
          },
          file: log.file,
          line: e.at.line,
          column: 1,
          text: e.at.text,
          related,
        });
      });
    }
  },
});
