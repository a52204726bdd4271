import type { ConfigIssue } from '../../model/kube-proxy.js';
import { createRule, type Severity } from '../rule.js';
import { kubeProxyConfigs } from '../kube-proxy-util.js';

const SEVERITY: Readonly<Record<ConfigIssue['kind'], Severity>> = {
  'bad-value': 'error',
  duplicate: 'warning',
  misplaced: 'warning',
  unknown: 'warning',
  'api-version': 'warning',
  removed: 'info',
};

export default createRule({
  id: 'kube-proxy-config-not-read',
  meta: {
    description: "kube-proxy's configuration has fields kube-proxy does not read as written: in the wrong section, unknown, removed, duplicated — or a value it cannot decode.",
    severity: 'warning',
    requires: ['kube-proxy-config'],
    standalone: true,
    relevant: () => false,
    docs: [
      'kube-proxy decodes its configuration file strictly and, when that fails, leniently, logging `Using lenient',
      'decoding as strict decoding failed` (cmd/kube-proxy/app options.go `loadConfig`; strict since 1.17,',
      'kubernetes/kubernetes#82927). Lenient decoding drops what it does not know, so a field written in another',
      'section than its own — `strictARP` at the top instead of under `ipvs:`, `masqueradeBit` under `ipvs:` — is',
      'ignored and the real field keeps its default; an unknown or misspelled field is ignored; a field older',
      'versions had (`udpIdleTimeout`, `portRange`, `conntrack.max`, `resourceContainer`) is ignored; a key written',
      'twice in one mapping (a section appended to the end of the file) keeps only the last one, whole. A value',
      'of the wrong type (`masqueradeBit: "14"`, `strictARP: "true"`: quoted, so strings) fails both decodings:',
      'kube-proxy exits. (Its YAML decoder is YAML 1.1: `yes`, `on` are booleans there.)',
      '',
      '**Fix:** move the field under the section kube-proxy reads it from (the message names it), remove unknown',
      'and removed fields, merge duplicated sections, write numbers and booleans unquoted; restart kube-proxy and',
      'check that its log no longer says `strict decoding`.',
      '',
      '**Example** (k0sproject/k0s#4626): `"Using lenient decoding as strict decoding failed" err="strict decoding',
      'error: unknown field \\"udpIdleTimeout\\""` — a configuration written for an older kube-proxy.',
    ].join('\n'),
    messages: {
      misplaced: '`{{path}}` is not where kube-proxy reads it (`{{home}}`): it is ignored, so {{home}} stays {{default}}',
      unknown: '`{{path}}` is not a KubeProxyConfiguration field: kube-proxy ignores it (strict decoding fails, lenient decoding drops it)',
      removed: '`{{path}}` is a field current kube-proxy no longer has ({{note}}): ignored',
      duplicate: '`{{path}}` is written again (first at line {{first}}): strict decoding refuses the file, lenient decoding reads only this last one',
      'bad-value': '`{{path}}: {{value}}` is not {{article}} {{expected}}: kube-proxy cannot decode its configuration and exits',
      'api-version': 'apiVersion {{value}} is not the group kube-proxy reads (kubeproxy.config.k8s.io/v1alpha1)',
    },
  },
  check(ctx) {
    for (const c of kubeProxyConfigs(ctx)) {
      for (const i of c.issues) {
        const data: Record<string, string | number> =
          i.kind === 'misplaced'
            ? { path: i.path, home: i.home, default: i.default ?? 'at its default' }
            : i.kind === 'removed'
              ? { path: i.path, note: i.note }
              : i.kind === 'duplicate'
                ? { path: i.path, first: i.first }
                : i.kind === 'bad-value'
                  ? { path: i.path, value: i.value, expected: i.expected, article: i.expected === 'integer' ? 'an' : 'a' }
                  : i.kind === 'api-version'
                    ? { value: i.value }
                    : { path: i.path };
        ctx.report({ messageId: i.kind, data, severity: SEVERITY[i.kind], file: c.file, line: i.line, column: 1, text: i.text });
      }
    }
  },
});
