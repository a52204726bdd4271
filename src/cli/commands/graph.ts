/** `kpx graph [--service ns/name]`: the chain/set/virtual-server graph as DOT or Mermaid (or SVG). */
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { judgeSnapshot } from '../../judge/index.js';
import { serviceGraph, toDot, toMermaid } from '../../graph/index.js';
import { OVERVIEW_ABOVE, overviewDot, overviewGraph, overviewMermaid } from '../../graph/overview.js';
import { reasonText } from '../../render/services.js';
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
  /** The whole node in full (every chain, set and endpoint) even above OVERVIEW_ABOVE Service ports. */
  full?: boolean;
}

export async function graphAction(positional: string[], opts: GraphOptions): Promise<number> {
  const snapshot = await loadFromOptions(positional, opts, false);
  const judgement = await judgeSnapshot(snapshot);
  const res = judgement.resolution;
  let services = res.services;
  const sels = opts.service ?? [];
  if (sels.length) {
    const targets = sels.map((t) => parseTargetArg(t, '--service'));
    // Every --service must name something: a miss is said with its near misses, as in every command.
    for (const t of targets) if (!services.some(targetSelects(t))) return reportNoMatch(noMatchFor(t, res, snapshot), opts);
    const preds = targets.map(targetSelects);
    services = services.filter((s) => preds.some((p) => p(s)));
  }
  // A whole node above OVERVIEW_ABOVE Service ports is drawn as an overview (one box per Service
  // port, by namespace, with the judgement's verdict): in full it is thousands of points a side.
  const overview = sels.length === 0 && !opts.full && services.length > OVERVIEW_ABOVE;
  let dot: string;
  let text: string;
  if (overview) {
    const o = overviewGraph(services, (s) => {
      const j = judgement.judgementOf(s);
      return { state: j.state, reason: reasonText(s, j) };
    }, snapshot.name);
    // The picture says it too (its caption); on a terminal one line says it at once. Not when stderr
    // is a pipe or a file: a script's stderr then holds only what went wrong.
    if (process.stderr.isTTY) writeErr(`kpx: ${services.length} Service ports (more than ${OVERVIEW_ABOVE}): the whole node drawn as an overview, one box per Service port; kpx graph --service ns/name draws one in full, --full every chain\n`);
    dot = overviewDot(o);
    text = opts.format === 'mermaid' ? overviewMermaid(o) : dot;
  } else {
    const g = serviceGraph(snapshot, services, sels.length ? `${snapshot.name}: ${sels.join(', ')}` : snapshot.name);
    dot = toDot(g);
    text = opts.format === 'mermaid' ? toMermaid(g) : dot;
  }
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
  // `--output -` is stdout, as in every command. (A shared destination helper would replace this
  // comparison: none exists in src/cli yet.)
  const toFile = opts.output !== undefined && opts.output !== '-';
  if (toFile) writeOutputFile(opts.output!, text);
  else if (!drawn || opts.format === 'mermaid' || opts.output === '-') writeOut(opts.svg && !drawn ? dot : text);
  return ExitCode.Ok;
}
