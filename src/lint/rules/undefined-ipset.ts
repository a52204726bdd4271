import type { Rule } from '../../model/netfilter.js';
import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';
import { allRules, serviceLabelOf, serviceOfRule } from '../util.js';

export default createRule({
  id: 'undefined-ipset',
  meta: {
    description: 'A rule matches `-m set --match-set NAME` but the ipset dump has no set NAME.',
    severity: 'error',
    docs: [
      'iptables-restore fails when a rule names an ipset that does not exist, and a running rule whose set was',
      'destroyed cannot exist: either the set was deleted after the rules were written (a restore would now',
      'fail), or the ipset dump is incomplete (taken with a filter, or from another node).',
      'IPVS-mode kube-proxy depends on its sets (KUBE-CLUSTER-IP, KUBE-LOOP-BACK, KUBE-NODE-PORT-*…): without them',
      'Service traffic is not masqueraded or accepted.',
      '',
      '**Fix:** recreate the set (restarting kube-proxy recreates its own sets), or remove the rules that use it.',
      'Make sure the dump is a full `ipset list` (or `ipset save`) of the same node.',
      '',
      'Only checked when an ipset dump is part of the snapshot. One finding per missing set.',
    ].join('\n'),
    requires: ['ipsets'],
    relevant: (ctx) => ctx.tables.some((t) => t.table.chains.some((c) => c.rules.some((r) => r.matches.some((m) => m.kind === 'set')))),
    messages: {
      missing: 'set {{set}} is used by {{count}} but is not in the ipset dump',
    },
  },
  check(ctx) {
    const sets = ctx.snapshot.ipsetsByName;
    const users = new Map<string, Rule[]>();
    for (const { r } of allRules(ctx)) {
      for (const m of r.matches) {
        if (m.kind !== 'set' || sets.has(m.name)) continue;
        const list = users.get(m.name);
        if (!list) users.set(m.name, [r]);
        else if (list[list.length - 1] !== r) list.push(r);
      }
    }
    for (const [name, rules] of users) {
      const first = rules[0];
      ctx.report({
        messageId: 'missing',
        data: { set: name, count: `${rules.length} rule${rules.length === 1 ? '' : 's'}` },
        file: first.file,
        line: first.line,
        column: first.column,
        text: first.raw,
        ...serviceLabelOf(ctx, serviceOfRule(ctx, first)),
        related: rules.slice(1).map(ruleRelated),
      });
    }
  },
});
