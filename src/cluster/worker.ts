/**
 * Parser worker for loadCluster(): receives `{id, dir, name, nodeIps}`, answers
 * `{id, snapshot[, resolution, modes]}` (structured clone keeps Maps and bigints) or `{id, error, inputError}`.
 * The run's input settings (--max-input-size, --max-gzip-ratio, --follow-symlinks) come as
 * workerData `{input}` (WorkerSettings), never through the environment.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DEFAULT_INPUT_SETTINGS, type InputSettings } from '../load/input.js';
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

/** What the main thread hands each worker when it starts it. */
export interface WorkerSettings {
  readonly input: InputSettings;
}

const input = (workerData as WorkerSettings | null)?.input ?? DEFAULT_INPUT_SETTINGS;

parentPort?.on('message', (job: Job) => {
  loadSnapshot([job.dir], { name: job.name, nodeIps: job.nodeIps, input })
    .then((snapshot) => reply(job, snapshot))
    .then(
    (m) => parentPort!.postMessage(m),
    (e: unknown) => parentPort!.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e), inputError: e instanceof InputError }),
  );
});
