/** Shared handling of -i/--input, positional dumps, --node-ip and the live node. */
import { loadSnapshot } from '../load/snapshot.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { parseIp } from '../model/addr.js';
import { UsageError } from './exit.js';
import { parsingText, startProgress } from './progress.js';
import { printable } from '../source/index.js';
import { inputSettingsOf, type InputOptions } from './input-options.js';

export type { InputOptions } from './input-options.js';

export function collectRepeatable(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export async function loadFromOptions(positional: readonly string[], opts: InputOptions, human: boolean): Promise<NodeSnapshot> {
  const paths = [...positional, ...(opts.input ?? [])];
  for (const ip of opts.nodeIp ?? []) if (!parseIp(ip)) throw new UsageError(`--node-ip ${ip}: not an IP address`);
  if (paths.length > 0) {
    // A cluster bundle (one folder per node): read the node named with --node.
    const { nodeFromClusterInputs } = await import('./commands/cluster-inputs.js');
    const fromCluster = await nodeFromClusterInputs(paths, opts, human);
    if (fromCluster) return fromCluster;
  }
  if (paths.length === 0) {
    const { withLiveBundle } = await import('../collect/live.js');
    const progress = await startProgress(human, 'collecting from this node');
    try {
      // The snapshot holds what it needs from the files: the bundle is removed once it is read.
      return await withLiveBundle((bundle) => loadSnapshot([bundle.dir], { nodeIps: opts.nodeIp ?? [], name: bundle.host, input: inputSettingsOf(opts) }));
    } finally {
      progress.stop();
    }
  }
  const progress = await startProgress(human, 'reading dumps');
  let started = performance.now();
  try {
    return await loadSnapshot(paths, {
      nodeIps: opts.nodeIp ?? [],
      input: inputSettingsOf(opts),
      onFile: (p, i, n) => {
        started = performance.now();
        progress.update(`reading ${printable(p)} (${i + 1}/${n})`);
      },
      onParse: (p, done, total) => progress.paint(parsingText(printable(p), done, total, (performance.now() - started) / 1000)),
    });
  } finally {
    progress.stop();
  }
}
