/**
 * Whether the evidence holds a kube-proxy log whose syncs are failing: then the rules in the dumps
 * may be those of the last successful sync, not what the API server says now. For the first lines
 * of `kpx trace` and `kpx services` (text output).
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import { syncFailures } from '../model/kube-proxy.js';
import { printable } from '../source/index.js';

export interface FailingSync {
  readonly file: string;
  readonly line: number;
  readonly tool: string;
  readonly count: number;
  readonly first: string;
  readonly last: string;
}

/** The first given log that shows sync failures. */
export function failingSync(snapshot: NodeSnapshot): FailingSync | undefined {
  for (const log of snapshot.kubeProxy?.logs ?? []) {
    const fails = syncFailures(log);
    if (!fails.length) continue;
    const when = (i: number) => fails[i].at.wallTime ?? fails[i].at.time;
    return { file: log.file, line: fails[0].at.line, tool: fails[0].tool, count: fails.length, first: when(0), last: when(fails.length - 1) };
  }
  return undefined;
}

/** One line for the top of trace/services output, or undefined when no given log shows failing syncs. */
export function staleRulesNotice(snapshot: NodeSnapshot): string | undefined {
  const f = failingSync(snapshot);
  if (!f) return undefined;
  const times = f.count === 1 ? `at ${f.first}` : `${f.count} times, from ${f.first} to ${f.last}`;
  return printable(`note: kube-proxy's log (${f.file}:${f.line}) shows its ${f.tool} failing ${times}: the rules shown may be stale since ${f.first} (kpx lint --rule kube-proxy-sync-failing says why)`, 400);
}
