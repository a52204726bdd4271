import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';
import { chainGraph } from '../chain-graph.js';
import { serviceLabelOf, serviceOfRule } from '../util.js';

export default createRule({
  id: 'jump-loop',
  meta: {
    description: 'Chains that jump (-j or -g) back into themselves: A → B → A, longer cycles, or a chain jumping to itself.',
    severity: 'error',
    docs: [
      'When a commit is checked, the kernel walks the jumps from every built-in chain, and refuses the table if a',
      'walk comes back to a chain it is already in: the legacy backend\'s loop check (`mark_source_chains`, ELOOP;',
      'iptables-legacy-restore says only "iptables-restore: line N failed", N being the COMMIT line), and',
      'nf_tables\' jump validation, which follows the loop until its jump-depth limit (iptables-nft-restore:',
      '"line N: RULE_APPEND failed (Too many links): rule in chain B"). `-g` counts like `-j`. The whole table is',
      'refused, so the next kube-proxy sync (or any restore of this dump) fails until the loop is broken.',
      '',
      'A loop that no built-in chain reaches is loaded today (checked with iptables 1.8.9, both backends), but the',
      'first rule that jumps into it from a built-in chain will be refused: that is reported as a **warning**.',
      'In restore input (see `kpx inspect`) the built-in chains are not shown; the chains nothing in it jumps to',
      '(KUBE-SERVICES, KUBE-POSTROUTING…) are taken as the entry points, as kube-proxy jumps to them from built-ins.',
      '',
      '**Fix:** remove or retarget the rule that closes the loop (the finding\'s line; the related lines are the',
      'other jumps of the loop). If kube-proxy\'s own chains loop, something else edited them: restart kube-proxy.',
      '',
      'One finding per rule that closes a loop.',
    ].join('\n'),
    messages: {
      loop: 'jump loop in table {{table}}: {{cycle}}, reached from {{root}}: iptables-restore refuses this table (legacy: ELOOP at COMMIT; nf_tables: "Too many links")',
      unreached:
        'jump loop in table {{table}}: {{cycle}}; no built-in chain reaches it, so it loads today, but a jump into it from a built-in chain will be refused (ELOOP / "Too many links")',
    },
  },
  check(ctx) {
    for (const t of ctx.tables) {
      if (t.fragment) continue;
      for (const loop of chainGraph(t).loops) {
        const r = loop.closing.rule;
        const others = loop.rules.slice(0, -1);
        ctx.report({
          messageId: loop.root !== undefined ? 'loop' : 'unreached',
          data: { table: t.table.name, cycle: loop.chains.join(' → '), root: loop.root ?? '' },
          file: r.file,
          line: r.line,
          column: r.column,
          text: r.raw,
          ...serviceLabelOf(ctx, serviceOfRule(ctx, r)),
          related: others.map(ruleRelated),
          ...(loop.root === undefined ? { severity: 'warning' as const } : {}),
        });
      }
    }
  },
});
