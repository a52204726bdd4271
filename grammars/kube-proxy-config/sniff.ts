/**
 * Cheap sniffer for kube-proxy configuration: YAML naming `kind: KubeProxyConfiguration` (bare, or
 * inside the ConfigMap's config.conf block), or kube-proxy's own command-line flags.
 */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const KIND = /^\s*kind:\s*KubeProxyConfiguration\s*$/;
const API = /^\s*apiVersion:\s*kubeproxy\.config\.k8s\.io\//;
/** Flags only kube-proxy has (not kubelet's --cluster-cidr alone: the controller-manager has that one too). */
const FLAG = /(?:^|\s|["'[,-])(?:--|-\s+)(proxy-mode|masquerade-bit|ipvs-strict-arp|ipvs-scheduler|nodeport-addresses|detect-local-mode|iptables-localhost-nodeports|conntrack-max-per-core)=?/;
const LOGLINE = /^\s*(?:\S+\s+)*[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\]/;

export const kubeProxyConfigSniffer: Sniffer<'kube-proxy-config'> = {
  id: 'kube-proxy-config',
  sniff(lines) {
    let flags = 0;
    let logLines = 0;
    for (const l of lines.slice(0, 400)) {
      if (KIND.test(l) || API.test(l)) return 1;
      if (LOGLINE.test(l)) logLines++;
      else if (FLAG.test(l)) flags++;
    }
    // A log quoting its command line is a log: flags must not be outnumbered by log entries.
    return flags > 0 && logLines === 0 ? 0.9 : 0;
  },
};
