/**
 * KubeProxyConfiguration YAML as pasted: the ConfigMap (`config.conf: |`, EKS's `config: |-`), the bare
 * file, kubeadm's older embedding (`kubeProxy: config:` in a MasterConfiguration/ClusterConfiguration),
 * or a fragment without apiVersion and kind (the lines someone changed, with the editor's indentation).
 * Read with the `yaml` library and a line counter, so every field keeps the file line it was written on.
 * Duplicate keys are kept (kube-proxy's lenient decoding takes the last; its strict decoding refuses them).
 */
import { LineCounter, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import { noiseKind } from '../common/text.js';
import { dropCollectionKeys } from '../common/yaml-keys.js';
import { estimateYamlNodes, YAML_NODE_BUDGET } from '../common/json-positions.js';
import { minOf } from '../common/source.js';
import type { ConfigField, ConfigProblem, Duplicate, KubeProxyConfigSyntax } from './types.js';

/**
 * The fields of a mapping, depth first. A key given again replaces what the earlier one held:
 * `replaced` remembers, per path, how many fields had been read when it was given again (the fields
 * before that with this path or under it are dropped at the end, in one pass: removing them at
 * each repeat was quadratic in the keys).
 */
function walk(node: Node | null | undefined, prefix: string, lineOf: (offset: number) => number, out: ConfigField[], dups: Duplicate[] = []): void {
  const replaced = new Map<string, number>();
  walkInto(node, prefix, lineOf, out, dups, replaced);
  if (replaced.size === 0) return;
  const kept = out.filter((f, i) => {
    for (let p = f.path; ; p = p.slice(0, p.lastIndexOf('.'))) {
      if ((replaced.get(p) ?? -1) > i) return false;
      if (!p.includes('.')) return true;
    }
  });
  out.length = 0;
  for (const f of kept) out.push(f);
}

function walkInto(node: Node | null | undefined, prefix: string, lineOf: (offset: number) => number, out: ConfigField[], dups: Duplicate[], replaced: Map<string, number>): void {
  if (!node || !isMap(node)) return;
  const seen = new Map<string, number>();
  for (const item of node.items) {
    const key = isScalar(item.key) ? String(item.key.value) : undefined;
    if (key === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    const v = item.value as Node | null;
    const line = lineOf((item.key as Node).range?.[0] ?? 0);
    const first = seen.get(key);
    if (first !== undefined) {
      // The later key replaces the earlier one whole: what the earlier section held is not read.
      dups.push({ path, first, line });
      replaced.set(path, out.length);
    }
    seen.set(key, line);
    if (isMap(v) && path !== 'featureGates') walkInto(v, path, lineOf, out, dups, replaced);
    else if (isSeq(v)) {
      const list = v.items.map((x) => (isScalar(x) ? String(x.value) : String(x)));
      out.push({ path, value: list.join(','), isNull: false, list, line });
    } else if (isMap(v)) out.push({ path, value: JSON.stringify(v.toJSON()), isNull: false, line });
    else if (isScalar(v)) out.push({ path, value: v.value === null ? '' : String(v.value), isNull: v.value === null, line, ...(typeof v.value === 'string' && (v.type === 'QUOTE_DOUBLE' || v.type === 'QUOTE_SINGLE') ? { quoted: true } : {}) });
    else out.push({ path, value: '', isNull: true, line });
  }
}

/** A KubeProxyConfiguration's text inside a ConfigMap entry. */
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

/** YAML structure: a key, a list item, a comment, a document marker, a block scalar's indented line. */
const YAML_LINE = /^\s*(#|-\s|-$|---|\.\.\.|[A-Za-z_][\w.-]*:(\s|$)|"[^"]*":(\s|$)|'[^']*':(\s|$))|^\s+\S/;

/**
 * The paste's lines that are not YAML, blanked so the rest parses with its own line numbers: paste
 * noise (prompts such as `$ cat /var/lib/kube-proxy/config.conf`, fences, markdown captions) and the
 * author's words before the first YAML line.
 */
export function cleanYaml(text: string): { text: string; skipped: ConfigProblem[] } {
  const lines = text.split('\n');
  const skipped: ConfigProblem[] = [];
  let started = false;
  const out = lines.map((l, i) => {
    if (l.trim() === '') return l;
    const noise = /^\s*(---|\.\.\.)\s*$/.test(l) ? undefined : noiseKind(l);
    if (noise) {
      skipped.push({ line: i + 1, severity: 'info', code: 'noise', message: `skipped ${noise} line` });
      return '';
    }
    if (!started && !YAML_LINE.test(l)) {
      skipped.push({ line: i + 1, severity: 'info', code: 'prose', message: 'not YAML (the author\'s words before the configuration)' });
      return '';
    }
    started = true;
    return l;
  });
  // A paste indented as a whole (a markdown list's code block, `kubectl edit`'s block indentation): the
  // same structure at column 1, so that an indented `---` is a document marker again.
  const indents = out.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length);
  const common = indents.length ? minOf(indents) : 0;
  return { text: common ? out.map((l) => l.slice(Math.min(common, /^ */.exec(l)![0].length))).join('\n') : out.join('\n'), skipped };
}

function problemsOf(docs: readonly Document[], lc: LineCounter, lineOf = (off: number) => lc.linePos(off).line, prefix = ''): ConfigProblem[] {
  return docs.flatMap((d) => d.errors.map((e) => ({ line: lineOf(e.pos[0]), message: `${prefix}${e.message.split('\n')[0]}`, severity: 'error' as const, code: 'yaml' as const })));
}

/** The KubeProxyConfiguration in a ConfigMap entry (a block scalar: one content line per file line). */
function fromConfigMap(inner: Node, key: string, lc: LineCounter): { fields: ConfigField[]; duplicates: Duplicate[]; problems: ConfigProblem[]; apiVersion?: { value: string; line: number } } | undefined {
  if (!isScalar(inner) || typeof inner.value !== 'string') return undefined;
  const block = inner.type === 'BLOCK_LITERAL' || inner.type === 'BLOCK_FOLDED';
  const header = lc.linePos(inner.range?.[0] ?? 0).line;
  const innerLc = new LineCounter();
  const docs = parseAllDocuments(inner.value, { lineCounter: innerLc, uniqueKeys: false, logLevel: 'error' });
  const fields: ConfigField[] = [];
  const duplicates: Duplicate[] = [];
  if (!Array.isArray(docs) || !docs[0]) return { fields, duplicates, problems: [] };
  const lineOf = block ? (off: number) => header + innerLc.linePos(off).line : () => header;
  dropCollectionKeys(docs[0]);
  walk(docs[0].contents as Node, '', lineOf, fields, duplicates);
  const api = fields.find((f) => f.path === 'apiVersion');
  return { fields, duplicates, problems: problemsOf([docs[0]], innerLc, lineOf, `in ${key}: `), ...(api ? { apiVersion: { value: api.value, line: api.line } } : {}) };
}

export function readYaml(text: string): KubeProxyConfigSyntax {
  if (estimateYamlNodes(text, YAML_NODE_BUDGET) > YAML_NODE_BUDGET) {
    return { form: 'config', fields: [], duplicates: [], problems: [{ line: 1, message: `this YAML holds more than ${YAML_NODE_BUDGET.toLocaleString('en-US')} nodes, far more than a kube-proxy configuration (a few dozen fields); not read`, severity: 'error', code: 'yaml' }] };
  }
  const { text: clean, skipped } = cleanYaml(text);
  const lc = new LineCounter();
  const parsed = parseAllDocuments(clean, { lineCounter: lc, uniqueKeys: false, logLevel: 'error' }) as Document[] | { empty: true };
  if (!Array.isArray(parsed)) return { form: 'config', fields: [], duplicates: [], problems: [...skipped, { line: 1, message: 'no YAML document', severity: 'error', code: 'yaml' }] };
  const problems = [...skipped, ...problemsOf(parsed, lc)];
  // Keys that are lists or maps: no kube-proxy field is one, and the yaml package prints each one's whole subtree to use it.
  for (const d of parsed) {
    const dropped = dropCollectionKeys(d);
    if (dropped.count) problems.push({ line: lc.linePos(dropped.first?.range?.[0] ?? 0).line, message: `${dropped.count} mapping key(s) that are a list or a map (no kube-proxy field is): left out`, severity: 'warning', code: 'yaml' });
  }
  const lineOf = (off: number) => lc.linePos(off).line;
  for (const d of parsed) {
    const kind = d.get('kind');
    const fields: ConfigField[] = [];
    const duplicates: Duplicate[] = [];
    if (kind === 'KubeProxyConfiguration') {
      walk(d.contents as Node, '', lineOf, fields, duplicates);
      const api = fields.find((f) => f.path === 'apiVersion');
      return { form: 'config', fields, duplicates, problems, ...(api ? { apiVersion: { value: api.value, line: api.line } } : {}) };
    }
    const entry = kind === 'ConfigMap' || kind === undefined ? configMapEntry(d) : undefined;
    const cm = entry ? fromConfigMap(entry.node, entry.key, lc) : undefined;
    if (cm) return { form: 'configmap', fields: cm.fields, duplicates: cm.duplicates, problems: [...problems, ...cm.problems], ...(cm.apiVersion ? { apiVersion: cm.apiVersion } : {}) };
    // kubeadm ≤1.12 embedded the configuration: `kubeProxy: config: {…}` (kubernetes/kubeadm#1182).
    const embedded = d.getIn(['kubeProxy', 'config'], true) as Node | undefined;
    if (isMap(embedded)) {
      walk(embedded, '', lineOf, fields, duplicates);
      return { form: 'kubeadm', fields, duplicates, problems };
    }
    if (kind === undefined && isMap(d.contents)) {
      walk(d.contents, '', lineOf, fields, duplicates);
      return { form: 'fragment', fields, duplicates, problems };
    }
  }
  return { form: 'config', fields: [], duplicates: [], problems: problems.some((p) => p.severity === 'error') ? problems : [...problems, { line: 1, message: 'no KubeProxyConfiguration and no ConfigMap data entry holding one (config.conf, config) in this YAML', severity: 'error', code: 'yaml' }] };
}
