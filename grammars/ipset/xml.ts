/**
 * `ipset list -o xml` (lib/session.c with IPSET_LIST_XML): a fixed, line-oriented XML shape
 *
 *   <ipsets>
 *   <ipset name="KUBE-CLUSTER-IP">
 *   <type>hash:ip,port</type>
 *   <revision>7</revision>
 *   <header><family>inet</family>…<comment/>…
 *   <memsize>449</memsize> <references>0</references> <numentries>3</numentries>
 *   </header>
 *   <members>
 *   <member><elem>10.96.0.10,udp:53</elem><comment>"kube-system/kube-dns:dns"</comment></member>
 *   </members>
 *   </ipset>
 *   </ipsets>
 *
 * It is not general XML, so a tag scanner and a small state machine map it onto the same
 * block syntax as the plain listing (same Tok positions). Anything unexpected is reported and
 * skipped, never guessed.
 */
import { diagnostic, printable, type Diagnostic } from '../common/source.js';
import { noiseKind } from '../common/text.js';
import type { ListBlockSyntax, MutableBlock, SkippedLine } from './syntax.js';
import type { OptionSyntax } from './options.js';
import type { ExtraName, ExtraSyntax, Tok } from './parser.js';

interface XmlEvent {
  readonly kind: 'open' | 'close' | 'empty' | 'text';
  readonly name: string;
  readonly attrs: string;
  readonly text: string;
  readonly line: number;
  readonly column: number;
}

const TAG = /<(\/?)([A-Za-z_][\w.-]*)([^<>]*?)(\/?)>|([^<]+)|(<)/g;
const EXTRAS: ReadonlySet<string> = new Set(['timeout', 'packets', 'bytes', 'comment', 'skbmark', 'skbprio', 'skbqueue', 'nomatch']);

function unescape(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e] ?? _);
}


export function parseIpsetXmlLines(
  lines: readonly string[],
  start: number,
  file: string,
  lastLineTruncated: boolean,
): { blocks: ListBlockSyntax[]; skipped: SkippedLine[]; diagnostics: Diagnostic[] } {
  const r = new XmlReader(file);
  for (let i = start; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i];
    if (raw.trim() === '') continue;
    const nk = noiseKind(raw) ?? (/^\s*ipset v\d/.test(raw) ? 'stderr' : undefined);
    if (nk) {
      r.skipped.push({ line: n, text: raw, kind: 'noise', reason: nk });
      r.diagnostics.push(diagnostic('info', 'input/noise', `ignored ${nk} line`, file, n, raw.length - raw.trimStart().length + 1));
      continue;
    }
    const truncated = lastLineTruncated && n === lines.length;
    for (const ev of xmlEvents(raw, n)) r.event(ev, n, truncated);
  }
  return r.end();
}

/** The tags and texts of one line. */
function xmlEvents(raw: string, n: number): XmlEvent[] {
  TAG.lastIndex = 0;
  const events: XmlEvent[] = [];
  for (let m = TAG.exec(raw); m; m = TAG.exec(raw)) {
    const column = m.index + 1;
    if (m[5] !== undefined) events.push({ kind: 'text', name: '', attrs: '', text: m[5], line: n, column });
    else if (m[6] !== undefined) events.push({ kind: 'text', name: '', attrs: '', text: raw.slice(m.index), line: n, column });
    else events.push({ kind: m[1] ? 'close' : m[4] ? 'empty' : 'open', name: m[2], attrs: m[3], text: '', line: n, column });
    if (m[6] !== undefined) break;
  }
  return events;
}

/** The state machine over the tags: the set, its header, the member and the leaf element being read. */
class XmlReader {
  private readonly blocks: MutableBlock[] = [];
  readonly skipped: SkippedLine[] = [];
  readonly diagnostics: Diagnostic[] = [];
  private current: MutableBlock | undefined;
  private headerOptions: OptionSyntax[] | undefined;
  private headerLabel: Tok | undefined;
  private member: { element?: Tok; extras: ExtraSyntax[]; line: number; column: number } | undefined;
  /** Open element whose text we are collecting. */
  private leaf: { name: string; line: number; column: number; text: string; textLine: number; textColumn: number } | undefined;

  constructor(private readonly file: string) {}

  private problem(severity: 'error' | 'warning', line: number, column: number, message: string, found: string): void {
    this.diagnostics.push(diagnostic(severity, 'ipset/xml-unexpected', message, this.file, line, column, { found: printable(found, 40) }));
  }

  event(ev: XmlEvent, n: number, truncated: boolean): void {
    if (ev.kind === 'text') this.text(ev, truncated);
    else if (ev.kind === 'open') this.open(ev, n);
    else if (ev.kind === 'empty') this.empty(ev, n);
    else this.close(ev, n);
  }

  end(): { blocks: ListBlockSyntax[]; skipped: SkippedLine[]; diagnostics: Diagnostic[] } {
    const { current, member, headerOptions, headerLabel } = this;
    if (member?.element && current) {
      // Truncated in the middle of a member: keep what was read.
      current.members.push({ element: member.element, extras: member.extras });
    }
    if (current && headerOptions && headerLabel && !current.header) current.header = { label: headerLabel, options: headerOptions };
    return { blocks: this.blocks, skipped: this.skipped, diagnostics: this.diagnostics };
  }

