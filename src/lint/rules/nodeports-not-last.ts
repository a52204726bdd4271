import { createRule } from '../rule.js';
import { jumpTarget, ruleRelated } from '../context.js';

export default createRule({
  id: 'nodeports-not-last',
  meta: {
    description: 'The KUBE-NODEPORTS jump is not the last rule of nat KUBE-SERVICES.',
    severity: 'warning',
    docs: [
      'kube-proxy writes `-A KUBE-SERVICES … -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS` as the last rule of',
      'the nat KUBE-SERVICES chain ("NOTE: this must be the last rule in this chain"): Service VIPs are matched',
      'first, and only a packet to one of the node\'s own addresses that matched no VIP goes on to the NodePort',
      'dispatch. Rules after it mean another program inserted rules into kube-proxy\'s chain, or the chain was',
      'edited: external IPs or load-balancer IPs that are also node addresses are then caught by a NodePort first,',
      'and kube-proxy\'s next partial sync may disagree with the chain it finds.',
      '',
      '**Fix:** find out which tool appends to KUBE-SERVICES and stop it (kube-proxy owns the chain); restart',
      'kube-proxy to rewrite it.',
    ].join('\n'),
    messages: {
      notLast: 'the KUBE-NODEPORTS jump is rule {{index}} of {{n}} in nat KUBE-SERVICES; kube-proxy keeps it last',
    },
  },
  check(ctx) {
    for (const t of ctx.tables) {
      if (t.table.name !== 'nat') continue;
      const chain = t.table.chainsByName.get('KUBE-SERVICES');
      if (!chain) continue;
      const rules = chain.rules;
      const i = rules.findIndex((r) => jumpTarget(r) === 'KUBE-NODEPORTS');
      if (i < 0 || i === rules.length - 1) continue;
      const r = rules[i];
      ctx.report({
        messageId: 'notLast',
        data: { index: i + 1, n: rules.length },
        file: r.file,
        line: r.line,
        column: r.column,
        text: r.raw,
        related: rules.slice(i + 1, i + 6).map(ruleRelated),
      });
    }
  },
});
