/**
 * `kpx lint` and `kpx migrate-check`: the lint machinery — rules, --config, --baseline, the inputs,
 * what cannot be told — from options to a typed result (src/render/lint/output.ts) and an exit code.
 */
import { InputLimitError, readBoundedFile, type InputSettings } from '../load/input.js';
import { fsReason } from '../load/errors.js';
import { printable } from '../source/index.js';
import { ExitCode } from '../judge/inputs.js';
import { cannotTell, inputProblemLines, logAccountLines, standaloneNotice } from '../render/evidence.js';
import type { LintRule } from '../lint/rule.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { LintResult } from '../lint/run.js';
import { applyBaseline, failsAt, lintSnapshot, summarize, type BaselineEntry } from '../lint/run.js';
import { ConfigError, parseConfig, type LintConfig } from '../lint/config.js';
import { VERSION } from '../version.js';
import { UsageError, type AppIO, type Outcome } from './io.js';

export interface LintQuery {
  readonly inputs: readonly string[];
  readonly failOn: 'error' | 'warning' | 'never';
  readonly rule?: readonly string[];
  readonly disable?: readonly string[];
  readonly config?: string;
  readonly baseline?: string;
  readonly listRules?: boolean;
  /** The answer is for people: how many baseline findings were left out is said on stderr. */
  readonly forPeople: boolean;
  /** The limits from the command line (--max-input-size bounds the --baseline file too). */
  readonly input: InputSettings;
}

/** The most a --config file may hold: a few hundred rule settings are a few KiB. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** A --config or --baseline file, bounded (/dev/zero, a FIFO or a huge file is refused in one line). */
function readText(path: string, what: string, maxBytes: number): string {
  try {
    return readBoundedFile(path, maxBytes, `${what} ${printable(path, 4096)}`);
  } catch (e) {
    if (e instanceof InputLimitError) throw new UsageError(e.message);
    throw new UsageError(`${what} ${printable(path, 4096)}: cannot read (${fsReason(e)})`);
  }
}

/** Findings of a previous `kpx lint -o json` (older results without fingerprints too: theirs are computed). */
export function readBaseline(path: string, maxBytes: number): BaselineEntry[] {
  const text = readText(path, '--baseline', maxBytes);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UsageError(`--baseline ${printable(path, 4096)}: not JSON (expected the output of kpx lint -o json)`);
  }
  const why = baselineShapeError(data);
  if (why) throw new UsageError(`--baseline ${printable(path, 4096)}: ${why} (expected the output of kpx lint -o json)`);
  return (data as { findings: BaselineEntry[] }).findings;
}

/**
 * What is wrong with a baseline's shape, or undefined: an object whose `findings` are objects with
 * a string ruleId and message (fingerprint, text and service strings when present), and whose
 * `summary`, when present, counts findings. A baseline that is not one is refused whole: dropping
 * the entries that do not fit would show their findings as new without saying why.
 */
export function baselineShapeError(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return 'not a JSON object';
  const { findings, summary } = data as { findings?: unknown; summary?: unknown };
  if (!Array.isArray(findings)) return 'no "findings" array';
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i] as Record<string, unknown> | null;
    const at = `finding ${i + 1}`;
    if (f === null || typeof f !== 'object' || Array.isArray(f)) return `${at} is not an object`;
    for (const k of ['ruleId', 'message']) if (typeof f[k] !== 'string') return `${at}: "${k}" is not a string`;
    for (const k of ['fingerprint', 'text', 'service']) if (f[k] !== undefined && typeof f[k] !== 'string') return `${at}: "${k}" is not a string`;
  }
  if (summary !== undefined) {
    if (summary === null || typeof summary !== 'object' || Array.isArray(summary)) return '"summary" is not an object';
    for (const [k, v] of Object.entries(summary)) if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return `"summary.${printable(k, 40)}" is not a count`;
  }
  return undefined;
}

/** What differs between `kpx lint` and `kpx migrate-check`: the rules, the question, the first line. */
export interface FindingsCommand {
  readonly name: 'lint' | 'migrate-check';
  readonly rules: readonly LintRule[];
  /** For "cannot tell": what could not be answered. */
  readonly question: string;
  /** Text output only: the answer's first line, from the findings (migrate-check). */
  heading?(snapshot: NodeSnapshot, shown: LintResult['summary'], skipped: number): string | undefined;
}

