/** Cheap sniffer for sysctl output / sysctl.conf / `/proc/sys` dumps. No parser is loaded. */
/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
import { machinePrefix } from './prefix.js';
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const NOISE = /^\s*(?:```|~~~|\$ |\[[^\]]+@[^\]]+\][#$]|[\w.-]+@[\w.-]+:\S*[#$]|\.\.\.|…|EOF$|\* Applying )/;
/** sysctl's own error naming a key: evidence too (the key does not exist, or cannot be set). */
const STDERR_KEY = /^\s*sysctl: (cannot stat \/proc\/sys\/|setting key ["']|unknown key ["']|permission denied on key ["'])/;
/** grep's file and line-number prefixes before an entry. */
const GREP = /^(?:(?:\/[^\s:]+|[\w.-]+\.conf)[:-])?(?:\d+[:-])?/;
/** Dotted keys under the known top-level sysctl trees. */
const ENTRY = /^\s*-?(?:net|kernel|vm|fs|dev|user|abi|debug|crypto|sunrpc)\.[A-Za-z0-9_.:@/+-]+\s*=\s*\S?/;
const PROC = /^\s*\/proc\/sys\/[^\s:=]+\s*[:=]/;
const COMMENT = /^\s*[#;]/;

export const sysctlSniffer: Sniffer<'sysctl'> = {
  id: 'sysctl',
  sniff(lines) {
    let content = 0;
    let hits = 0;
    const head = lines.slice(0, 200);
    // A machine prefix is only looked for when a line has the `name: ` or `name | ` shape at all.
    const machine = head.some((l) => /^\s*[A-Za-z0-9_.-]+(?:: | \| )/.test(l)) ? machinePrefix(head) : undefined;
    for (const raw of head) {
      const l = machine ? raw.replace(machine, '') : raw;
      if (l.trim() === '' || NOISE.test(l)) continue;
      if (COMMENT.test(l)) continue;
      content++;
      const body = l.replace(GREP, '');
      if (ENTRY.test(body) || PROC.test(body) || STDERR_KEY.test(l)) hits++;
      // Fifty lines and not one entry: not sysctl's (stays cheap on a big dump's head).
      else if (content > 50 && hits === 0) return 0;
    }
    if (hits === 0) return 0;
    const ratio = hits / content;
    // Pasted among the author's words (a chat transcript, a provisioning log): fewer lines are entries.
    return ratio >= 0.8 ? 1 : ratio >= 0.5 ? 0.6 : hits >= 2 && ratio >= 0.25 ? 0.45 : 0;
  },
};
