/**
 * `sysctl -a` / `sysctl KEY…` output (`key = value`), sysctl.conf lines (`key=value`, `# comment`,
 * `-key = value`), and `/proc/sys/…` path forms (`grep -r . /proc/sys/net` → `PATH:VALUE`,
 * `PATH = VALUE`). A line-oriented regular language: one regular expression per line shape is
 * the whole grammar, so no Chevrotain here (a lexer would add start-up cost and nothing else).
 * Syntax only: keys are normalised to sysctl's dotted form by sysctlKeyFromPath().
 */
import { noiseKind, splitInput, type NoiseKind } from '../common/text.js';

export type SysctlSyntaxLine =
  | {
      readonly kind: 'entry';
      readonly line: number;
      readonly text: string;
      /** Dotted key (`net.ipv4.conf.flannel/1.rp_filter`). */
      readonly key: string;
      readonly keyColumn: number;
      readonly value: string;
      readonly valueColumn: number;
      /** How it was written. */
      readonly form: 'sysctl' | 'conf' | 'proc-path';
      /** sysctl.conf `-key = value`: ignore errors for this key. */
      readonly ignoreErrors?: boolean;
    }
  | { readonly kind: 'comment'; readonly line: number; readonly text: string }
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: NoiseKind }
  | { readonly kind: 'stderr'; readonly line: number; readonly text: string; readonly key?: string }
  | { readonly kind: 'error'; readonly line: number; readonly text: string; readonly column: number; readonly message: string };

/** `/proc/sys/net/ipv4/conf/flannel.1/rp_filter` → `net.ipv4.conf.flannel/1.rp_filter` (what sysctl prints). */
export function sysctlKeyFromPath(path: string): string {
  const rel = path.replace(/^\/proc\/sys\//, '');
  return rel.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

const KEY = String.raw`[A-Za-z0-9_][A-Za-z0-9_.:@/+-]*`;
/** `key = value`, `key=value`, `key =` (empty value), with an optional leading `-`. */
const ENTRY = new RegExp(String.raw`^(\s*)(-?)(${KEY})(\s*)=(\s*)(.*?)\s*$`);
/** `/proc/sys/net/ipv4/ip_forward:1` (grep -r . /proc/sys) or `/proc/sys/… = 1` / `/proc/sys/…: 1`. */
const PROC = /^(\s*)(\/proc\/sys\/[^\s:=]+)(\s*[:=]\s*)(.*?)\s*$/;
const STDERR = /^\s*(sysctl: .*|grep: .*|cat: .*)$/;
const COMMENT = /^\s*[#;]/;

export function parseSysctlText(text: string): { lines: readonly SysctlSyntaxLine[] } {
  const input = splitInput(text);
  const out: SysctlSyntaxLine[] = [];
  input.lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const noise = noiseKind(raw);
    if (noise) return void out.push({ kind: 'noise', line, text: raw, noise });
    if (COMMENT.test(raw)) return void out.push({ kind: 'comment', line, text: raw });
    const se = STDERR.exec(raw);
    if (se) {
      const k = /key '([^']+)'|\/proc\/sys\/(\S+?):/.exec(raw);
      const key = k ? (k[1] ?? sysctlKeyFromPath(`/proc/sys/${k[2]}`)) : undefined;
      return void out.push(key ? { kind: 'stderr', line, text: raw, key } : { kind: 'stderr', line, text: raw });
    }
    const p = PROC.exec(raw);
    if (p) {
      const valueColumn = p[1].length + p[2].length + p[3].length + 1;
      return void out.push({ kind: 'entry', line, text: raw, key: sysctlKeyFromPath(p[2]), keyColumn: p[1].length + 1, value: p[4], valueColumn, form: 'proc-path' });
    }
    const m = ENTRY.exec(raw);
    if (m) {
      const keyColumn = m[1].length + m[2].length + 1;
      const valueColumn = keyColumn + m[3].length + m[4].length + 1 + m[5].length;
      const form = m[4] === '' && m[5] === '' ? 'conf' : 'sysctl';
      const e: SysctlSyntaxLine = { kind: 'entry', line, text: raw, key: m[3], keyColumn, value: m[6], valueColumn, form };
      return void out.push(m[2] === '-' ? { ...e, ignoreErrors: true } : e);
    }
    const col = raw.search(/\S/) + 1;
    out.push({ kind: 'error', line, text: raw, column: col, message: 'expected `key = value`' });
  });
  return { lines: out };
}
