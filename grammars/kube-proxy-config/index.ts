/**
 * kube-proxy's configuration as people paste it: the kube-proxy ConfigMap
 * (`kubectl get cm kube-proxy -n kube-system -o yaml`, its `config.conf: |` block holding the
 * KubeProxyConfiguration; EKS's `kube-proxy-config` ConfigMap names it `config: |-`), the
 * `kubectl edit` form (the same, under `# Please edit…` comments, or only the edited lines with the
 * block's indentation), the bare KubeProxyConfiguration file (`--config=/var/lib/kube-proxy/config.conf`),
 * and the flags form (`--proxy-mode=ipvs --cluster-cidr=…`, from `ps`, a systemd unit, a DaemonSet's
 * args, or rke2/k3s `kube-proxy-arg:` lists). YAML is read with the `yaml` library (with a line counter,
 * so every field keeps the file line it was written on). Syntax only: fields as dotted paths.
 */
import { LineCounter, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import { dropCollectionKeys } from '../common/yaml-keys.js';
import { estimateYamlNodes, YAML_NODE_BUDGET } from '../common/json-positions.js';

export interface ConfigField {
  /** Dotted path in KubeProxyConfiguration (`ipvs.strictARP`). */
  readonly path: string;
  /** The value as text (lists joined with `,`; null as ``). */
  readonly value: string;
  readonly isNull: boolean;
  readonly list?: readonly string[];
  /** 1-based file line. */
  readonly line: number;
}

export interface KubeProxyConfigSyntax {
  readonly form: 'configmap' | 'config' | 'flags';
  readonly fields: readonly ConfigField[];
  readonly problems: readonly { readonly line: number; readonly message: string; readonly severity: 'error' | 'warning' }[];
}

/** kube-proxy flags → KubeProxyConfiguration paths (cmd/kube-proxy/app/options.go). */
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

function readFlags(text: string): KubeProxyConfigSyntax {
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
  return { form: 'flags', fields, problems: [] };
}

type Problems = { line: number; message: string; severity: 'error' | 'warning' }[];

/**
 * The fields of a mapping, depth first. Duplicate keys are found here, with a set per mapping:
 * the yaml package's own check compares every key with every other (100,000 keys: minutes), so
 * it is off (`uniqueKeys: false`).
 */
function walk(node: Node | null | undefined, prefix: string, lineOf: (offset: number) => number, out: ConfigField[], problems?: Problems): void {
  if (!node) return;
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const item of node.items) {
      const key = isScalar(item.key) ? String(item.key.value) : undefined;
      if (key === undefined) continue;
      const path = prefix ? `${prefix}.${key}` : key;
      const v = item.value as Node | null;
      const keyLine = lineOf((item.key as Node).range?.[0] ?? 0);
      if (seen.has(key)) problems?.push({ line: keyLine, message: `${path} is given twice (map keys must be unique; kube-proxy refuses the file)`, severity: 'error' });
      seen.add(key);
      if (isMap(v) && path !== 'featureGates') {
        walk(v, path, lineOf, out, problems);
      } else if (isSeq(v)) {
        const list = v.items.map((x) => (isScalar(x) ? String(x.value) : String(x)));
        out.push({ path, value: list.join(','), isNull: false, list, line: keyLine });
      } else if (isMap(v)) {
        out.push({ path, value: JSON.stringify(v.toJSON()), isNull: false, line: keyLine });
      } else if (isScalar(v)) {
        const isNull = v.value === null;
        out.push({ path, value: isNull ? '' : String(v.value), isNull, line: keyLine });
      } else {
        out.push({ path, value: '', isNull: true, line: keyLine });
      }
    }
  }
}

/** A KubeProxyConfiguration's text inside a ConfigMap or kubeadm config. */
const HOLDS_CONFIG = /^\s*(kind:\s*KubeProxyConfiguration|apiVersion:\s*kubeproxy\.config\.k8s\.io\/)/m;

/**
 * The ConfigMap data entry holding the KubeProxyConfiguration: kubeadm names it `config.conf`, EKS's
 * `kube-proxy-config` ConfigMap names it `config`; any other key whose text is a KubeProxyConfiguration
 * is taken too (the key name is the distribution's choice, the content is kube-proxy's).
 */
