/**
 * `ip -j …` output: a JSON array of objects. JSON.parse does the parsing; this scanner only
 * finds where each top-level element starts, so diagnostics and model entries can point at a
 * line (approximate for the compact one-line form: every element is on line 1, columns differ).
 * Paste noise before the `[` and after the `]` is reported, not fatal.
 */
import { noiseKind } from '../common/text.js';

export interface JsonPosition {
  readonly line: number;
  readonly column: number;
}

export interface JsonArrayScan {
  /** The parsed array, when the text held one. */
  readonly value?: readonly unknown[];
  /** Where each top-level element starts (same length as value when parsing worked). */
  readonly elements: readonly JsonPosition[];
  readonly error?: JsonPosition & { readonly message: string };
  /** Non-blank lines outside the JSON text. */
  readonly outside: readonly { readonly line: number; readonly text: string; readonly noise: boolean }[];
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function positionOf(starts: readonly number[], offset: number): JsonPosition {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo] + 1 };
}

/** Offsets of the top-level array's elements (objects or scalars), scanning strings correctly. */
function elementOffsets(text: string, start: number): number[] {
  const out: number[] = [];
  let depth = 0;
  let inString = false;
  let expectElement = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r') continue;
    if (depth === 1 && expectElement && c !== ']') {
      out.push(i);
      expectElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) break;
    } else if (c === ',' && depth === 1) expectElement = true;
  }
  return out;
}

export function scanJsonArray(rawText: string): JsonArrayScan {
  let text = rawText.charCodeAt(0) === 0xfeff ? rawText.slice(1) : rawText;
  text = text.replace(/\r/g, '');
  const lines = text.split('\n');
  // The JSON region: from the first line starting with `[` to the last line ending with `]`.
  const first = lines.findIndex((l) => /^\s*\[/.test(l));
  let last = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/\]\s*$/.test(lines[i])) {
      last = i;
      break;
    }
  }
  const outside: { line: number; text: string; noise: boolean }[] = [];
  if (first < 0 || last < first) {
    lines.forEach((l, i) => l.trim() && outside.push({ line: i + 1, text: l, noise: noiseKind(l) !== undefined }));
    return { elements: [], outside, error: { line: 1, column: 1, message: 'no JSON array found (expected `[` … `]`)' } };
  }
  lines.forEach((l, i) => {
    if ((i < first || i > last) && l.trim()) outside.push({ line: i + 1, text: l, noise: noiseKind(l) !== undefined });
  });
  // Blank out the lines outside the region so offsets stay those of the original text.
  const region = lines.map((l, i) => (i < first || i > last ? ' '.repeat(l.length) : l)).join('\n');
  const startOffset = region.indexOf('[');
  const starts = lineStarts(region);
  let value: unknown;
  try {
    value = JSON.parse(region);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const m = /position (\d+)/.exec(msg);
    const pos = m ? positionOf(starts, Number(m[1])) : { line: first + 1, column: 1 };
    return { elements: [], outside, error: { ...pos, message: msg.replace(/\s+in JSON at position \d+.*$/, '') } };
  }
  if (!Array.isArray(value)) {
    return { elements: [], outside, error: { ...positionOf(starts, startOffset), message: 'expected a JSON array' } };
  }
  const elements = elementOffsets(region, startOffset).map((o) => positionOf(starts, o));
  return { value, elements, outside };
}
