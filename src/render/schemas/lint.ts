/** `kpx lint -o json` (also what `--baseline` reads) and `kpx lint --list-rules -o json`. */
import { arr, document, int, obj, oneOfStr, str } from './common.js';
import { REQUIRED_INPUT_LABEL, type RequiredInput } from '../../lint/rule.js';

/** Every input a rule can lack: the lint module's own list, so a new input cannot be forgotten here. */
const INPUTS = Object.keys(REQUIRED_INPUT_LABEL) as RequiredInput[];

export const LINT_VERSION = 1;
export const LINT_RULES_VERSION = 1;

const severity = oneOfStr('error', 'warning', 'info');

const finding = obj(
  { ruleId: str, severity, message: str, file: str, line: int, column: int, fingerprint: str },
  { text: str, service: str, related: arr(obj({ file: str, line: int, text: str }, { column: int })) },
);

export const LINT_SCHEMA = document(
  'lint',
  LINT_VERSION,
  'kpx lint -o json',
  obj({
    findings: arr(finding),
    summary: obj({ error: int, warning: int, info: int }),
    skipped: arr(obj({ ruleId: str, missing: arr(oneOfStr(...INPUTS)) })),
  }),
);

export const LINT_RULES_SCHEMA = document('lint-rules', LINT_RULES_VERSION, 'kpx lint --list-rules -o json', obj({ rules: arr(obj({ id: str, severity, description: str, docs: str })) }));
