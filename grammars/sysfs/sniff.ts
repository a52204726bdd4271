/**
 * Cheap sniffer for sysfs listings of network devices (`grep -H . /sys/class/net/BRIDGE/brif/PORT/hairpin_mode`):
 * every content line is `/sys/class/net/…:VALUE`.
 */
import { noiseKind } from '../common/text.js';
import { SYSFS_LINE } from './index.js';

/** Structurally a `FormatSniffer` (src/load/format.ts); grammars do not import from src/. */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

export const sysfsNetSniffer: Sniffer<'sysfs-net'> = {
  id: 'sysfs-net',
  sniff(lines) {
    const content = lines.filter((l) => l.trim() !== '' && noiseKind(l) === undefined);
    if (content.length === 0) return 0;
    const hits = content.filter((l) => SYSFS_LINE.test(l)).length;
    return hits === 0 ? 0 : hits / content.length >= 0.8 ? 1 : 0.4;
  },
};
