/**
 * What a renderer hands the CLI to write. Renderers make the words; the CLI owns the streams (the
 * pager, the terminal's width, escaping for a terminal): src/cli/emit.ts writes each form.
 */
import type { Colors } from './colors.js';

export type Rendered =
  /** Text for people on stdout: escaped, fitted to the width (unless `fit: false`, as `-o wide`), paged when long. */
  | { readonly via: 'text'; readonly text: string; readonly fit?: boolean }
  /** Text written as it is on stdout, control characters escaped: dumps, annotations, graphs. */
  | { readonly via: 'plain'; readonly text: string }
  /** JSON or YAML on stdout, escaped by its writer: written chunk by chunk (a 10k-Service document is 29 MB). */
  | { readonly via: 'json'; readonly write: (sink: (chunk: string) => void) => void }
  /** A message for people on stderr (a target that names nothing here), fitted to stderr's width. */
  | { readonly via: 'stderr'; readonly text: string };

/** What every renderer may know of where its words go. */
export interface RenderContext {
  /** Colours for stdout (none unless stdout is a terminal and colour is wanted). */
  readonly c: Colors;
  /** Colours for stderr. */
  readonly cErr: Colors;
  /** The width text output fits (COLUMNS, the TTY's, else 120). */
  readonly width: number;
}

export type Renderer<R> = (result: R, ctx: RenderContext) => Rendered;

/** A JSON document written whole. */
export const jsonText = (text: string): Rendered => ({ via: 'json', write: (sink) => sink(text) });

/** A (result kind, format) pair with no renderer: a usage error (exit 2), never a silent default. */
export class RenderError extends Error {}
