/**
 * `sysctl -a` / `sysctl KEY…` output (`key = value`), sysctl.conf lines (`key=value`, `# comment`,
 * `-key = value`), `/proc/sys/…` path forms (`grep -r . /proc/sys/net` → `PATH:VALUE`, `PATH = VALUE`),
 * and how people paste them: after prompts (`$ sysctl -a | grep bridge`, with the output of other
 * commands between), through grep (`FILE:key = value`, `NN:key = value`, `--` group separators), with a
 * per-line machine prefix (`node2: ` from vagrant, ansible), sysctl's own errors (`cannot stat`,
 * `setting key …: No such file or directory`: the key does not exist in this kernel), `sysctl --system`'s
 * `* Applying FILE ...` lines, and the author's words around them. A line-oriented regular language: one
 * regular expression per line shape is the whole grammar, so no Chevrotain here (a lexer would add
 * start-up cost and nothing else; README.md). Syntax only: keys are normalised to sysctl's dotted form.
 */
import { noiseKind, promptCommand, splitInput, type NoiseKind } from '../common/text.js';
import { machinePrefix } from './prefix.js';

export { machinePrefix } from './prefix.js';

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
      /** The file grep named before the entry (`/etc/sysctl.d/k8s.conf:net… = 1`): a configured value, not necessarily the kernel's. */
      readonly origin?: string;
    }
  | { readonly kind: 'comment'; readonly line: number; readonly text: string }
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: NoiseKind | 'other-output' | 'prose' | 'applying' }
  /** sysctl's own error; `absent`: it says the key does not exist in this kernel. */
  | { readonly kind: 'stderr'; readonly line: number; readonly text: string; readonly key?: string; readonly absent?: boolean }
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
/** grep's prefixes: the file (`-H`, `-r`) and the line number (`-n`), `:` on matches, `-` on context lines. */
const GREP_PREFIX = /^(\/[^\s:]+|[\w.-]+\.conf)[:-](?:(\d+)[:-])?(?=\s*-?(?:net|kernel|vm|fs|dev|user|abi|debug|crypto|sunrpc)\.)/;
const LINE_NUMBER = /^(\d+)[:-](?=\s*-?(?:net|kernel|vm|fs|dev|user|abi|debug|crypto|sunrpc)\.)/;
/** `sysctl --system` names each file it applies. */
const APPLYING = /^\s*\* Applying \S+ \.\.\.\s*$/;
/** Commands whose output is sysctl's (after a prompt running anything else, unreadable lines are its output). */
const SYSCTL_COMMAND = /\b(sysctl|grep|egrep|cat|sort|head|tail|find|for|xargs|tee)\b/;

/** The author's words around a paste: a sentence (four words or more, no `=`), or a chat's author line. */
function isProse(line: string): boolean {
  if (/^\s*\S+ \[\d{1,2}:\d\d(?::\d\d)? ?(?:AM|PM)?\]\s*$/i.test(line)) return true;
  if (line.includes('=')) return false;
  const words = line.trim().split(/\s+/);
  return words.length >= 4 && words.filter((w) => /^[A-Za-z'’,.?!:()-]+$/.test(w)).length * 4 >= words.length * 3;
}

function stderrLine(raw: string, line: number): SysctlSyntaxLine {
  const k = /key ["']([^"']+)["']/.exec(raw) ?? /\/proc\/sys\/(\S+?):/.exec(raw);
  const key = k ? (k[0].startsWith('key') ? k[1] : sysctlKeyFromPath(`/proc/sys/${k[1]}`)) : undefined;
  // "cannot stat /proc/sys/…: No such file or directory", `setting key "…": No such file or directory`, "unknown key".
  const absent = key !== undefined && /No such file or directory|unknown key|cannot stat/i.test(raw);
  return { kind: 'stderr', line, text: raw, ...(key ? { key } : {}), ...(absent ? { absent: true } : {}) };
}

function entryLine(body: string, raw: string, line: number, shift: number, origin: string | undefined): SysctlSyntaxLine | undefined {
  const o = origin ? { origin } : {};
  const p = PROC.exec(body);
  if (p) {
    const valueColumn = shift + p[1].length + p[2].length + p[3].length + 1;
    return { kind: 'entry', line, text: raw, key: sysctlKeyFromPath(p[2]), keyColumn: shift + p[1].length + 1, value: p[4], valueColumn, form: 'proc-path', ...o };
  }
  const m = ENTRY.exec(body);
  if (!m) return undefined;
  const keyColumn = shift + m[1].length + m[2].length + 1;
  const valueColumn = keyColumn + m[3].length + m[4].length + 1 + m[5].length;
  const form = m[4] === '' && m[5] === '' ? 'conf' : 'sysctl';
  // A sysctl.conf value may carry a trailing comment (`net.ipv4.ip_forward = 1  # for pods`).
  const value = form === 'conf' || origin ? m[6].replace(/\s+#.*$/, '') : m[6];
  const e: SysctlSyntaxLine = { kind: 'entry', line, text: raw, key: m[3], keyColumn, value, valueColumn, form, ...o };
  return m[2] === '-' ? { ...e, ignoreErrors: true } : e;
}

export function parseSysctlText(text: string): { lines: readonly SysctlSyntaxLine[] } {
  const input = splitInput(text);
  const out: SysctlSyntaxLine[] = [];
  const machine = machinePrefix(input.lines);
  // The command the last prompt ran: sysctl's, until a prompt runs something else.
  let sysctlOutput = true;
  input.lines.forEach((original, i) => {
    const line = i + 1;
    const strip = machine?.exec(original)?.[0].length ?? 0;
    const raw = original.slice(strip);
    if (raw.trim() === '') return;
    const noise = noiseKind(raw);
    if (noise) {
      const cmd = promptCommand(raw);
      if (cmd !== undefined && cmd !== '') sysctlOutput = SYSCTL_COMMAND.test(cmd);
      return void out.push({ kind: 'noise', line, text: original, noise });
    }
    if (APPLYING.test(raw)) return void out.push({ kind: 'noise', line, text: original, noise: 'applying' });
    if (COMMENT.test(raw)) return void out.push({ kind: 'comment', line, text: original });
    if (STDERR.test(raw)) return void out.push(stderrLine(raw, line));
    const file = GREP_PREFIX.exec(raw);
    const g = file ?? LINE_NUMBER.exec(raw);
    const body = g ? raw.slice(g[0].length) : raw;
    const e = entryLine(body, original, line, strip + (g ? g[0].length : 0), file ? file[1] : undefined);
    if (e) return void out.push(e);
    if (!sysctlOutput) return void out.push({ kind: 'noise', line, text: original, noise: 'other-output' });
    if (isProse(raw)) return void out.push({ kind: 'noise', line, text: original, noise: 'prose' });
    const col = strip + raw.search(/\S/) + 1;
    out.push({ kind: 'error', line, text: original, column: col, message: 'expected `key = value`' });
  });
  return { lines: out };
}
