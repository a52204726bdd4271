/**
 * Cheap sniffer for listings that are not a kube-proxy dump but are pasted in its place: Cilium's
 * service and BPF load-balancer tables (Cilium replaces kube-proxy: these are its Services), and
 * tcpdump or tshark packet lines. No parser is loaded.
 */
export interface Sniffer<Id extends string> {
  readonly id: Id;
  sniff(lines: readonly string[]): number;
}

export type ForeignKind = 'cilium-service-list' | 'cilium-bpf-lb-list' | 'tcpdump' | 'tshark';

/** `cilium service list`'s and `cilium-dbg service list`'s header (the ID column is gone in 1.15+ frontends-as-ids). */
const CILIUM_SERVICES = /^\s*(?:ID\s+)?Frontend\s+Service Type\s+Backend\s*$/;
/** `cilium bpf lb list`'s header (`(REVNAT_ID) (SLOT)` since 1.8). */
const CILIUM_LB = /^\s*SERVICE ADDRESS\s+BACKEND ADDRESS(?:\s+\(REVNAT_ID\)(?:\s+\(SLOT\))?)?\s*$/;
const CILIUM_BACKEND = /^\s*(?:\d+\s+)?\S+:\d+(?:\/\w+)?\s+[A-Za-z]+\s+\d+ => \S+:\d+/;
/**
 * tcpdump's packet line: a time unless -t (`12:07:26.058844`, -tttt's date before it), with -i any the
 * interface and direction (`eth0 In`), the protocol, then `host.port > host.port:` (addresses or names).
 */
const TCPDUMP = /^\s*(?:\d{4}-\d\d-\d\d )?(?:\d\d:\d\d:\d\d\.\d+ )?(?:\S+\s+(?:In|Out|P|M|B)\s+)?(?:IP6?|ARP,|\S+ > \S+, ethertype) \S.*(?: > \S+: | Request| Reply)/;
/** tcpdump -v: the IP header line (`12:07:26.058844 IP (tos 0x0, ttl 64, …`), the addresses on the next, indented. */
const TCPDUMP_VERBOSE = /^\s*(?:\d{4}-\d\d-\d\d )?(?:\d\d:\d\d:\d\d\.\d+ )?(?:\S+\s+(?:In|Out|P|M|B)\s+)?IP6? \((?:tos|hlim|flowlabel) /;
const TCPDUMP_HEADER = /^\s*(?:tcpdump: (?:verbose output suppressed|listening on)|listening on \S+, link-type)/;
/** tshark's summary line: number, relative time, source -> destination, protocol, length. */
const TSHARK = /^\s*\d+\s+\d+(?:\.\d+)?\s+\S+\s+(?:->|→)\s+\S+\s+[A-Z][A-Za-z0-9]+\s+\d+\s/;

/** What the head lines are, with how sure. */
export function foreignKind(lines: readonly string[]): { kind: ForeignKind; confidence: number } | undefined {
  let tcpdump = 0;
  let tshark = 0;
  let backends = 0;
  let content = 0;
  for (const l of lines.slice(0, 200)) {
    if (l.trim() === '') continue;
    content++;
    // Tables pasted from a CI log keep its prefix (`\t `, a time): the header still names the columns.
    const t = l.replace(/^\s*(?:\d\d:\d\d:\d\d\s+)?\t?\s*/, '');
    if (CILIUM_SERVICES.test(t)) return { kind: 'cilium-service-list', confidence: 1 };
    if (CILIUM_LB.test(t)) return { kind: 'cilium-bpf-lb-list', confidence: 1 };
    if (TCPDUMP_HEADER.test(t)) return { kind: 'tcpdump', confidence: 1 };
    if (TCPDUMP.test(t) || TCPDUMP_VERBOSE.test(t)) tcpdump++;
    else if (TSHARK.test(t)) tshark++;
    else if (CILIUM_BACKEND.test(t)) backends++;
    // Fifty lines and nothing of these listings: stays cheap on a big dump's head.
    if (content > 50 && tcpdump + tshark + backends === 0) return undefined;
  }
  if (!content) return undefined;
  if (tcpdump >= 2 && tcpdump * 3 >= content) return { kind: 'tcpdump', confidence: 0.8 };
  if (tshark >= 2 && tshark * 2 >= content) return { kind: 'tshark', confidence: 0.8 };
  if (backends >= 2 && backends * 2 >= content) return { kind: 'cilium-service-list', confidence: 0.7 };
  return undefined;
}

export const foreignSniffer: Sniffer<'foreign'> = {
  id: 'foreign',
  sniff: (lines) => foreignKind(lines)?.confidence ?? 0,
};
