/**
 * ipvsadm line syntax (grammars/ipvsadm) → IpvsDump (src/model/ipvs.ts).
 *
 * Interprets what the grammar leaves open: addresses and named ports (./ipvsadm-values.ts), the
 * meaning of the counter columns in each view (`-Ln`, `--stats`, `--rate`, `--thresholds`,
 * `--persistent-conn`, `--tun-info`: ./ipvsadm-listing.ts), `--save` rule options
 * (./ipvsadm-save.ts), and `-Lnc` connection entries (./ipvsadm-connection.ts). Value problems
 * become diagnostics; the line is kept (model or `unsupported`), never dropped.
 */
import { diagnostic, printable, type Diagnostic } from '../source/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import type { IpvsDump, IpvsView } from '../model/ipvs.js';
import { parseIpvsadmSyntax, type IpvsadmEntry, type IpvsadmSyntax, type IpvsadmView } from '../../grammars/ipvsadm/index.js';
import { IpvsReading } from './ipvsadm-reading.js';
import { readListedRealServer, readListedService } from './ipvsadm-listing.js';
import { readSaveRule } from './ipvsadm-save.js';
import { buildConnection } from './ipvsadm-connection.js';

export { parseIpvsEndpoint } from './ipvsadm-values.js';

/** Normalise the grammar's view to the model's; `tun-info` is a `list`. */
function modelView(v: IpvsadmView): IpvsView {
  return v === 'tun-info' ? 'list' : v;
}

export function extractIpvsDump(text: string, file: string): { dump: IpvsDump; diagnostics: Diagnostic[] } {
  const syntax = parseIpvsadmSyntax(text, file);
  const r = new IpvsReading(file, syntax.lastLine, syntax.diagnostics);
  for (const e of syntax.entries) readEntry(r, e);
  return { dump: dumpOf(r, syntax), diagnostics: r.diagnostics.sort((a, b) => a.line - b.line || a.column - b.column) };
}

function readEntry(r: IpvsReading, e: IpvsadmEntry): void {
  switch (e.kind) {
    case 'version':
      r.version ??= e.version;
      if (e.size !== undefined) r.tableSize ??= e.size;
      r.section++;
      r.current = undefined;
      return;
    case 'title':
      r.dumpView ??= modelView(e.view);
      r.section++;
      r.current = undefined;
      return;
    case 'title2':
      return;
    case 'skipped':
      (e.noise ? r.noise : r.unsupported).push({ line: e.line, text: e.text, reason: e.reason });
      return;
    case 'syntax':
      break;
  }
  const s = e.syntax;
  if (s.kind === 'service') readListedService(r, s, e.view, e.line, e.text);
  else if (s.kind === 'real-server') readListedRealServer(r, s, e.view, e.line, e.text);
  else if (s.kind === 'save') {
    r.dumpView ??= 'save';
    readSaveRule(r, s, e.line, e.text);
  } else {
    r.dumpView ??= 'connections';
    const c = buildConnection(r, s, e.line, e.text);
    if (c) r.connections.push(c);
  }
}

function dumpOf(r: IpvsReading, syntax: IpvsadmSyntax): IpvsDump {
  const { version, tableSize, virtualServers, connections, dumpView } = r;
  const dump: IpvsDump = {
    ...(version !== undefined ? { version } : {}),
    ...(tableSize !== undefined ? { tableSize } : {}),
    virtualServers,
    ...(connections.length > 0 || dumpView === 'connections' ? { connections } : {}),
    view: dumpView ?? 'list',
    unsupported: r.unsupported.sort((a, b) => a.line - b.line),
    noise: r.noise,
  };
  // The text ends inside a listing line (no final newline after a virtual or real server line): the
  // dump was cut there, and the last virtual server's real servers may go on past the cut.
  const last = syntax.entries[syntax.entries.length - 1];
  const cutInListing = syntax.missingFinalNewline && virtualServers.length > 0 && dumpView !== 'connections' && (last?.kind === 'syntax' || (last?.kind === 'skipped' && !last.noise)) && last.line === syntax.lastLine;
  if (cutInListing) (dump as { truncated?: { line: number } }).truncated = { line: syntax.lastLine };
  return dump;
}

export const ipvsadmParser: FormatParser<IpvsDump> = {
  id: 'ipvsadm',
  parse(text: string, file: string): ParsedInput<IpvsDump> {
    let result: { dump: IpvsDump; diagnostics: Diagnostic[] };
    try {
      result = extractIpvsDump(text, file);
    } catch (err) {
      // Parsing must never throw on user input; a bug here still yields a diagnostic.
      result = {
        dump: { virtualServers: [], view: 'list', unsupported: [], noise: [] },
        diagnostics: [diagnostic('error', 'internal/exception', `ipvsadm parser failed: ${printable(String(err), 200)}`, file, 1, 1)],
      };
    }
    const { dump, diagnostics } = result;
    const counts: Record<string, number> = {
      virtualServers: dump.virtualServers.length,
      realServers: dump.virtualServers.reduce((n, vs) => n + vs.realServers.length, 0),
    };
    if (dump.connections) counts.connections = dump.connections.length;
    return { format: 'ipvsadm', file, data: dump, diagnostics, counts };
  },
};
