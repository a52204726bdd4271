/**
 * SARIF 2.1.0 output, validated against the OASIS schema (sarif-2.1.0-rtm.5.json, draft-04) with ajv.
 * devDependencies: ajv, ajv-draft-04, ajv-formats; the schema file is test/fixtures/sarif/ (see its README).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { RULES } from '../../src/lint/index.js';
import { artifactUri, sarifLog } from '../../src/render/sarif.js';
import { KIND, lineOf, lintFiles, replaceOnce } from './helpers.js';

const require = createRequire(import.meta.url);
// CommonJS packages whose typings declare an ES default export: load them as CommonJS.
const Ajv04 = (require('ajv-draft-04') as { default: (typeof import('ajv-draft-04'))['default'] }).default;
const addFormats = (require('ajv-formats') as { default: (typeof import('ajv-formats'))['default'] }).default;
const schema = require('../fixtures/sarif/sarif-2.1.0-rtm.5.json') as object;

function validator() {
  // The schema's `language` pattern is not a valid unicode-mode regex: compile patterns without the u flag.
  const ajv = new Ajv04({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

/** The kind sample with several defects: findings of several rules, with related locations. */
async function defectiveFindings() {
  let text = replaceOnce(KIND, ':KUBE-SEP-6E7XQMQ4RAYOWTTM - [0:0]\n', '');
  text = replaceOnce(text, '--probability 0.50000000000 -j KUBE-SEP-ZP3FB6NMPNCO4VBJ', '--probability 0.70000000000 -j KUBE-SEP-ZP3FB6NMPNCO4VBJ');
  const result = await lintFiles({ 'dumps/node a/iptables-save.txt': text, 'route.txt': 'default via 172.18.0.1 dev eth0\nblackhole 10.244.0.4\n' });
  return Object.assign(result, { text });
}

describe('SARIF output', () => {
  it('validates against the SARIF 2.1.0 schema', async () => {
    const r = await defectiveFindings();
    expect(new Set(r.findings.map((f) => f.ruleId))).toEqual(new Set(['dangling-jump', 'probability-ladder', 'endpoint-unroutable', 'masquerade-not-random-fully']));
    const log = JSON.parse(JSON.stringify(sarifLog(r.findings, RULES, { version: '0.1.0' })));
    const validate = validator();
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // The validator does reject what is not SARIF.
    expect(validate({ ...log, runs: [{ ...log.runs[0], results: [{ ...log.runs[0].results[0], level: 'fatal' }] }] })).toBe(false);
    // An empty run validates too.
    expect(validate(JSON.parse(JSON.stringify(sarifLog([], RULES))))).toBe(true);
  });

  it('carries kpx/<id> rule ids, rule metadata with help, and physical locations', async () => {
    const r = await defectiveFindings();
    const log = sarifLog(r.findings, RULES) as any;
    expect(log.version).toBe('2.1.0');
    const run = log.runs[0];
    expect(run.tool.driver.name).toBe('kpx');
    expect(run.tool.driver.rules.map((x: any) => x.id)).toEqual(RULES.map((x) => `kpx/${x.id}`));
    const dj = run.tool.driver.rules.find((x: any) => x.id === 'kpx/dangling-jump');
    expect(dj.help.text).toContain('**Fix:**');
    expect(dj.defaultConfiguration.level).toBe('error');
    const res = run.results.find((x: any) => x.ruleId === 'kpx/dangling-jump');
    expect(res.level).toBe('error');
    expect(run.tool.driver.rules[res.ruleIndex].id).toBe('kpx/dangling-jump');
    expect(res.locations[0].physicalLocation).toEqual({ artifactLocation: { uri: 'dumps/node%20a/iptables-save.txt' }, region: { startLine: lineOf(r.text, '-j KUBE-SEP-6E7XQMQ4RAYOWTTM'), startColumn: 1 } });
    expect(res.message.text).toContain('(Service kube-system/kube-dns:dns)');
    expect(res.relatedLocations.map((x: any) => x.physicalLocation.region.startLine)).toEqual([lineOf(r.text, '-A KUBE-SEP-6E7XQMQ4RAYOWTTM -s'), lineOf(r.text, '-A KUBE-SEP-6E7XQMQ4RAYOWTTM -p')]);
    const warn = run.results.find((x: any) => x.ruleId === 'kpx/masquerade-not-random-fully');
    expect(warn.level).toBe('warning');
  });

  it('turns paths into artifact URIs', () => {
    expect(artifactUri('a b/c.txt')).toBe('a%20b/c.txt');
    expect(artifactUri('/tmp/x y.txt')).toBe('file:///tmp/x%20y.txt');
    expect(artifactUri('<stdin>')).toBe('stdin');
  });
});