/** What differs between `kpx lint` and `kpx migrate-check`: the rules, the question, the first line. */
export interface FindingsCommand {
  readonly name: 'lint' | 'migrate-check';
  readonly rules: readonly LintRule[];
  /** For "cannot tell": what could not be answered. */
  readonly question: string;
  /** Text output only: the answer's first line, from the findings (migrate-check). */
  heading?(snapshot: NodeSnapshot, shown: LintResult['summary'], skipped: number): string | undefined;
}

/** --rule and --disable name known rules; --config read and checked. */
function settings(q: LintQuery, cmd: FindingsCommand): LintConfig {
  const ids = new Set(cmd.rules.map((r) => r.id));
  for (const id of [...(q.rule ?? []), ...(q.disable ?? [])]) if (!ids.has(id)) throw unknownRule(id, cmd);
  if (!q.config) return { severities: {}, disable: [] };
  try {
    return parseConfig(readText(q.config, '--config', MAX_CONFIG_BYTES), q.config, ids);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
}

const unknownRule = (id: string, cmd: FindingsCommand) => new UsageError(`unknown rule ${id} (kpx ${cmd.name} --list-rules lists them)`);

/** `--list-rules [--rule ID]`: the catalogue, or those rules' whole documentation. */
function listRules(q: LintQuery, cmd: FindingsCommand): Outcome {
  for (const id of q.rule ?? []) if (!cmd.rules.some((r) => r.id === id)) throw unknownRule(id, cmd);
  const chosen = q.rule?.length ? cmd.rules.filter((r) => q.rule!.includes(r.id)) : cmd.rules;
  return { result: { kind: 'lint-rules', rules: chosen, docs: Boolean(q.rule?.length) }, exit: ExitCode.Ok };
}

export async function findings(q: LintQuery, cmd: FindingsCommand, io: AppIO): Promise<Outcome> {
  if (q.listRules) return listRules(q, cmd);
  const config = settings(q, cmd);
  const baseline = q.baseline ? readBaseline(q.baseline, q.input.limits.maxBytes) : undefined;
  const snapshot = await io.load(q.inputs);
  // Said first: what could not be used (the rest is linted), or that nothing can be.
  for (const l of inputProblemLines(snapshot)) io.notice(l);
  // Without a ruleset only the rules that judge their inputs on their own can run (a kube-proxy log,
  // a sysctl dump, links): they do, said first; whether the Service rules are right stays unknown.
  const cannot = cannotTell(snapshot, cmd.question);
  const standalone = cannot ? cmd.rules.filter((r) => r.meta.standalone) : undefined;
  const result = await lintSnapshot(snapshot, { rules: standalone ?? cmd.rules, only: q.rule ?? [], disable: [...(q.disable ?? []), ...config.disable], severities: config.severities });
  if (cannot && result.rules.length === 0) {
    io.notice(cannot);
    for (const l of logAccountLines(snapshot)) io.notice(l);
    return { exit: ExitCode.CannotTell };
  }
  if (cannot) io.notice(standaloneNotice(snapshot, 'whether the Service rules are right'));
  const found = baseline ? applyBaseline(result.findings, baseline) : [...result.findings];
  const report = { findings: found, summary: summarize(found), skipped: result.skipped, rules: cmd.rules };
  const heading = cmd.heading?.(snapshot, report.summary, result.skipped.length);
  const ran = cmd.rules.filter((r) => result.rules.includes(r.id));
  if (baseline && q.forPeople) io.notice(`kpx: ${result.findings.length - found.length} finding(s) already in the baseline were not shown`);
  return {
    result: { kind: 'lint', report, ran, ...(heading ? { heading } : {}), version: VERSION },
    // Nothing found in a log or sysctl dump is no clean bill for the dataplane.
    exit: failsAt(found, q.failOn) ? ExitCode.Findings : cannot ? ExitCode.CannotTell : ExitCode.Ok,
  };
}
