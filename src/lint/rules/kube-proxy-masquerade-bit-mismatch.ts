import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';
import { configRelated, kubeProxyConfigs, markMasqBits, partialConfig } from '../kube-proxy-util.js';

export default createRule({
  id: 'kube-proxy-masquerade-bit-mismatch',
  meta: {
    description: "kube-proxy's masqueradeBit is not the bit KUBE-MARK-MASQ sets (`--or-mark`/`--set-xmark`).",
    severity: 'warning',
    requires: ['kube-proxy-config'],
    relevant: () => false,
    docs: [
      'kube-proxy marks packets to masquerade with one bit of the firewall mark (`iptables.masqueradeBit`,',
      'default 14: `-j MARK --or-mark 0x4000` in KUBE-MARK-MASQ) and masquerades in KUBE-POSTROUTING what carries',
      'it. Other programs use other bits (kubelet\'s KUBE-MARK-DROP 0x8000, Calico, Cilium, Istio…). When the bit',
      'in the rules is not the configured one, the configuration is not what wrote the rules (kubelet wrote',
      'KUBE-MARK-MASQ with its own `--iptables-masquerade-bit`, or kube-proxy was not restarted), and a bit',
      'shared with another program masquerades, or drops, the wrong packets.',
      '',
      '**Fix:** use the same bit in kube-proxy (`iptables.masqueradeBit`) and kubelet (`--iptables-masquerade-bit`),',
      'one no other agent uses; restart both.',
      '',
      '**Example** (jhunt/k8s-boshrelease#58): a KubeProxyConfiguration with `masqueradeBit: 14`, which must',
      'match KUBE-MARK-MASQ\'s `0x4000`.',
    ].join('\n'),
    messages: {
      differs: 'kube-proxy is configured with masqueradeBit {{configured}}{{dflt}} (mark {{want}}), but KUBE-MARK-MASQ sets {{found}}',
    },
  },
  check(ctx) {
    const marks = markMasqBits(ctx);
    if (!marks.length) return;
    for (const c of kubeProxyConfigs(ctx)) {
      if (!c.masqueradeBit && partialConfig(c)) continue;
      const bit = c.masqueradeBit?.value ?? 14;
      for (const m of marks) {
        if (m.bit === bit) continue;
        ctx.report({
          messageId: 'differs',
          data: { configured: bit, dflt: c.masqueradeBit ? '' : ' (the default)', want: `0x${(2 ** bit).toString(16)}`, found: `0x${m.value.toString(16)}${m.bit !== undefined ? ` (bit ${m.bit})` : ''}` },
          file: m.rule.file,
          line: m.rule.line,
          column: m.rule.column,
          text: m.rule.raw,
          related: c.masqueradeBit ? [configRelated(c, c.masqueradeBit), ruleRelated(m.rule)] : [ruleRelated(m.rule)],
        });
        break;
      }
    }
  },
});
