/**
 * renderJson()'s output for a plain object, written piece by piece: top-level arrays are
 * stringified and written a slice of elements at a time. A 10k-Service `services -o json` is
 * 29 MB of text; built as one string (and copied to a buffer to write it) it was a large share
 * of the peak memory (issue 8). Byte for byte the same as renderJson(value, { plain: true }).
 */
import { escapeJsonText } from './json.js';

/** Array elements stringified per JSON.stringify call. */
const CHUNK_ELEMENTS = 512;

/**
 * `map[key]`, when given, turns each element of the array under `key` into what is printed, a
 * slice at a time, so the printed form of a long list never exists all at once.
 */
export type ElementMaps = Readonly<Record<string, (element: never) => unknown>>;

export function writeJson(value: Readonly<Record<string, unknown>>, write: (text: string) => void, map: ElementMaps = {}): void {
  // JSON.stringify leaves out keys whose value it cannot print (undefined, functions, symbols).
  const keys = Object.keys(value).filter((k) => printedByJson(k, value[k]));
  if (keys.length === 0) {
    write('{}\n');
    return;
  }
  write('{\n');
  keys.forEach((key, i) => {
    const mapElement = Object.hasOwn(map, key) ? (map[key] as (element: unknown) => unknown) : undefined;
    const raw = value[key];
    const v = Array.isArray(raw) && mapElement && raw.length <= CHUNK_ELEMENTS ? raw.map((e) => mapElement(e)) : raw;
    const last = i === keys.length - 1;
    if (!Array.isArray(v) || v.length <= CHUNK_ELEMENTS) {
      // `{ key: v }` stringified is `{`, the member at its indentation, `}`.
      write(escapeJsonText(member(key, v)) + (last ? '\n' : ',\n'));
      return;
    }
    // Elements in slices, each slice stringified as `{ key: slice }` so they come out at their
    // final indentation; the slices' own brackets are cut off.
    const head = `  ${JSON.stringify(key)}: [\n`;
    write(head);
    for (let from = 0; from < v.length; from += CHUNK_ELEMENTS) {
      const slice = v.slice(from, from + CHUNK_ELEMENTS);
      const text = member(key, mapElement ? slice.map((e) => mapElement(e)) : slice);
      const elements = text.slice(head.length, text.length - '\n  ]'.length);
      write(escapeJsonText(elements) + (from + CHUNK_ELEMENTS < v.length ? ',\n' : '\n'));
    }
    write(last ? '  ]\n' : '  ],\n');
  });
  write('}\n');
}

/** Would JSON.stringify print this member at all? */
function printedByJson(key: string, v: unknown): boolean {
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return false;
  const toJSON = (v as { toJSON?: unknown } | null)?.toJSON;
  return typeof toJSON !== 'function' || (toJSON as (key: string) => unknown).call(v, key) !== undefined;
}

/** `  "key": value` as JSON.stringify({ key: value }, undefined, 2) prints it. */
function member(key: string, value: unknown): string {
  const text = JSON.stringify({ [key]: value }, undefined, 2);
  return text.slice(2, text.length - 2);
}
