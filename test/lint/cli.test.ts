/** `kpx lint` through its action: outputs, exit codes, --rule/--disable, config files, baselines. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lintAction, type LintCliOptions } from '../../src/cli/commands/lint.js';
import { UsageError } from '../../src/cli/exit.js';
import { parseConfig, parseConfigYaml } from '../../src/lint/config.js';
import { LINT_RULES, RULES_BY_ID } from '../../src/lint/index.js';
import { KIND, lineOf, replaceOnce } from './helpers.js';
import { unwrappedText } from '../helpers/columns.js';

// What the text says, line by line: lines whole (the layout is test/render/width.test.ts's).
unwrappedText();

let dir: string;
let healthy: string;
let broken: string;
const brokenText = replaceOnce(KIND, ':KUBE-SEP-6E7XQMQ4RAYOWTTM - [0:0]\n', '');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kpx-lint-'));
  healthy = join(dir, 'healthy.txt');
  broken = join(dir, 'broken.txt');
  writeFileSync(healthy, KIND);
  writeFileSync(broken, brokenText);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(inputs: string[], opts: Partial<LintCliOptions>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    const code = await lintAction(inputs, { output: 'text', failOn: 'error', rule: [], disable: [], input: [], nodeIp: [], color: false, ...opts });
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('kpx lint', () => {
  it('exit 0 on a healthy dump with --fail-on error, 1 with --fail-on warning, 0 with never', async () => {
    expect((await run([healthy], {})).code).toBe(0);
    expect((await run([healthy], { failOn: 'warning' })).code).toBe(1);
    expect((await run([broken], { failOn: 'never' })).code).toBe(0);
    expect((await run([broken], {})).code).toBe(1);
  });

  it('text output groups by severity and Service and shows the dump lines', async () => {
    const { out } = await run([broken], {});
    const lines = out.split('\n');
    expect(lines[0]).toBe('ERRORS (1)');
    expect(lines[1]).toBe('  kube-system/kube-dns:dns');
    expect(lines[2]).toMatch(/^    error jump to KUBE-SEP-6E7XQMQ4RAYOWTTM in table nat, which is neither a declared chain .* \[dangling-jump\]$/);
    expect(lines[3]).toBe(`      ${broken}:${lineOf(brokenText, '-j KUBE-SEP-6E7XQMQ4RAYOWTTM')}:1  -A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-6E7XQMQ4RAYOWTTM`);
    expect(out).toContain('WARNINGS (1)\n  (not tied to one Service)\n    warning MASQUERADE without --random-fully');
    // The kind dump alone: no ip route / sysctl, so these rules could not run, and the summary says so.
    expect(lines.filter(Boolean).at(-2)).toBe('1 error, 1 warning, 0 info');
    expect(lines.filter(Boolean).at(-1)).toBe(
      'not checked, for lack of input: endpoint-unroutable (needs `ip route`), kernel-forwarding-off (needs `sysctl`), kernel-bridge-nf-off (needs `sysctl`), kernel-route-localnet-off (needs `sysctl`)',
    );
  });

  it('-o json has the stable {findings, summary, skipped} schema', async () => {
    const { out } = await run([broken], { output: 'json' });
    const j = JSON.parse(out);
    expect(Object.keys(j)).toEqual(['schemaVersion', 'findings', 'summary', 'skipped']);
    expect(j.skipped).toEqual([
      { ruleId: 'endpoint-unroutable', missing: ['routes'] },
      { ruleId: 'kernel-forwarding-off', missing: ['sysctl'] },
      { ruleId: 'kernel-bridge-nf-off', missing: ['sysctl'] },
      { ruleId: 'kernel-route-localnet-off', missing: ['sysctl'] },
    ]);
    expect(j.summary).toEqual({ error: 1, warning: 1, info: 0 });
    // Sorted by file, line, column.
    expect(j.findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['masquerade-not-random-fully', 'dangling-jump']);
    expect(Object.keys(j.findings[1])).toEqual(['ruleId', 'severity', 'message', 'file', 'line', 'column', 'text', 'service', 'related', 'fingerprint']);
    expect(j.findings[1]).toMatchObject({ ruleId: 'dangling-jump', severity: 'error', file: broken, line: lineOf(brokenText, '-j KUBE-SEP-6E7XQMQ4RAYOWTTM'), column: 1, service: 'kube-system/kube-dns:dns' });
    expect(Object.keys(j.findings[0])).toEqual(['ruleId', 'severity', 'message', 'file', 'line', 'column', 'text', 'fingerprint']);
    expect(j.findings[0].fingerprint).toMatch(/^[0-9a-f]{32}$/);
  });

  it('-o github prints workflow annotations', async () => {
    const { out } = await run([broken], { output: 'github' });
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^::error file=${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},line=\\d+,col=1,title=kpx/dangling-jump kube-system/kube-dns%3Adns::jump to KUBE-SEP-6E7XQMQ4RAYOWTTM`));
    expect(lines[0]).toMatch(/^::warning file=.*title=kpx\/masquerade-not-random-fully::MASQUERADE without/);
  });

  it('-o sarif prints a SARIF log', async () => {
    const j = JSON.parse((await run([broken], { output: 'sarif' })).out);
    expect(j.version).toBe('2.1.0');
    expect(j.runs[0].results.map((r: { ruleId: string }) => r.ruleId)).toEqual(['kpx/masquerade-not-random-fully', 'kpx/dangling-jump']);
  });

  it('--rule and --disable select rules; unknown ids are usage errors', async () => {
    const only = JSON.parse((await run([broken], { output: 'json', rule: ['masquerade-not-random-fully'] })).out);
    expect(only.findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['masquerade-not-random-fully']);
    const dis = JSON.parse((await run([broken], { output: 'json', disable: ['masquerade-not-random-fully'] })).out);
    expect(dis.findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['dangling-jump']);
    await expect(run([broken], { rule: ['no-such-rule'] })).rejects.toThrow(UsageError);
  });

  it('--config (YAML subset or JSON) sets severities and disables rules', async () => {
    const yaml = join(dir, '.kpx.yaml');
    writeFileSync(yaml, '# kpx lint config\nrules:\n  dangling-jump: warning   # downgraded\n  masquerade-not-random-fully: "off"\ndisable: []\n');
    const r = await run([broken], { output: 'json', config: yaml });
    expect(JSON.parse(r.out).findings.map((f: { ruleId: string; severity: string }) => `${f.ruleId}:${f.severity}`)).toEqual(['dangling-jump:warning']);
    expect(r.code).toBe(0);
    const json = join(dir, 'kpx.json');
    writeFileSync(json, JSON.stringify({ disable: ['dangling-jump'] }));
    expect(JSON.parse((await run([broken], { output: 'json', config: json })).out).summary).toEqual({ error: 0, warning: 1, info: 0 });
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  dangling-jump: loud\n');
    await expect(run([broken], { config: bad })).rejects.toThrow(/rule dangling-jump: "loud" is not one of off, error, warning, info/);
  });

  it('--baseline reports only new findings (matched on rule, file and message, not lines)', async () => {
    const base = join(dir, 'baseline.json');
    writeFileSync(base, (await run([healthy], { output: 'json' })).out);
    // Same warning in the broken dump (same file name needed: copy healthy's baseline onto broken's path).
    const baseline = JSON.parse((await run([broken], { output: 'json', rule: ['masquerade-not-random-fully'] })).out);
    writeFileSync(base, JSON.stringify({ ...baseline, findings: baseline.findings.map((f: { line: number }) => ({ ...f, line: f.line + 100 })) }));
    const r = await run([broken], { output: 'json', baseline: base, failOn: 'warning' });
    expect(JSON.parse(r.out).findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['dangling-jump']);
    expect(r.code).toBe(1);
    const r2 = await run([broken], { output: 'json', baseline: base, failOn: 'warning', disable: ['dangling-jump'] });
    expect(JSON.parse(r2.out).findings).toEqual([]);
    expect(r2.code).toBe(0);
    writeFileSync(base, '{"nope": 1}');
    await expect(run([broken], { baseline: base })).rejects.toThrow(/no "findings" array/);
  });

  it('--baseline matches by fingerprint: the same bundle in another folder, with a comment line inserted, has no new findings; a new problem is new', async () => {
    const base = join(dir, 'baseline-fp.json');
    writeFileSync(base, (await run([broken], { output: 'json' })).out);
    const before = JSON.parse((await run([broken], { output: 'json' })).out).findings as { fingerprint: string; line: number }[];
    expect(before.length).toBeGreaterThanOrEqual(2);
    // Another folder and another file name, two lines pushed down by comments iptables-restore ignores.
    const moved = join(dir, 'elsewhere', 'node-a');
    mkdirSync(moved, { recursive: true });
    const movedDump = join(moved, 'iptables-save.txt');
    writeFileSync(movedDump, `# Generated by a ticket paste\n# (copied from node-a)\n${brokenText}`);
    const after = JSON.parse((await run([movedDump], { output: 'json' })).out).findings as { fingerprint: string; line: number; file: string }[];
    expect(after.map((f) => f.fingerprint).sort()).toEqual(before.map((f) => f.fingerprint).sort());
    expect(after.map((f) => f.line)).toEqual(before.map((f) => f.line + 2));
    const r = await run([movedDump], { output: 'json', baseline: base, failOn: 'warning' });
    expect(JSON.parse(r.out).findings).toEqual([]);
    expect(r.code).toBe(0);
    // One more problem: a second endpoint chain's declaration removed. Only it is new.
    const worse = replaceOnce(brokenText, ':KUBE-SEP-QKX4QX54UKWK6JIY - [0:0]\n', '');
    writeFileSync(movedDump, worse);
    const r2 = JSON.parse((await run([movedDump], { output: 'json', baseline: base })).out).findings as { ruleId: string; text: string }[];
    expect(r2.map((f) => f.ruleId)).toEqual(['dangling-jump']);
    expect(r2[0].text).toContain('KUBE-SEP-QKX4QX54UKWK6JIY');
    // Baselines written before fingerprints existed still match (the fingerprint is computed from their fields).
    const old = JSON.parse((await run([broken], { output: 'json' })).out);
    writeFileSync(base, JSON.stringify({ findings: old.findings.map(({ fingerprint: _f, ...rest }: { fingerprint: string }) => rest) }));
    writeFileSync(movedDump, brokenText);
    expect(JSON.parse((await run([movedDump], { output: 'json', baseline: base })).out).findings).toEqual([]);
  });

  it('SARIF partialFingerprints are the JSON fingerprints, and do not name the file', async () => {
    const json = JSON.parse((await run([broken], { output: 'json' })).out).findings as { fingerprint: string }[];
    const sarif = JSON.parse((await run([broken], { output: 'sarif' })).out);
    const fps = sarif.runs[0].results.map((r: { partialFingerprints: Record<string, string> }) => r.partialFingerprints['kpx/v2']);
    expect(fps.sort()).toEqual(json.map((f) => f.fingerprint).sort());
    expect(new Set(fps).size).toBe(fps.length);
  });

  it('text output ends with how to fix each rule that fired, from the rule docs', async () => {
    const { out } = await run([broken], {});
    const fix = out.slice(out.indexOf('HOW TO FIX'));
    expect(out).toContain('HOW TO FIX');
    for (const id of ['dangling-jump', 'masquerade-not-random-fully']) {
      const docsFix = RULES_BY_ID.get(id)!.meta.docs.split('**Fix:**')[1].trim().split(/\s+/).slice(0, 4).join(' ');
      expect(fix).toContain(`[${id}] ${docsFix}`);
    }
  });

  it('rules that lack an input are listed as not checked — never a silent "no findings"', async () => {
    // An IPVS-mode ruleset alone: no ipvsadm, ipset, ip addr, ip route or sysctl dump.
    const ipvsOnly = join(dir, 'ipvs-rules.txt');
    writeFileSync(ipvsOnly, ['*nat', ':PREROUTING ACCEPT [0:0]', ':KUBE-SERVICES - [0:0]', '-A PREROUTING -j KUBE-SERVICES',
      '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT', 'COMMIT', ''].join('\n'));
    const j = JSON.parse((await run([ipvsOnly], { output: 'json' })).out);
    const skipped = new Map((j.skipped as { ruleId: string; missing: string[] }[]).map((s) => [s.ruleId, s.missing]));
    expect(skipped.get('undefined-ipset')).toEqual(['ipsets']);
    expect(skipped.get('endpoint-unroutable')).toEqual(['routes']);
    expect(skipped.get('ipvs-vip-not-bound')).toEqual(['addresses']);
    expect(skipped.get('ipvs-ipset-mismatch')).toEqual(['ipvs', 'ipsets']);
    const text = (await run([ipvsOnly], {})).out;
    expect(text).toMatch(/not checked, for lack of input: .*undefined-ipset \(needs `ipset list`\)/);
    expect(text).not.toMatch(/^no findings$/m);
    // Nothing to say about IPVS rules on an iptables-mode node without ipvsadm.
    const k = JSON.parse((await run([healthy], { output: 'json' })).out);
    expect((k.skipped as { ruleId: string }[]).map((s) => s.ruleId).filter((id) => id.startsWith('ipvs-') && id !== 'ipvs-sysctl')).toEqual([]);
  });

  it('exit 3 (cannot tell) for an input that is not a dump; --list-rules prints the catalogue', async () => {
    const junk = join(dir, 'junk.txt');
    writeFileSync(junk, 'hello, this is not a dump\n');
    expect((await run([junk], {})).code).toBe(3);
    const { out, code } = await run([], { listRules: true });
    expect(code).toBe(0);
    expect(out.split('\n').filter(Boolean)).toHaveLength(LINT_RULES.length);
    expect(out).toMatch(/^dangling-jump\s+error\s+A rule jumps/m);
  });

  it('--list-rules --rule ID prints that rule\'s whole documentation: why, the fix, an example from a public source', async () => {
    const { out, code } = await run([], { listRules: true, rule: ['kube-firewall-drop-without-mark', 'kube-proxy-sync-failing'] });
    expect(code).toBe(0);
    expect(out.match(/^\*\*Fix:\*\*/gm)).toHaveLength(2);
    expect(out).toContain('**Example** (kubernetes/kubernetes#112477');
    expect(out).toContain('**Example** (kubernetes/kubernetes#104234');
    expect(out).not.toContain('dangling-jump');
    const json = (JSON.parse((await run([], { listRules: true, output: 'json' })).out) as { rules: { id: string; docs: string }[] }).rules;
    expect(json).toHaveLength(LINT_RULES.length); // the migration checks are listed by kpx migrate-check
    for (const r of json) expect(r.docs, r.id).toMatch(/\*\*Fix:\*\*/);
    await expect(run([], { listRules: true, rule: ['no-such-rule'] })).rejects.toThrow(/unknown rule no-such-rule/);
  });
});

