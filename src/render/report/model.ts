/**
 * The report as a small document model, independent of the output format: the HTML and Markdown
 * renderers (html.ts, markdown.ts) escape every piece of text they are given, so the builders
 * here pass dump text as it is.
 */

/** A run of text: plain, a link to an anchor in the report, or text with a class (a verdict badge). */
export type Inline = string | { readonly text: string; readonly href: string } | { readonly text: string; readonly cls: string };
export type Rich = readonly Inline[];

export interface ListItem {
  readonly content: Rich;
  /** Lines under the item (the lint findings about a Service, say). */
  readonly sub?: readonly Rich[];
  readonly cls?: string;
}

export type Block =
  | { readonly kind: 'heading'; readonly level: 1 | 2 | 3; readonly text: string; readonly id?: string }
  | { readonly kind: 'paragraph'; readonly content: Rich; readonly cls?: string }
  | { readonly kind: 'list'; readonly ordered?: boolean; readonly cls?: string; readonly items: readonly ListItem[] }
  | { readonly kind: 'table'; readonly head: readonly string[]; readonly rows: readonly (readonly Rich[])[]; readonly cls?: string }
  /** Label → value pairs (one Service's facts). */
  | { readonly kind: 'fields'; readonly rows: readonly (readonly [string, Rich])[] }
  /** A part of the report with its own anchor (`problems`, `svc-…`, `evidence`). */
  | { readonly kind: 'section'; readonly id: string; readonly cls?: string; readonly blocks: readonly Block[] }
  /** Folded content (HTML `<details>`: readable without JavaScript). */
  | { readonly kind: 'details'; readonly summary: string; readonly blocks: readonly Block[] }
  /** Dump lines, each with its anchor. */
  | { readonly kind: 'evidence'; readonly file: string; readonly lines: readonly { readonly id: string; readonly line: number; readonly text: string | undefined }[] }
  | { readonly kind: 'code'; readonly lang: string; readonly text: string }
  /** Trusted SVG from Graphviz (HTML only; Markdown shows `alt` code instead). */
  | { readonly kind: 'svg'; readonly svg: string; readonly alt: { readonly lang: string; readonly text: string } };

/** Plain text of rich text (Markdown tables, titles, tests). */
export function plain(r: Rich): string {
  return r.map((x) => (typeof x === 'string' ? x : x.text)).join('');
}

/** `a, b, c` of rich pieces. */
export function joinRich(parts: readonly Rich[], sep = ', '): Inline[] {
  const out: Inline[] = [];
  parts.forEach((p, i) => {
    if (i > 0) out.push(sep);
    for (const x of p) out.push(x);
  });
  return out;
}

export const plural = (n: number, word: string, words = `${word}s`) => `${n} ${n === 1 ? word : words}`;
