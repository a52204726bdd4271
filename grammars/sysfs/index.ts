/**
 * Listings of network-device attributes under sysfs, as `grep -H . PATH…` prints them
 * (`/sys/class/net/cni0/brif/veth1/hairpin_mode:1`), or `PATH = VALUE` / `PATH VALUE`. One
 * regular expression per line is the whole grammar (as for sysctl): a lexer would add nothing.
 * `/sys/devices/virtual/net/…` (what the class links resolve to) is read the same.
 * Syntax only: which attributes mean what is src/extract/sysfs.ts's business.
 */
import { noiseKind, splitInput, type NoiseKind } from '../common/text.js';

/** `/sys/class/net/DEV/ATTR…` or `/sys/devices/…/net/DEV/ATTR…`, then `:`/`=`/blank, then the value. */
export const SYSFS_LINE = /^(\s*)(\/sys\/(?:class\/net|devices\/(?:\S*\/)?net)\/([^/\s:]+)\/([^\s:=]+))(\s*[:=]\s*|\s+)(\S.*?)?\s*$/;

export type SysfsSyntaxLine =
  | {
      readonly kind: 'entry';
      readonly line: number;
      readonly text: string;
      readonly path: string;
      /** The device the path is under (`cni0`). */
      readonly device: string;
      /** The rest of the path (`brif/veth1/hairpin_mode`, `mtu`). */
      readonly attribute: string;
      readonly value: string;
      readonly pathColumn: number;
      readonly valueColumn: number;
    }
  | { readonly kind: 'noise'; readonly line: number; readonly text: string; readonly noise: NoiseKind }
  | { readonly kind: 'stderr'; readonly line: number; readonly text: string }
  | { readonly kind: 'error'; readonly line: number; readonly text: string; readonly column: number; readonly message: string };

const STDERR = /^\s*(grep: .*|cat: .*|ls: .*)$/;

export function parseSysfsText(text: string): { lines: readonly SysfsSyntaxLine[] } {
  const out: SysfsSyntaxLine[] = [];
  splitInput(text).lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const noise = noiseKind(raw);
    if (noise) return void out.push({ kind: 'noise', line, text: raw, noise });
    if (STDERR.test(raw)) return void out.push({ kind: 'stderr', line, text: raw });
    const m = SYSFS_LINE.exec(raw);
    if (!m || m[6] === undefined) {
      const column = m ? raw.length + 1 : raw.search(/\S/) + 1;
      return void out.push({ kind: 'error', line, text: raw, column, message: m ? 'a sysfs path without a value' : 'expected `/sys/class/net/DEVICE/ATTRIBUTE:VALUE`' });
    }
    const pathColumn = m[1].length + 1;
    out.push({ kind: 'entry', line, text: raw, path: m[2], device: m[3], attribute: m[4], value: m[6], pathColumn, valueColumn: pathColumn + m[2].length + m[5].length });
  });
  return { lines: out };
}
