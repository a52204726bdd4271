import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';
import { serviceLabelOf, serviceOfRule } from '../util.js';

export default createRule({
  id: 'dangling-jump',
  meta: {
    description: 'A rule jumps (-j/-g) to a chain that is not declared, or rules are appended to an undeclared chain.',
    severity: 'error',
    docs: [
      'iptables-restore refuses a table in which a rule jumps to a chain that has no `:CHAIN` declaration, or',
      'in which `-A CHAIN` appends to an undeclared chain: the *whole table* fails to load, so kube-proxy\'s next',
      'sync fails and every Service update is stuck until the chain exists again. In a dump, such a rule shows',
      'hand-edited or truncated rules, or a dump taken while another program was rewriting the table.',
      '',
      '**Fix:** restore the missing chain (restart kube-proxy, which rewrites all of its chains), or delete the',
      'rules that refer to it. If the dump was cut short, collect it again (`kpx collect`).',
      '',
      'One finding per missing chain, at the first rule that refers to it; the other rules are listed as related lines.',
    ].join('\n'),
    messages: {
      jump: 'jump to {{chain}} in table {{table}}, which is not declared ({{count}}): iptables-restore would reject this table',
      append: 'rules are appended to {{chain}} in table {{table}}, which is not declared ({{count}}): iptables-restore would reject this table',
    },
  },
  check(ctx) {
    for (const t of ctx.tables) {
      if (t.fragment) continue;
      const byName = t.table.chainsByName;
      const declared = (name: string) => {
        const c = byName.get(name);
        return c !== undefined && (c.builtin || c.line !== undefined);
      };
      for (const [name, refs] of t.referrers) {
        if (declared(name)) continue;
        const first = refs[0];
        const appended = byName.get(name)?.rules ?? [];
        const related = [...refs.slice(1), ...appended].map(ruleRelated);
        const svc = serviceOfRule(ctx, first) ?? (appended[0] ? serviceOfRule(ctx, appended[0]) : undefined);
        ctx.report({
          messageId: 'jump',
          data: { chain: name, table: t.table.name, count: `${refs.length} referring rule${refs.length === 1 ? '' : 's'}${appended.length ? `, ${appended.length} rule${appended.length === 1 ? '' : 's'} appended to it` : ''}` },
          file: first.file,
          line: first.line,
          column: first.column,
          text: first.raw,
          ...serviceLabelOf(ctx, svc),
          related,
        });
      }
      for (const c of t.table.chains) {
        if (c.builtin || c.line !== undefined || c.rules.length === 0 || t.referrers.has(c.name)) continue;
        const first = c.rules[0];
        ctx.report({
          messageId: 'append',
          data: { chain: c.name, table: t.table.name, count: `${c.rules.length} rule${c.rules.length === 1 ? '' : 's'}` },
          file: first.file,
          line: first.line,
          column: first.column,
          text: first.raw,
          ...serviceLabelOf(ctx, serviceOfRule(ctx, first)),
          related: c.rules.slice(1).map(ruleRelated),
        });
      }
    }
  },
});
