import { CT_FLAG, IPPROTO } from '../../model/conntrack.js';
import { canonicalIp, kubeProxyCleanup } from '../../kube/conntrack.js';
import { createRule } from '../rule.js';
import { Capped, entryText, flowOf, hasConntrack, tablesOf } from '../conntrack-util.js';

/**
 * `[UNREPLIED]` UDP entries to a Service front end that were never translated (the reply is expected
 * from the VIP itself): created while the Service had no endpoints, they keep the client's packets
 * away from the endpoints it has now (kubernetes/kubernetes#48370).
 */
export default createRule({
  id: 'conntrack-unreplied-untranslated',
  meta: {
    description: '[UNREPLIED] UDP conntrack entries to a Service VIP that were never translated (reply expected from the VIP) while the Service now has endpoints.',
    severity: 'warning',
    docs: [
      'A UDP packet to a Service VIP with no endpoints is rejected (or dropped) but conntrack still records the flow',
      'with no translation: the reply tuple says the answer comes from the VIP itself. When endpoints appear, a client',
      'that keeps sending from the same socket matches that entry, skips the DNAT rules, and never reaches them; every',
      'packet restarts the entry\'s timer (kubernetes/kubernetes#48370, the reason kube-proxy flushes UDP entries when',
      'a Service goes from no endpoints to some). kube-proxy\'s cleanup (pkg/proxy/conntrack/cleanup.go) deletes',
      'these entries — the reply source (the VIP) is not a serving endpoint — so one found in a dump means the cleanup',
      'has not run or failed.',
      '',
      'Public example: kubernetes/kubernetes#48370 shows `udp 17 29 src=10.12.0.14 dst=10.15.240.10 sport=43145',
      'dport=53 [UNREPLIED] src=10.15.240.10 dst=10.12.0.14 …` after the DNS pod was killed.',
      '',
      '**Fix:** `conntrack -D -p udp --orig-dst VIP --orig-port-dst PORT --reply-src VIP`, then find out why',
      'kube-proxy did not (its log: sync errors, conntrack errors).',
    ].join('\n'),
    requires: ['conntrack'],
    relevant: hasConntrack,
    messages: {
      untranslated: '{{flow}} ({{service}}) was never translated (the reply is expected from {{vip}} itself, [UNREPLIED]): this client\'s packets skip the {{count}} endpoint(s) the Service has now{{until}}',
      more: '… and {{more}} more untranslated entries of {{service}} ({{total}} in all)',
    },
  },
  check(ctx) {
    const capped = new Capped();
    for (const t of tablesOf(ctx)) {
      for (const v of kubeProxyCleanup(t, ctx.resolution.services)) {
        const i = v.index;
        if (v.via !== 'service-ip' || t.protoNum(i) !== IPPROTO.udp || (t.flags(i) & CT_FLAG.unreplied) === 0) continue;
        if (canonicalIp(t.replySrc(i)) !== canonicalIp(t.origDst(i))) continue;
        if (!capped.take(v.service, t, i)) continue;
        const e = t.entry(i);
        ctx.report({
          messageId: 'untranslated',
          data: {
            flow: flowOf(t, i),
            service: ctx.serviceLabel(v.service),
            vip: e.orig.dst,
            count: v.servingIps.size,
            until: e.timeout !== undefined ? `; the entry expires in ${e.timeout}s unless the client sends again` : '',
          },
          file: t.file,
          line: e.line,
          text: entryText(t, i),
          service: ctx.serviceLabel(v.service),
        });
      }
    }
    capped.flush(ctx, 'more');
  },
});
