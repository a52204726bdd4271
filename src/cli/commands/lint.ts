/** `kpx lint`: find broken and risky dataplane state; exit 1 when findings reach --fail-on. */
import { writeText } from '../output.js';

import { loadFromOptions, type InputOptions } from '../inputs.js';
import { ExitCode, UsageError } from '../exit.js';
import { InputLimitError, inputLimits, readBoundedFile } from '../../load/input.js';
import { fsReason } from '../../load/errors.js';
import { printable } from '../../source/index.js';
import { cannotTell, logAccountLines, reportInputProblems, standaloneNotice } from '../evidence.js';
import { LINT_RULES } from '../../lint/index.js';
import type { LintRule } from '../../lint/rule.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import type { LintResult } from '../../lint/run.js';
import { applyBaseline, failsAt, lintSnapshot, summarize, type BaselineEntry } from '../../lint/run.js';
import { ConfigError, parseConfig, type LintConfig } from '../../lint/config.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { renderJson } from '../../render/json.js';
import { versioned } from '../../render/schemas/index.js';
import { renderLintGithub, renderLintJson, renderLintText, renderRuleDocs, renderRuleList } from '../../render/lint.js';
import { renderSarif } from '../../render/sarif.js';
import { VERSION } from '../../version.js';
import { writeOut, writeErr, writeJsonOut } from '../output.js';

export interface LintCliOptions extends InputOptions {
  output: 'text' | 'json' | 'sarif' | 'github';
  failOn: 'error' | 'warning' | 'never';
  rule?: string[];
  disable?: string[];
  config?: string;
  baseline?: string;
  listRules?: boolean;
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
export function readBaseline(path: string): BaselineEntry[] {
  const text = readText(path, '--baseline', inputLimits().maxBytes);
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

export async function lintAction(inputs: string[], opts: LintCliOptions): Promise<number> {
  return findingsAction(inputs, opts, { name: 'lint', rules: LINT_RULES, question: 'what is wrong with this dataplane' });
}

/** The lint machinery behind `kpx lint` and `kpx migrate-check`: inputs, config, baseline, outputs, exit code. */
export async function findingsAction(inputs: string[], opts: LintCliOptions, cmd: FindingsCommand): Promise<number> {
  const c = chalkInit(colorEnabled(opts));
  const byId = new Map(cmd.rules.map((r) => [r.id, r]));
  const unknown = (id: string) => new UsageError(`unknown rule ${id} (kpx ${cmd.name} --list-rules lists them)`);
  if (opts.listRules) {
    // `--list-rules --rule ID`: that rule's whole documentation (why, the fix, an example); otherwise the one-line catalogue.
    for (const id of opts.rule ?? []) if (!byId.has(id)) throw unknown(id);
    const chosen = opts.rule?.length ? cmd.rules.filter((r) => opts.rule!.includes(r.id)) : cmd.rules;
    if (opts.output === 'json') writeJsonOut(renderJson(versioned('lint-rules', { rules: chosen.map((r) => ({ id: r.id, severity: r.meta.severity, description: r.meta.description, docs: r.meta.docs })) })));
    else writeText(opts.rule?.length ? renderRuleDocs(chosen, c) : renderRuleList(chosen, c));
    return ExitCode.Ok;
  }
  for (const id of [...(opts.rule ?? []), ...(opts.disable ?? [])]) if (!byId.has(id)) throw unknown(id);
  let config: LintConfig = { severities: {}, disable: [] };
  if (opts.config) {
    try {
      config = parseConfig(readText(opts.config, '--config', MAX_CONFIG_BYTES), opts.config, new Set(byId.keys()));
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.message);
      throw e;
    }
  }
  const baseline = opts.baseline ? readBaseline(opts.baseline) : undefined;

  const snapshot = await loadFromOptions(inputs, opts, opts.output === 'text');
  // Said first: what could not be used (the rest is linted), or that nothing can be.
  reportInputProblems(snapshot);
  // Without a ruleset only the rules that judge their inputs on their own can run (a kube-proxy log,
  // a sysctl dump, links): they do, said first; whether the Service rules are right stays unknown.
  const cannot = cannotTell(snapshot, cmd.question);
  const standalone = cannot ? cmd.rules.filter((r) => r.meta.standalone) : undefined;
  const result = await lintSnapshot(snapshot, { rules: standalone ?? cmd.rules, only: opts.rule ?? [], disable: [...(opts.disable ?? []), ...config.disable], severities: config.severities });
  if (cannot && result.rules.length === 0) {
    writeErr(cannot + '\n');
    for (const l of logAccountLines(snapshot)) writeErr(l + '\n');
    return ExitCode.CannotTell;
  }
  if (cannot) writeErr(standaloneNotice(snapshot, 'whether the Service rules are right') + '\n');
  const findings = baseline ? applyBaseline(result.findings, baseline) : [...result.findings];
  const report = { findings, summary: summarize(findings), skipped: result.skipped, rules: cmd.rules };
  switch (opts.output) {
    case 'json':
      writeJsonOut(renderLintJson(report));
      break;
    case 'sarif':
      writeJsonOut(renderSarif(findings, cmd.rules.filter((r) => result.rules.includes(r.id)), { version: VERSION }));
      break;
    case 'github':
      writeOut(renderLintGithub(report));
      break;
    default: {
      const head = cmd.heading?.(snapshot, report.summary, result.skipped.length);
      writeText(`${head ? `${c.bold(head)}\n\n` : ''}${renderLintText(report, c)}`);
    }
  }
  if (baseline && opts.output === 'text') writeErr(`kpx: ${result.findings.length - findings.length} finding(s) already in the baseline were not shown\n`);
  if (failsAt(findings, opts.failOn)) return ExitCode.Findings;
  // Nothing found in a log or sysctl dump is no clean bill for the dataplane.
  return cannot ? ExitCode.CannotTell : ExitCode.Ok;
}
