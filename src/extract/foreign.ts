/**
 * Listings that are not kube-proxy's dataplane → ForeignDump, and one diagnostic saying what the paste
 * is and that kpx reads kube-proxy's dataplane: never "unknown format", never a reading of it as rules.
 */
import { parseForeign, type ForeignKind } from '../../grammars/foreign/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { diagnostic } from '../source/index.js';
import type { ForeignDump } from '../model/foreign.js';

/** What each listing is, for the one line kpx says about it. */
export const FOREIGN_WHAT: Readonly<Record<ForeignKind, string>> = {
  'cilium-service-list': "`cilium service list` output: Cilium's own load-balancer table (Cilium implements the Services, replacing kube-proxy, on this node)",
  'cilium-bpf-lb-list': "`cilium bpf lb list` output: Cilium's BPF load-balancer map (Cilium implements the Services, replacing kube-proxy, on this node)",
  tcpdump: 'tcpdump output: a packet capture, not a dump of the rules packets meet',
  tshark: 'tshark output: a packet capture, not a dump of the rules packets meet',
};

const TSHARK_ROW = /^\s*\d+\s+\d+(?:\.\d+)?\s+\S+\s+(?:->|→)\s+\S+\s+[A-Z][A-Za-z0-9]+\s+\d+\s/;

export function extractForeign(text: string, file: string): ParsedInput<ForeignDump> {
  const s = parseForeign(text);
  // Frontends, and backends as (frontend, backend) pairs: a table listed twice counts once; bpf lb's
  // slot-0 entry (`0.0.0.0:0`, the service's own) is not a backend.
  const frontends = new Set<string>();
  const pairs = new Set<string>();
  let current = '';
  for (const l of s.lines) {
    if (l.kind === 'packet') continue;
    if ((l.kind === 'service' || l.kind === 'lb') && l.frontend) frontends.add((current = l.frontend));
    const b = l.kind === 'service' ? l.backend : l.kind === 'backend' || l.kind === 'lb' ? l.backend : undefined;
    if (b && !/^(?:0\.0\.0\.0|\[::\]):0\b/.test(b)) pairs.add(`${current} ${b}`);
  }
  const backends = pairs.size;
  const packets = s.kind === 'tshark' ? text.split('\n').filter((l) => TSHARK_ROW.test(l)).length : s.lines.filter((l) => l.kind === 'packet').length;
  const data: ForeignDump = { file, kind: s.kind, services: frontends.size, backends, packets };
  const msg = `${FOREIGN_WHAT[s.kind]}; kpx reads kube-proxy's dataplane (iptables-save, nft list ruleset, ipvsadm -Ln and what goes with them), so this file is not used`;
  const counts: Record<string, number> = s.kind === 'tcpdump' || s.kind === 'tshark' ? { packets } : { services: frontends.size, backends };
  return {
    format: 'foreign',
    file,
    data,
    variant: s.kind,
    diagnostics: [diagnostic('warning', 'input/not-kube-proxy', msg, file, 1, 1), ...s.noise.map((l) => diagnostic('info', 'input/noise', 'skipped paste noise', file, l, 1))],
    counts,
  };
}

export const foreignParser: FormatParser<ForeignDump> = { id: 'foreign', parse: (text, file) => extractForeign(text, file) };
