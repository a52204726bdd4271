/** Connection-tracking dumps → ConntrackTable / ConntrackStats (src/model/conntrack.ts). */
import { ConntrackListingReader, parseConntrackStats, PROTOCOLS, REDACTED, type EntrySyntax } from '../../grammars/conntrack/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import type { TextStream } from '../../grammars/common/stream.js';
import { CT_FLAG, ConntrackTable, type ConntrackStats, type CtRow } from '../model/conntrack.js';
import { diagnostic, type Diagnostic } from '../source/index.js';
import { formatIp, parseIp } from '../model/addr.js';

/**
 * /proc/net/nf_conntrack prints IPv6 addresses in full (`fd00:0000:…:0001`), conntrack -L compressed:
 * the table keeps one spelling, the compressed one (as kube-proxy and ip print them).
 */
const v6 = new Map<string, string>();
function address(text: string): string {
  if (!text.includes(':')) return text;
  let c = v6.get(text);
  if (c === undefined) {
    const ip = parseIp(text);
    c = ip ? formatIp(ip) : text;
    if (v6.size < 100_000) v6.set(text, c);
  }
  return c;
}

const NONE = -1;

function num(words: readonly string[], i: number): number {
  if (i < 0) return NONE;
  const w = words[i];
  const v = w.slice(w.indexOf('=') + 1);
  if (REDACTED.test(v)) return NONE;
  return v.startsWith('0x') ? parseInt(v, 16) : Number(v);
}

/** The row of one entry (values were checked by the grammar's reader). */
function rowOf(e: EntrySyntax): CtRow {
  const { words, plan: p } = e;
  const val = (i: number): string => words[i].slice(words[i].indexOf('=') + 1);
  const proto = words[p.proto];
  const oSrc = address(val(p.orig.src));
  const icmp = p.orig.type >= 0;
  let flags = 0;
  if (p.unreplied >= 0) flags |= CT_FLAG.unreplied;
  if (p.assured >= 0) flags |= CT_FLAG.assured;
  if (p.offload >= 0) flags |= CT_FLAG.offload;
  if (p.hwOffload >= 0) flags |= CT_FLAG.hwOffload;
  for (const i of [p.orig.src, p.orig.dst, p.reply.src, p.reply.dst, p.orig.sport, p.orig.dport, p.reply.sport, p.reply.dport]) if (i >= 0 && REDACTED.test(val(i))) flags |= CT_FLAG.redacted;
  // An `id=` read into a TCP/UDP tuple (no mark/use printed between) is the entry's id (`-o id`).
  const stray = !icmp && p.reply.id >= 0 ? p.reply.id : NONE;
  return {
    family: p.l3 >= 0 ? (words[p.l3] === 'ipv6' ? 6 : 4) : oSrc.includes(':') ? 6 : 4,
    protoNum: Number(words[p.protonum]),
    proto,
    timeout: p.timeout >= 0 ? Number(words[p.timeout]) : NONE,
    state: p.state >= 0 ? words[p.state] : undefined,
    flags,
    oSrc,
    oDst: address(val(p.orig.dst)),
    rSrc: address(val(p.reply.src)),
    rDst: address(val(p.reply.dst)),
    // ICMP: the echo id stands in the source-port column (it is what identifies the flow).
    oSport: icmp ? num(words, p.orig.id) : num(words, p.orig.sport),
    oDport: num(words, p.orig.dport),
    rSport: icmp ? num(words, p.reply.id) : num(words, p.reply.sport),
    rDport: num(words, p.reply.dport),
    oType: num(words, p.orig.type),
    oCode: num(words, p.orig.code),
    rType: num(words, p.reply.type),
    rCode: num(words, p.reply.code),
    mark: num(words, p.mark),
    zone: p.zones.length > 0 ? num(words, p.zones[0]) : NONE,
    use: num(words, p.use),
    id: p.id >= 0 ? num(words, p.id) : stray >= 0 ? num(words, stray) : NONE,
    line: e.line,
  };
}

/**
 * A streaming builder: push text chunks (`push`), then `finish()`. The loader of a big file hands
 * it chunks as they are read, so neither the file nor its lines are ever held whole.
 */
