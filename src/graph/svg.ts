/**
 * DOT → SVG with Graphviz compiled to WebAssembly (@viz-js/viz), so `kpx graph --svg` and HTML
 * reports work on any machine with Node — no system Graphviz. The module (~5 MB of wasm) is
 * loaded only when a picture is asked for, and once per process.
 */
import type { Viz } from '@viz-js/viz';

let viz: Promise<Viz> | undefined;

function graphviz(): Promise<Viz> {
  viz ??= import('@viz-js/viz').then((m) => m.instance());
  return viz;
}

/** Render DOT to SVG; throws with Graphviz's own messages when the DOT is rejected. */
export async function renderSvg(dot: string): Promise<string> {
  const r = (await graphviz()).render(dot, { format: 'svg' });
  if (r.status !== 'success') throw new Error(`Graphviz rejected the graph: ${r.errors.map((e) => e.message).join('; ')}`);
  return r.output;
}
