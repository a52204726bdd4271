/**
 * `kpx report`: a one-file incident report (Markdown or HTML) of a snapshot: what was read, lint
 * findings (when the lint module is present), the per-Service table, and graphs of the Services
 * asked for. Built as a small document model, then rendered; every piece of dump text is
 * escaped for the target format (HTML entities; Markdown table/inline escaping).
 */
import { problemText } from '../render/problems.js';
import { policySummary, serviceType } from '../render/services.js';
import type { Resolution, ServicePort } from '../kube/types.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { missingDumps, proxyModes } from '../kube/modes.js';
import { formatHostPort } from '../model/addr.js';
import { printable, appendAll, maxOf } from '../source/index.js';
import { serviceLabel } from '../render/services.js';
import { serviceGraph, toDot, toMermaid } from '../graph/index.js';
import { renderSvg, SvgUnavailable } from '../graph/svg.js';

/** The SVG of a graph, or undefined when Graphviz cannot run here (the report shows the Mermaid text). */
async function svgOrUndefined(dot: string): Promise<string | undefined> {
  try {
    return await renderSvg(dot);
  } catch (e) {
    if (e instanceof SvgUnavailable) return undefined;
    throw e;
  }
}

export type Block =
  | { readonly kind: 'heading'; readonly level: 1 | 2 | 3; readonly text: string }
  | { readonly kind: 'paragraph'; readonly text: string }
  | { readonly kind: 'list'; readonly items: readonly string[] }
  | { readonly kind: 'table'; readonly head: readonly string[]; readonly rows: readonly (readonly string[])[] }
  | { readonly kind: 'code'; readonly lang: string; readonly text: string }
  /** Trusted SVG from Graphviz (HTML only; Markdown shows `alt` code instead). */
  | { readonly kind: 'svg'; readonly svg: string; readonly alt: { readonly lang: string; readonly text: string } };

/** The lint API this report uses (src/lint/run.ts), loaded at run time when present. */
interface LintFindingLike {
  readonly ruleId: string;
  readonly severity: string;
  readonly message: string;
  readonly file: string;
  readonly line: number;
  readonly service?: string;
}
interface LintApi {
  lintSnapshot(s: NodeSnapshot, o: { resolution?: Resolution }): Promise<{ findings: readonly LintFindingLike[]; summary: { error: number; warning: number; info: number } }>;
}

export async function loadLint(): Promise<LintApi | undefined> {
  const path = '../lint/run.js';
  try {
    const m = (await import(path)) as Partial<LintApi>;
    return typeof m.lintSnapshot === 'function' ? (m as LintApi) : undefined;
  } catch {
    return undefined;
  }
}

export interface ReportOptions {
  /** Services (selectors already applied) to draw graphs for. */
  readonly graphs?: readonly { readonly selector: string; readonly services: readonly ServicePort[] }[];
  /** Run lint (default true; skipped with a note when src/lint is missing). */
  readonly lint?: boolean;
  /** Draw SVG with Graphviz (WebAssembly) in HTML (default: yes; false gives Mermaid text). */
  readonly svg?: boolean;
  readonly format: 'md' | 'html';
  /** For reproducible output in tests. */
  readonly generatedAt?: string;
  /** At most this many lint findings listed (default 200). */
  readonly maxFindings?: number;
}

