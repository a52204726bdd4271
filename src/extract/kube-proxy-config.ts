/**
 * KubeProxyConfiguration (ConfigMap, bare file, `kubectl edit` form, fragment, kubeadm embedding, flags)
 * → KubeProxyConfig, each field read where kube-proxy reads it: a field in another section is not read
 * (it is named, with the section it belongs to), a duplicated key is read with its last value (kube-proxy's
 * lenient decoding), and what kube-proxy would refuse is said.
 */
import { DEFAULTS, homeOf, knownField, parseKubeProxyConfig, REMOVED_FIELDS, type ConfigField, type ConfigProblem, type Duplicate } from '../../grammars/kube-proxy-config/index.js';
import { splitInput } from '../../grammars/common/text.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';
import type { ConfigIssue, ConfigValue, KubeProxyConfig } from '../model/kube-proxy.js';

/** Fields kpx reads as numbers or booleans: a value of another type is one kube-proxy cannot decode. */
const INTEGER_FIELDS = new Set(['iptables.masqueradeBit', 'nftables.masqueradeBit', 'conntrack.maxPerCore', 'conntrack.min', 'oomScoreAdj', 'linux.oomScoreAdj']);
/** Booleans as kube-proxy's YAML decoder (go-yaml v2, YAML 1.1) reads them. */
const YAML11_TRUE = /^(y|Y|yes|Yes|YES|true|True|TRUE|on|On|ON)$/;
const YAML11_BOOL = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const BOOLEAN_FIELDS = new Set(['iptables.masqueradeAll', 'nftables.masqueradeAll', 'ipvs.strictARP', 'iptables.localhostNodePorts', 'enableProfiling', 'bindAddressHardFail', 'conntrack.tcpBeLiberal', 'linux.masqueradeAll']);

function problemDiagnostic(p: ConfigProblem, file: string, raw: readonly string[]): Diagnostic {
  if (p.code === 'noise') return diagnostic('info', 'input/noise', `${p.message}: ${printable((raw[p.line - 1] ?? '').trim())}`, file, p.line, 1);
  if (p.code === 'prose') return diagnostic('info', 'input/prose', `${p.message}: ${printable((raw[p.line - 1] ?? '').trim())}`, file, p.line, 1);
  return diagnostic(p.severity, 'parse/yaml', printable(p.message, 200), file, p.line, 1);
}

/** What kube-proxy would not read as written, field by field (the last of duplicated keys is the one read). */
function issuesOf(fields: readonly ConfigField[], duplicates: readonly Duplicate[], form: KubeProxyConfig['form'], raw: readonly string[]): ConfigIssue[] {
  if (form === 'flags') return [];
  const out: ConfigIssue[] = [];
  const text = (line: number) => raw[line - 1] ?? '';
  for (const d of duplicates) out.push({ kind: 'duplicate', path: d.path, first: d.first, line: d.line, text: text(d.line) });
  for (const f of fields) {
    const removed = REMOVED_FIELDS[f.path];
    if (removed !== undefined) out.push({ kind: 'removed', path: f.path, note: removed, line: f.line, text: text(f.line) });
    else if (!knownField(f.path)) {
      const home = homeOf(f.path);
      out.push(home ? { kind: 'misplaced', path: f.path, home, ...(DEFAULTS[home] !== undefined ? { default: DEFAULTS[home] } : {}), line: f.line, text: text(f.line) } : { kind: 'unknown', path: f.path, line: f.line, text: text(f.line) });
    }
    if (f.isNull) continue;
    if (INTEGER_FIELDS.has(f.path) && (f.quoted || !/^-?\d+$/.test(f.value))) out.push({ kind: 'bad-value', path: f.path, expected: 'integer', value: f.quoted ? JSON.stringify(f.value) : f.value, line: f.line, text: text(f.line) });
    if (BOOLEAN_FIELDS.has(f.path) && (f.quoted || !YAML11_BOOL.test(f.value))) out.push({ kind: 'bad-value', path: f.path, expected: 'boolean', value: f.quoted ? JSON.stringify(f.value) : f.value, line: f.line, text: text(f.line) });
  }
  return out;
}

function issueDiagnostic(i: ConfigIssue, file: string): Diagnostic | undefined {
  switch (i.kind) {
    case 'unknown':
      return diagnostic('warning', 'config/unknown-field', `KubeProxyConfiguration has no field \`${printable(i.path)}\`: kube-proxy's strict decoding rejects it (and falls back to lenient decoding, ignoring it)`, file, i.line, 1);
    case 'misplaced':
      return diagnostic('warning', 'config/unknown-field', `\`${printable(i.path)}\` is not where kube-proxy reads it (\`${i.home}\`): ignored, so ${i.home} stays ${i.default ?? 'at its default'}`, file, i.line, 1);
    case 'api-version':
      return diagnostic('warning', 'config/api-version', `apiVersion ${printable(i.value)}: kube-proxy reads kubeproxy.config.k8s.io/v1alpha1${i.value.startsWith('componentconfig/') ? ' (componentconfig/v1alpha1 is the group of kube-proxy 1.9 and earlier)' : ''}`, file, i.line, 1);
    default:
      return undefined;
  }
}

