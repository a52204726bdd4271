/**
 * Pastes that hold several outputs (issue 30): `$ kubectl get svc` and its table, then
 * `$ kubectl get svc web -o yaml` and the YAML, then `# iptables -t nat -L -n` and a listing, in
 * one file, with Markdown around them. The file is cut into sections at the lines that start an
 * output — a command (prompt, `**kubectl …**` caption, `## kubectl …` heading, a bare
 * `kubectl get …` line), a code fence, a Markdown caption or rule — and each section is sniffed on
 * its own, the command it follows breaking ties (`-o yaml` is the API's objects, `-L` a listing).
 * Blank lines never cut: outputs hold them.
 *
 * Sections of one format are read together by that format's reader, over the file's text with
 * every other line blanked, so every diagnostic and every cited line keeps its file:line:column.
 * A paste of one format is read by that format's reader directly; only a paste whose command
 * changes the reader (`iptables -t nat -S` lines, which alone look like a headerless
 * iptables-save, are read as that command's output) is routed here too.
 */
import type { FormatId, FormatParser, ParsedInput } from './format.js';
import { commandOfLine, iptablesRequest, kubectlRequest, type PastedCommand } from '../../grammars/common/command.js';
import { noiseKind, splitInput } from '../../grammars/common/text.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

/** The sniffer registry, given by the caller (./registry.ts imports this module lazily: no cycle at load). */
export type SniffFn = (lines: readonly string[]) => { id: FormatId; confidence: number } | undefined;

export interface PasteSection {
  /** 0-based line range [from, to). */
  readonly from: number;
  readonly to: number;
  readonly format?: FormatId;
  /** The command before it prints what kpx does not read (`-o jsonpath=…`). */
  readonly unread?: true;
  readonly command?: PastedCommand;
  /** 0-based line of that command, which may sit before the section (in its own code block). */
  readonly commandAt?: number;
}

/**
 * What a command says its output is, when kpx reads that output; null when kpx knows the command
 * and does not read what it prints (`kubectl get … -o jsonpath=…`, `-o name`); undefined when the
 * command does not say (`kubectl logs`: whatever the pod wrote).
 */
export function formatOfCommand(c: PastedCommand): FormatId | null | undefined {
  if (c.tool === 'kubectl') {
    const r = kubectlRequest(c);
    if (!r || r.verb === 'other') return undefined;
    if (r.output === undefined || r.output === 'wide') return 'kubectl';
    return /^(ya?ml|json)$/i.test(r.output) ? 'k8s-api' : null;
  }
  if (c.tool === 'iptables-save' || c.tool === 'ip6tables-save') return 'iptables-save';
  const ipt = iptablesRequest(c);
  return ipt?.action === 'list' || ipt?.action === 'rules' ? 'iptables-list' : undefined;
}

const HEADING = /^\s*#{2,6}\s+\S/;

/** A YAML document's first key: after `---`, the next object of the same output, not a new output. */
const YAML_START = /^(?:apiVersion|kind|metadata|items|spec|status|data):/;

/** Does this line start a new output? A prompt of a command kpx does not read starts one that is not for kpx. */
function boundary(lines: readonly string[], i: number): { command?: PastedCommand; other?: true } | undefined {
  const line = lines[i];
  const command = commandOfLine(line);
  if (command) return { command };
  const noise = noiseKind(line);
  if (noise === 'prompt') return { other: true };
  if (/^---\s*$/.test(line) && YAML_START.test(nextText(lines, i) ?? '')) return undefined;
  if (noise === 'fence' || HEADING.test(line)) return {};
  return undefined;
}

/** The next line with text after line i. */
function nextText(lines: readonly string[], i: number): string | undefined {
  for (let k = i + 1; k < lines.length; k++) if (lines[k].trim() !== '') return lines[k];
  return undefined;
}

/**
 * Cut lines into sections at commands, fences and headings; sniff each. A command names the format
 * of the first section with content after it (its output), and of no other: prose after a closed
 * code block is prose, not more output.
 */
