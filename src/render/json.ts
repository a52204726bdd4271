import { Document, Scalar, visit } from 'yaml';
/**
 * Stable JSON: two-space indent, and no raw control characters even outside C0. Models with Maps or
 * bigints (`kpx dump -o json`) need the replacer; plain results (`trace`) skip its per-value call,
 * which costs real time on 10k-Service outputs.
 */
export function renderJson(value: unknown, opts: { plain?: boolean } = {}): string {
  return escapeJsonText(JSON.stringify(value, opts.plain ? undefined : jsonReplacer, 2)) + '\n';
}

/** One line of JSON (a fleet summary), escaped as renderJson() is. */
export function renderJsonLine(value: unknown): string {
  return escapeJsonText(JSON.stringify(value)) + '\n';
}

/** Maps print as objects, bigints as decimal strings. */
export function jsonReplacer(_key: string, v: unknown): unknown {
  return v instanceof Map ? Object.fromEntries(v) : typeof v === 'bigint' ? v.toString() : v;
}

/**
 * JSON.stringify escapes C0 controls; these it leaves raw, and a terminal or a JavaScript
 * consumer can trip on them (dump text is untrusted).
 */
export function escapeJsonText(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Characters JSON.stringify and YAML leave raw that a terminal or a JavaScript consumer can trip on. */
const UNSAFE = /[\u007f-\u009f\u2028\u2029]/;

/**
 * The same document as YAML (`-o yaml`): what renderJson prints, through the `yaml` package, so
 * both formats hold the same keys and values. YAML escapes C0 controls itself; a string holding a
 * character it leaves raw (DEL, C1, line/paragraph separators) is double-quoted and the character
 * written as a `\uXXXX` escape, which YAML's double-quoted style reads back as the character.
 */
export function renderYaml(value: unknown): string {
  const doc = new Document(JSON.parse(renderJson(value)), { aliasDuplicateObjects: false });
  let unsafe = false;
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && UNSAFE.test(node.value)) {
        node.type = Scalar.QUOTE_DOUBLE;
        unsafe = true;
      }
    },
  });
  const text = doc.toString({ lineWidth: 0 });
  return unsafe ? text.replace(new RegExp(UNSAFE.source, 'g'), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}
