/**
 * kube-proxy's configuration as people paste it: the kube-proxy ConfigMap (`kubectl get cm kube-proxy
 * -n kube-system -o yaml`), the `kubectl edit` form (under `# Please edit…` comments, or only the edited
 * lines with the block's indentation), the bare KubeProxyConfiguration file after a `cat` prompt, a
 * fragment without apiVersion and kind, kubeadm's older `kubeProxy: config:` embedding, and the flags
 * form (`--proxy-mode=ipvs --cluster-cidr=…` from `ps`, a systemd unit, a DaemonSet's args, rke2/k3s
 * `kube-proxy-arg:` lists). Syntax only: fields as dotted paths, each with its file line. Where kube-proxy
 * reads each (and what it ignores or refuses): ./fields.ts and src/extract/kube-proxy-config.ts.
 */
import { readFlags } from './flags.js';
import { readYaml } from './yaml.js';
import type { KubeProxyConfigSyntax } from './types.js';
import { KNOWN_FIELDS } from './fields.js';

export { FLAG_PATHS } from './flags.js';
export type { ConfigField, ConfigForm, ConfigProblem, Duplicate, KubeProxyConfigSyntax } from './types.js';
export { DEFAULTS, KNOWN_FIELDS, REMOVED_FIELDS, homeOf, knownField } from './fields.js';

const YAML_MARK = /^\s*(kind:\s*KubeProxyConfiguration|apiVersion:|data:|config\.conf:|kubeProxy:)/m;
/** A KubeProxyConfiguration key on a YAML line (top-level or in its section). */
const FIELD_LINE = /^\s*([A-Za-z][\w]*):(\s|$)/;
const LEAVES = new Set([...KNOWN_FIELDS].flatMap((p) => p.split('.')));

export function parseKubeProxyConfig(text: string): KubeProxyConfigSyntax {
  if (YAML_MARK.test(text)) return readYaml(text);
  // A fragment: YAML lines naming KubeProxyConfiguration's fields, and no kube-proxy flag.
  let keys = 0;
  let flags = 0;
  for (const l of text.split('\n')) {
    const k = FIELD_LINE.exec(l);
    if (k && LEAVES.has(k[1])) keys++;
    if (/(^|\s)--[a-z][a-z0-9-]+(=|\s|$)/.test(l)) flags++;
  }
  if (keys > 0 && flags === 0) return readYaml(text);
  return { form: 'flags', fields: readFlags(text), duplicates: [], problems: [] };
}
