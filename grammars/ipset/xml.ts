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
import type { HeaderSyntax, ListBlockSyntax, SkippedLine } from './index.js';
import type { OptionSyntax } from './options.js';
import type { ExtraName, ExtraSyntax, MemberSyntax, Tok } from './parser.js';

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

interface MutableBlock {
  line: number;
  name: Tok;
  type?: Tok;
  revision?: Tok;
  header?: HeaderSyntax;
  size?: Tok;
  references?: Tok;
  entries?: Tok;
  membersLine?: number;
  members: MemberSyntax[];
}

export function parseIpsetXmlLines(
  lines: readonly string[],
  start: number,
  file: string,
  lastLineTruncated: boolean,
): { blocks: ListBlockSyntax[]; skipped: SkippedLine[]; diagnostics: Diagnostic[] } {
  const blocks: MutableBlock[] = [];
  const skipped: SkippedLine[] = [];
  const diagnostics: Diagnostic[] = [];
  let current: MutableBlock | undefined;
  let headerOptions: OptionSyntax[] | undefined;
  let headerLabel: Tok | undefined;
  let member: { element?: Tok; extras: ExtraSyntax[]; line: number; column: number } | undefined;
  /** Open element whose text we are collecting. */
  let leaf: { name: string; line: number; column: number; text: string; textLine: number; textColumn: number } | undefined;

  const problem = (severity: 'error' | 'warning', line: number, column: number, message: string, found: string) =>
    diagnostics.push(diagnostic(severity, 'ipset/xml-unexpected', message, file, line, column, { found: printable(found, 40) }));

  const endLeaf = (name: string, line: number, column: number) => {
    if (!leaf || leaf.name !== name) {
      problem('error', line, column, `closing </${name}> without matching <${name}>`, `</${name}>`);
      return;
    }
    const value: Tok = { text: unescape(leaf.text), line: leaf.textLine, column: leaf.textColumn, endColumn: leaf.textColumn + leaf.text.length };
    const key: Tok = { text: name, line: leaf.line, column: leaf.column, endColumn: leaf.column + name.length + 2 };
    leaf = undefined;
    if (member) {
      if (name === 'elem') member.element = value;
      else if (EXTRAS.has(name)) {
        const v = name === 'comment' ? unquote(value) : value;
        member.extras.push({ name: name as ExtraName, key, value: v });
      } else problem('warning', key.line, key.column, `unknown member element <${name}> skipped`, `<${name}>`);
      return;
    }
    if (!current) {
      problem('warning', key.line, key.column, `<${name}> outside <ipset>`, `<${name}>`);
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
    if (headerOptions) headerOptions.push({ key, value });
    else problem('warning', key.line, key.column, `unknown element <${name}> skipped`, `<${name}>`);
  };

  for (let i = start; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i];
    if (raw.trim() === '') continue;
    const nk = noiseKind(raw) ?? (/^\s*ipset v\d/.test(raw) ? 'stderr' : undefined);
    if (nk) {
      skipped.push({ line: n, text: raw, kind: 'noise', reason: nk });
      diagnostics.push(diagnostic('info', 'input/noise', `ignored ${nk} line`, file, n, raw.length - raw.trimStart().length + 1));
      continue;
    }
    TAG.lastIndex = 0;
    const events: XmlEvent[] = [];
    for (let m = TAG.exec(raw); m; m = TAG.exec(raw)) {
      const column = m.index + 1;
      if (m[5] !== undefined) events.push({ kind: 'text', name: '', attrs: '', text: m[5], line: n, column });
      else if (m[6] !== undefined) events.push({ kind: 'text', name: '', attrs: '', text: raw.slice(m.index), line: n, column });
      else events.push({ kind: m[1] ? 'close' : m[4] ? 'empty' : 'open', name: m[2], attrs: m[3], text: '', line: n, column });
      if (m[6] !== undefined) break;
    }
    for (const ev of events) {
      if (ev.kind === 'text') {
        if (leaf) {
          if (leaf.text === '') {
            leaf.textLine = ev.line;
            leaf.textColumn = ev.column;
          }
          leaf.text += ev.text;
        } else if (ev.text.trim() !== '') {
          const truncated = lastLineTruncated && n === lines.length;
          problem(truncated ? 'warning' : 'error', ev.line, ev.column, `text outside an element`, ev.text.trim());
        }
        continue;
      }
      if (ev.kind === 'open') {
        switch (ev.name) {
          case 'ipsets':
            continue;
          case 'ipset': {
            const m = /name="([^"]*)"/.exec(ev.attrs);
            const nameCol = m ? ev.column + 1 + ev.name.length + ev.attrs.indexOf(m[0]) + 6 : ev.column;
            const name: Tok = { text: unescape(m ? m[1] : ''), line: n, column: nameCol, endColumn: nameCol + (m ? m[1].length : 0) };
            if (!m) problem('error', n, ev.column, '<ipset> without a name attribute', `<ipset${ev.attrs}>`);
            current = { line: n, name, members: [] };
            blocks.push(current);
            continue;
          }
          case 'header':
            headerOptions = [];
            headerLabel = { text: 'header', line: n, column: ev.column, endColumn: ev.column + 8 };
            continue;
          case 'members':
            if (current) current.membersLine = n;
            continue;
          case 'member':
            member = { extras: [], line: n, column: ev.column };
            continue;
          default:
            leaf = { name: ev.name, line: n, column: ev.column, text: '', textLine: n, textColumn: ev.column + ev.name.length + 2 };
            continue;
        }
      }
      if (ev.kind === 'empty') {
        const key: Tok = { text: ev.name, line: n, column: ev.column, endColumn: ev.column + ev.name.length + 3 };
        if (member && EXTRAS.has(ev.name)) member.extras.push({ name: ev.name as ExtraName, key });
        else if (headerOptions && !member) headerOptions.push({ key });
        else if (ev.name === 'members' && current) current.membersLine = n;
        else problem('warning', n, ev.column, `unknown element <${ev.name}/> skipped`, `<${ev.name}/>`);
        continue;
      }
      // close
      switch (ev.name) {
        case 'ipsets':
        case 'members':
          continue;
        case 'ipset':
          current = undefined;
          continue;
        case 'header':
          if (current && headerLabel) current.header = { label: headerLabel, options: headerOptions ?? [] };
          headerOptions = undefined;
          continue;
        case 'member':
          if (member?.element && current) current.members.push({ element: member.element, extras: member.extras });
          else problem('error', member?.line ?? n, member?.column ?? ev.column, '<member> without <elem>', '</member>');
          member = undefined;
          continue;
        default:
          endLeaf(ev.name, n, ev.column);
      }
    }
  }
  if (member?.element && current) {
    // Truncated in the middle of a member: keep what was read.
    current.members.push({ element: member.element, extras: member.extras });
  }
  if (current && headerOptions && headerLabel && !current.header) current.header = { label: headerLabel, options: headerOptions };
  return { blocks, skipped, diagnostics };
}

function unquote(v: Tok): Tok {
  if (v.text.length >= 2 && v.text.startsWith('"') && v.text.endsWith('"')) {
    return { text: v.text.slice(1, -1), line: v.line, column: v.column + 1, endColumn: v.endColumn - 1 };
  }
  return v;
}
