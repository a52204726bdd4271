/**
 * The commands whose work is one call each: inspect, dump, diff, reverse, schema, summarize — from
 * their options to a typed result (rendered by src/render/registry/index.ts) and an exit code.
 */
import { parseInput, readInputs } from '../load/index.js';
import { loadSnapshot } from '../load/snapshot.js';
import type { InputSettings } from '../load/input.js';
import { resolveJudged } from '../judge/index.js';
import { ExitCode } from '../judge/inputs.js';
import { diffSnapshots } from '../diff/index.js';
import { parseReverseTarget, reverseLookup } from '../graph/reverse.js';
import { parseIp } from '../model/addr.js';
import { parseTarget } from '../trace/target.js';
import { printable } from '../source/index.js';
import { formatDiagnostic } from '../render/diagnostics.js';
import { SCHEMAS, type DocumentName } from '../render/schemas/index.js';
import { UsageError, type AppIO, type Outcome } from './io.js';

export async function inspect(inputs: readonly string[], io: AppIO): Promise<Outcome> {
  const snapshot = await io.load(inputs);
  const hasErrors = snapshot.files.some((f) => f.diagnostics.some((d) => d.severity === 'error'));
  return { result: { kind: 'inspect', snapshot }, exit: hasErrors ? ExitCode.Findings : ExitCode.Ok };
}

/** `input`: the limits and --follow-symlinks from the command line. */
export async function dump(paths: readonly string[], input: InputSettings, io: Pick<AppIO, 'notice'>): Promise<Outcome> {
  if (paths.length !== 1) throw new UsageError('kpx dump takes exactly one dump (a file or - for stdin)');
  const inputs = readInputs([...paths], undefined, input);
  if (inputs.length !== 1) throw new UsageError(`${paths[0]}: kpx dump takes one file, not a directory of ${inputs.length}`);
  const parsed = await parseInput(inputs[0], undefined, undefined, input.limits);
  for (const d of parsed.diagnostics) if (d.severity !== 'info') io.notice(formatDiagnostic(d));
  if (!parsed.parsed) {
    // Nothing was read (unreadable, refused by a limit, not a dump): that is an input error (exit 2).
    const why = parsed.diagnostics.find((d) => d.severity === 'error');
    if (why === undefined && parsed.format === 'empty') io.notice(`kpx: ${printable(parsed.path, 4096)}: the file is empty`);
    return { exit: ExitCode.Error };
  }
  const result = { kind: 'dump' as const, path: parsed.path, format: parsed.format, counts: parsed.parsed.counts, model: parsed.parsed.data, diagnostics: parsed.diagnostics };
  return { result, exit: parsed.diagnostics.some((d) => d.severity === 'error') ? ExitCode.Findings : ExitCode.Ok };
}

export interface DiffQuery {
  readonly oldPath: string;
  readonly newPath: string;
  readonly nodeIp: readonly string[];
  readonly maxRules?: string;
  /** The limits and --follow-symlinks from the command line. */
  readonly input: InputSettings;
}

/** Checked before anything is read: the node IPs and --max-rules. */
export function diffMaxRules(q: DiffQuery): number {
  for (const ip of q.nodeIp) if (!parseIp(ip)) throw new UsageError(`--node-ip ${ip}: not an IP address`);
  const maxRules = q.maxRules === undefined ? 20 : Number(q.maxRules);
  if (!Number.isInteger(maxRules) || maxRules < 0) throw new UsageError(`--max-rules ${q.maxRules}: expected a number`);
  return maxRules;
}

/** Both snapshots, read and judged (the CLI shows a spinner meanwhile). */
export async function diffLoad(q: DiffQuery) {
  const base = (p: string) => p.replace(/\/+$/, '').split('/').pop() || p;
  const oldSnap = await loadSnapshot([q.oldPath], { nodeIps: [...q.nodeIp], name: base(q.oldPath), input: q.input });
  const newSnap = await loadSnapshot([q.newPath], { nodeIps: [...q.nodeIp], name: base(q.newPath), input: q.input });
  return { oldSnap, newSnap, oldRes: await resolveJudged(oldSnap), newRes: await resolveJudged(newSnap) };
}

export function diff(loaded: Awaited<ReturnType<typeof diffLoad>>, maxRules: number): Outcome {
  return { result: { kind: 'diff', diff: diffSnapshots(loaded.oldSnap, loaded.oldRes, loaded.newSnap, loaded.newRes), maxRules }, exit: ExitCode.Ok };
}

export async function reverse(address: string, io: AppIO): Promise<Outcome> {
  const target = parseReverseTarget(address);
  if (typeof target === 'string') {
    // A Service target (the grammar of trace and services) asks the other way round: say where to ask it.
    const t = parseTarget(address);
    if (typeof t !== 'string' && (t.kind === 'service' || t.kind === 'nodeport')) throw new UsageError(`reverse starts from a pod address (POD-IP[:PORT]); for ${address} ask kpx services --service ${address} (its endpoints) or kpx trace ${address}`);
    throw new UsageError(target);
  }
  const snapshot = await io.load([]);
  const res = await resolveJudged(snapshot);
  return { result: { kind: 'reverse', lookup: reverseLookup(snapshot, res, target) }, exit: ExitCode.Ok };
}

export function schema(name: string | undefined): Outcome {
  if (name === undefined) return { result: { kind: 'schema-list' }, exit: ExitCode.Ok };
  const names = Object.keys(SCHEMAS) as DocumentName[];
  if (!Object.hasOwn(SCHEMAS, name)) throw new UsageError(`no schema named ${name}: expected one of ${names.join(', ')}`);
  return { result: { kind: 'schema', name: name as DocumentName }, exit: ExitCode.Ok };
}
