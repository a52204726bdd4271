import { createRule, type Related } from '../rule.js';
import { configRelated, configuredMode, kubeProxyConfigs } from '../kube-proxy-util.js';

export default createRule({
  id: 'kube-proxy-strict-arp',
  meta: {
    description: "kube-proxy's ipvs.strictARP and the node disagree: strictARP set but arp_ignore/arp_announce not applied, or set outside IPVS mode.",
    severity: 'warning',
    requires: ['kube-proxy-config'],
    relevant: () => false,
    docs: [
      'In IPVS mode every Service address is bound to the kube-ipvs0 dummy interface, so by default the node',
      'answers ARP for all of them: on an L2 network with MetalLB (L2 mode) or keepalived, several nodes then claim',
      'the same load-balancer address. `ipvs.strictARP: true` makes kube-proxy set `net.ipv4.conf.all.arp_ignore=1`',
      'and `arp_announce=2` at start. When strictARP is configured but the sysctl dump shows other values,',
      'kube-proxy has not applied this configuration (not restarted, or something reset the sysctls later); when',
      'it is configured in another mode than IPVS it does nothing.',
      '',
      '**Fix:** restart kube-proxy after setting `ipvs.strictARP: true` (MetalLB\'s install guide patches the',
      'ConfigMap and restarts the pods); find what resets the sysctls (a sysctl.d file, a network manager); or,',
      'outside IPVS mode, drop the setting.',
      '',
      '**Example** (kubesphere/kubekey#2005, easzlab/kubeasz#1298): clusters patch the kube-proxy ConfigMap with',
      '`sed -e "s/strictARP: false/strictARP: true/"` for MetalLB.',
    ].join('\n'),
    messages: {
      notApplied: 'kube-proxy is configured with strictARP, but {{key}} = {{value}} (kube-proxy sets {{want}}): the node still answers ARP for kube-ipvs0 addresses',
      noEffect: 'ipvs.strictARP is set, but kube-proxy runs in {{mode}} mode: the setting does nothing',
    },
  },
  check(ctx) {
    for (const c of kubeProxyConfigs(ctx)) {
      if (!c.strictARP?.value) continue;
      const mode = configuredMode(c);
      const related: Related[] = [configRelated(c, c.strictARP)];
      if (mode !== undefined && mode !== 'ipvs') {
        ctx.report({ messageId: 'noEffect', data: { mode }, file: c.file, line: c.strictARP.line, column: 1, text: c.strictARP.text, related: c.mode ? [configRelated(c, c.mode)] : [] });
        continue;
      }
      for (const [key, want] of [['net.ipv4.conf.all.arp_ignore', '1'], ['net.ipv4.conf.all.arp_announce', '2']] as const) {
        const s = ctx.snapshot.sysctls.get(key);
        if (!s || s.value.trim() === want) continue;
        ctx.report({ messageId: 'notApplied', data: { key, value: s.value, want }, file: s.file, line: s.line, column: 1, text: `${key} = ${s.value}`, related });
      }
    }
  },
});
