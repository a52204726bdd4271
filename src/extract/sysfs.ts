/**
 * sysfs listings of network devices → BridgePortDump. Only `brif/PORT/hairpin_mode` is modelled
 * (the bridge port's hairpin switch); other attributes are kept as understood-but-unused lines.
 */
import { parseSysfsText } from '../../grammars/sysfs/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import type { BridgePort, BridgePortDump } from '../model/iface.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

export function extractSysfs(text: string, file: string): { dump: BridgePortDump; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const unsupported: { line: number; text: string; reason: string }[] = [];
  const ports: BridgePort[] = [];
  for (const l of parseSysfsText(text).lines) {
    switch (l.kind) {
      case 'noise':
        unsupported.push({ line: l.line, text: l.text, reason: `noise (${l.noise})` });
        diagnostics.push(diagnostic('info', 'input/noise', `skipped ${l.noise} line: ${printable(l.text.trim())}`, file, l.line, 1));
        break;
      case 'stderr':
        unsupported.push({ line: l.line, text: l.text, reason: 'stderr message' });
        diagnostics.push(diagnostic('warning', 'input/stderr', `skipped an error message: ${printable(l.text.trim())}`, file, l.line, 1));
        break;
      case 'error':
        unsupported.push({ line: l.line, text: l.text, reason: 'syntax error' });
        diagnostics.push(diagnostic('error', 'parse/unexpected-token', `cannot read this as a sysfs line: ${l.message}`, file, l.line, l.column, { expected: '`/sys/class/net/DEVICE/ATTRIBUTE:VALUE`', found: printable(l.text.trim()) }));
        break;
      case 'entry': {
        const m = /^brif\/([^/]+)\/hairpin_mode$/.exec(l.attribute);
        if (!m) {
          unsupported.push({ line: l.line, text: l.text, reason: `sysfs attribute ${l.attribute} (not used by kpx)` });
          break;
        }
        if (l.value !== '0' && l.value !== '1') {
          diagnostics.push(diagnostic('error', 'sysfs/bad-value', `hairpin_mode ${JSON.stringify(printable(l.value))} is neither 0 nor 1`, file, l.line, l.valueColumn, { expected: '0 or 1', found: printable(l.value) }));
          break;
        }
        ports.push({ port: m[1], bridge: l.device, hairpin: l.value === '1', file, line: l.line, text: printable(l.text.trim(), 200) });
      }
    }
  }
  return { dump: { ports, unsupported }, diagnostics };
}

export const sysfsNetParser: FormatParser<BridgePortDump> = {
  id: 'sysfs-net',
  parse(text: string, file: string): ParsedInput<BridgePortDump> {
    const { dump, diagnostics } = extractSysfs(text, file);
    return { format: 'sysfs-net', file, data: dump, diagnostics, counts: { ports: dump.ports.length } };
  },
};
