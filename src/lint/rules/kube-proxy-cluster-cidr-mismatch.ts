import { createRule } from '../rule.js';
import { configRelated, kubeProxyConfigs, masqueradeCidrs, partialConfig } from '../kube-proxy-util.js';

const familyOf = (cidr: string) => (cidr.includes(':') ? 6 : 4);

export default createRule({
  id: 'kube-proxy-cluster-cidr-mismatch',
  meta: {
    description: "kube-proxy's clusterCIDR is not the pod network its rules masquerade by (`! -s CIDR … -j KUBE-MARK-MASQ`).",
    severity: 'warning',
    requires: ['kube-proxy-config'],
    relevant: () => false,
    docs: [
      'With `detectLocalMode: ClusterCIDR` (the default), kube-proxy tells pod traffic from other traffic by the',
      'cluster CIDR: every Service rule masquerades what does not come from it (`! -s 10.244.0.0/16 … -j',
      'KUBE-MARK-MASQ`). A clusterCIDR that is not the pod network the CNI assigns masquerades pod traffic',
      '(pods see the node\'s address instead of the client pod\'s: NetworkPolicies by pod IP break) or leaves',
      'outside traffic unmasqueraded (replies take another path and are dropped). When the configuration and',
      'the rules disagree, either the configuration in hand is not what the node runs, or the node was never',
      'restarted after it changed.',
      '',
      '**Fix:** set `clusterCIDR` to the cluster\'s pod CIDR (`kubectl cluster-info dump | grep -m1 cluster-cidr`,',
      'or the CNI\'s pool), comma-separated for dual stack, and restart kube-proxy.',
      '',
      '**Example** (kubernetes/kubernetes#66454): the log says `clusterCIDR not specified, unable to distinguish',
      'between internal and external traffic`; the kube-proxy ConfigMap of kubernetes/kubernetes#92033 sets',
      '`clusterCIDR: 10.244.0.0/16`.',
    ].join('\n'),
    messages: {
      differs: 'kube-proxy is configured with clusterCIDR {{configured}}, but its rules masquerade traffic not from {{rules}}',
      unset: 'kube-proxy\'s configuration sets no IPv{{family}} clusterCIDR, but its rules masquerade traffic not from {{rules}}: this configuration is not the one the node runs',
    },
  },
  check(ctx) {
    const { cidrs } = masqueradeCidrs(ctx);
    if (cidrs.size === 0) return;
    for (const c of kubeProxyConfigs(ctx)) {
      if (c.detectLocalMode && !['', 'ClusterCIDR'].includes(c.detectLocalMode.value)) continue;
      for (const family of [4, 6] as const) {
        const inRules = [...cidrs.keys()].filter((x) => familyOf(x) === family);
        if (!inRules.length) continue;
        const first = cidrs.get(inRules[0])!;
        const configured = (c.clusterCIDR?.value ?? []).filter((x) => familyOf(x) === family);
        if (!c.clusterCIDR) {
          // A fragment that does not set it may be silent on it, not unset.
          if (partialConfig(c)) continue;
          ctx.report({ messageId: 'unset', data: { family, rules: inRules.join(', ') }, file: first.file, line: first.line, column: 1, text: first.text });
          continue;
        }
        if (!configured.length) continue;
        const same = configured.length === inRules.length && configured.every((x) => cidrs.has(x));
        if (same) continue;
        ctx.report({ messageId: 'differs', data: { configured: configured.join(', '), rules: inRules.join(', ') }, file: first.file, line: first.line, column: 1, text: first.text, related: [configRelated(c, c.clusterCIDR)] });
      }
    }
  },
});
