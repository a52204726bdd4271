/**
 * Where a JSON value's members and elements start, found by a light scan of the text, on demand:
 * JSON.parse gives the values (fast, and a few times the text in memory), this gives positions
 * for the ones a reader cites. A container's members are scanned the first time they are asked
 * for (one pass over the container's text), so a reader that asks for a few levels of a large
 * document reads it a few times, never once per value, and keeps positions only for what it asked.
 *
 * The scan trusts the text to be JSON (JSON.parse accepted it): it skips strings and nested
 * brackets, and does not check anything else.
 */
export class JsonPosition {
  private members: Map<string, JsonPosition> | undefined;
  private elements: JsonPosition[] | undefined;

  /** `start`: the offset of the value's first character. */
  constructor(
    private readonly text: string,
    readonly start: number,
  ) {}

  /** The position of member `key` (an object's), or undefined. */
  child(key: string): JsonPosition | undefined {
    if (this.text.charCodeAt(this.start) !== 0x7b /* { */) return undefined;
    this.members ??= this.scanObject();
    return this.members.get(key);
  }

  /** The positions of an array's elements (empty for anything else). */
  items(): readonly JsonPosition[] {
    if (this.text.charCodeAt(this.start) !== 0x5b /* [ */) return [];
    this.elements ??= this.scanArray();
    return this.elements;
  }

  private scanObject(): Map<string, JsonPosition> {
    const out = new Map<string, JsonPosition>();
    const t = this.text;
    let i = skipBlank(t, this.start + 1);
    while (i < t.length && t.charCodeAt(i) !== 0x7d /* } */) {
      const keyEnd = skipString(t, i);
      const raw = t.slice(i + 1, keyEnd - 1);
      const key = raw.includes('\\') ? (JSON.parse(t.slice(i, keyEnd)) as string) : raw;
      i = skipBlank(t, keyEnd);
      i = skipBlank(t, i + 1); // the colon
      out.set(key, new JsonPosition(t, i));
      i = skipBlank(t, skipValue(t, i));
      if (t.charCodeAt(i) === 0x2c /* , */) i = skipBlank(t, i + 1);
    }
    return out;
  }

  private scanArray(): JsonPosition[] {
    const out: JsonPosition[] = [];
    const t = this.text;
    let i = skipBlank(t, this.start + 1);
    while (i < t.length && t.charCodeAt(i) !== 0x5d /* ] */) {
      out.push(new JsonPosition(t, i));
      i = skipBlank(t, skipValue(t, i));
      if (t.charCodeAt(i) === 0x2c /* , */) i = skipBlank(t, i + 1);
    }
    return out;
  }
}

function skipBlank(t: string, i: number): number {
  while (i < t.length) {
    const c = t.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** The offset after the string starting at `i` (a `"`). */
function skipString(t: string, i: number): number {
  for (let j = i + 1; j < t.length; j++) {
    const c = t.charCodeAt(j);
    if (c === 0x5c /* \ */) j++;
    else if (c === 0x22 /* " */) return j + 1;
  }
  return t.length;
}

/** The offset after the value starting at `i`. */
function skipValue(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === 0x22) return skipString(t, i);
  if (c !== 0x7b && c !== 0x5b) {
    let j = i;
    while (j < t.length) {
      const d = t.charCodeAt(j);
      if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
      j++;
    }
    return j;
  }
  let depth = 0;
  for (let j = i; j < t.length; j++) {
    const d = t.charCodeAt(j);
    if (d === 0x22) j = skipString(t, j) - 1;
    else if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      if (--depth === 0) return j + 1;
    }
  }
  return t.length;
}

/**
 * The most nodes (estimated: lines and flow items) kpx gives the yaml package's document model,
 * which takes about 1 KB per node: 250,000 is ~250–500 MB. Real `-o yaml` of a few thousand
 * objects, and any real kube-proxy configuration, fit.
 */
export const YAML_NODE_BUDGET = 250_000;

/**
 * About how many nodes the yaml package would build for this text (a line is a node or three; a
 * flow collection's commas and brackets add one each): counted before parsing, so that a YAML
 * too big for the document model is refused in one line instead of exhausting memory.
 */
export function estimateYamlNodes(text: string, stopAt = Infinity): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || c === 0x2c || c === 0x5b || c === 0x7b) {
      n++;
      if (n > stopAt) return n;
    }
  }
  return n + 1;
}
