/** KubeProxyConfiguration (ConfigMap, bare file, `kubectl edit` form, flags) → KubeProxyConfig. */
import { knownField, parseKubeProxyConfig, type ConfigField } from '../../grammars/kube-proxy-config/index.js';
import { splitInput } from '../../grammars/common/text.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';
import type { ConfigValue, KubeProxyConfig } from '../model/kube-proxy.js';

export function extractKubeProxyConfig(text: string, file: string): ParsedInput<KubeProxyConfig> {
  const syntax = parseKubeProxyConfig(text);
  const raw = splitInput(text).lines;
  const diagnostics: Diagnostic[] = syntax.problems.map((p) => diagnostic(p.severity, 'parse/yaml', printable(p.message, 200), file, p.line, 1));
  const fields = new Map<string, ConfigValue<string>>();
  const unknownFields: ConfigValue<string>[] = [];
  const cv = <T>(f: ConfigField, value: T): ConfigValue<T> => ({ value, line: f.line, text: raw[f.line - 1] ?? '' });
  for (const f of syntax.fields) {
    fields.set(f.path, cv(f, f.value));
    if (syntax.form !== 'flags' && !knownField(f.path)) {
      unknownFields.push(cv(f, f.path));
      diagnostics.push(diagnostic('warning', 'config/unknown-field', `KubeProxyConfiguration has no field \`${printable(f.path)}\`: kube-proxy's strict decoding rejects it (and falls back to lenient decoding, ignoring it)`, file, f.line, 1));
    }
  }
  const get = (path: string) => syntax.fields.find((f) => f.path === path && !f.isNull && f.value !== '');
  const out: { -readonly [K in keyof KubeProxyConfig]: KubeProxyConfig[K] } = { file, form: syntax.form, fields, unknownFields };
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
    if (!f) return undefined;
    if (!/^\d+$/.test(f.value)) {
      diagnostics.push(diagnostic('warning', 'config/bad-value', `\`${path}\` should be a number, found ${printable(f.value)}`, file, f.line, 1));
      return undefined;
    }
    return cv(f, Number(f.value));
  };
  const bool = (path: string) => {
    const f = get(path);
    return f ? cv(f, f.value === 'true') : undefined;
  };
  const assign = <K extends keyof KubeProxyConfig>(k: K, v: KubeProxyConfig[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  assign('mode', str('mode'));
  assign('clusterCIDR', list('clusterCIDR'));
  assign('masqueradeBit', num('iptables.masqueradeBit') ?? num('nftables.masqueradeBit'));
  assign('masqueradeAll', bool('iptables.masqueradeAll'));
  assign('nodePortAddresses', list('nodePortAddresses'));
  assign('strictARP', bool('ipvs.strictARP'));
  assign('ipvsScheduler', str('ipvs.scheduler'));
  assign('detectLocalMode', str('detectLocalMode'));
  assign('localhostNodePorts', bool('iptables.localhostNodePorts'));
  assign('conntrackMaxPerCore', num('conntrack.maxPerCore'));
  if (syntax.fields.length === 0 && !diagnostics.some((d) => d.severity === 'error')) {
    diagnostics.push(diagnostic('warning', 'config/empty', 'no kube-proxy setting found in this file', file, 1, 1));
  }
  return { format: 'kube-proxy-config', file, data: out, diagnostics, counts: { fields: syntax.fields.length, 'unknown fields': unknownFields.length } };
}

export const kubeProxyConfigParser: FormatParser<KubeProxyConfig> = { id: 'kube-proxy-config', parse: (text, file) => extractKubeProxyConfig(text, file) };
