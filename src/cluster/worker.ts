/**
 * Parser worker for loadCluster(): receives `{id, dir, name, nodeIps}`, answers
 * `{id, snapshot[, resolution, modes]}` (structured clone keeps Maps and bigints) or `{id, error, inputError}`.
 */
import { parentPort } from 'node:worker_threads';
import { InputError } from '../load/index.js';
import { loadSnapshot } from '../load/snapshot.js';
import { proxyModes } from '../kube/modes.js';
import { resolveJudged } from '../judge/index.js';
import type { NodeSnapshot } from '../model/snapshot.js';

interface Job {
  readonly id: number;
  readonly dir: string;
  readonly name: string;
  readonly nodeIps: readonly string[];
  /** Resolve here and send back the resolution and a snapshot without its rule sets (cheap to copy). */
  readonly resolve: boolean;
}

/** Structured clone of a full snapshot costs more than parsing it (rule objects): strip them. */
async function reply(job: Job, snapshot: NodeSnapshot): Promise<unknown> {
  if (!job.resolve) return { id: job.id, snapshot };
  const resolution = await resolveJudged(snapshot);
  const modes = proxyModes(snapshot);
  const light: NodeSnapshot = { ...snapshot, rulesets: [], nft: [], ipvs: [], ipsets: [], ipsetsByName: new Map() };
  return { id: job.id, snapshot: light, resolution, modes };
}

parentPort?.on('message', (job: Job) => {
  loadSnapshot([job.dir], { name: job.name, nodeIps: job.nodeIps })
    .then((snapshot) => reply(job, snapshot))
    .then(
    (m) => parentPort!.postMessage(m),
    (e: unknown) => parentPort!.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e), inputError: e instanceof InputError }),
  );
});
