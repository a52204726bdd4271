/**
 * The input flags every command that reads dumps shares (-i/--input, --node-ip, --node, colour, and
 * the input layer's limits): a module below both the node loader (./inputs.ts) and the cluster
 * loader (./commands/cluster-inputs.ts), which each read them.
 */
import { DEFAULT_INPUT_SETTINGS, type InputSettings } from '../load/input.js';

/** --max-input-size, --max-gzip-ratio, --follow-symlinks (src/cli/program.ts: limitOptions). */
export interface LimitOptions {
  maxInputSize?: number;
  maxGzipRatio?: number;
  followSymlinks?: boolean;
}

export interface InputOptions extends LimitOptions {
  input?: string[];
  nodeIp?: string[];
  /** With a cluster bundle: the node to read (single-node commands) or to start from (trace). */
  node?: string;
  color?: boolean;
}

/**
 * The input settings a command's options say (the defaults where a flag is not given): passed as
 * an argument to every loader (and to cluster parser workers as workerData), never set run-wide.
 */
export function inputSettingsOf(opts: LimitOptions): InputSettings {
  const d = DEFAULT_INPUT_SETTINGS.limits;
  return {
    limits: { maxBytes: opts.maxInputSize ?? d.maxBytes, maxGzipRatio: opts.maxGzipRatio ?? d.maxGzipRatio },
    followSymlinks: opts.followSymlinks === true,
  };
}
