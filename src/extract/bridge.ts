/** `bridge link` / `bridge -d link` text → BridgePortDump (one port per header, `-d` settings on the next line). */
import { parseBridgeLinkText, type Tok } from '../../grammars/bridge/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import type { BridgePort, BridgePortDump } from '../model/iface.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const onOff = (v: string | undefined): boolean | undefined => (v === 'on' ? true : v === 'off' ? false : undefined);

export function extractBridgeLink(text: string, file: string): { dump: BridgePortDump; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const unsupported: { line: number; text: string; reason: string }[] = [];
  const ports: Mutable<BridgePort>[] = [];
  let current: Mutable<BridgePort> | undefined;
  const settings = (p: Mutable<BridgePort>, words: readonly Tok[], line: number, lineText: string) => {
    for (let i = 0; i + 1 < words.length; i++) {
      const k = words[i].text;
      const v = words[i + 1].text;
      if (k === 'master') p.bridge = v;
      else if (k === 'state') p.state = v;
      else if (k === 'hairpin' || k === 'learning') {
        const b = onOff(v);
        if (b === undefined) {
          diagnostics.push(diagnostic('error', 'bridge-link/bad-value', `${k} ${JSON.stringify(printable(v))} is neither on nor off`, file, line, words[i + 1].column, { expected: 'on or off', found: printable(v) }));
          continue;
        }
        p[k] = b;
        p.line = line;
        p.text = printable(lineText.trim(), 200);
      }
    }
  };
  for (const l of parseBridgeLinkText(text).lines) {
    if (l.kind === 'noise') {
      unsupported.push({ line: l.line, text: l.text, reason: `noise (${l.noise})` });
      diagnostics.push(diagnostic('info', 'input/noise', `skipped ${l.noise} line: ${printable(l.text.trim())}`, file, l.line, 1));
      continue;
    }
    if (l.kind === 'stderr') {
      unsupported.push({ line: l.line, text: l.text, reason: 'stderr message' });
      diagnostics.push(diagnostic('warning', 'input/stderr', `skipped an error message from bridge: ${printable(l.text.trim())}`, file, l.line, 1));
      continue;
    }
    if (l.kind === 'error') {
      const e = l.errors[0];
      unsupported.push({ line: l.line, text: l.text, reason: 'syntax error' });
      diagnostics.push(diagnostic('error', 'parse/unexpected-token', `cannot read this as a bridge link line: ${printable(e.message, 160)}`, file, l.line, e.column, { expected: e.expected, found: e.found === undefined ? undefined : printable(e.found) }));
      continue;
    }
    const h = l.node.header;
    if (h) {
      current = { port: h.name.text.replace(/:$/, '').replace(/@.*$/, ''), file, line: l.line };
      ports.push(current);
      settings(current, h.words, l.line, l.text);
      continue;
    }
    const s = l.node.segments[0];
    if (!current) {
      unsupported.push({ line: l.line, text: l.text, reason: 'settings before any port' });
      diagnostics.push(diagnostic('error', 'bridge-link/no-port', 'port settings before any port header', file, l.line, s.head.column, { expected: '`INDEX: PORT: <FLAGS> … master BRIDGE state …`', found: printable(s.head.text) }));
      continue;
    }
    settings(current, [s.head, ...s.words], l.line, l.text);
  }
  return { dump: { ports, unsupported }, diagnostics };
}

export const bridgeLinkParser: FormatParser<BridgePortDump> = {
  id: 'bridge-link',
  parse(text: string, file: string): ParsedInput<BridgePortDump> {
    const { dump, diagnostics } = extractBridgeLink(text, file);
    return { format: 'bridge-link', file, data: dump, diagnostics, counts: { ports: dump.ports.length } };
  },
};
