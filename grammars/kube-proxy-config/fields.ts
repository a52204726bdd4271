/**
 * KubeProxyConfiguration's fields, and where kube-proxy reads each: the v1alpha1 type
 * (staging/src/k8s.io/kube-proxy/config/v1alpha1/types.go), with the sections it nests fields in.
 * kube-proxy decodes its file strictly and, when that fails, leniently (cmd/kube-proxy/app/server.go,
 * options.go `loadConfig`, since 1.17: kubernetes/kubernetes#82927): a field it does not have, or one
 * written in another section than its own, is then ignored, and a duplicated key keeps its last value.
 */

/** Fields of v1alpha1 over the versions (the userspace proxier's included) and the internal type's later sections (linux, detectLocal, nftables). */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'apiVersion', 'kind', 'featureGates', 'clientConnection', 'logging', 'hostnameOverride', 'bindAddress', 'healthzBindAddress',
  'metricsBindAddress', 'bindAddressHardFail', 'enableProfiling', 'showHiddenMetricsForVersion', 'mode', 'iptables', 'ipvs',
  'nftables', 'winkernel', 'detectLocalMode', 'detectLocal', 'clusterCIDR', 'nodePortAddresses', 'oomScoreAdj', 'conntrack',
  'configSyncPeriod', 'portRange', 'udpIdleTimeout', 'windowsRunAsService', 'linux', 'syncPeriod', 'minSyncPeriod',
  'iptables.masqueradeAll', 'iptables.masqueradeBit', 'iptables.localhostNodePorts', 'iptables.syncPeriod', 'iptables.minSyncPeriod',
  'ipvs.syncPeriod', 'ipvs.minSyncPeriod', 'ipvs.scheduler', 'ipvs.excludeCIDRs', 'ipvs.strictARP', 'ipvs.tcpTimeout',
  'ipvs.tcpFinTimeout', 'ipvs.udpTimeout', 'nftables.masqueradeAll', 'nftables.masqueradeBit', 'nftables.syncPeriod',
  'nftables.minSyncPeriod', 'conntrack.maxPerCore', 'conntrack.min', 'conntrack.tcpEstablishedTimeout', 'conntrack.tcpCloseWaitTimeout',
  'conntrack.tcpBeLiberal', 'conntrack.udpTimeout', 'conntrack.udpStreamTimeout', 'detectLocal.bridgeInterface',
  'detectLocal.interfaceNamePrefix', 'linux.masqueradeAll', 'linux.oomScoreAdj', 'linux.conntrack',
]);

/**
 * Fields older kube-proxies had, with what became of them. Current ones log them as unknown and ignore
 * them: kube-proxy 1.30 logs `strict decoding error: unknown field "udpIdleTimeout"` (k0sproject/k0s#4626),
 * 1.18 `found unknown field: max` for conntrack.max (jhunt/k8s-boshrelease#58).
 */
export const REMOVED_FIELDS: Readonly<Record<string, string>> = {
  udpIdleTimeout: "the userspace proxier's, removed with it",
  portRange: "the userspace proxier's, removed with it",
  'conntrack.max': 'replaced by conntrack.maxPerCore and conntrack.min',
  resourceContainer: "kube-proxy's old cgroup option, removed",
};

/** The sections whose sub-fields kpx does not check one by one (any sub-field is accepted). */
const OPEN_SECTIONS = ['clientConnection', 'logging', 'winkernel', 'featureGates'];

/** Is this field (dotted path) one KubeProxyConfiguration has? */
export function knownField(path: string): boolean {
  if (KNOWN_FIELDS.has(path)) return true;
  const [top, second] = path.split('.');
  if (OPEN_SECTIONS.includes(top)) return true;
  if (top === 'linux' && second !== undefined) return second === 'conntrack' || KNOWN_FIELDS.has(`linux.${second}`);
  if (top === 'conntrack' && second !== undefined) return KNOWN_FIELDS.has(`conntrack.${second}`);
  return false;
}

/** Where a field kube-proxy does not read here belongs: the known paths that end in its name. */
export function homeOf(path: string): string | undefined {
  const leaf = path.split('.').pop()!;
  const homes = [...KNOWN_FIELDS].filter((k) => k !== path && (k === leaf || k.endsWith(`.${leaf}`)));
  // Several sections share a name (syncPeriod, masqueradeBit): point at one only when it is the only one.
  return homes.length === 1 ? homes[0] : undefined;
}

/** kube-proxy's defaults (v1alpha1 defaults.go) for the fields kpx names when one is not read. */
export const DEFAULTS: Readonly<Record<string, string>> = {
  mode: '"" (iptables on Linux)',
  'ipvs.strictARP': 'false',
  'ipvs.scheduler': '"" (rr)',
  'iptables.masqueradeBit': '14',
  'iptables.masqueradeAll': 'false',
  'conntrack.maxPerCore': '32768',
  clusterCIDR: '"" (no cluster CIDR)',
  nodePortAddresses: '[] (every local address)',
  detectLocalMode: 'ClusterCIDR',
};
