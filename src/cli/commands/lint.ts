/** `kpx lint`: find broken and risky dataplane state; exit 1 when findings reach --fail-on. */
import { readFileSync } from 'node:fs';
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { ExitCode, UsageError } from '../exit.js';
import { RULES, RULES_BY_ID } from '../../lint/index.js';
import { applyBaseline, failsAt, lintSnapshot, summarize, type BaselineEntry } from '../../lint/run.js';
import { ConfigError, parseConfig, type LintConfig } from '../../lint/config.js';
import { chalkInit, colorEnabled } from '../../render/colors.js';
import { renderJson } from '../../render/json.js';
import { renderLintGithub, renderLintJson, renderLintText, renderRuleList } from '../../render/lint.js';
import { renderSarif } from '../../render/sarif.js';

export interface LintCliOptions extends InputOptions {
  output: 'text' | 'json' | 'sarif' | 'github';
  failOn: 'error' | 'warning' | 'never';
  rule?: string[];
  disable?: string[];
  config?: string;
  baseline?: string;
  listRules?: boolean;
}

const VERSION = '0.1.0';

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

export async function lintAction(inputs: string[], opts: LintCliOptions): Promise<number> {
  const c = chalkInit(colorEnabled(opts));
  if (opts.listRules) {
    if (opts.output === 'json') process.stdout.write(renderJson(RULES.map((r) => ({ id: r.id, severity: r.meta.severity, description: r.meta.description }))));
    else process.stdout.write(renderRuleList(RULES, c));
    return ExitCode.Ok;
  }
  for (const id of [...(opts.rule ?? []), ...(opts.disable ?? [])]) {
    if (!RULES_BY_ID.has(id)) throw new UsageError(`unknown rule ${id} (kpx lint --list-rules lists them)`);
  }
  let config: LintConfig = { severities: {}, disable: [] };
  if (opts.config) {
    try {
      config = parseConfig(readText(opts.config, '--config'), opts.config, new Set(RULES_BY_ID.keys()));
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.message);
      throw e;
    }
  }
  const baseline = opts.baseline ? readBaseline(opts.baseline) : undefined;

  const snapshot = await loadFromOptions(inputs, opts, opts.output === 'text');
  const unknown = snapshot.files.filter((f) => f.format === 'unknown' && f.diagnostics.some((d) => d.severity === 'error'));
  const result = await lintSnapshot(snapshot, { only: opts.rule ?? [], disable: [...(opts.disable ?? []), ...config.disable], severities: config.severities });
  const findings = baseline ? applyBaseline(result.findings, baseline) : [...result.findings];
  const report = { findings, summary: summarize(findings), skipped: result.skipped, rules: RULES };
  switch (opts.output) {
    case 'json':
      process.stdout.write(renderLintJson(report));
      break;
    case 'sarif':
      process.stdout.write(renderSarif(findings, RULES.filter((r) => result.rules.includes(r.id)), { version: VERSION }));
      break;
    case 'github':
      process.stdout.write(renderLintGithub(report));
      break;
    default:
      process.stdout.write(renderLintText(report, c));
  }
  if (baseline && opts.output === 'text') process.stderr.write(`kpx: ${result.findings.length - findings.length} finding(s) already in the baseline were not shown\n`);
  if (unknown.length) {
    process.stderr.write(`kpx: ${unknown.map((f) => f.path).join(', ')}: not a dump kpx reads (run \`kpx inspect\` on it)\n`);
    return ExitCode.Error;
  }
  if (snapshot.rulesets.length === 0 && snapshot.nft.length === 0 && snapshot.ipvs.length === 0) {
    process.stderr.write('kpx: no iptables-save, nft or ipvsadm dump among the inputs: nothing to lint\n');
    return ExitCode.Error;
  }
  if (snapshot.files.some((f) => f.diagnostics.some((d) => d.severity === 'error'))) {
    process.stderr.write('kpx: some inputs had parse errors; run `kpx inspect` on them for details\n');
  }
  return failsAt(findings, opts.failOn) ? ExitCode.Findings : ExitCode.Ok;
}
