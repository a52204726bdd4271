/**
 * `kpx lint --config FILE`: per-rule severities and disabled rules, in JSON or a small YAML subset.
 *
 *   # .kpx.yaml
 *   rules:
 *     masquerade-not-random-fully: off      # off | error | warning | info
 *     ruleset-size: info
 *   disable: [stale-proxy-mode]             # or a block list: "- id" lines
 *
 * The same in JSON: {"rules": {"ruleset-size": "info"}, "disable": ["stale-proxy-mode"]}.
 * Supported YAML: comments, `key: value` mappings nested by indentation (two levels), block lists
 * (`- item`), flow lists (`[a, b]`), plain/single/double-quoted scalars. Anchors, multi-line
 * scalars and flow mappings are not (a clear error says so).
 */
import type { SeveritySetting } from './run.js';

export interface LintConfig {
  readonly severities: Readonly<Record<string, SeveritySetting>>;
  readonly disable: readonly string[];
}

export class ConfigError extends Error {}

type Yaml = string | string[] | { [k: string]: Yaml };

function scalar(text: string, where: string): string {
  const t = text.trim();
  if (/^".*"$/.test(t)) return JSON.parse(t) as string;
  if (/^'.*'$/.test(t)) return t.slice(1, -1).replace(/''/g, "'");
  if (/^[&*!|>{]/.test(t)) throw new ConfigError(`${where}: this YAML feature is not supported here (use JSON, or plain key: value lines)`);
  return t;
}

function stripComment(line: string): string {
  let q: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (q) {
      if (ch === q) q = null;
    } else if (ch === '"' || ch === "'") q = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}

/** Parse the YAML subset described above. */
export function parseYamlSubset(text: string, file = 'config'): Yaml {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const root: { [k: string]: Yaml } = {};
  // Stack of open containers by indentation.
  const stack: { indent: number; node: { [k: string]: Yaml } | string[]; key?: string }[] = [{ indent: -1, node: root }];
  let pendingKey: { parent: { [k: string]: Yaml }; key: string; indent: number } | null = null;
  lines.forEach((raw, i) => {
    const where = `${file}:${i + 1}`;
    const line = stripComment(raw).replace(/\s+$/, '');
    if (line.trim() === '' || line.trim() === '---') return;
    if (/\t/.test(line.match(/^\s*/)![0])) throw new ConfigError(`${where}: tabs are not allowed for indentation in YAML`);
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    if (pendingKey) {
      if (indent > pendingKey.indent) {
        const node: { [k: string]: Yaml } | string[] = body.startsWith('- ') || body === '-' ? [] : {};
        pendingKey.parent[pendingKey.key] = node as Yaml;
        stack.push({ indent, node });
      } else pendingKey.parent[pendingKey.key] = {};
      pendingKey = null;
    }
    while (stack.length > 1 && indent < stack[stack.length - 1].indent) stack.pop();
    const top = stack[stack.length - 1];
    if (body.startsWith('- ') || body === '-') {
      if (!Array.isArray(top.node)) throw new ConfigError(`${where}: a list item where a key was expected`);
      top.node.push(scalar(body.slice(1), where));
      return;
    }
    const m = /^("[^"]*"|'[^']*'|[^:]+?)\s*:(?:\s+(.*))?$/.exec(body);
    if (!m || Array.isArray(top.node)) throw new ConfigError(`${where}: expected "key: value"`);
    const key = scalar(m[1], where);
    const value = m[2]?.trim();
    if (value === undefined || value === '') {
      pendingKey = { parent: top.node, key, indent };
      return;
    }
    if (value.startsWith('[')) {
      if (!value.endsWith(']')) throw new ConfigError(`${where}: a flow list must end on the same line`);
      const inner = value.slice(1, -1).trim();
      top.node[key] = inner === '' ? [] : inner.split(',').map((x) => scalar(x, where));
      return;
    }
    top.node[key] = scalar(value, where);
  });
  if (pendingKey) (pendingKey as { parent: { [k: string]: Yaml }; key: string }).parent[(pendingKey as { key: string }).key] = {};
  return root;
}

const SETTINGS = new Set(['off', 'error', 'warning', 'info']);

/** Validate a parsed config against the known rule ids. */
export function normalizeConfig(data: unknown, knownIds: ReadonlySet<string>, file = 'config'): LintConfig {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`${file}: expected an object with "rules" and/or "disable"`);
  const obj = data as Record<string, unknown>;
  for (const k of Object.keys(obj)) if (k !== 'rules' && k !== 'disable') throw new ConfigError(`${file}: unknown key "${k}" (expected rules, disable)`);
  const severities: Record<string, SeveritySetting> = {};
  if (obj.rules !== undefined) {
    if (obj.rules === null || typeof obj.rules !== 'object' || Array.isArray(obj.rules)) throw new ConfigError(`${file}: "rules" must map rule ids to off|error|warning|info`);
    for (const [id, v] of Object.entries(obj.rules as Record<string, unknown>)) {
      if (!knownIds.has(id)) throw new ConfigError(`${file}: unknown rule "${id}" (kpx lint --list-rules)`);
      const s = v === false ? 'off' : String(v).toLowerCase();
      if (!SETTINGS.has(s)) throw new ConfigError(`${file}: rule ${id}: "${String(v)}" is not one of off, error, warning, info`);
      severities[id] = s as SeveritySetting;
    }
  }
  const disable: string[] = [];
  if (obj.disable !== undefined) {
    const list = typeof obj.disable === 'string' ? [obj.disable] : obj.disable;
    if (!Array.isArray(list)) throw new ConfigError(`${file}: "disable" must be a list of rule ids`);
    for (const id of list) {
      if (typeof id !== 'string' || !knownIds.has(id)) throw new ConfigError(`${file}: unknown rule "${String(id)}" in disable (kpx lint --list-rules)`);
      disable.push(id);
    }
  }
  return { severities, disable };
}

/** Parse config text: JSON when it looks like JSON (or the file ends in .json), else the YAML subset. */
export function parseConfig(text: string, file: string, knownIds: ReadonlySet<string>): LintConfig {
  const t = text.replace(/^\uFEFF/, '').trim();
  let data: unknown;
  if (file.endsWith('.json') || t.startsWith('{')) {
    try {
      data = JSON.parse(t);
    } catch (e) {
      throw new ConfigError(`${file}: not valid JSON (${(e as Error).message})`);
    }
  } else data = t === '' ? {} : parseYamlSubset(text, file);
  return normalizeConfig(data, knownIds, file);
}
