/**
 * Cheap sniffer for `bridge link` / `bridge -d link` text. Its header looks like `ip link`'s
 * (`4: veth1@if2: <…> mtu 1500 master cni0 state forwarding priority 32 cost 2`), so it is told
 * apart by the port's STP state word and `priority N cost N`, and by `-d`'s `hairpin on|off …` lines.
 */
import { noiseKind } from '../common/text.js';

/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

const HEADER = /^\s*\d+:\s+\S+:\s+<[A-Z0-9_,-]*>.*\bstate\s+(?:forwarding|disabled|blocking|listening|learning)\b.*\bpriority\s+\d+\s+cost\s+\d+/;
const DETAIL = /^\s+hairpin\s+(?:on|off)\b/;

export const bridgeLinkSniffer: Sniffer<'bridge-link'> = {
  id: 'bridge-link',
  sniff(lines) {
    const content = lines.filter((l) => l.trim() !== '' && noiseKind(l) === undefined);
    if (content.length === 0) return 0;
    const headers = content.filter((l) => HEADER.test(l)).length;
    const details = content.filter((l) => DETAIL.test(l)).length;
    if (headers === 0) return 0;
    return (headers + details) / content.length >= 0.8 ? 1 : 0.4;
  },
};