export class ConntrackTableBuilder {
  readonly table: ConntrackTable;
  readonly diagnostics: Diagnostic[] = [];
  private readonly reader: ConntrackListingReader;
  constructor(readonly file: string) {
    this.table = new ConntrackTable(file);
    const table = this.table;
    this.reader = new ConntrackListingReader(file, {
      entry: (e) => {
        if (e.plan.l3 >= 0) table.variant = 'proc';
        table.add(rowOf(e));
      },
      summary: (s) => {
        table.shown = { count: s.count, line: s.line, version: s.version };
      },
      diagnostic: (d) => this.diagnostics.push(d),
    });
  }
  push(chunk: string): void {
    this.reader.push(chunk);
  }
  finish(): { table: ConntrackTable; diagnostics: Diagnostic[]; shapes: number; fullParses: number } {
    const end = this.reader.end();
    const t = this.table;
    if (t.shown && t.shown.count !== t.size) {
      const cut = end.missingFinalNewline ? ' (the file does not end with a newline: it may be cut)' : '';
      this.diagnostics.push(
        diagnostic('warning', 'conntrack/count-mismatch', `conntrack says ${t.shown.count} flow entries were shown, kpx read ${t.size}${cut}; entries may be missing from the dump`, this.file, t.shown.line, 1),
      );
    }
    return { table: t, diagnostics: this.diagnostics, shapes: this.reader.shapes, fullParses: this.reader.fullParses };
  }
}

export function extractConntrack(text: string, file: string): { table: ConntrackTable; diagnostics: Diagnostic[] } {
  const b = new ConntrackTableBuilder(file);
  const CHUNK = 1 << 20;
  for (let i = 0; i < text.length; i += CHUNK) b.push(text.slice(i, i + CHUNK));
  return b.finish();
}

function parsedTable(table: ConntrackTable, diagnostics: Diagnostic[], file: string): ParsedInput<ConntrackTable> {
  return { format: 'conntrack', file, data: table, diagnostics, variant: table.variant === 'proc' ? 'proc' : undefined, counts: { entries: table.size } } as ParsedInput<ConntrackTable>;
}

export const conntrackParser: FormatParser<ConntrackTable> = {
  id: 'conntrack',
  parse(text: string, file: string): ParsedInput<ConntrackTable> {
    const { table, diagnostics } = extractConntrack(text, file);
    return parsedTable(table, diagnostics, file);
  },
  // The input layer hands the listing over block by block: a table of millions of entries is never one string.
  async parseStream(text: TextStream, file: string): Promise<ParsedInput<ConntrackTable>> {
    const b = new ConntrackTableBuilder(file);
    for await (const block of text) b.push(block);
    const { table, diagnostics } = b.finish();
    return parsedTable(table, diagnostics, file);
  },
};

export function extractConntrackStats(text: string, file: string): { stats: ConntrackStats; diagnostics: Diagnostic[] } {
  const syntax = parseConntrackStats(text, file);
  const diagnostics: Diagnostic[] = [...syntax.diagnostics];
  const totals: Record<string, number> = {};
  const lineOf: Record<string, number> = {};
  const cpus: { cpu: number; line: number; counters: Record<string, number> }[] = [];
  let count: { value: number; line: number } | undefined;
  let form: ConntrackStats['form'] | undefined;
  const note = (name: string, value: number, line: number): void => {
    totals[name] = (totals[name] ?? 0) + value;
    if (lineOf[name] === undefined || (value > 0 && totals[name] === value)) lineOf[name] = line;
  };
  for (const l of syntax.lines) {
    if (l.kind === 'cpu') {
      form ??= 'per-cpu';
      const counters: Record<string, number> = {};
      for (const f of l.fields) {
        counters[f.name] = f.value;
        note(f.name, f.value, l.line);
      }
      cpus.push({ cpu: l.cpu, line: l.line, counters });
    } else if (l.kind === 'counter') {
      form ??= 'summary';
      note(l.field.name, l.field.value, l.line);
      if (l.field.name === 'entries') count = { value: l.field.value, line: l.line };
    } else {
      form ??= 'count';
      count = { value: l.value, line: l.line };
    }
  }
  const kinds = new Set(syntax.lines.map((l) => l.kind));
  if (kinds.size > 1) diagnostics.push(diagnostic('warning', 'conntrack/mixed-stats', 'this file mixes conntrack -S forms (per-CPU, one counter per line, a lone count); each line is read on its own', file, 1, 1));
  return { stats: { file, form: form ?? 'count', totals, cpus, lineOf, ...(count ? { count } : {}) }, diagnostics };
}

export const conntrackStatsParser: FormatParser<ConntrackStats> = {
  id: 'conntrack-stats',
  parse(text: string, file: string): ParsedInput<ConntrackStats> {
    const { stats, diagnostics } = extractConntrackStats(text, file);
    return { format: 'conntrack-stats', file, data: stats, diagnostics, variant: stats.form, counts: stats.form === 'per-cpu' ? { cpus: stats.cpus.length } : { counters: Object.keys(stats.totals).length } };
  },
};

export { PROTOCOLS };
