import { createRule } from '../rule.js';
import { hasConntrack } from '../conntrack-util.js';

export default createRule({
  id: 'conntrack-insert-failed',
  meta: {
    description: 'conntrack -S counts insert_failed or drop above zero: packets were dropped by conntrack (the DNS 5-second delay race, a full table).',
    severity: 'warning',
    docs: [
      '`insert_failed` counts packets whose new entry could not be inserted because an entry for the same tuple',
      'appeared meanwhile: two packets of one UDP socket racing through DNAT/SNAT on two CPUs — glibc sends the A and',
      'AAAA queries of a lookup in parallel from one socket — and the loser is dropped. The client retries after its',
      '5-second timeout (kubernetes/kubernetes#56903, "DNS intermittent delays of 5s"). `drop` counts packets',
      'dropped because no entry could be created (table full, or the insert failed); `early_drop` counts entries',
      'evicted to make room. Kernels ≥ 5.0 resolve most clashes (`clash_resolve`), so a growing `insert_failed` on',
      'a recent kernel points at SNAT port collisions (MASQUERADE without `--random-fully`).',
      '',
      'Counters are cumulative since boot: one dump shows that drops happened, not that they are happening; compare',
      'two dumps taken a minute apart.',
      '',
      'Public example: rancher/rke2#3924 (DNS query timeouts with `conntrack -S` per-CPU counters).',
      '',
      '**Fix:** for DNS, run NodeLocal DNSCache or set `options single-request-reopen` (glibc) / use TCP for DNS; make',
      'MASQUERADE use `--random-fully` (see `masquerade-not-random-fully`); for `drop` with a full table, see',
      '`conntrack-table-full`.',
    ].join('\n'),
    requires: ['conntrack-stats'],
    standalone: true,
    relevant: hasConntrack,
    messages: {
      insertFailed: 'conntrack -S counts insert_failed={{n}}{{cpus}}: packets lost to conntrack insert races (the UDP DNS 5-second delay){{kernel}}',
      drop: 'conntrack -S counts drop={{n}}{{cpus}}: packets dropped because no conntrack entry could be created{{why}}',
    },
  },
  check(ctx) {
    for (const s of ctx.snapshot.conntrack?.stats ?? []) {
      const cpusWith = (k: string): string => {
        if (s.form !== 'per-cpu') return '';
        const c = s.cpus.filter((x) => (x.counters[k] ?? 0) > 0).map((x) => x.cpu);
        return c.length ? ` on CPU ${c.slice(0, 8).join(', ')}${c.length > 8 ? ', …' : ''}` : '';
      };
      const failed = s.totals.insert_failed ?? 0;
      if (failed > 0) {
        const clash = s.totals.clash_resolve;
        ctx.report({
          messageId: 'insertFailed',
          data: {
            n: failed,
            cpus: cpusWith('insert_failed'),
            kernel: clash !== undefined ? `; this kernel resolves clashes (clash_resolve=${clash}), so the remaining failures suggest SNAT port collisions` : '',
          },
          file: s.file,
          line: s.lineOf.insert_failed ?? 1,
        });
      }
      const drop = s.totals.drop ?? 0;
      if (drop > 0) {
        const early = s.totals.early_drop ?? 0;
        ctx.report({
          messageId: 'drop',
          data: {
            n: drop,
            cpus: cpusWith('drop'),
            why: early > 0 ? `; early_drop=${early} says the table was full (see conntrack-table-full)` : failed > 0 ? '; with insert_failed also counted, most are likely insert races' : '',
          },
          file: s.file,
          line: s.lineOf.drop ?? 1,
        });
      }
    }
  },
});
