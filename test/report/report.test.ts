/** `kpx report`: Markdown and HTML reports of the node sample, with lint, the Service table, graphs, and escaping. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { buildReport, htmlEscape, loadLint, mdText } from '../../src/report/index.js';
import { reportAction } from '../../src/cli/commands/report.js';
import { lintSnapshot } from '../../src/lint/run.js';

const SAMPLE = new URL('../../samples/iptables-mode-node', import.meta.url).pathname;
const HOSTILE = new URL('../fixtures/issue10/hostile-comment.iptables-save', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'kpx-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('kpx report', () => {
  it('Markdown: snapshot summary, lint counts equal to kpx lint, every Service port, a Mermaid graph', async () => {
    const s = await loadSnapshot([SAMPLE], { name: 'sample' });
    const r = await resolveServices(s);
    const dns = r.services.filter((x) => x.name === 'kube-dns');
    const md = await buildReport(s, r, { format: 'md', generatedAt: 'T', graphs: [{ selector: 'kube-system/kube-dns', services: dns }] });
    expect(md.startsWith('# kpx report: sample\n')).toBe(true);
    expect(md).toContain('- Proxy mode: iptables');
    expect(md).toContain('| file | format | contents | errors | warnings |');
    expect(md).toMatch(/\| \S*iptables-save\.txt \| iptables-save \| \d+ tables, \d+ chains, \d+ rules \| 0 \| 0 \|/);
    const lint = await lintSnapshot(s, { resolution: r });
    expect(md).toContain(`${lint.summary.error} error${lint.summary.error === 1 ? '' : 's'}, ${lint.summary.warning} warning`);
    for (const x of r.services) expect(md).toContain(`| ${mdText(`${x.namespace}/${x.name}${x.portName ? ':' + x.portName : ''}`)} |`);
    expect(md).toMatch(/```mermaid\nflowchart LR\n[\s\S]*kube-system\/kube-dns:dns · SVC[\s\S]*```/);
  });

  it('HTML: escapes dump text, inlines Graphviz SVG', async () => {
    const s = await loadSnapshot([HOSTILE], { name: '<node>' });
    const r = await resolveServices(s);
    expect(r.services.length).toBe(1);
    const html = await buildReport(s, r, { format: 'html', generatedAt: 'T', graphs: [{ selector: 'evil/web', services: r.services }] });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>bold</b>');
    expect(html).toContain('<title>kpx report: &lt;node&gt;</title>');
    expect(html).toMatch(/<div class="graph"><svg[\s\S]*<\/svg><\/div>/);
    expect(htmlEscape('<a href="x">&\'')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
    // Markdown too: no raw HTML, no broken tables.
    const md = await buildReport(s, r, { format: 'md', generatedAt: 'T' });
    expect(md).not.toMatch(/<script>|<b>/);
    for (const line of md.split('\n').filter((l) => l.startsWith('| evil'))) expect(line.split(/(?<!\\)\|/).length).toBe(10);
  });

  it('finds the lint module at run time', async () => {
    expect(typeof (await loadLint())?.lintSnapshot).toBe('function');
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
    expect(readFileSync(join(tmp, 'r.html'), 'utf8')).toMatch(/^<!DOCTYPE html>[\s\S]*<svg/);
    expect(readFileSync(join(tmp, 'r.md'), 'utf8')).toMatch(/^# kpx report: /);
  });
});
