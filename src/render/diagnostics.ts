/** `file:line:column: severity code: message (expected …, found …)` — the compiler convention. */
import { printable, type Diagnostic } from '../source/index.js';
import type { Colors } from './colors.js';

export function formatDiagnostic(d: Diagnostic, c?: Colors): string {
  const sev = c ? (d.severity === 'error' ? c.red(d.severity) : d.severity === 'warning' ? c.yellow(d.severity) : c.dim(d.severity)) : d.severity;
  const where = `${printable(d.file, 200)}:${d.line}:${d.column}`;
  const tail = d.expected !== undefined || d.found !== undefined ? ` (expected ${d.expected ?? '?'}, found ${d.found ?? '?'})` : '';
  const msg = d.message.includes('expected ') ? printable(d.message, 300) : printable(d.message, 300) + tail;
  return `${where}: ${sev} ${d.code}: ${msg}`;
}
