/**
 * Checking a document kpx reads back (a node summary from another machine) against the same
 * JSON Schema `kpx schema` prints, before any of it is used: the subset of draft-07 the schemas
 * here use (type, enum, const, anyOf, required, properties, additionalProperties, items). The
 * walk is iterative and stops at MAX_DEPTH, so a document nested 200,000 levels deep is refused
 * in one line, never a stack overflow; it reports the first problem with its JSON path.
 */
import type { Schema } from './common.js';

/** Deeper than any document kpx writes (a summary is ~8 levels). */
export const MAX_DEPTH = 64;

interface Item {
  readonly value: unknown;
  readonly schema: Schema;
  readonly path: string;
  readonly depth: number;
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v);

function typeMatches(want: string, v: unknown): boolean {
  const t = typeOf(v);
  return want === t || (want === 'number' && t === 'integer');
}

const show = (v: unknown) => {
  const t = typeOf(v);
  return t === 'string' || t === 'number' || t === 'integer' || t === 'boolean' ? `${t} ${JSON.stringify(v).slice(0, 40)}` : t;
};

/** The first way `value` breaks `schema` (`$.services[3].endpoints: expected array, found null`), or undefined. */
export function schemaProblem(value: unknown, schema: Schema): string | undefined {
  const stack: Item[] = [{ value, schema, path: '$', depth: 0 }];
  while (stack.length > 0) {
    const { value: v, schema: s, path, depth } = stack.pop()!;
    if (depth > MAX_DEPTH) return `${path}: nested more than ${MAX_DEPTH} levels deep`;
    if ('const' in s && v !== s.const) return `${path}: expected ${JSON.stringify(s.const)}, found ${show(v)}`;
    if (Array.isArray(s.enum) && !s.enum.includes(v)) return `${path}: expected one of ${(s.enum as unknown[]).map((x) => JSON.stringify(x)).join(', ')}, found ${show(v)}`;
    if (Array.isArray(s.anyOf)) {
      // Alternatives are checked whole (each is small: a type or null).
      const fits = (s.anyOf as Schema[]).some((alt) => schemaProblem(v, alt) === undefined);
      if (!fits) return `${path}: expected ${(s.anyOf as Schema[]).map((a) => String(a.type ?? 'a value')).join(' or ')}, found ${show(v)}`;
      continue;
    }
    if (typeof s.type === 'string' && !typeMatches(s.type, v)) return `${path}: expected ${s.type}, found ${show(v)}`;
    if (Array.isArray(v) && typeof s.minItems === 'number' && v.length < s.minItems) return `${path}: expected at least ${s.minItems} items, found ${v.length}`;
    if (Array.isArray(v) && typeof s.maxItems === 'number' && v.length > s.maxItems) return `${path}: expected at most ${s.maxItems} items, found ${v.length}`;
    if (Array.isArray(v) && s.items) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], schema: s.items as Schema, path: `${path}[${i}]`, depth: depth + 1 });
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      for (const k of (s.required as string[] | undefined) ?? []) if (!(k in o)) return `${path}: no "${k}"`;
      const props = (s.properties as Record<string, Schema> | undefined) ?? {};
      const extra = s.additionalProperties;
      for (const k of Object.keys(o)) {
        const sub = props[k] ?? (typeof extra === 'object' ? (extra as Schema) : undefined);
        if (sub) stack.push({ value: o[k], schema: sub, path: `${path}.${k}`, depth: depth + 1 });
        else if (extra === false) return `${path}: unexpected member "${k}"`;
        else if (depth + 1 > MAX_DEPTH || deeperThan(o[k], MAX_DEPTH - depth - 1)) return `${path}.${k}: nested more than ${MAX_DEPTH} levels deep`;
      }
    }
  }
  return undefined;
}

/** Is `v` nested more than `levels` deep? (iterative: members the schema leaves open are still bounded) */
function deeperThan(v: unknown, levels: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d >= levels) return true;
    for (const y of Array.isArray(x) ? x : Object.values(x)) if (y !== null && typeof y === 'object') stack.push([y, d + 1]);
  }
  return false;
}
