/**
 * Cheap sniffer for kube-proxy configuration: YAML naming `kind: KubeProxyConfiguration` (bare, or
 * inside the ConfigMap's config.conf block), a fragment of one (YAML lines of fields only kube-proxy's
 * configuration has: `strictARP:`, `masqueradeBit:`, `detectLocalMode:`…, without another kind), or
 * kube-proxy's own command-line flags.
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
/** YAML keys of KubeProxyConfiguration that no other Kubernetes configuration uses. */
const OWN_KEY = /^\s*(strictARP|masqueradeBit|masqueradeAll|excludeCIDRs|detectLocalMode|nodePortAddresses|udpIdleTimeout|maxPerCore|tcpCloseWaitTimeout|tcpEstablishedTimeout|tcpBeLiberal|configSyncPeriod|metricsBindAddress|healthzBindAddress|bindAddressHardFail|localhostNodePorts|hostnameOverride):(\s|$)/;
const YAML_LINE = /^\s*(-\s|[A-Za-z_][\w.-]*:(\s|$))/;
const OTHER_KIND = /^\s*kind:\s*\S/;

export const kubeProxyConfigSniffer: Sniffer<'kube-proxy-config'> = {
  id: 'kube-proxy-config',
  sniff(lines) {
    let flags = 0;
    let logLines = 0;
    let own = 0;
    let yaml = 0;
    let content = 0;
    let kind = false;
    let kubeadm = false;
    let embeds = false;
    for (const l of lines.slice(0, 400)) {
      if (KIND.test(l) || API.test(l)) return 1;
      // kubeadm ≤1.12 embedded kube-proxy's configuration (`kubeProxy: config:`).
      if (/^\s*kind:\s*(Master|Cluster)Configuration\s*$/.test(l)) kubeadm = true;
      if (/^\s*kubeProxy:\s*$/.test(l)) embeds = true;
      if (LOGLINE.test(l)) logLines++;
      else if (FLAG.test(l)) flags++;
      if (l.trim() === '' || /^\s*#/.test(l)) continue;
      content++;
      if (OTHER_KIND.test(l)) kind = true;
      if (YAML_LINE.test(l)) yaml++;
      if (OWN_KEY.test(l)) own++;
    }
    if (kubeadm && embeds) return 0.9;
    // A log quoting its command line is a log: flags must not be outnumbered by log entries.
    if (flags > 0 && logLines === 0) return 0.9;
    // A fragment: YAML with kube-proxy's own keys, and no kind of another object.
    return own > 0 && !kind && logLines === 0 && yaml * 2 >= content ? 0.6 : 0;
  },
};
