/** sysctl output → SysctlDump. */
import { parseSysctlText } from '../../grammars/sysctl/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import type { SysctlDump, SysctlEntry } from '../model/sysctl.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

/** What the skipped lines are, in words. */
const NOISE_WORDS: Readonly<Record<string, string>> = {
  'other-output': "another command's output (after its prompt)",
  prose: "the author's words",
  applying: "sysctl --system's file line",
};

export function extractSysctl(text: string, file: string): { dump: SysctlDump; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const entries: SysctlEntry[] = [];
  const values = new Map<string, string>();
  const unsupported: { line: number; text: string; reason: string }[] = [];
  const absent: { key: string; line: number }[] = [];
  for (const l of parseSysctlText(text).lines) {
    switch (l.kind) {
      case 'entry':
        entries.push({ key: l.key, value: l.value, line: l.line });
        values.set(l.key, l.value);
        break;
      case 'comment':
        unsupported.push({ line: l.line, text: l.text, reason: 'comment' });
        diagnostics.push(diagnostic('info', 'input/comment', `comment: ${printable(l.text.trim())}`, file, l.line, 1));
        break;
      case 'noise':
        unsupported.push({ line: l.line, text: l.text, reason: `noise (${l.noise})` });
        diagnostics.push(diagnostic('info', 'input/noise', `skipped ${NOISE_WORDS[l.noise] ?? `${l.noise} line`}: ${printable(l.text.trim())}`, file, l.line, 1));
        break;
      case 'stderr':
        unsupported.push({ line: l.line, text: l.text, reason: 'stderr message' });
        if (l.absent && l.key) absent.push({ key: l.key, line: l.line });
        diagnostics.push(
          l.absent && l.key
            ? diagnostic('info', 'input/stderr', `sysctl's error: ${printable(l.key)} does not exist in this kernel (read as absent): ${printable(l.text.trim())}`, file, l.line, 1)
            : diagnostic('warning', 'input/stderr', `skipped an error message${l.key ? ` (key ${l.key} unknown)` : ''}: ${printable(l.text.trim())}`, file, l.line, 1),
        );
        break;
      case 'error':
        unsupported.push({ line: l.line, text: l.text, reason: 'syntax error' });
        diagnostics.push(
          diagnostic('error', 'parse/unexpected-token', `cannot read this as a sysctl line: ${l.message}`, file, l.line, l.column, {
            expected: '`key = value`, `key=value` or `/proc/sys/PATH:VALUE`',
            found: printable(l.text.trim()),
          }),
        );
        break;
    }
  }
  return { dump: { entries, values, unsupported, ...(absent.length ? { absent } : {}) }, diagnostics };
}

export const sysctlParser: FormatParser<SysctlDump> = {
  id: 'sysctl',
  parse(text: string, file: string): ParsedInput<SysctlDump> {
    const { dump, diagnostics } = extractSysctl(text, file);
    return { format: 'sysctl', file, data: dump, diagnostics, counts: { entries: dump.entries.length } };
  },
};
