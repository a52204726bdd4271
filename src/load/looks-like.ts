/**
 * What a file kpx cannot read looks like (issue 30), said in `kpx inspect` instead of only "kpx
 * cannot tell what this file is": the commands pasted in it and whether kpx reads what they print,
 * a table's columns, author prose, or its first line. Descriptive only: nothing here is read as
 * evidence.
 */
import { commandOfLine, kubectlRequest, type PastedCommand } from '../../grammars/common/command.js';
import { noiseKind, promptBody } from '../../grammars/common/text.js';
import { printable } from '../source/index.js';

const MAX_LINES = 400;

/** Columns of a table header: two or more upper-case words, as kubectl, ps, netstat and ss print them. */
const HEADER = /^\s*[A-Z][A-Z0-9_()/%.-]*(?:\s{2,}|\t)[A-Z][A-Z0-9_()/%.-]*(?:(?:\s+|\t)[A-Z][A-Z0-9_()/%. -]*)*\s*$/;
/** A sentence: words with lower-case letters, more than four of them. */
const SENTENCE = /^\s*(?:[-*>]\s+)?[A-Za-z][a-z']*(?:[ ,]+[A-Za-z'’()]+){4,}/;

/** Why a kubectl command's output is not read, or undefined when kpx reads it. */
function kubectlUnread(c: PastedCommand): string | undefined {
  const r = kubectlRequest(c);
  if (!r) return undefined;
  if (r.verb === 'other') return `kubectl ${c.args[0] ?? ''}`.trim();
  if (r.output !== undefined && !/^(wide|ya?ml|json)$/i.test(r.output)) return `kubectl ${r.verb} -o ${r.output.split('=')[0]}`;
  const other = r.kinds.filter((k) => !['service', 'endpoints', 'endpointslice', 'pod', 'node', 'all'].includes(k));
  return other.length ? `kubectl ${r.verb} ${other.join(',')}` : undefined;
}

/** The commands in the text, as written; prompts of tools kpx does not know by their first word. */
function commandsOf(lines: readonly string[]): { text: string; unread?: string }[] {
  const out: { text: string; unread?: string }[] = [];
  for (const l of lines) {
    const c = commandOfLine(l);
    if (c) {
      out.push({ text: c.text, ...(c.tool === 'kubectl' ? { unread: kubectlUnread(c) } : c.tool === 'other' ? { unread: c.text.split(/\s+/)[0] } : {}) });
      continue;
    }
    if (noiseKind(l) !== 'prompt') continue;
    const body = promptBody(l);
    if (body) out.push({ text: body, unread: body.split(/\s+/)[0] });
  }
  return out;
}

/** One sentence on what the text looks like; undefined for an empty text. */
export function looksLike(text: string): string | undefined {
  const lines = text.split(/\r?\n/, MAX_LINES);
  const content = lines.filter((l) => l.trim() !== '' && noiseKind(l) === undefined);
  const commands = commandsOf(lines);
  const parts: string[] = [];
  if (commands.length) {
    const shown = [...new Set(commands.map((c) => `\`${printable(c.text, 60)}\``))].slice(0, 4);
    const unread = [...new Set(commands.flatMap((c) => (c.unread ? [c.unread] : [])))];
    parts.push(`a terminal session of ${shown.join(', ')}${commands.length > shown.length ? ', …' : ''}` + (unread.length ? ` (kpx does not read the output of ${unread.slice(0, 4).join(', ')})` : ''));
  }
  const header = content.find((l) => HEADER.test(l));
  if (header) parts.push(`a table with columns ${printable(header.trim().split(/\s{2,}|\t/).join(', '), 100)}`);
  const prose = content.filter((l) => SENTENCE.test(l)).length;
  if (prose > 0 && prose * 2 >= content.length) parts.push(`author text (${prose} line${prose === 1 ? '' : 's'} of prose)`);
  if (parts.length === 0 && content.length) parts.push(`text whose first line is "${printable(content[0].trim(), 80)}"`);
  return parts.length ? parts.join('; ') : undefined;
}
