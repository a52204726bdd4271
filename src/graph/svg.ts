/**
 * DOT → SVG with Graphviz compiled to WebAssembly (@viz-js/viz), so `kpx graph --svg` and HTML
 * reports work on any machine with Node — no system Graphviz. The module (~5 MB of wasm) is
 * loaded only when a picture is asked for, and once per process.
 *
 * The wasm instance needs its own memory: under `ulimit -v` (a few GB) instantiating it fails,
 * and the Emscripten glue prints its own "Aborted(…)" lines. Those are kept off the terminal and
 * the failure becomes SvgUnavailable, which callers turn into one line and a fallback (DOT text).
 */
import type { Viz } from '@viz-js/viz';

let viz: Promise<Viz> | undefined;

function graphviz(): Promise<Viz> {
  viz ??= import('@viz-js/viz').then((m) => m.instance());
  return viz;
}

/** Graphviz could not run here (no memory for WebAssembly): the graph is not drawn. */
export class SvgUnavailable extends Error {}

/** Render DOT to SVG; throws with Graphviz's own messages when the DOT is rejected, SvgUnavailable when Graphviz cannot run. */
export async function renderSvg(dot: string): Promise<string> {
  const said: string[] = [];
  const saved = { error: console.error, warn: console.warn, log: console.log };
  // The Emscripten glue reports through the console: collected, not printed.
  console.error = console.warn = console.log = (...args: unknown[]) => void said.push(args.map(String).join(' '));
  let r: ReturnType<Viz['render']>;
  try {
    r = (await graphviz()).render(dot, { format: 'svg' });
  } catch (e) {
    viz = undefined;
    const why = String((e as Error)?.message ?? e).replace(/\s+/g, ' ');
    const memory = /memory|Aborted/i.test(why + said.join(' '));
    throw new SvgUnavailable(memory ? 'Graphviz (WebAssembly) could not get the memory it needs (a `ulimit -v` limit?)' : `Graphviz (WebAssembly) failed: ${why.slice(0, 200)}`);
  } finally {
    Object.assign(console, saved);
  }
  if (r.status !== 'success') throw new Error(`Graphviz rejected the graph: ${r.errors.map((e) => e.message).join('; ')}`);
  return r.output;
}