export function extractKubeProxyConfig(text: string, file: string): ParsedInput<KubeProxyConfig> {
  const syntax = parseKubeProxyConfig(text);
  const raw = splitInput(text).lines;
  const diagnostics: Diagnostic[] = syntax.problems.map((p) => problemDiagnostic(p, file, raw));
  const cv = <T>(f: ConfigField, value: T): ConfigValue<T> => ({ value, line: f.line, text: raw[f.line - 1] ?? '' });
  // The fields as kube-proxy reads them (of a duplicated key, the last: the grammar drops the others).
  const last = new Map<string, ConfigField>();
  for (const f of syntax.fields) last.set(f.path, f);
  const fields = new Map([...last].map(([p, f]) => [p, cv(f, f.value)]));
  const issues = issuesOf(syntax.fields, syntax.duplicates, syntax.form, raw);
  const api = syntax.apiVersion;
  if (api && !/^kubeproxy\.config\.k8s\.io\//.test(api.value)) issues.push({ kind: 'api-version', value: api.value, line: api.line, text: raw[api.line - 1] ?? '' });
  for (const i of issues) {
    const d = issueDiagnostic(i, file);
    if (d) diagnostics.push(d);
  }
  if (syntax.form === 'fragment') diagnostics.push(diagnostic('info', 'config/fragment', 'a fragment without apiVersion and kind: its fields are read as KubeProxyConfiguration\'s, where they are written (as a whole file kube-proxy would refuse it)', file, Math.max(1, raw.findIndex((l) => l.trim() !== '' && !/^\s*#/.test(l)) + 1), 1));
  const unknownFields = syntax.form === 'flags' ? [] : syntax.fields.filter((f) => !knownField(f.path)).map((f) => cv(f, f.path));
  const get = (path: string) => {
    const f = last.get(path);
    return f && !f.isNull && f.value !== '' ? f : undefined;
  };
  const out: { -readonly [K in keyof KubeProxyConfig]: KubeProxyConfig[K] } = { file, form: syntax.form, fields, unknownFields, issues };
  const str = (path: string) => {
    const f = get(path);
    return f ? cv(f, f.value) : undefined;
  };
  const list = (path: string) => {
    const f = get(path);
    return f ? cv(f, f.list ?? f.value.split(',').map((s) => s.trim()).filter(Boolean)) : undefined;
  };
  const num = (path: string) => {
    const f = get(path);
    return f && /^-?\d+$/.test(f.value) && !f.quoted ? cv(f, Number(f.value)) : undefined;
  };
  const bool = (path: string) => {
    const f = get(path);
    return f && YAML11_BOOL.test(f.value) && !f.quoted ? cv(f, YAML11_TRUE.test(f.value)) : undefined;
  };
  const assign = <K extends keyof KubeProxyConfig>(k: K, v: KubeProxyConfig[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  assign('mode', str('mode'));
  assign('clusterCIDR', list('clusterCIDR') ?? list('detectLocal.clusterCIDRs'));
  assign('masqueradeBit', num('iptables.masqueradeBit') ?? num('nftables.masqueradeBit'));
  assign('masqueradeAll', bool('iptables.masqueradeAll'));
  assign('nodePortAddresses', list('nodePortAddresses'));
  assign('strictARP', bool('ipvs.strictARP'));
  assign('ipvsScheduler', str('ipvs.scheduler'));
  assign('detectLocalMode', str('detectLocalMode'));
  assign('localhostNodePorts', bool('iptables.localhostNodePorts'));
  assign('conntrackMaxPerCore', num('conntrack.maxPerCore') ?? num('linux.conntrack.maxPerCore'));
  if (syntax.fields.length === 0 && !diagnostics.some((d) => d.severity === 'error')) {
    diagnostics.push(diagnostic('warning', 'config/empty', 'no kube-proxy setting found in this file', file, 1, 1));
  }
  diagnostics.sort((a, b) => a.line - b.line);
  return { format: 'kube-proxy-config', file, data: out, diagnostics, variant: syntax.form, counts: { fields: syntax.fields.length, 'unknown fields': unknownFields.length, 'not read as written': issues.length } };
}

export const kubeProxyConfigParser: FormatParser<KubeProxyConfig> = { id: 'kube-proxy-config', parse: (text, file) => extractKubeProxyConfig(text, file) };
