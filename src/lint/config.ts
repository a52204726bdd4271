/**
 * `kpx lint --config FILE`: per-rule severities and disabled rules, in JSON or YAML.
 *
 *   # .kpx.yaml
 *   rules:
 *     masquerade-not-random-fully: off      # off | error | warning | info
 *     ruleset-size: info
 *   disable: [stale-proxy-mode]             # or a block list: "- id" lines
 *
 * The same in JSON: {"rules": {"ruleset-size": "info"}, "disable": ["stale-proxy-mode"]}.
 * YAML is read by the `yaml` package (the whole language; YAML 1.2, so `off` stays a string).
 */
import { LineCounter, parseDocument } from 'yaml';
import type { SeveritySetting } from './run.js';
import { dropCollectionKeys, printable } from '../source/index.js';

export interface LintConfig {
  readonly severities: Readonly<Record<string, SeveritySetting>>;
  readonly disable: readonly string[];
}

/** A config the user must fix; its message quotes the file's text, made printable (one line). */
export class ConfigError extends Error {
  constructor(message: string) {
    super(printable(message.replace(/[\r\n]/g, (c) => (c === '\n' ? '\\n' : '\\r')), 2000));
  }
}

/**
 * Parse YAML with the `yaml` package (YAML 1.2: `off` is the string "off", not a boolean). A
 * malformed document is a ConfigError naming file:line:column and what the parser found.
 */
export function parseConfigYaml(text: string, file = 'config'): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text.replace(/^\uFEFF/, ''), { lineCounter, prettyErrors: false, logLevel: 'error', uniqueKeys: false });
  const err = doc.errors[0];
  if (err) {
    const { line, col } = lineCounter.linePos(err.pos[0]);
    throw new ConfigError(`${file}:${line}:${col}: not valid YAML: ${err.message.split('\n')[0]}`);
  }
  // A key that is a list or a map: no setting has one (and the yaml package's toJS() prints each such key's whole subtree).
  const dropped = dropCollectionKeys(doc);
  if (dropped.first) {
    const { line, col } = lineCounter.linePos(dropped.first.range?.[0] ?? 0);
    throw new ConfigError(`${file}:${line}:${col}: a mapping key that is a list or a map: no setting has one`);
  }
  try {
    return doc.toJS() ?? {};
  } catch (e) {
    // toJS() throws on an alias to an anchor that is not set: still the user's YAML, not a crash.
    throw new ConfigError(`${file}: not valid YAML: ${(e as Error).message}`);
  }
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
  } else data = t === '' ? {} : parseConfigYaml(text, file);
  return normalizeConfig(data, knownIds, file);
}
