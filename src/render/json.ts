import { stringify as stringifyYaml } from 'yaml';
/**
 * Stable JSON: two-space indent, and no raw control characters even outside C0. Models with Maps or
 * bigints (`kpx dump -o json`) need the replacer; plain results (`trace`) skip its per-value call,
 * which costs real time on 10k-Service outputs.
 */
export function renderJson(value: unknown, opts: { plain?: boolean } = {}): string {
  const replacer = opts.plain ? undefined : (_k: string, v: unknown) => (v instanceof Map ? Object.fromEntries(v) : typeof v === 'bigint' ? v.toString() : v);
  return escapeJsonText(JSON.stringify(value, replacer, 2)) + '\n';
}

/**
 * JSON.stringify escapes C0 controls; these it leaves raw, and a terminal or a JavaScript
 * consumer can trip on them (dump text is untrusted).
 */
export function escapeJsonText(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The same document as YAML (`-o yaml`): what renderJson prints, through the `yaml` package, so
 * both formats hold the same keys and values. Control characters are escaped by YAML's own
 * double-quoted style.
 */
export function renderYaml(value: unknown): string {
  return stringifyYaml(JSON.parse(renderJson(value)), { lineWidth: 0, aliasDuplicateObjects: false });
}
