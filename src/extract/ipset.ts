/**
 * `ipset list` / `ipset save` syntax (grammars/ipset) → the IpSet model (src/model/ipset.ts).
 * Value problems (a redacted address, a port out of range) become warnings and the value is
 * kept as a raw part; nothing is dropped silently.
 */
import {
  parseIpsetList,
  parseIpsetSave,
  type IpsetListSyntax,
  type IpsetSaveSyntax,
  type MemberSyntax,
  type OptionSyntax,
  type SkippedLine,
  type Tok,
} from '../../grammars/ipset/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { parseCidr } from '../model/addr.js';
import { ipsetDimensions, type IpSet, type IpSetDimension, type IpSetDump, type IpSetMember, type IpSetPart, type IpSetSkipped } from '../model/ipset.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

interface Ctx {
  readonly file: string;
  readonly diagnostics: Diagnostic[];
}

function warn(ctx: Ctx, code: string, message: string, at: Tok, extra?: { expected?: string; found?: string }): void {
  ctx.diagnostics.push(diagnostic('warning', code, message, ctx.file, at.line, at.column, extra));
}

/** A non-negative integer field (`Revision: 7`), or a warning and undefined. */
function toInt(ctx: Ctx, tok: Tok | undefined, what: string): number | undefined {
  if (tok === undefined) return undefined;
  if (/^\d{1,15}$/.test(tok.text)) return Number(tok.text);
  warn(ctx, 'extract/bad-number', `${what} is not a number`, tok, { expected: 'a non-negative integer', found: `'${printable(tok.text, 40)}'` });
  return undefined;
}

const PORT = /^(?:([A-Za-z][\w-]*|\d{1,3}):)?(\d{1,5})(?:-(\d{1,5}))?$/;
const MAC = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i;
const SET_NAME = /^\S{1,31}$/;

/**
 * One dimension of an element. Returns the part and, when the text does not fit the
 * dimension, a problem description (the part is then `raw`).
 */
export function elementPart(dim: IpSetDimension, text: string, bitmapPort = false): { part: IpSetPart; problem?: string } {
  switch (dim) {
    case 'ip':
    case 'net': {
      const cidr = parseCidr(text);
      return cidr ? { part: { kind: 'ip', cidr } } : { part: { kind: 'raw', text }, problem: `'${text}' is not an IP address or prefix` };
    }
    case 'port': {
      const m = PORT.exec(text);
      if (!m) {
        // ICMP type names (`icmp:echo-request`, `icmpv6:…`) are valid but not ports.
        if (/^(icmp|icmpv6|ipv6-icmp):\S+$/.test(text)) return { part: { kind: 'raw', text } };
        return { part: { kind: 'raw', text }, problem: `'${text}' is not a [proto:]port` };
      }
      const port = Number(m[2]);
      const portEnd = m[3] === undefined ? undefined : Number(m[3]);
      if (port > 65535 || (portEnd !== undefined && (portEnd > 65535 || portEnd < port))) {
        return { part: { kind: 'raw', text }, problem: `port out of range in '${text}'` };
      }
      // A bare port: bitmap:port has no protocol; in hash types ipset reads it as tcp.
      const proto = m[1] ?? (bitmapPort ? 'any' : 'tcp');
      const part: IpSetPart = portEnd === undefined ? { kind: 'port', proto, port } : { kind: 'port', proto, port, portEnd };
      return { part };
    }
    case 'iface': {
      const physdev = text.startsWith('physdev:');
      const name = physdev ? text.slice('physdev:'.length) : text;
      return name === '' ? { part: { kind: 'raw', text }, problem: 'empty interface name' } : { part: { kind: 'iface', name, physdev } };
    }
    case 'mac':
      return MAC.test(text) ? { part: { kind: 'mac', mac: text.toLowerCase() } } : { part: { kind: 'raw', text }, problem: `'${text}' is not a MAC address` };
    case 'mark': {
      const v = /^0x[0-9a-f]{1,8}$/i.test(text) || /^\d{1,10}$/.test(text) ? Number(text) : NaN;
      return Number.isInteger(v) && v <= 0xffffffff ? { part: { kind: 'mark', value: v } } : { part: { kind: 'raw', text }, problem: `'${text}' is not a mark` };
    }
    case 'set':
      return SET_NAME.test(text) ? { part: { kind: 'setname', name: text } } : { part: { kind: 'raw', text }, problem: `'${text}' is not a set name` };
    case 'unknown':
      return { part: { kind: 'raw', text } };
  }
}

