/**
 * renderJson()'s output for any value (Maps, bigints, toJSON, nested arrays), written piece by
 * piece. `kpx dump -o json` prints a whole model: at 10k Services that is more text than one
 * JavaScript string can hold (V8 stops at 2^29 characters), so JSON.stringify of the whole
 * throws. Every subtree of more than SMALL nodes is walked here; the small subtrees below them
 * are stringified by JSON.stringify itself (fast) and re-indented, so no piece is longer than a
 * small subtree's text and the work stays linear (each count stops at SMALL). Byte for
 * byte the same as renderJson(value) (test/render/json-deep-stream.test.ts).
 */
import { escapeJsonText, jsonReplacer } from './json.js';

/** A subtree with more containers and values than this is walked; a smaller one is stringified whole. */
const SMALL = 2048;
const INDENT = '  ';

/** `small` (tests): the most nodes a subtree stringified whole may hold. */
export function writeJsonDeep(value: unknown, write: (text: string) => void, small = SMALL): void {
  const prepared = prepare({ '': value }, '', value);
  if (prepared === undefined) write('undefined');
  else writePrepared(prepared, '', small, write);
  write('\n');
}

/** Writes a prepared value (not undefined) as JSON.stringify(…, jsonReplacer, 2) would at this indentation. */
function writePrepared(value: unknown, indent: string, small: number, write: (text: string) => void): void {
  if (value === null || typeof value !== 'object') {
    write(escapeJsonText(JSON.stringify(value)));
    return;
  }
  if (isSmall(value, small)) {
    write(escapeJsonText(stringifyAt(value, indent)));
    return;
  }
  const inner = indent + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      write('[]');
      return;
    }
    write('[\n');
    value.forEach((element, i) => {
      write(inner);
      const v = prepare(value, String(i), element);
      // In an array, what JSON.stringify cannot print is printed as null.
      if (v === undefined) write('null');
      else writePrepared(v, inner, small, write);
      write(i === value.length - 1 ? '\n' : ',\n');
    });
    write(`${indent}]`);
    return;
  }
  const record = value as Record<string, unknown>;
  let first = true;
  for (const k of Object.keys(record)) {
    const v = prepare(record, k, record[k]);
    // What JSON.stringify cannot print (undefined, functions) is left out with its key.
    if (v === undefined) continue;
    write(first ? '{\n' : ',\n');
    first = false;
    write(`${inner}${escapeJsonText(JSON.stringify(k))}: `);
    writePrepared(v, inner, small, write);
  }
  write(first ? '{}' : `\n${indent}}`);
}

/** toJSON, then the replacer, as JSON.stringify applies them (and unwraps boxed primitives). */
function prepare(holder: object, key: string, raw: unknown): unknown {
  let value = raw;
  if (value !== null && (typeof value === 'object' || typeof value === 'bigint')) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (k: string) => unknown).call(value, key);
  }
  value = jsonReplacer.call(holder, key, value);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}

/** A prepared small container stringified with its inner lines at `indent`. */
function stringifyAt(value: object, indent: string): string {
  const text = JSON.stringify(value, jsonReplacer, 2);
  return indent === '' ? text : text.replaceAll('\n', `\n${indent}`);
}

/**
 * Does the subtree hold at most SMALL nodes? Counted on the raw values (a Map's entries, an
 * object's own values — for an object with toJSON too, since what toJSON returns is built from
 * them: a model chain of 150,000 rules is not one node, whose text is longer than a string can
 * be): only the cost of printing depends on it, never the text. A Date or another built-in with
 * toJSON and no own values counts as one.
 */
function isSmall(root: object, small: number): boolean {
  let budget = small;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (--budget < 0) return false;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      if (v.length > budget) return false;
      for (const e of v) stack.push(e);
    } else if (v instanceof Map) {
      if (v.size > budget) return false;
      for (const e of v.values()) stack.push(e);
    } else {
      const values = Object.values(v);
      if (values.length > budget) return false;
      for (const e of values) stack.push(e);
    }
  }
  return true;
}
