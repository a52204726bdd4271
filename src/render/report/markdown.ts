/**
 * The report as Markdown (for a ticket or a chat): the same document, sections flattened, links
 * written as their text (`iptables-save.txt:56`; the Evidence section lists each line under it).
 * Dump text is escaped so that it cannot make HTML, break a table or start formatting.
 */
import { appendAll, maxOf, printable } from '../../source/index.js';
import { plain, type Block, type Rich } from './model.js';

/** Inline Markdown text: no HTML, no table breaks, no stray formatting. */
export function mdText(s: string): string {
  return printable(s, 2000)
    .replace(/\\/g, '\\\\')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/([`*_[\]])/g, '\\$1')
    .replace(/[\t\r\n]+/g, ' ');
}

const md = (r: Rich) => mdText(plain(r));

/** A fenced block whose fence is longer than any backtick run inside. */
function fenced(lang: string, text: string): string[] {
  const longest = maxOf((text.match(/`+/g) ?? []).map((x) => x.length), 2);
  const fence = '`'.repeat(longest + 1);
  return [`${fence}${lang}`, printable(text, 10_000_000).replace(/\n$/, ''), fence, ''];
}

function blockMd(b: Block, out: string[]): void {
  switch (b.kind) {
    case 'heading':
      out.push(`${'#'.repeat(b.level)} ${mdText(b.text)}`, '');
      break;
    case 'paragraph':
      out.push(md(b.content), '');
      break;
    case 'list':
      b.items.forEach((i, n) => {
        out.push(`${b.ordered ? `${n + 1}.` : '-'} ${md(i.content)}`);
        for (const s of i.sub ?? []) out.push(`   - ${md(s)}`);
      });
      out.push('');
      break;
    case 'table':
      out.push(`| ${b.head.map(mdText).join(' | ')} |`, `|${b.head.map(() => '---').join('|')}|`);
      appendAll(out, b.rows.map((r) => `| ${r.map(md).join(' | ')} |`));
      out.push('');
      break;
    case 'fields':
      appendAll(out, b.rows.map(([k, v]) => `- **${mdText(k)}**: ${md(v)}`));
      out.push('');
      break;
    case 'section':
    case 'details':
      if (b.kind === 'details') out.push(`${mdText(b.summary)}:`, '');
      for (const x of b.blocks) blockMd(x, out);
      break;
    case 'evidence':
      appendAll(out, b.lines.map((l) => `- ${mdText(`${b.file.split(/[\\/]/).pop() || b.file}:${l.line}`)} ${l.text === undefined ? '(no text kept)' : mdText(l.text)}`));
      out.push('');
      break;
    case 'code':
      appendAll(out, fenced(b.lang, b.text));
      break;
    case 'svg':
      appendAll(out, fenced(b.alt.lang, b.alt.text));
      break;
  }
}

export function renderMarkdown(blocks: readonly Block[]): string {
  const out: string[] = [];
  for (const b of blocks) blockMd(b, out);
  return out.join('\n');
}
