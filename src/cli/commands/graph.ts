/** `kpx graph [--service ns/name]`: the chain/set/virtual-server graph as DOT or Mermaid (or SVG). */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { resolveJudged } from '../../judge/index.js';
import { serviceGraph, toDot, toMermaid } from '../../graph/index.js';
import { renderSvg, SvgUnavailable } from '../../graph/svg.js';
import { serviceSelector } from './services.js';
import { ExitCode, UsageError } from '../exit.js';
import { writeErr, writeOutputFile, writeOut } from '../output.js';

export interface GraphOptions extends InputOptions {
  service?: string[];
  format: 'dot' | 'mermaid';
  svg?: string;
  output?: string;
}

export async function graphAction(positional: string[], opts: GraphOptions): Promise<number> {
  const snapshot = await loadFromOptions(positional, opts, false);
  const res = await resolveJudged(snapshot);
  let services = res.services;
  const sels = opts.service ?? [];
  if (sels.length) {
    const preds = sels.map(serviceSelector);
    services = services.filter((s) => preds.some((p) => p(s)));
    if (services.length === 0) throw new UsageError(`no Service matches ${sels.join(', ')}`);
  }
  const g = serviceGraph(snapshot, services, sels.length ? `${snapshot.name}: ${sels.join(', ')}` : snapshot.name);
  const dot = toDot(g);
  let drawn = false;
  if (opts.svg) {
    try {
      writeOutputFile(opts.svg, await renderSvg(dot));
      drawn = true;
    } catch (e) {
      if (!(e instanceof SvgUnavailable)) throw e;
      // One line, and the graph as DOT instead (render it with `dot -Tsvg` where Graphviz runs).
      writeErr(`kpx: ${opts.svg} not written: ${e.message}; the graph is printed as DOT instead (dot -Tsvg renders it)\n`);
    }
  }
  const text = opts.format === 'mermaid' ? toMermaid(g) : dot;
  if (opts.output) writeOutputFile(opts.output, text);
  else if (!drawn || opts.format === 'mermaid' || opts.output === '-') writeOut(opts.svg && !drawn ? dot : text);
  return ExitCode.Ok;
}