/** Split an element into parts for `type` (`hash:ip,port` + `10.96.0.10,udp:53`). */
export function elementParts(type: string, text: string): { parts: IpSetPart[]; problems: string[] } {
  const dims = ipsetDimensions(type);
  if (dims.length === 0) {
    // Unknown or missing type: guess addresses, keep the rest as text.
    const parts = text.split(',').map((t): IpSetPart => {
      const cidr = parseCidr(t);
      return cidr ? { kind: 'ip', cidr } : { kind: 'raw', text: t };
    });
    return { parts, problems: [] };
  }
  // list:set names and single-dimension elements are not split (names may hold commas).
  const texts = dims.length === 1 ? [text] : text.split(',');
  if (texts.length !== dims.length) {
    return { parts: texts.map((t) => ({ kind: 'raw', text: t })), problems: [`'${text}' has ${texts.length} part(s) but ${type} has ${dims.length}`] };
  }
  const bitmapPort = type.startsWith('bitmap:');
  const parts: IpSetPart[] = [];
  const problems: string[] = [];
  dims.forEach((dim, i) => {
    const r = elementPart(dim, texts[i], bitmapPort);
    parts.push(r.part);
    if (r.problem) problems.push(r.problem);
  });
  return { parts, problems };
}

function buildMember(ctx: Ctx, type: string, syntax: MemberSyntax): IpSetMember {
  const { element, extras } = syntax;
  const { parts, problems } = elementParts(type, element.text);
  for (const p of problems) warn(ctx, 'extract/bad-element', `${p}; kept as text`, element, { found: `'${printable(element.text, 60)}'` });
  const m: {
    -readonly [K in keyof IpSetMember]: IpSetMember[K];
  } = { text: element.text, parts, nomatch: false, line: element.line, column: element.column };
  for (const x of extras) {
    switch (x.name) {
      case 'timeout':
      case 'packets':
      case 'bytes':
      case 'skbqueue': {
        const v = toInt(ctx, x.value, x.name);
        if (v !== undefined) m[x.name] = v;
        break;
      }
      case 'comment':
        m.comment = x.value?.text ?? '';
        break;
      case 'skbmark':
      case 'skbprio':
        if (x.value) m[x.name] = x.value.text;
        break;
      case 'nomatch':
        m.nomatch = true;
        break;
    }
  }
  return m;
}

function checkType(ctx: Ctx, type: Tok): void {
  const dims = ipsetDimensions(type.text);
  if (dims.length === 0 || dims.includes('unknown')) {
    warn(ctx, 'ipset/unknown-type', `set type '${printable(type.text, 40)}' is not known to kpx; members kept as text`, type, {
      expected: 'hash:…, bitmap:… or list:set with ip/net/port/iface/mac/mark dimensions',
      found: `'${printable(type.text, 40)}'`,
    });
  }
}

function headerRecord(options: readonly OptionSyntax[] | undefined): Record<string, string | true> {
  const h: Record<string, string | true> = {};
  for (const o of options ?? []) h[o.key.text] = o.value ? o.value.text : true;
  return h;
}

function familyOf(ctx: Ctx, header: Record<string, string | true>, options: readonly OptionSyntax[] | undefined): 'inet' | 'inet6' | undefined {
  const f = header.family;
  if (f === undefined || f === true) return undefined; // a missing value was reported by the grammar
  if (f === 'inet' || f === 'inet6') return f;
  const at = options?.find((o) => o.key.text === 'family');
  if (at) warn(ctx, 'extract/bad-family', `unknown family '${printable(String(f), 20)}'`, at.value ?? at.key, { expected: 'inet or inet6', found: `'${printable(String(f), 20)}'` });
  return undefined;
}

function skippedOf(lines: readonly SkippedLine[], kind: SkippedLine['kind']): IpSetSkipped[] {
  return lines.filter((l) => l.kind === kind).map(({ line, text, reason }) => ({ line, text, reason }));
}