  private text(ev: XmlEvent, truncated: boolean): void {
    const leaf = this.leaf;
    if (leaf) {
      if (leaf.text === '') {
        leaf.textLine = ev.line;
        leaf.textColumn = ev.column;
      }
      leaf.text += ev.text;
    } else if (ev.text.trim() !== '') {
      this.problem(truncated ? 'warning' : 'error', ev.line, ev.column, `text outside an element`, ev.text.trim());
    }
  }

  private open(ev: XmlEvent, n: number): void {
    switch (ev.name) {
      case 'ipsets':
        return;
      case 'ipset': {
        const m = /name="([^"]*)"/.exec(ev.attrs);
        const nameCol = m ? ev.column + 1 + ev.name.length + ev.attrs.indexOf(m[0]) + 6 : ev.column;
        const name: Tok = { text: unescape(m ? m[1] : ''), line: n, column: nameCol, endColumn: nameCol + (m ? m[1].length : 0) };
        if (!m) this.problem('error', n, ev.column, '<ipset> without a name attribute', `<ipset${ev.attrs}>`);
        this.current = { line: n, name, members: [] };
        this.blocks.push(this.current);
        return;
      }
      case 'header':
        this.headerOptions = [];
        this.headerLabel = { text: 'header', line: n, column: ev.column, endColumn: ev.column + 8 };
        return;
      case 'members':
        if (this.current) this.current.membersLine = n;
        return;
      case 'member':
        this.member = { extras: [], line: n, column: ev.column };
        return;
      default:
        this.leaf = { name: ev.name, line: n, column: ev.column, text: '', textLine: n, textColumn: ev.column + ev.name.length + 2 };
    }
  }

  private empty(ev: XmlEvent, n: number): void {
    const key: Tok = { text: ev.name, line: n, column: ev.column, endColumn: ev.column + ev.name.length + 3 };
    if (this.member && EXTRAS.has(ev.name)) this.member.extras.push({ name: ev.name as ExtraName, key });
    else if (this.headerOptions && !this.member) this.headerOptions.push({ key });
    else if (ev.name === 'members' && this.current) this.current.membersLine = n;
    else this.problem('warning', n, ev.column, `unknown element <${ev.name}/> skipped`, `<${ev.name}/>`);
  }

  private close(ev: XmlEvent, n: number): void {
    switch (ev.name) {
      case 'ipsets':
      case 'members':
        return;
      case 'ipset':
        this.current = undefined;
        return;
      case 'header':
        if (this.current && this.headerLabel) this.current.header = { label: this.headerLabel, options: this.headerOptions ?? [] };
        this.headerOptions = undefined;
        return;
      case 'member': {
        const member = this.member;
        if (member?.element && this.current) this.current.members.push({ element: member.element, extras: member.extras });
        else this.problem('error', member?.line ?? n, member?.column ?? ev.column, '<member> without <elem>', '</member>');
        this.member = undefined;
        return;
      }
      default:
        this.endLeaf(ev.name, n, ev.column);
    }
  }

  private endLeaf(name: string, line: number, column: number): void {
    const leaf = this.leaf;
    if (!leaf || leaf.name !== name) {
      this.problem('error', line, column, `closing </${name}> without matching <${name}>`, `</${name}>`);
      return;
    }
    const value: Tok = { text: unescape(leaf.text), line: leaf.textLine, column: leaf.textColumn, endColumn: leaf.textColumn + leaf.text.length };
    const key: Tok = { text: name, line: leaf.line, column: leaf.column, endColumn: leaf.column + name.length + 2 };
    this.leaf = undefined;
    if (this.member) {
      if (name === 'elem') this.member.element = value;
      else if (EXTRAS.has(name)) {
        const v = name === 'comment' ? unquote(value) : value;
        this.member.extras.push({ name: name as ExtraName, key, value: v });
      } else this.problem('warning', key.line, key.column, `unknown member element <${name}> skipped`, `<${name}>`);
      return;
    }
    this.setField(name, key, value);
  }

  /** A leaf of `<ipset>` (type, revision, sizes) or of its `<header>`. */
  private setField(name: string, key: Tok, value: Tok): void {
    const current = this.current;
    if (!current) {
      this.problem('warning', key.line, key.column, `<${name}> outside <ipset>`, `<${name}>`);
      return;
    }
    switch (name) {
      case 'type':
        current.type = value;
        return;
      case 'revision':
        current.revision = value;
        return;
      case 'memsize':
        current.size = value;
        return;
      case 'references':
        current.references = value;
        return;
      case 'numentries':
        current.entries = value;
        return;
    }
    if (this.headerOptions) this.headerOptions.push({ key, value });
    else this.problem('warning', key.line, key.column, `unknown element <${name}> skipped`, `<${name}>`);
  }
}

function unquote(v: Tok): Tok {
  if (v.text.length >= 2 && v.text.startsWith('"') && v.text.endsWith('"')) {
    return { text: v.text.slice(1, -1), line: v.line, column: v.column + 1, endColumn: v.endColumn - 1 };
  }
  return v;
}
