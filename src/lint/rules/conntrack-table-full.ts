import { createRule } from '../rule.js';
import { hasConntrack } from '../conntrack-util.js';

/** Fill above which the table is reported: the kernel drops NEW flows at 100% ("table full, dropping packet"). */
export const FILL_WARNING = 0.8;
export const FILL_ERROR = 0.95;

const MAX_KEYS = ['net.netfilter.nf_conntrack_max', 'net.nf_conntrack_max'];
const COUNT_KEY = 'net.netfilter.nf_conntrack_count';

export default createRule({
  id: 'conntrack-table-full',
  meta: {
    description: `The conntrack table is ≥ ${FILL_WARNING * 100}% full (count / nf_conntrack_max); at 100% the kernel drops new flows.`,
    severity: 'warning',
    docs: [
      'Every new flow needs a conntrack entry. When `nf_conntrack_count` reaches `nf_conntrack_max` the kernel first',
      'evicts unassured entries (`early_drop`) and otherwise drops the packet ("nf_conntrack: table full, dropping',
      'packet" in dmesg): new connections to every Service time out while established ones keep working.',
      `kpx reports a fill of ${FILL_WARNING * 100}% as a warning and ${FILL_ERROR * 100}% as an error. The count is`,
      'taken from `conntrack -C`, the `entries` line of `conntrack -S`, the `nf_conntrack_count` sysctl, or (a lower',
      'bound: one network namespace, a filtered listing) the number of entries in the `conntrack -L` dump; the maximum',
      'from the `nf_conntrack_max` sysctl. kube-proxy sets the maximum at start from `--conntrack-max-per-core` ×',
      'CPUs (and `--conntrack-min`).',
      '',
      'Public example: adobe-platform/porter#124 ("nf_conntrack: table full, dropping packet").',
      '',
      '**Fix:** raise `net.netfilter.nf_conntrack_max` (kube-proxy: `conntrack.maxPerCore`), shorten timeouts of',
      'short-lived flows (`nf_conntrack_tcp_timeout_time_wait`, `_udp_timeout`), and find the flow source (a',
      'port scan, a DNS storm: `conntrack -L | sort | uniq -c`).',
    ].join('\n'),
    requires: ['sysctl'],
    standalone: true,
    relevant: hasConntrack,
    messages: {
      fill: 'the conntrack table is {{pct}}% full: {{count}} of nf_conntrack_max {{max}} entries (count from {{source}}){{drop}}',
    },
  },
  check(ctx) {
    const maxKey = MAX_KEYS.find((k) => ctx.snapshot.sysctls.has(k));
    if (!maxKey) return;
    const maxAt = ctx.snapshot.sysctls.get(maxKey)!;
    const max = Number(maxAt.value);
    if (!Number.isFinite(max) || max <= 0) return;
    let count: { value: number; source: string; file: string; line: number } | undefined;
    const c = ctx.snapshot.sysctls.get(COUNT_KEY);
    if (c && /^\d+$/.test(c.value)) count = { value: Number(c.value), source: COUNT_KEY, file: c.file, line: c.line };
    for (const s of ctx.snapshot.conntrack?.stats ?? []) {
      if (s.count && (!count || s.count.value > count.value)) count = { value: s.count.value, source: s.form === 'count' ? 'conntrack -C' : 'conntrack -S entries', file: s.file, line: s.count.line };
    }
    if (!count) {
      for (const t of ctx.snapshot.conntrack?.tables ?? []) {
        const n = t.shown?.count ?? t.size;
        if (!count || n > count.value) count = { value: n, source: 'the conntrack -L listing (a lower bound)', file: t.file, line: t.shown?.line ?? 1 };
      }
    }
    if (!count) return;
    const fill = count.value / max;
    if (fill < FILL_WARNING) return;
    const drops = (ctx.snapshot.conntrack?.stats ?? []).reduce((n, s) => n + (s.totals.drop ?? 0) + (s.totals.early_drop ?? 0), 0);
    ctx.report({
      messageId: 'fill',
      data: {
        pct: Math.floor(fill * 1000) / 10,
        count: count.value,
        max,
        source: count.source,
        drop: drops > 0 ? `; conntrack -S counts ${drops} drop/early_drop` : '',
      },
      file: count.file,
      line: count.line,
      related: [{ file: maxAt.file, line: maxAt.line, text: `${maxKey} = ${maxAt.value}` }],
      ...(fill >= FILL_ERROR ? { severity: 'error' as const } : {}),
    });
  },
});
