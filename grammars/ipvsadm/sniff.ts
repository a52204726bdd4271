/**
 * Cheap content sniffer for ipvsadm output (FORMATS.md §3). Loads no parser. Structurally a
 * `FormatSniffer` (src/load/format.ts); grammars/ does not import from src/.
 */

const VERSION = /^\s*IP Virtual Server version \d/;
const TITLE = /^\s*Prot\s+LocalAddress:Port\s/;
const CONN = /^\s*IPVS connection entries\s*$/;
const CONN_TITLE = /^\s*pro\s+expire\s+state\s+source\s+virtual\s+destination/;
const SAVE_SERVICE = /^\s*-A\s+(-t|-u|-f|--sctp-service|--tcp-service|--udp-service|--fwmark-service)\s+\S+.*\s-s\s+\S/;
const SAVE_SERVER = /^\s*-a\s+(-t|-u|-f|--sctp-service|--tcp-service|--udp-service|--fwmark-service)\s+\S+\s+-r\s+\S/;
const SERVICE = /^\s*(TCP|UDP|SCTP)\s{1,2}(\[[0-9A-Fa-f:.]+\]|[\w.-]+):[\w-]+(\s+[a-z]{2,5}\b|\s+\d)|^\s*FWM\s+\d+\s/;
const REAL = /^\s*->\s+(\[[0-9A-Fa-f:.]+\]|[\w.-]+):[\w-]+(\s|$)/;

export const ipvsadmSniffer = {
  id: 'ipvsadm' as const,
  sniff(lines: readonly string[]): number {
    let services = 0;
    let reals = 0;
    let saves = 0;
    const n = Math.min(lines.length, 200);
    for (let i = 0; i < n; i++) {
      const l = lines[i];
      if (VERSION.test(l) || TITLE.test(l) || CONN.test(l)) return 1;
      if (CONN_TITLE.test(l)) return 0.9;
      if (SAVE_SERVICE.test(l) || SAVE_SERVER.test(l)) saves++;
      else if (SERVICE.test(l)) services++;
      else if (REAL.test(l)) reals++;
    }
    if (saves > 0) return saves >= 2 ? 0.9 : 0.7;
    if (services > 0 && reals > 0) return 0.8;
    if (services > 0) return 0.4;
    return 0;
  },
};
