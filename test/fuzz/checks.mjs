/**
 * What a fuzz case must never show (issue 34): a crash (an internal error, a stack trace, an exit
 * code outside 0–3), a raw control character on stdout or stderr, or a JSON / SARIF / YAML
 * document that does not parse.
 */
import { parse as parseYaml } from 'yaml';

/** Every control character but tab and newline, DEL, the C1 controls, and the JSON line separators. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/;

function where(text, i) {
  const from = Math.max(0, i - 30);
  return JSON.stringify(text.slice(from, i + 10));
}

export function check(command, output, code, stdout, stderr) {
  const problems = [];
  if (![0, 1, 2, 3].includes(code)) problems.push({ kind: 'crash', detail: `exit code ${code}` });
  if (/internal error/i.test(stderr)) problems.push({ kind: 'crash', detail: stderr.slice(0, 600) });
  else if (/\n\s+at .*(\.js|\.ts|node:)|Unhandled rejection/.test(stderr)) problems.push({ kind: 'crash', detail: `stack trace: ${stderr.slice(0, 600)}` });
  for (const [name, text] of [
    ['stdout', stdout],
    ['stderr', stderr],
  ]) {
    const m = RAW_CONTROL.exec(text);
    if (m) problems.push({ kind: 'control', detail: `${name}: U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} in ${where(text, m.index)}` });
  }
  const structured = output === 'json' || output === 'sarif' || output === 'yaml' || command === 'summarize';
  if (structured && stdout.length > 0) {
    try {
      const doc = output === 'yaml' ? parseYaml(stdout) : JSON.parse(stdout);
      if (output === 'sarif' && (doc?.version !== '2.1.0' || !Array.isArray(doc?.runs))) throw new Error('not SARIF 2.1.0 (version, runs)');
      if (doc === null || typeof doc !== 'object') throw new Error('not an object');
    } catch (e) {
      problems.push({ kind: 'unparsable', detail: `${output}: ${String(e.message).slice(0, 200)}` });
    }
  } else if (structured && (code === 0 || code === 1)) {
    // Exit 2 (a refusal) and 3 (cannot tell) are one line on stderr; an answer owes its document.
    problems.push({ kind: 'unparsable', detail: `${output}: no document on stdout (exit ${code})` });
  }
  return problems;
}
