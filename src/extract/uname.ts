/** `uname -r` / `uname -a` / `/proc/version` → KernelInfo. */
import { parseUnameText } from '../../grammars/uname/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import type { KernelInfo } from '../model/iface.js';
import { diagnostic, printable, type Diagnostic } from '../source/index.js';

export function extractUname(text: string, file: string): { info?: KernelInfo; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  let info: KernelInfo | undefined;
  for (const l of parseUnameText(text).lines) {
    if (l.kind === 'error') {
      diagnostics.push(diagnostic('error', 'parse/unexpected-token', `cannot read this as a kernel version: ${l.message}`, file, l.line, l.column, { expected: 'a kernel release such as 6.8.0-45-generic', found: printable(l.text.trim()) }));
    } else info ??= { release: l.release, text: printable(l.text.trim(), 200), file, line: l.line };
  }
  return info ? { info, diagnostics } : { diagnostics };
}

export const unameParser: FormatParser<KernelInfo | undefined> = {
  id: 'uname',
  parse(text: string, file: string): ParsedInput<KernelInfo | undefined> {
    const { info, diagnostics } = extractUname(text, file);
    return { format: 'uname', file, data: info, diagnostics, counts: { kernels: info ? 1 : 0 } };
  },
};