export function pasteSections(lines: readonly string[], sniff: SniffFn): PasteSection[] {
  const cuts: { at: number; command?: PastedCommand; other?: true }[] = [{ at: 0 }];
  lines.forEach((_, i) => {
    const b = boundary(lines, i);
    if (b) cuts.push({ at: i, ...b });
  });
  const sections: PasteSection[] = [];
  let pending: { command: PastedCommand; at: number } | undefined;
  for (let k = 0; k < cuts.length; k++) {
    const from = cuts[k].at;
    const to = k + 1 < cuts.length ? cuts[k + 1].at : lines.length;
    const cut = cuts[k];
    if (cut.command) pending = { command: cut.command, at: cut.at };
    else if (cut.other) pending = undefined;
    if (to <= from) continue;
    const content = lines.slice(from, to).filter((l) => l.trim() !== '' && noiseKind(l) === undefined && !commandOfLine(l));
    if (content.length === 0) continue;
    const c = pending?.command;
    const commandAt = pending?.at;
    pending = undefined;
    const hinted = c ? formatOfCommand(c) : undefined;
    const found = sniff(content);
    if (hinted === null) {
      sections.push({ from, to, unread: true, command: c!, commandAt });
      continue;
    }
    const format = hinted && (found === undefined || found.confidence < 0.95 || related(hinted, found.id)) ? hinted : found?.id;
    sections.push({ from, to, ...(format ? { format } : {}), ...(c ? { command: c, commandAt } : {}) });
  }
  return sections;
}

/** A command's format and a sniffed one that are the same kind of text (a listing's `-S` lines sniff as iptables-save). */
function related(a: FormatId, b: FormatId): boolean {
  const pair = new Set([a, b]);
  return a === b || (pair.has('iptables-list') && pair.has('iptables-save')) || (pair.has('kubectl') && pair.has('k8s-api'));
}

/**
 * The format of a paste, when its sections say more than sniffing its content would: `paste` for
 * several formats, or the one format its command names; null when its every output is one its
 * command says kpx does not read. Undefined: sniff as usual.
 */
export function detectPaste(lines: readonly string[], sniff: SniffFn, plain: FormatId | undefined): FormatId | null | undefined {
  if (!lines.some((_, i) => boundary(lines, i) !== undefined)) return undefined;
  const sections = pasteSections(lines, sniff);
  const formats = new Set(sections.flatMap((s) => (s.format ? [s.format] : [])));
  if (formats.size === 0 && sections.length > 0 && sections.every((s) => s.unread)) return null;
  if (formats.size >= 2) return 'paste';
  const [only] = formats;
  return only !== undefined && only !== plain ? only : undefined;
}

export interface PasteData {
  readonly parts: readonly ParsedInput[];
}

/** Read each format's sections with its reader, over the text with every other line blanked. */
export async function parsePaste(text: string, file: string, sniff: SniffFn, parserFor: (id: FormatId) => Promise<FormatParser>): Promise<ParsedInput<PasteData>> {
  const { lines } = splitInput(text);
  const sections = pasteSections(lines, sniff);
  const byFormat = new Map<FormatId, PasteSection[]>();
  for (const s of sections) if (s.format && s.format !== 'paste') byFormat.set(s.format, [...(byFormat.get(s.format) ?? []), s]);
  const parts: ParsedInput[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const [format, mine] of byFormat) {
    const keep = new Uint8Array(lines.length);
    for (const s of mine) {
      keep.fill(1, s.from, s.to);
      // The command, even in its own code block: the reader learns what it lists (`-t nat`, `-n shop`).
      if (s.commandAt !== undefined) keep[s.commandAt] = 1;
    }
    const masked = lines.map((l, i) => (keep[i] ? l : '')).join('\n') + '\n';
    const parser = await parserFor(format);
    const part = parser.parse(masked, file);
    parts.push(part);
    diagnostics.push(...part.diagnostics);
  }
  for (const s of sections) {
    if (s.format) continue;
    const first = lines.slice(s.from, s.to).findIndex((l) => l.trim() !== '' && noiseKind(l) === undefined && !commandOfLine(l));
    if (first < 0) continue;
    const what = s.unread ? `the output of \`${printable(s.command!.text, 120)}\`, which kpx does not read` : 'not an output kpx reads (author text?)';
    diagnostics.push(diagnostic('info', 'input/noise', `lines ${s.from + first + 1}–${s.to} are ${what}: ignored`, file, s.from + first + 1, 1));
  }
  diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
  const counts: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.counts)) counts[k] = (counts[k] ?? 0) + v;
  return { format: 'paste', file, data: { parts }, diagnostics, variant: parts.map((p) => (p.variant ? `${p.format} ${p.variant}` : p.format)).join(' + '), counts };
}