/** `ipset list` syntax → model. */
export function extractIpsetList(syntax: IpsetListSyntax, file: string): { dump: IpSetDump; diagnostics: Diagnostic[] } {
  const ctx: Ctx = { file, diagnostics: [...syntax.diagnostics] };
  const sets: IpSet[] = [];
  for (const b of syntax.blocks) {
    if (!b.type) warn(ctx, 'ipset/missing-field', `set ${printable(b.name.text, 40)} has no 'Type:' line; members kept as text`, b.name);
    const type = b.type?.text ?? '';
    if (b.type) checkType(ctx, b.type);
    const header = headerRecord(b.header?.options);
    const terse = b.membersLine === undefined;
    const members = b.members.map((m) => buildMember(ctx, type, m));
    const declaredEntries = toInt(ctx, b.entries, 'Number of entries');
    if (!terse && declaredEntries !== undefined && declaredEntries !== members.length && b.entries) {
      warn(ctx, 'ipset/entry-count-mismatch', `set ${printable(b.name.text, 40)} declares ${declaredEntries} entries but ${members.length} member line(s) follow (truncated or elided paste?)`, b.entries, {
        expected: String(declaredEntries),
        found: String(members.length),
      });
    }
    const set: { -readonly [K in keyof IpSet]: IpSet[K] } = {
      name: b.name.text,
      type,
      family: familyOf(ctx, header, b.header?.options),
      header,
      revision: toInt(ctx, b.revision, 'Revision'),
      sizeInMemory: toInt(ctx, b.size, 'Size in memory'),
      references: toInt(ctx, b.references, 'References'),
      declaredEntries,
      members,
      terse,
      line: b.line,
      file,
    };
    for (const k of Object.keys(set) as (keyof typeof set)[]) if (set[k] === undefined) delete set[k];
    sets.push(set);
  }
  return { dump: { sets, unsupported: skippedOf(syntax.skipped, 'unsupported'), noise: skippedOf(syntax.skipped, 'noise') }, diagnostics: ctx.diagnostics };
}

/** `ipset save` syntax → model. `add` lines attach to the set of their name. */
export function extractIpsetSave(syntax: IpsetSaveSyntax, file: string): { dump: IpSetDump; diagnostics: Diagnostic[] } {
  const ctx: Ctx = { file, diagnostics: [...syntax.diagnostics] };
  const building = new Map<string, { set: Omit<IpSet, 'members'>; members: IpSetMember[] }>();
  const unsupported = skippedOf(syntax.skipped, 'unsupported');
  for (const e of syntax.entries) {
    if (e.kind === 'create') {
      if (building.has(e.name.text)) {
        warn(ctx, 'ipset/duplicate-set', `set ${printable(e.name.text, 40)} is created twice; the second create is ignored`, e.name);
        unsupported.push({ line: e.line, text: e.text, reason: 'duplicate create' });
        continue;
      }
      const header = headerRecord(e.options);
      const set: { -readonly [K in keyof Omit<IpSet, 'members'>]: IpSet[K] } = {
        name: e.name.text,
        type: e.type.text,
        family: familyOf(ctx, header, e.options),
        header,
        terse: false,
        line: e.line,
        file,
      };
      if (set.family === undefined) delete set.family;
      checkType(ctx, e.type);
      building.set(e.name.text, { set, members: [] });
    } else {
      const target = building.get(e.name.text);
      if (!target) {
        warn(ctx, 'ipset/unknown-set', `'add' to set ${printable(e.name.text, 40)} before any 'create' for it; line skipped`, e.name, {
          expected: 'a set created earlier in the dump',
          found: `'${printable(e.name.text, 40)}'`,
        });
        unsupported.push({ line: e.line, text: e.text, reason: 'add to a set that was never created' });
        continue;
      }
      target.members.push(buildMember(ctx, target.set.type, e.member));
    }
  }
  const sets: IpSet[] = [...building.values()].map(({ set, members }) => ({ ...set, members }));
  return { dump: { sets, unsupported: unsupported.sort((a, b) => a.line - b.line), noise: skippedOf(syntax.skipped, 'noise') }, diagnostics: ctx.diagnostics };
}

/** Diagnostics in file order (grammar and extraction findings interleaved by position). */
function byPosition(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
}

function counts(dump: IpSetDump): Record<string, number> {
  return { sets: dump.sets.length, members: dump.sets.reduce((n, s) => n + s.members.length, 0) };
}

function guarded(id: 'ipset-list' | 'ipset-save', file: string, run: () => { dump: IpSetDump; diagnostics: Diagnostic[] }): ParsedInput<IpSetDump> {
  try {
    const { dump, diagnostics } = run();
    return { format: id, file, data: dump, diagnostics: byPosition(diagnostics), counts: counts(dump) };
  } catch (err) {
    // A bug in kpx, not in the input: report it instead of crashing the whole run.
    const dump: IpSetDump = { sets: [], unsupported: [], noise: [] };
    return {
      format: id,
      file,
      data: dump,
      diagnostics: [diagnostic('error', 'internal/exception', `kpx failed to read this ${id} file: ${printable(String(err), 200)}`, file, 1, 1)],
      counts: counts(dump),
    };
  }
}

export const ipsetListParser: FormatParser<IpSetDump> = {
  id: 'ipset-list',
  parse: (text, file) => guarded('ipset-list', file, () => extractIpsetList(parseIpsetList(text, file), file)),
};

export const ipsetSaveParser: FormatParser<IpSetDump> = {
  id: 'ipset-save',
  parse: (text, file) => guarded('ipset-save', file, () => extractIpsetSave(parseIpsetSave(text, file), file)),
};