function configMapEntry(d: Document): { key: string; node: Node } | undefined {
  const conf = d.getIn(['data', 'config.conf'], true) as Node | undefined;
  if (conf) return { key: 'config.conf', node: conf };
  const data = d.get('data', true) as Node | undefined;
  if (!isMap(data)) return undefined;
  for (const item of data.items) {
    const v = item.value as Node | null;
    if (isScalar(item.key) && isScalar(v) && typeof v.value === 'string' && HOLDS_CONFIG.test(v.value)) return { key: String(item.key.value), node: v };
  }
  return undefined;
}

function lineCounterFn(lc: LineCounter, base = 0): (offset: number) => number {
  return (offset) => lc.linePos(offset).line + base;
}

function readYaml(text: string): KubeProxyConfigSyntax {
  const problems: { line: number; message: string; severity: 'error' | 'warning' }[] = [];
  if (estimateYamlNodes(text, YAML_NODE_BUDGET) > YAML_NODE_BUDGET) {
    return { form: 'config', fields: [], problems: [{ line: 1, message: `this YAML holds more than ${YAML_NODE_BUDGET.toLocaleString('en-US')} nodes, far more than a kube-proxy configuration (a few dozen fields); not read`, severity: 'error' }] };
  }
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lc, logLevel: 'error', uniqueKeys: false }) as Document[] | { empty: true };
  if (!Array.isArray(docs)) return { form: 'config', fields: [], problems: [{ line: 1, message: 'no YAML document', severity: 'error' }] };
  for (const d of docs) for (const e of d.errors) problems.push({ line: lc.linePos(e.pos[0]).line, message: e.message.split('\n')[0], severity: 'error' });
  for (const d of docs) {
    const dropped = dropCollectionKeys(d);
    if (dropped.count) problems.push({ line: lc.linePos(dropped.first?.range?.[0] ?? 0).line, message: `${dropped.count} mapping key(s) that are a list or a map (no kube-proxy field is): left out`, severity: 'warning' });
  }
  for (const d of docs) {
    const kind = d.get('kind');
    if (kind === 'KubeProxyConfiguration') {
      const fields: ConfigField[] = [];
      walk(d.contents as Node, '', lineCounterFn(lc), fields, problems);
      return { form: 'config', fields, problems };
    }
    const found = configMapEntry(d);
    const inner = found?.node;
    if ((kind === 'ConfigMap' || kind === undefined) && found && isScalar(inner) && typeof inner.value === 'string') {
      // A block scalar's content starts on the line after `config.conf: |`, one content line per file line.
      const block = inner.type === 'BLOCK_LITERAL' || inner.type === 'BLOCK_FOLDED';
      const header = lc.linePos(inner.range?.[0] ?? 0).line;
      const innerLc = new LineCounter();
      const innerDoc = parseAllDocuments(inner.value, { lineCounter: innerLc, logLevel: 'error', uniqueKeys: false });
      const fields: ConfigField[] = [];
      if (Array.isArray(innerDoc) && innerDoc[0]) {
        dropCollectionKeys(innerDoc[0]);
        const lineOf = block ? (off: number) => header + innerLc.linePos(off).line : () => header;
        for (const e of innerDoc[0].errors) problems.push({ line: lineOf(e.pos[0]), message: `in ${found.key}: ${e.message.split('\n')[0]}`, severity: 'error' });
        walk(innerDoc[0].contents as Node, '', lineOf, fields, problems);
      }
      return { form: 'configmap', fields, problems };
    }
  }
  return { form: 'config', fields: [], problems: problems.length ? problems : [{ line: 1, message: 'no KubeProxyConfiguration and no ConfigMap data entry holding one (config.conf, config) in this YAML', severity: 'error' }] };
}

export function parseKubeProxyConfig(text: string): KubeProxyConfigSyntax {
  return /^\s*(kind:\s*KubeProxyConfiguration|apiVersion:|data:|config\.conf:)/m.test(text) ? readYaml(text) : readFlags(text);
}

/** KubeProxyConfiguration fields (v1alpha1, including ones later removed, e.g. udpIdleTimeout, portRange). */
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

/** Is this field (dotted path) one KubeProxyConfiguration has? Sub-objects kpx does not check are accepted. */
export function knownField(path: string): boolean {
  if (KNOWN_FIELDS.has(path)) return true;
  const [top, second] = path.split('.');
  if (['clientConnection', 'logging', 'winkernel', 'featureGates', 'linux'].includes(top)) return KNOWN_FIELDS.has(top);
  if (['conntrack', 'linux'].includes(top) && second !== undefined) return KNOWN_FIELDS.has(`${top}.${second}`);
  return false;
}
