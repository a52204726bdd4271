/** kube-proxy's command-line flags (cmd/kube-proxy/app/options.go) as KubeProxyConfiguration fields. */
import type { ConfigField } from './types.js';

/** kube-proxy flags → KubeProxyConfiguration paths. */
export const FLAG_PATHS: Readonly<Record<string, string>> = {
  'proxy-mode': 'mode',
  'cluster-cidr': 'clusterCIDR',
  'masquerade-bit': 'iptables.masqueradeBit',
  'iptables-masquerade-bit': 'iptables.masqueradeBit',
  'masquerade-all': 'iptables.masqueradeAll',
  'nodeport-addresses': 'nodePortAddresses',
  'ipvs-strict-arp': 'ipvs.strictARP',
  'ipvs-scheduler': 'ipvs.scheduler',
  'ipvs-exclude-cidrs': 'ipvs.excludeCIDRs',
  'detect-local-mode': 'detectLocalMode',
  'iptables-localhost-nodeports': 'iptables.localhostNodePorts',
  'conntrack-max-per-core': 'conntrack.maxPerCore',
  'conntrack-min': 'conntrack.min',
  'hostname-override': 'hostnameOverride',
  'bind-address': 'bindAddress',
  'healthz-bind-address': 'healthzBindAddress',
  'metrics-bind-address': 'metricsBindAddress',
  'iptables-sync-period': 'iptables.syncPeriod',
  'iptables-min-sync-period': 'iptables.minSyncPeriod',
  'ipvs-sync-period': 'ipvs.syncPeriod',
  'ipvs-min-sync-period': 'ipvs.minSyncPeriod',
  'feature-gates': 'featureGates',
  config: 'config',
  kubeconfig: 'clientConnection.kubeconfig',
};
const BOOL_FLAGS = new Set(['masquerade-all', 'ipvs-strict-arp', 'iptables-localhost-nodeports']);

export function readFlags(text: string): ConfigField[] {
  const fields: ConfigField[] = [];
  text.split('\n').forEach((raw, i) => {
    // `--name=value` and boolean `--name`; `- name=value` is a YAML list item (rke2/k3s kube-proxy-arg).
    // `--name value` is not read: in a ps line or a unit file the next word may be anything.
    for (const m of raw.matchAll(/(?:^|[\s"'[,])(--|-\s+)([a-z][a-z0-9-]+)(?:=("[^"]*"|'[^']*'|[^\s"',\]]*))?(?=[\s"',\]]|$)/g)) {
      const name = m[2];
      const path = FLAG_PATHS[name];
      if (!path) continue;
      if (m[1] !== '--' && m[3] === undefined) continue;
      if (m[3] === undefined && !BOOL_FLAGS.has(name)) continue;
      const value = (m[3] ?? 'true').replace(/^["']|["']$/g, '');
      const list = path === 'clusterCIDR' || path === 'nodePortAddresses' || path === 'ipvs.excludeCIDRs' ? value.split(',').filter(Boolean) : undefined;
      fields.push({ path, value, isNull: false, ...(list ? { list } : {}), line: i + 1 });
    }
  });
  return fields;
}
