/** `kpx report -o report.md|report.html`: a one-file incident report of a snapshot, answer first (docs/commands/report.md). */
import { loadFromOptions } from '../inputs.js';
import type { InputOptions } from '../input-options.js';
import { judgeSnapshot } from '../../judge/index.js';
import { lintSnapshot } from '../../lint/run.js';
import { drawGraphs, renderReport } from '../../render/report/index.js';
import { VERSION } from '../../version.js';
import { serviceSelector } from './services.js';
import { noMatchFor } from '../../trace/target.js';
import { parseTargetArg, reportNoMatch } from '../target.js';
import { ExitCode, UsageError } from '../exit.js';
import { destinationOf, writeToDestination } from '../output.js';

export interface ReportCliOptions extends InputOptions {
  output: string;
  service?: string[];
  format?: 'md' | 'html';
  lint?: boolean;
}

export async function reportAction(positional: string[], opts: ReportCliOptions): Promise<number> {
  const dest = destinationOf(opts.output);
  // Markdown on standard output; a file's format from its extension.
  const format = opts.format ?? (dest.kind === 'stdout' ? 'md' : /\.html?$/i.test(dest.path) ? 'html' : /\.(md|markdown)$/i.test(dest.path) ? 'md' : undefined);
  if (!format) throw new UsageError(`-o ${opts.output}: name the report .md or .html (or give --format md|html)`);
  const sels = opts.service ?? [];
  const preds = sels.map((s) => [s, serviceSelector(s)] as const);
  const snapshot = await loadFromOptions(positional, opts, dest.kind !== 'stdout');
  const node = await judgeSnapshot(snapshot);
  const res = node.resolution;
  for (const [sel, p] of preds) if (!res.services.some(p)) return reportNoMatch(noMatchFor(parseTargetArg(sel, '--service'), res, snapshot), {});
  const text = renderReport(
    {
      node,
      // Lint over the same judged resolution: its findings and the verdicts agree.
      lint: opts.lint === false ? null : await lintSnapshot(snapshot, { resolution: res }),
      graphs: await drawGraphs(snapshot, preds.map(([selector, p]) => ({ selector, services: res.services.filter(p) })), format === 'html'),
      version: VERSION,
      generatedAt: new Date().toISOString(),
    },
    format,
  );
  writeToDestination(dest, text, { announce: true });
  return ExitCode.Ok;
}
