import { frontEndIndex } from '../../kube/conntrack.js';
import { createRule } from '../rule.js';
import { Capped, entryText, FRONT_LABEL, flowOf, hasConntrack, tablesOf } from '../conntrack-util.js';

/** Entries translated to an endpoint of a Service port that has no endpoints now. */
export default createRule({
  id: 'conntrack-no-endpoints',
  meta: {
    description: 'Conntrack entries translated to an endpoint of a Service port that has no endpoints now: established flows still pinned to a gone pod.',
    severity: 'warning',
    docs: [
      'When the last endpoint of a Service port goes away, the rules reject new connections, but flows already',
      'tracked keep their translation: their packets still go to the old pod address until the entry expires (TCP:',
      '`nf_conntrack_tcp_timeout_established`, 5 days by default, unless the client gives up or gets a reset).',
      'kube-proxy\'s conntrack cleanup skips Service ports without endpoints ("a Service without endpoints does not',
      'require to clean the conntrack entries associated", pkg/proxy/conntrack/cleanup.go), so nothing removes them.',
      '',
      'Public example: kubernetes/kubernetes#66651 (a UDP host-port flow kept hitting the old pod address).',
      '',
      '**Fix:** restore the Service\'s endpoints (readiness, selector), or delete the entries:',
      '`conntrack -D --orig-dst VIP --orig-port-dst PORT`.',
    ].join('\n'),
    requires: ['conntrack'],
    relevant: hasConntrack,
    messages: {
      pinned: '{{flow}} ({{service}}, {{front}}) is still translated to {{replySrc}}, but the Service port has no endpoints now; the flow\'s packets go to a gone endpoint{{until}}',
      more: '… and {{more}} more entries of {{service}} ({{total}} in all)',
    },
  },
  check(ctx) {
    const empty = ctx.resolution.services.filter((s) => s.endpoints.length === 0 && s.state === 'no-endpoints');
    if (empty.length === 0) return;
    const idx = frontEndIndex(empty, ctx.snapshot);
    const capped = new Capped();
    for (const t of tablesOf(ctx)) {
      for (let i = 0; i < t.size; i++) {
        const l = idx.link(t, i);
        if (!l || l.untranslated) continue;
        if (!capped.take(l.front.service, t, i)) continue;
        const e = t.entry(i);
        ctx.report({
          messageId: 'pinned',
          data: {
            flow: flowOf(t, i),
            service: ctx.serviceLabel(l.front.service),
            front: FRONT_LABEL[l.front.kind],
            replySrc: e.reply.src,
            until: e.timeout !== undefined ? ` for up to ${e.timeout}s more` : '',
          },
          file: t.file,
          line: e.line,
          text: entryText(t, i),
          service: ctx.serviceLabel(l.front.service),
        });
      }
    }
    capped.flush(ctx, 'more');
  },
});
