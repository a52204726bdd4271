/**
 * `kpx report`: Markdown and HTML reports of the node sample, answer first (problems, the Services
 * they touch, the other Services, the evidence), every evidence mention a link to its line, dump text
 * escaped. What a person sees in a browser is test/browser/report.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { judgeSnapshot } from '../../src/judge/index.js';
import { problemsOf } from '../../src/render/report/problems.js';
import type { Finding } from '../../src/lint/rule.js';
import { drawGraphs, evidenceGaps, htmlEscape, mdText, renderReport, type ReportInput } from '../../src/render/report/index.js';
import { reportAction } from '../../src/cli/commands/report.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { serviceLabel } from '../../src/render/services.js';
import { VERSION } from '../../src/version.js';

const SAMPLE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
const KIND = new URL('../../samples/iptables-mode-kind', import.meta.url).pathname;
const HOSTILE = new URL('../fixtures/issue10/hostile-comment.iptables-save', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function inputOf(paths: string[], name: string, graphs: string[] = [], html = false): Promise<ReportInput> {
  const s = await loadSnapshot(paths, { name });
  const node = await judgeSnapshot(s);
  const sel = graphs.map((g) => ({ selector: g, services: node.resolution.services.filter((x) => `${x.namespace}/${x.name}` === g) }));
  return { node, lint: await lintSnapshot(s, { resolution: node.resolution }), graphs: await drawGraphs(s, sel, html), version: VERSION, generatedAt: 'T' };
}

describe('kpx report', () => {
  it('Markdown: the header, then problems, the Services they touch, the others, the evidence; lint counts equal to kpx lint', async () => {
    const input = await inputOf([SAMPLE], 'sample', ['kube-system/kube-dns']);
    const md = renderReport(input, 'md');
    expect(md.startsWith('# kpx report: sample\n')).toBe(true);
    expect(md).toContain(`read by kpx ${VERSION}, T. Proxy mode: iptables.`);
    const order = ['## Problems (', '## Services the problems touch (', '## Other Services (', '## Graphs', '## Evidence (', '## Inputs ('].map((h) => md.indexOf(h));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const unhealthy = input.node.resolution.services.filter((s) => s.state !== 'healthy');
    expect(unhealthy.length).toBe(6);
    // The six unhealthy Services and the one finding about no Service (route_localnet).
    expect(md).toContain('## Problems (7)');
    const problems = md.slice(md.indexOf('## Problems'), md.indexOf('## Services the problems touch'));
    expect(problems.match(/^\d+\. /gm)?.length).toBe(7);
    for (const s of unhealthy) expect(problems).toContain(`${s.state} ${mdText(serviceLabel(s))} `);
    expect(problems).toMatch(/^7\. warning \\\[kernel-route-localnet-off\\\] route\\_localnet is off/m);
    const lint = input.lint!;
    expect(md).toContain(`lint: ${lint.summary.error} errors, ${lint.summary.warning} warnings, ${lint.summary.info} info`);
    for (const x of input.node.resolution.services) expect(md).toContain(mdText(serviceLabel(x)));
    expect(md).toMatch(/```mermaid\nflowchart LR\n[\s\S]*kube-system\/kube-dns:dns · SVC[\s\S]*```/);
    // Every line mentioned is listed under Evidence with its text.
    expect(md).toMatch(/^- iptables-save\.txt:56 -A KUBE-SERVICES .*shapes\/no-endpoints:http has no endpoints.*REJECT.*$/m);
  });

  it('HTML: every evidence mention links to an anchor that exists, and every anchor is mentioned', async () => {
    const html = renderReport(await inputOf([SAMPLE], 'sample'), 'html');
    const hrefs = [...html.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    const evIds = [...ids].filter((i) => i.startsWith('ev-'));
    expect(evIds.length).toBeGreaterThan(10);
    expect(hrefs.filter((h) => !ids.has(h))).toEqual([]);
    expect(evIds.filter((i) => !hrefs.includes(i))).toEqual([]);
    // The first section is the problems; the header before it says what is missing.
    expect(html.indexOf('<section id="problems">')).toBeLessThan(html.indexOf('<section id="services">'));
    expect(html.slice(0, html.indexOf('<main>'))).toContain('lint rules not run for lack of input: tunnel-mtu');
  });

  it('HTML: escapes dump text, inlines Graphviz SVG', async () => {
    const input = await inputOf([HOSTILE], '<node>', ['evil/web'], true);
    expect(input.node.resolution.services.length).toBe(1);
    const html = renderReport(input, 'html');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>bold</b>');
    expect(html).toContain('<title>kpx report: &lt;node&gt;</title>');
    expect(html).toMatch(/<div class="graph"><svg[\s\S]*<\/svg><\/div>/);
    expect(htmlEscape('<a href="x">&\'\u001b')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;\\x1b');
    // Markdown too: no raw HTML, no broken tables.
    const md = renderReport(input, 'md');
    expect(md).not.toMatch(/<script>|<b>/);
    // Every table row has its header's number of cells (a `|` from a dump is escaped).
    const lines = md.split('\n');
    const rows = lines.filter((l, i) => l.startsWith('| ') && i > 0 && lines[i - 1].startsWith('|'));
    expect(rows.some((r) => r.includes('hostile-comment.iptables-save'))).toBe(true);
    const cells = (l: string) => l.split(/(?<!\\)\|/).length;
    for (const [i, l] of lines.entries()) if (l.startsWith('| ') && lines[i - 1]?.startsWith('|')) expect(cells(l)).toBe(cells(lines[lines.lastIndexOf('', i) + 1]));
  });

  it('a finding about a healthy Service (constructed finding: unit-style input) is a problem of its own, and the Service is shown in detail with it', async () => {
    const input = await inputOf([SAMPLE], 'sample');
    const dns = input.node.resolution.services.find((s) => s.name === 'kube-dns' && s.portName === 'dns')!;
    expect(dns.state).toBe('healthy');
    const finding: Finding = { ruleId: 'made-up-rule', severity: 'error', message: 'constructed finding about kube-dns', file: dns.evidence[0].file, line: dns.evidence[0].line, column: 1, text: dns.evidence[0].text, service: 'kube-system/kube-dns:dns', fingerprint: 'x' };
    const lint = { ...input.lint!, findings: [finding], summary: { error: 1, warning: 0, info: 0 } };
    const p = problemsOf(input.node, lint);
    expect(p.standalone).toEqual([finding]);
    expect(p.touched.filter((s) => s.state === 'healthy')).toEqual([dns]);
    const md = renderReport({ ...input, lint }, 'md');
    expect(md).toContain('## Problems (7)');
    expect(md).toMatch(/^7\. error \\\[made-up-rule\\\] kube-system\/kube-dns:dns: constructed finding about kube-dns — iptables-save\.txt:\d+$/m);
    const section = md.slice(md.indexOf('### kube-system/kube-dns:dns 53/UDP — healthy'), md.indexOf('## Other Services'));
    expect(section).toContain('- **lint error**: \\[made-up-rule\\] constructed finding about kube-dns — iptables-save.txt:');
  });

  it('the header says what the evidence does not show: no ip route, no ip addr on the kind sample', async () => {
    const gaps = evidenceGaps(await inputOf([KIND], 'kind'));
    expect(gaps.some((g) => g.startsWith('no `ip route`'))).toBe(true);
    expect(gaps.some((g) => g.startsWith('lint rules not run for lack of input: endpoint-unroutable (needs `ip route`)'))).toBe(true);
  });

  it('the command picks the format from the file name', async () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await reportAction([SAMPLE], { output: join(tmp, 'r.html'), service: ['kube-system/kube-dns:dns'] })).toBe(0);
      expect(await reportAction([SAMPLE], { output: join(tmp, 'r.md') })).toBe(0);
      await expect(reportAction([SAMPLE], { output: join(tmp, 'r.txt') })).rejects.toThrow(/\.md or \.html/);
    } finally {
      err.mockRestore();
    }
    expect(readFileSync(join(tmp, 'r.html'), 'utf8')).toMatch(/^<!DOCTYPE html>[\s\S]*<section id="problems">[\s\S]*<svg/);
    expect(readFileSync(join(tmp, 'r.md'), 'utf8')).toMatch(/^# kpx report: /);
  });
});
