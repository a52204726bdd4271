import type { KubeProxyEvent } from '../../model/kube-proxy.js';
import { createRule } from '../rule.js';
import { configuredMode, kubeProxyConfigs, kubeProxyLogs } from '../kube-proxy-util.js';

/** What each mode leaves in the dumps (src/kube/modes.ts proxyModes), in words. */
const SHOWS: Record<string, string> = {
  iptables: 'KUBE-SVC/KUBE-SEP chains',
  ipvs: 'IPVS virtual servers, KUBE-CLUSTER-IP ipsets or kube-ipvs0',
  nftables: 'the nftables `kube-proxy` table',
};

export default createRule({
  id: 'kube-proxy-mode-mismatch',
  meta: {
    description: "The mode kube-proxy is configured for (or says it runs) is not the mode the dumps show.",
    severity: 'error',
    docs: [
      'Each kube-proxy mode leaves its own marks: iptables mode KUBE-SVC/KUBE-SEP chains, IPVS mode virtual',
      'servers with the KUBE-CLUSTER-IP ipset and the kube-ipvs0 dummy interface, nftables mode the `kube-proxy`',
      'table. When the configuration says `mode: ipvs` and the node holds only KUBE-SVC chains, the node does not',
      'run the configuration in hand: the ConfigMap was changed without restarting the kube-proxy pods, the',
      'node runs another kube-proxy (a static pod, a distribution\'s own), or kube-proxy fell back (see',
      '`kube-proxy-mode-fallback`). An empty `mode` means iptables on Linux. Also checked: the mode kube-proxy\'s',
      'log says it started (`Using ipvs Proxier`).',
      '',
      '**Fix:** restart the kube-proxy pods after changing the ConfigMap (`kubectl -n kube-system rollout restart',
      'ds/kube-proxy`), check `kube-proxy --version` and its flags on the node (`ps -ef | grep kube-proxy`), and',
      'clean the old mode\'s state (`kube-proxy --cleanup`).',
      '',
      '**Example** (kubernetes/kubeadm#2205): the kube-proxy ConfigMap was edited to `mode: ipvs`, yet NodePorts',
      'kept being served the iptables way until the pods were restarted.',
    ].join('\n'),
    messages: {
      config: 'kube-proxy is configured for {{mode}} mode, but the dumps show {{shown}} mode ({{expected}} not found)',
      log: 'kube-proxy\'s log says it runs the {{mode}} proxier, but the dumps show {{shown}} mode ({{expected}} not found)',
    },
  },
  check(ctx) {
    const shown = ctx.modes;
    if (shown.length === 0) return;
    const shownText = shown.join(' and ');
    for (const c of kubeProxyConfigs(ctx)) {
      const mode = configuredMode(c);
      if (mode === undefined || !(mode in SHOWS) || (shown as readonly string[]).includes(mode)) continue;
      const where = c.mode ?? { line: 1, text: '' };
      ctx.report({ messageId: 'config', data: { mode: c.mode ? mode : `${mode} (the default: mode is not set)`, shown: shownText, expected: SHOWS[mode] }, file: c.file, line: where.line, column: 1, ...(c.mode ? { text: c.mode.text } : {}) });
    }
    for (const log of kubeProxyLogs(ctx)) {
      const proxiers = log.events.filter((e): e is Extract<KubeProxyEvent, { kind: 'proxier' }> => e.kind === 'proxier');
      const last = proxiers[proxiers.length - 1];
      if (!last || !(last.mode in SHOWS) || (shown as readonly string[]).includes(last.mode)) continue;
      ctx.report({ messageId: 'log', data: { mode: last.mode, shown: shownText, expected: SHOWS[last.mode] }, file: log.file, line: last.at.line, column: 1, text: last.at.text });
    }
  },
});
