/** The kernel release: `uname -a`/`-sr`, `/proc/version`, or a file holding `uname -r`'s one line. */
import { noiseKind } from '../common/text.js';
import { PROC_VERSION, UNAME_A, UNAME_R } from './index.js';

/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

export const unameSniffer: Sniffer<'uname'> = {
  id: 'uname',
  sniff(lines) {
    const content = lines.filter((l) => l.trim() !== '' && noiseKind(l) === undefined);
    if (content.length !== 1) return 0;
    const l = content[0];
    if (PROC_VERSION.test(l) || UNAME_A.test(l)) return 1;
    // A bare release is one short line: weak on its own, so only when nothing else claims it.
    return UNAME_R.test(l) ? 0.5 : 0;
  },
};
