/** Cheap sniffer for sysctl output / sysctl.conf / `/proc/sys` dumps. No parser is loaded. */
/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const NOISE = /^\s*(?:```|~~~|\$ |\[[^\]]+@[^\]]+\][#$]|[\w.-]+@[\w.-]+:\S*[#$]|\.\.\.|…|EOF$|sysctl: )/;
/** Dotted keys under the known top-level sysctl trees. */
const ENTRY = /^\s*-?(?:net|kernel|vm|fs|dev|user|abi|debug|crypto|sunrpc)\.[A-Za-z0-9_.:@/+-]+\s*=\s*\S?/;
const PROC = /^\s*\/proc\/sys\/[^\s:=]+\s*[:=]/;
const COMMENT = /^\s*[#;]/;

export const sysctlSniffer: Sniffer<'sysctl'> = {
  id: 'sysctl',
  sniff(lines) {
    let content = 0;
    let hits = 0;
    for (const l of lines.slice(0, 200)) {
      if (l.trim() === '' || NOISE.test(l)) continue;
      if (COMMENT.test(l)) continue;
      content++;
      if (ENTRY.test(l) || PROC.test(l)) hits++;
    }
    if (hits === 0) return 0;
    const ratio = hits / content;
    return ratio >= 0.8 ? 1 : ratio >= 0.5 ? 0.6 : 0;
  },
};
