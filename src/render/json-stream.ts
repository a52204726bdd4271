/**
 * renderJson()'s output for a plain object, written piece by piece: each element of a
 * top-level array is stringified and written on its own. A 10k-Service `services -o json` is
 * 29 MB of text; built as one string (and copied to a buffer to write it) it was a large share
 * of the peak memory (issue 8). Byte for byte the same as renderJson(value, { plain: true }).
 */
import { escapeJsonText } from './json.js';

/** Pieces are gathered up to this many characters per write. */
const WRITE_CHARS = 1 << 20;

export function writeJson(value: Readonly<Record<string, unknown>>, write: (text: string) => void): void {
  let pending = '';
  const put = (text: string) => {
    pending += text;
    if (pending.length >= WRITE_CHARS) {
      write(escapeJsonText(pending));
      pending = '';
    }
  };
  // JSON.stringify leaves out keys whose value it cannot print (undefined, functions, symbols).
  const keys = Object.keys(value).filter((k) => JSON.stringify(value[k]) !== undefined);
  if (keys.length === 0) put('{}');
  else {
    put('{');
    keys.forEach((key, i) => {
      put(`\n  ${JSON.stringify(key)}: `);
      const v = value[key];
      if (Array.isArray(v) && v.length > 0) {
        put('[');
        v.forEach((element, j) => {
          put(`\n    ${indent(JSON.stringify(element, undefined, 2) ?? 'null', '    ')}${j < v.length - 1 ? ',' : ''}`);
        });
        put('\n  ]');
      } else put(indent(JSON.stringify(v, undefined, 2), '  '));
      if (i < keys.length - 1) put(',');
    });
    put('\n}');
  }
  put('\n');
  if (pending !== '') write(escapeJsonText(pending));
}

function indent(json: string, by: string): string {
  return json.indexOf('\n') < 0 ? json : json.replace(/\n/g, `\n${by}`);
}
