/** `kpx graph [--service ns/name]`: the chain/set/virtual-server graph as DOT or Mermaid (or SVG). */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { resolveJudged } from '../../judge/index.js';
import { serviceGraph, toDot, toMermaid } from '../../graph/index.js';
import { renderSvg, SvgUnavailable } from '../../graph/svg.js';

import { ExitCode } from '../exit.js';
import { writeErr, writeOutputFile, writeOut } from '../output.js';
import { noMatchFor, targetSelects } from '../../trace/target.js';
import { parseTargetArg, reportNoMatch } from '../target.js';

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
    const targets = sels.map((t) => parseTargetArg(t, '--service'));
    // Every --service must name something: a miss is said with its near misses, as in every command.
    for (const t of targets) if (!services.some(targetSelects(t))) return reportNoMatch(noMatchFor(t, res, snapshot), opts);
    const preds = targets.map(targetSelects);
    services = services.filter((s) => preds.some((p) => p(s)));
  }
  // A whole node is a big picture (each Service in its own box): tell the person at the terminal how to draw one.
  if (process.stderr.isTTY && sels.length === 0 && new Set(services.map((s) => `${s.namespace}/${s.name}`)).size > 10) {
    process.stderr.write(`kpx: the whole node's graph: ${services.length} Service ports, one box per Service; kpx graph --service ns/name draws one\n`);
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