/** The document, format-independent. */
export async function reportBlocks(snapshot: NodeSnapshot, res: Resolution, opts: ReportOptions): Promise<Block[]> {
  const out: Block[] = [];
  out.push({ kind: 'heading', level: 1, text: `kpx report: ${snapshot.name}` });
  out.push({ kind: 'paragraph', text: `Generated ${opts.generatedAt ?? new Date().toISOString()} by kpx from ${snapshot.files.length} file${snapshot.files.length === 1 ? '' : 's'}.` });

  // Snapshot
  out.push({ kind: 'heading', level: 2, text: 'Snapshot' });
  const modes = proxyModes(snapshot);
  out.push({ kind: 'list', items: [`Proxy mode${modes.length === 1 ? '' : 's'}: ${modes.length ? modes.join(', ') : 'none detected'}`, `Service ports: ${res.services.length}`, `Rulesets: ${snapshot.rulesets.length} iptables, ${snapshot.nft.length} nft; ipsets: ${snapshot.ipsets.length}; IPVS dumps: ${snapshot.ipvs.length}; routes: ${snapshot.routes.length}; interfaces: ${snapshot.interfaces.length}`] });
  out.push({
    kind: 'table',
    head: ['file', 'format', 'contents', 'errors', 'warnings'],
    rows: snapshot.files.map((f) => [
      f.path,
      f.format,
      Object.entries(f.counts)
        .map(([k, v]) => `${v} ${k}`)
        .join(', '),
      String(f.diagnostics.filter((d) => d.severity === 'error').length),
      String(f.diagnostics.filter((d) => d.severity === 'warning').length),
    ]),
  });
  const missing = missingDumps(snapshot);
  if (missing.length) {
    out.push({ kind: 'heading', level: 3, text: 'Missing dumps' });
    out.push({ kind: 'list', items: missing });
  }

  // Lint
  if (opts.lint !== false) {
    out.push({ kind: 'heading', level: 2, text: 'Lint findings' });
    const lint = await loadLint();
    if (!lint) out.push({ kind: 'paragraph', text: 'The lint module is not part of this kpx build: no findings were computed.' });
    else {
      const r = await lint.lintSnapshot(snapshot, { resolution: res });
      out.push({ kind: 'paragraph', text: `${r.summary.error} error${r.summary.error === 1 ? '' : 's'}, ${r.summary.warning} warning${r.summary.warning === 1 ? '' : 's'}, ${r.summary.info} info.` });
      const max = opts.maxFindings ?? 200;
      if (r.findings.length) {
        out.push({ kind: 'table', head: ['severity', 'rule', 'message', 'where'], rows: r.findings.slice(0, max).map((f) => [f.severity, f.ruleId, f.message, f.line > 0 ? `${f.file}:${f.line}` : f.file]) });
        if (r.findings.length > max) out.push({ kind: 'paragraph', text: `… and ${r.findings.length - max} more (run \`kpx lint\` for all).` });
      }
    }
  }

  // Services
  out.push({ kind: 'heading', level: 2, text: 'Services' });
  if (res.services.length === 0) out.push({ kind: 'paragraph', text: 'No Kubernetes Services found in these dumps.' });
  else {
    const counts = new Map<string, number>();
    for (const s of res.services) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
    out.push({ kind: 'paragraph', text: `${res.services.length} Service ports: ${[...counts].map(([k, v]) => `${v} ${k}`).join(', ')}.` });
    out.push({
      kind: 'table',
      head: ['Service', 'type', 'VIP:port/proto', 'node port', 'policy', 'endpoints (local)', 'state', 'problems'],
      rows: res.services.map((s) => [
        serviceLabel(s),
        serviceType(s),
        `${formatHostPort(s.clusterIP ?? s.externalIPs[0] ?? s.loadBalancerIPs[0] ?? '-', s.port)}/${s.protocol}`,
        s.nodePort === null ? '' : String(s.nodePort),
        policySummary(s),
        `${s.endpoints.length} (${s.endpoints.filter((e) => e.local === true).length})`,
        s.state,
        s.problems.map(problemText).join('; '),
      ]),
    });
  }

  // Graphs
  const graphs = opts.graphs ?? [];
  if (graphs.length) {
    out.push({ kind: 'heading', level: 2, text: 'Graphs' });
    const svg = opts.format === 'html' && opts.svg !== false;
    for (const g of graphs) {
      out.push({ kind: 'heading', level: 3, text: g.selector });
      if (g.services.length === 0) {
        out.push({ kind: 'paragraph', text: `No Service matches ${g.selector}.` });
        continue;
      }
      const graph = serviceGraph(snapshot, g.services, `${snapshot.name}: ${g.selector}`);
      const drawn = svg ? await svgOrUndefined(toDot(graph)) : undefined;
      if (drawn !== undefined) out.push({ kind: 'svg', svg: drawn, alt: { lang: 'mermaid', text: toMermaid(graph) } });
      else {
        if (svg) out.push({ kind: 'paragraph', text: 'Graphviz could not run here (no memory for WebAssembly): the graph is given as Mermaid text.' });
        out.push({ kind: 'code', lang: 'mermaid', text: toMermaid(graph) });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Markdown

/** Inline Markdown text: no HTML, no table breaks, no stray formatting. */
export function mdText(s: string): string {
  return printable(s, 2000)
    .replace(/\\/g, '\\\\')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/([`*_[\]])/g, '\\$1')
    .replace(/\r?\n/g, ' ');
}

export function renderMarkdown(blocks: readonly Block[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case 'heading':
        out.push(`${'#'.repeat(b.level)} ${mdText(b.text)}`, '');
        break;
      case 'paragraph':
        out.push(mdText(b.text), '');
        break;
      case 'list':
        appendAll(out, b.items.map((i) => `- ${mdText(i)}`)); out.push('');
        break;
      case 'table':
        out.push(`| ${b.head.map(mdText).join(' | ')} |`, `|${b.head.map(() => '---').join('|')}|`);
        appendAll(out, b.rows.map((r) => `| ${r.map(mdText).join(' | ')} |`));
        out.push('');
        break;
      case 'code':
      case 'svg': {
        const c = b.kind === 'code' ? b : { lang: b.alt.lang, text: b.alt.text };
        // A fence longer than any backtick run inside.
        const longest = maxOf((c.text.match(/`+/g) ?? []).map((x) => x.length), 2);
        const fence = '`'.repeat(longest + 1);
        out.push(`${fence}${c.lang}`, c.text.replace(/\n$/, ''), fence, '');
        break;
      }
    }
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// HTML

export function htmlEscape(s: string): string {
  return printable(s, 100000).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Graphviz SVG without its XML prolog/doctype, safe to inline. */
function inlineSvg(svg: string): string {
  return svg
    .replace(/<\?xml[^>]*\?>/g, '')
    .replace(/<!DOCTYPE[^>]*>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<script[\s\S]*?<\/script>/gi, '')
    .trim();
}

export function renderHtml(blocks: readonly Block[]): string {
  const title = blocks.find((b) => b.kind === 'heading')?.kind === 'heading' ? (blocks.find((b) => b.kind === 'heading') as { text: string }).text : 'kpx report';
  const body: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case 'heading':
        body.push(`<h${b.level}>${htmlEscape(b.text)}</h${b.level}>`);
        break;
      case 'paragraph':
        body.push(`<p>${htmlEscape(b.text)}</p>`);
        break;
      case 'list':
        body.push(`<ul>${b.items.map((i) => `<li>${htmlEscape(i)}</li>`).join('')}</ul>`);
        break;
      case 'table':
        body.push(
          `<table><thead><tr>${b.head.map((h) => `<th>${htmlEscape(h)}</th>`).join('')}</tr></thead><tbody>${b.rows
            .map((r) => `<tr>${r.map((c) => `<td>${htmlEscape(c)}</td>`).join('')}</tr>`)
            .join('\n')}</tbody></table>`,
        );
        break;
      case 'code':
        body.push(`<pre class="${htmlEscape(b.lang)}"><code>${htmlEscape(b.text)}</code></pre>`);
        break;
      case 'svg':
        body.push(`<div class="graph">${inlineSvg(b.svg)}</div>`);
        break;
    }
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${htmlEscape(title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #111; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f4f6; }
pre { background: #f8f8f8; padding: 1em; overflow: auto; }
.graph svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}

export async function buildReport(snapshot: NodeSnapshot, res: Resolution, opts: ReportOptions): Promise<string> {
  const blocks = await reportBlocks(snapshot, res, opts);
  return opts.format === 'html' ? renderHtml(blocks) : renderMarkdown(blocks);
}
