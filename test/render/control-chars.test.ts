/**
 * Renderers escape control characters from dump text themselves (issue 34), whatever writes
 * their output: iptables-save text (chain names, a built-in chain's policy, comments), the lint
 * text heading (an API object's name, NUL too), GitHub annotations, SARIF and one-line JSON (DEL,
 * C1 controls and U+2028/2029, which JSON.stringify leaves raw). Unit tests on constructed values.
 */
import { describe, expect, it } from 'vitest';
import { extractIptablesSave } from '../../src/extract/iptables-save.js';
import { renderIptablesSave } from '../../src/render/iptables-save.js';
import { renderLintGithub, renderLintText } from '../../src/render/lint.js';
import { renderSarif } from '../../src/render/sarif.js';
import { renderJsonLine } from '../../src/render/json.js';
import { chalkInit } from '../../src/render/colors.js';
import { escapeControls, printable } from '../../src/source/index.js';
import type { Finding } from '../../src/lint/rule.js';
import { RULES } from '../../src/lint/index.js';

const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const NASTY = 'x\u001b[2J\u0000\u0007\u007f\u009b1m\u2028y';

describe('renderers escape control characters', () => {
  it('dump -o iptables-save: chain names, a built-in chain policy, comments', () => {
    const text = `*nat\n:PREROUTING ACC\u001b[2JEPT [0:0]\n:C\u001b[2J - [0:0]\n-A PREROUTING -j C\u001b[2J\n-A C\u001b[2J -m comment --comment "a\u009b31m\u007f" -j RETURN\nCOMMIT\n`;
    const rs = extractIptablesSave(text, 'x.txt').data;
    const out = renderIptablesSave(rs);
    expect(RAW.test(out)).toBe(false);
    expect(out).toContain(':C\\x1b[2J - [0:0]');
    expect(out).toContain(':PREROUTING ACC\\x1b[2JEPT');
    expect(out).toContain('\\x9b31m\\x7f');
  });

  const finding: Finding = { ruleId: 'api-service-not-programmed', severity: 'warning', message: `m ${NASTY}`, file: 'api.json', line: 3, column: 1, text: NASTY, service: `ns${NASTY}/web`, fingerprint: 'f' };

  it('lint text: the group heading (the Service) and every line', () => {
    const out = renderLintText({ findings: [finding], summary: { error: 0, warning: 1, info: 0 }, rules: RULES }, chalkInit(false));
    expect(RAW.test(out)).toBe(false);
    expect(out).toContain('nsx\\x1b[2J\\x00\\x07');
    // With colour on, only chalk's own sequences are raw.
    const coloured = renderLintText({ findings: [finding], summary: { error: 0, warning: 1, info: 0 }, rules: RULES }, chalkInit(true));
    expect(coloured.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(RAW);
  });

  it('lint github annotations', () => {
    expect(RAW.test(renderLintGithub({ findings: [finding], summary: { error: 0, warning: 1, info: 0 } }))).toBe(false);
  });

  it('SARIF and one-line JSON: DEL, C1 and U+2028/2029 as \\u escapes; the values read back the same', () => {
    const sarif = renderSarif([finding], RULES);
    expect(/[\u007f-\u009f\u2028\u2029]/.test(sarif)).toBe(false);
    expect(JSON.parse(sarif).runs[0].results[0].message.text).toContain(NASTY);
    const line = renderJsonLine({ node: NASTY });
    expect(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(line.trimEnd())).toBe(false);
    expect(JSON.parse(line).node).toBe(NASTY);
  });

  it('escapeControls keeps tab, newline and (when asked) colour sequences, and is idempotent', () => {
    expect(escapeControls('a\tb\nc')).toBe('a\tb\nc');
    expect(escapeControls('\u001b[31mred\u001b[39m', true)).toBe('\u001b[31mred\u001b[39m');
    expect(escapeControls('\u001b[31mred\u001b[2J', true)).toBe('\u001b[31mred\\x1b[2J');
    expect(escapeControls('\u001b[31m')).toBe('\\x1b[31m');
    const once = escapeControls(NASTY);
    expect(escapeControls(once)).toBe(once);
  });

  it('text for a terminal: U+2028/U+2029 (a line break in editors, browsers, CI logs) as \\u escapes, so one line stays one line', () => {
    // Found by the fuzz run (test/fuzz): a diagnostic quoting dump text carried a raw U+2029 to stderr.
    expect(escapeControls('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
    expect(printable('cannot read \u2029 here')).toBe('cannot read \\u2029 here');
    expect(escapeControls(NASTY)).not.toMatch(/[\u2028\u2029]/);
  });
});
