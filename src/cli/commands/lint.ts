/** `kpx lint`: find broken and risky dataplane state; exit 1 when findings reach --fail-on. */
import { inputSettingsOf, type InputOptions } from '../input-options.js';
import { LINT_RULES } from '../../lint/index.js';
import { findings, type FindingsCommand } from '../../app/lint.js';
import { appIO, finish, forPeople } from '../emit.js';

export { MAX_CONFIG_BYTES, baselineShapeError, readBaseline, type FindingsCommand } from '../../app/lint.js';

export interface LintCliOptions extends InputOptions {
  output: 'text' | 'json' | 'sarif' | 'github';
  failOn: 'error' | 'warning' | 'never';
  rule?: string[];
  disable?: string[];
  config?: string;
  baseline?: string;
  listRules?: boolean;
}

export async function lintAction(inputs: string[], opts: LintCliOptions): Promise<number> {
  return findingsAction(inputs, opts, { name: 'lint', rules: LINT_RULES, question: 'what is wrong with this dataplane' });
}

/** The lint machinery behind `kpx lint` and `kpx migrate-check` (src/app/lint.ts), rendered as asked. */
export async function findingsAction(inputs: string[], opts: LintCliOptions, cmd: FindingsCommand): Promise<number> {
  const { output, input: _input, nodeIp: _nodeIp, node: _node, color: _color, ...asked } = opts;
  return finish(await findings({ ...asked, inputs, forPeople: forPeople(output), input: inputSettingsOf(opts) }, cmd, appIO(opts, output)), output, opts);
}
