/**
 * The kernel's release as `uname -r` (`6.8.0-45-generic`), `uname -a` / `uname -sr`
 * (`Linux node-1 6.8.0-45-generic #45-Ubuntu SMP …`) or `/proc/version` (`Linux version 6.8.0-45-generic (…) …`)
 * print it. One line; a regular expression per form.
 */
import { noiseKind, splitInput } from '../common/text.js';

/** A kernel release: `6.8.0-45-generic`, `5.15.0`, `6.1.0-27-cloud-amd64`, `4.18.0-553.el8_10.x86_64`. */
const RELEASE = String.raw`\d+\.\d+(?:\.\d+)?(?:[-+~_.][\w.+~-]*)?`;
export const UNAME_A = new RegExp(String.raw`^\s*Linux\s+(?:(\S+)\s+)?(${RELEASE})(?:\s+#.*|\s*)$`);
export const PROC_VERSION = new RegExp(String.raw`^\s*Linux version (${RELEASE})\s`);
export const UNAME_R = new RegExp(String.raw`^\s*(${RELEASE})\s*$`);

export type UnameSyntax =
  | { readonly kind: 'release'; readonly line: number; readonly text: string; readonly release: string; readonly column: number; readonly form: 'uname-a' | 'proc-version' | 'uname-r' }
  | { readonly kind: 'error'; readonly line: number; readonly text: string; readonly column: number; readonly message: string };

export function parseUnameText(text: string): { lines: readonly UnameSyntax[] } {
  const out: UnameSyntax[] = [];
  splitInput(text).lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '' || noiseKind(raw)) return;
    const p = PROC_VERSION.exec(raw);
    if (p) return void out.push({ kind: 'release', line, text: raw, release: p[1], column: raw.indexOf(p[1]) + 1, form: 'proc-version' });
    const a = UNAME_A.exec(raw);
    if (a) return void out.push({ kind: 'release', line, text: raw, release: a[2], column: raw.indexOf(a[2], raw.indexOf('Linux') + 5 + (a[1]?.length ?? 0)) + 1, form: 'uname-a' });
    const r = UNAME_R.exec(raw);
    if (r) return void out.push({ kind: 'release', line, text: raw, release: r[1], column: raw.indexOf(r[1]) + 1, form: 'uname-r' });
    out.push({ kind: 'error', line, text: raw, column: raw.search(/\S/) + 1, message: 'expected a kernel release (`uname -r`, `uname -a` or /proc/version)' });
  });
  return { lines: out };
}
