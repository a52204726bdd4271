/**
 * The report as one self-contained HTML file: no network, no script, inline CSS. Readable at
 * 1280 px without horizontal scrolling: the page has a maximum width, tables are laid out to it,
 * and every long word (a rule, a chain name, an address list) wraps. Everything that comes from a
 * dump is untrusted: each piece of text goes through printable() (control characters become
 * `\xNN`) and HTML escaping; only Graphviz's own SVG is inlined as markup.
 */
import { printable } from '../../source/index.js';
import type { Block, Inline, ListItem, Rich } from './model.js';

/** Text for HTML: control characters escaped (tabs become spaces), then entities. */
export function htmlEscape(s: string, max = 100000): string {
  return printable(s, max).replace(/[\t\n]/g, ' ').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** An `id` or `class` value (the builders make them from `[A-Za-z0-9._-]`; escaped all the same). */
const attr = (s: string) => htmlEscape(s, 1000);

function inline(x: Inline): string {
  if (typeof x === 'string') return htmlEscape(x);
  if ('href' in x) return `<a href="${attr(x.href)}">${htmlEscape(x.text)}</a>`;
  return `<span class="${attr(x.cls)}">${htmlEscape(x.text)}</span>`;
}

const rich = (r: Rich) => r.map(inline).join('');
const cls = (c: string | undefined) => (c ? ` class="${attr(c)}"` : '');

function listItem(i: ListItem): string {
  const sub = i.sub?.length ? `<ul class="sub">${i.sub.map((s) => `<li>${rich(s)}</li>`).join('')}</ul>` : '';
  return `<li${cls(i.cls)}>${rich(i.content)}${sub}</li>`;
}

/** Graphviz SVG without its XML prolog/doctype, comments or scripts, safe to inline. */
function inlineSvg(svg: string): string {
  return svg
    .replace(/<\?xml[^>]*\?>/g, '')
    .replace(/<!DOCTYPE[^>]*>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<script[\s\S]*?<\/script>/gi, '')
    .trim();
}

function evidenceHtml(b: Extract<Block, { kind: 'evidence' }>): string {
  const base = b.file.split(/[\\/]/).pop() || b.file;
  const items = b.lines.map((l) => {
    const text = l.text === undefined ? '<em>(kpx kept no text of this line)</em>' : htmlEscape(l.text);
    return `<li><span class="at">${htmlEscape(`${base}:${l.line}`)}</span><code class="line" id="${attr(l.id)}">${text}</code></li>`;
  });
  return `<ol class="ev">${items.join('\n')}</ol>`;
}

function blockHtml(b: Block): string {
  switch (b.kind) {
    case 'heading':
      return `<h${b.level}${b.id ? ` id="${attr(b.id)}"` : ''}>${htmlEscape(b.text)}</h${b.level}>`;
    case 'paragraph':
      return `<p${cls(b.cls)}>${rich(b.content)}</p>`;
    case 'list': {
      const tag = b.ordered ? 'ol' : 'ul';
      return `<${tag}${cls(b.cls)}>${b.items.map(listItem).join('\n')}</${tag}>`;
    }
    case 'table':
      return `<table${cls(b.cls)}><thead><tr>${b.head.map((h) => `<th>${htmlEscape(h)}</th>`).join('')}</tr></thead><tbody>${b.rows.map((r) => `<tr>${r.map((c) => `<td>${rich(c)}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`;
    case 'fields':
      return `<dl class="fields">${b.rows.map(([k, v]) => `<dt>${htmlEscape(k)}</dt><dd>${rich(v)}</dd>`).join('')}</dl>`;
    case 'section':
      return `<section id="${attr(b.id)}"${cls(b.cls)}>\n${b.blocks.map(blockHtml).join('\n')}\n</section>`;
    case 'details':
      return `<details><summary>${htmlEscape(b.summary)}</summary>${b.blocks.map(blockHtml).join('\n')}</details>`;
    case 'evidence':
      return evidenceHtml(b);
    case 'code':
      return `<pre class="${attr(b.lang)}"><code>${printable(b.text, 10_000_000).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</code></pre>`;
    case 'svg':
      return `<div class="graph">${inlineSvg(b.svg)}</div>`;
  }
}

const CSS = `
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 0.5em 1.5em 3em; max-width: 1200px; color: #111; line-height: 1.4; overflow-wrap: anywhere; }
header { border-bottom: 1px solid #ccc; padding-bottom: 0.4em; }
h1 { font-size: 1.4em; margin: 0.3em 0; }
h2 { font-size: 1.2em; margin: 1em 0 0.3em; border-bottom: 1px solid #e5e7eb; }
h3 { font-size: 1.05em; margin: 1em 0 0.3em; }
p, ul, ol { margin: 0.3em 0; }
.meta { color: #333; }
.gaps { color: #7c2d12; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; width: 100%; table-layout: fixed; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.4em; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f3f4f6; }
dl.fields { display: grid; grid-template-columns: 8em minmax(0, 1fr); gap: 0.15em 0.8em; margin: 0.3em 0; }
dt { font-weight: 600; color: #444; }
dd { margin: 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; }
pre { background: #f8f8f8; padding: 0.8em; white-space: pre-wrap; overflow-wrap: anywhere; }
ol.problems > li { margin: 0.3em 0; }
ul.sub { color: #333; }
.verdict, .sev { font-weight: 700; padding: 0 0.3em; border-radius: 3px; }
.v-healthy { background: #dcfce7; color: #14532d; }
.v-no-endpoints, .v-no-local-endpoints, .sev-error { background: #fee2e2; color: #991b1b; }
.v-partial, .v-unknown, .sev-warning { background: #fef9c3; color: #854d0e; }
.sev-info { background: #e0f2fe; color: #075985; }
ol.ev { list-style: none; padding: 0; }
ol.ev li { display: grid; grid-template-columns: 14em minmax(0, 1fr); gap: 0.8em; padding: 0.1em 0.3em; border-bottom: 1px solid #f3f4f6; }
ol.ev .at { color: #555; font-family: ui-monospace, monospace; font-size: 0.85em; }
ol.ev code.line { white-space: pre-wrap; word-break: break-all; scroll-margin-top: 3em; }
section { scroll-margin-top: 0.5em; }
a[href^="#ev-"] { white-space: nowrap; }
:target { background: #fff3b0; outline: 2px solid #f59e0b; }
.graph svg { max-width: 100%; height: auto; }
`;

/** The blocks as an HTML page: the blocks before the first section are its header. */
export function renderHtml(blocks: readonly Block[]): string {
  const first = blocks.findIndex((b) => b.kind === 'section');
  const head = first < 0 ? blocks : blocks.slice(0, first);
  const main = first < 0 ? [] : blocks.slice(first);
  const h1 = blocks.find((b) => b.kind === 'heading');
  const title = h1 && h1.kind === 'heading' ? h1.text : 'kpx report';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${htmlEscape(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
${head.map(blockHtml).join('\n')}
</header>
<main>
${main.map(blockHtml).join('\n')}
</main>
</body>
</html>
`;
}
