/** `kpx lint`: find broken and risky dataplane state; exit 1 when findings reach --fail-on. */
import { writeText } from '../output.js';
import { readFileSync } from 'node:fs';
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { ExitCode, UsageError } from '../exit.js';
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

export interface LintCliOptions extends InputOptions {
  output: 'text' | 'json' | 'sarif' | 'github';
  failOn: 'error' | 'warning' | 'never';
  rule?: string[];
  disable?: string[];
  config?: string;
  baseline?: string;
  listRules?: boolean;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`${what} ${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** Findings of a previous `kpx lint -o json` (older results without fingerprints too: theirs are computed). */
export function readBaseline(path: string): BaselineEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(readText(path, '--baseline'));
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--baseline ${path}: not JSON (expected the output of kpx lint -o json)`);
  }
  const findings = (data as { findings?: unknown })?.findings;
  if (!Array.isArray(findings)) throw new UsageError(`--baseline ${path}: no "findings" array (expected the output of kpx lint -o json)`);
  const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
  return findings.filter(
    (f): f is BaselineEntry =>
      f && typeof f.ruleId === 'string' && typeof f.message === 'string' && optionalString(f.fingerprint) && optionalString(f.text) && optionalString(f.service),
  );
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
    if (opts.output === 'json') process.stdout.write(renderJson(versioned('lint-rules', { rules: chosen.map((r) => ({ id: r.id, severity: r.meta.severity, description: r.meta.description, docs: r.meta.docs })) })));
    else writeText(opts.rule?.length ? renderRuleDocs(chosen, c) : renderRuleList(chosen, c));
    return ExitCode.Ok;
  }
  for (const id of [...(opts.rule ?? []), ...(opts.disable ?? [])]) if (!byId.has(id)) throw unknown(id);
  let config: LintConfig = { severities: {}, disable: [] };
  if (opts.config) {
    try {
      config = parseConfig(readText(opts.config, '--config'), opts.config, new Set(byId.keys()));
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
    process.stderr.write(cannot + '\n');
    for (const l of logAccountLines(snapshot)) process.stderr.write(l + '\n');
    return ExitCode.CannotTell;
  }
  if (cannot) process.stderr.write(standaloneNotice(snapshot, 'whether the Service rules are right') + '\n');
  const findings = baseline ? applyBaseline(result.findings, baseline) : [...result.findings];
  const report = { findings, summary: summarize(findings), skipped: result.skipped, rules: cmd.rules };
  switch (opts.output) {
    case 'json':
      process.stdout.write(renderLintJson(report));
      break;
    case 'sarif':
      process.stdout.write(renderSarif(findings, cmd.rules.filter((r) => result.rules.includes(r.id)), { version: VERSION }));
      break;
    case 'github':
      process.stdout.write(renderLintGithub(report));
      break;
    default: {
      const head = cmd.heading?.(snapshot, report.summary, result.skipped.length);
      writeText(`${head ? `${c.bold(head)}\n\n` : ''}${renderLintText(report, c)}`);
    }
  }
  if (baseline && opts.output === 'text') process.stderr.write(`kpx: ${result.findings.length - findings.length} finding(s) already in the baseline were not shown\n`);
  if (failsAt(findings, opts.failOn)) return ExitCode.Findings;
  // Nothing found in a log or sysctl dump is no clean bill for the dataplane.
  return cannot ? ExitCode.CannotTell : ExitCode.Ok;
}