describe('config parsing', () => {
  it('reads YAML (the yaml package): nested maps, block and flow lists, quotes, comments', () => {
    expect(parseConfigYaml("rules:\n  a: 'x y'\n  b: \"z\" # c\ndisable:\n  - one\n  - 'two'\nother: [p, q]\n")).toEqual({ rules: { a: 'x y', b: 'z' }, disable: ['one', 'two'], other: ['p', 'q'] });
    const ids = new Set(['x', 'y']);
    expect(parseConfig('rules:\n  x: off\n  y: Info\n', 'c.yaml', ids)).toEqual({ severities: { x: 'off', y: 'info' }, disable: [] });
    expect(() => parseConfig('rules:\n  z: off\n', 'c.yaml', ids)).toThrow('c.yaml: unknown rule "z"');
    // Anchors and flow mappings are YAML too (the hand-written subset refused them).
    expect(() => parseConfig('rules: {x: *w}\n', 'c.yaml', ids)).toThrow(/^c\.yaml: not valid YAML: Unresolved alias/);
    expect(parseConfig('rules: {x: &w warning, y: *w}\n', 'c.yaml', ids)).toEqual({ severities: { x: 'warning', y: 'warning' }, disable: [] });
    // Malformed YAML: file:line:column of the fault.
    expect(() => parseConfig('rules:\n  x: off\n y: [info\n', 'c.yaml', ids)).toThrow(/^c\.yaml:3:\d+: not valid YAML/);
  });
});
