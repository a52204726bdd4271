/**
 * Cheap sniffers for connection-tracking dumps (no parser loaded). Structurally `FormatSniffer`s
 * (src/load/format.ts); grammars do not import from src/.
 */
const ENTRY = /^\s*(?:(?:ipv4|ipv6|unknown)\s+\d+\s+)?(?:tcp|udp|udplite|sctp|dccp|icmp|icmpv6|gre|igmp|unknown)\s+\d+\s+(?:\d+\s+)?(?:[A-Z_0-9]+\s+)?src=\S+\s+dst=\S+/;
const SUMMARY = /^\s*conntrack v\d+(?:\.\d+)* \(conntrack-tools\): \d+ flow entries have been shown\./;
const CPU = /^\s*cpu=\d+\s+(?:[a-z_]+=\d+\s*){3,}$/;
const OLD = /^\s*(entries|searched|found|new|invalid|ignore|delete|delete_list|insert|insert_failed|drop|early_drop|icmp_error|error|expect_new|expect_create|expect_delete|search_restart)\s+\d+\s*$/;
const COUNT = /^\s*\d+\s*$/;

export const conntrackSniffer = {
  id: 'conntrack' as const,
  sniff(lines: readonly string[]): number {
    let entries = 0;
    let content = 0;
    for (const l of lines.slice(0, 200)) {
      if (SUMMARY.test(l)) return 1;
      content++;
      if (ENTRY.test(l)) entries++;
    }
    if (entries === 0) return 0;
    return entries / content >= 0.5 ? 0.95 : 0.5;
  },
};

export const conntrackStatsSniffer = {
  id: 'conntrack-stats' as const,
  sniff(lines: readonly string[]): number {
    let cpu = 0;
    let old = 0;
    let content = 0;
    let count = 0;
    for (const l of lines.slice(0, 200)) {
      content++;
      if (CPU.test(l)) cpu++;
      else if (OLD.test(l)) old++;
      else if (COUNT.test(l)) count++;
    }
    if (cpu > 0 && cpu === content) return 1;
    if (old >= 3 && old === content) return 0.9;
    // A lone number (`conntrack -C`) is not claimed: every /proc/sys value, pid file or counter looks the
    // same (`cat /proc/sys/net/ipv4/ip_forward` is `1`). The count kpx uses comes from the
    // nf_conntrack_count sysctl or `conntrack -S`; `count` is kept for the grammar's reading of -C.
    void count;
    return 0;
  },
};
