import { BUILTIN_CHAINS } from '../../model/netfilter.js';
import { createRule, type Severity } from '../rule.js';
import { ruleRelated } from '../context.js';
import { serviceLabelOf, serviceOfRule } from '../util.js';

export default createRule({
  id: 'dangling-jump',
  meta: {
    description: 'A rule jumps (-j/-g) to a chain that is not declared (or to a built-in chain), or rules are appended to an undeclared chain.',
    severity: 'error',
    docs: [
      'iptables-restore refuses a table in which a rule jumps to a chain that has no `:CHAIN` declaration, or',
      'in which `-A CHAIN` appends to an undeclared chain: the *whole table* fails to load, so kube-proxy\'s next',
      'sync fails and every Service update is stuck until the chain exists again. In a dump, such a rule shows',
      'hand-edited or truncated rules, or a dump taken while another program was rewriting the table.',
      '',
      '`-j NAME` where NAME is neither a declared chain nor a target iptables can load (the standard verdicts and',
      'the target extensions of iptables 1.8.9, listed once in `src/model/iptables-targets.ts`) is such a jump: the',
      'legacy tool says "Couldn\'t load target `NAME\'", iptables-nft "Chain \'NAME\' does not exist". So is a',
      'kube-proxy `KUBE-SEP-…` chain missing entirely (declaration and rules) while its Service still jumps to it.',
      'A jump to a built-in chain (`-j INPUT`) is refused too ("line N failed" / "Operation not supported").',
      '',
      'Restore input (what kube-proxy pipes to `iptables-restore --noflush`, see `kpx inspect`) declares only its own',
      'chains: a jump to a chain it does not declare (kubelet\'s KUBE-MARK-DROP, a CNI\'s chain) loads when that chain',
      'already exists on the node and fails when it does not. The input cannot say which, so those findings are',
      '**info**, not errors.',
      '',
      '**Fix:** restore the missing chain (restart kube-proxy, which rewrites all of its chains), or delete the',
      'rules that refer to it. If the dump was cut short, collect it again (`kpx collect`).',
      '',
      'One finding per missing chain, at the first rule that refers to it; the other rules are listed as related lines.',
    ].join('\n'),
    messages: {
      jump: 'jump to {{chain}} in table {{table}}, which is neither a declared chain nor a target extension iptables knows ({{count}}): iptables-restore would reject this table',
      append: 'rules are appended to {{chain}} in table {{table}}, which is not declared ({{count}}): iptables-restore would reject this table',
      builtin: 'jump to the built-in chain {{chain}} in table {{table}} ({{count}}): iptables-restore refuses jumps to built-in chains',
      unknownJump:
        'jump to {{chain}} in table {{table}}, which this restore input does not declare ({{count}}): iptables-restore --noflush accepts it only if the chain already exists on the node (another program\'s chain), else it refuses the table',
      unknownAppend:
        'rules are appended to {{chain}} in table {{table}}, which this restore input does not declare ({{count}}): iptables-restore --noflush accepts them only if the chain already exists on the node',
    },
  },
  check(ctx) {
    const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
    for (const t of ctx.tables) {
      if (t.fragment) continue;
      const byName = t.table.chainsByName;
      const builtins = BUILTIN_CHAINS[t.table.name] ?? [];
      for (const [name, refs] of t.referrers) {
        const c = byName.get(name);
        // By name too: restore input need not mention a built-in chain it jumps to.
        if (c?.builtin || builtins.includes(name)) {
          ctx.report({
            messageId: 'builtin',
            data: { chain: name, table: t.table.name, count: plural(refs.length, 'referring rule') },
            file: refs[0].file,
            line: refs[0].line,
            column: refs[0].column,
            text: refs[0].raw,
            ...serviceLabelOf(ctx, serviceOfRule(ctx, refs[0])),
            related: refs.slice(1).map(ruleRelated),
          });
          continue;
        }
        if (c !== undefined && c.line !== undefined) continue;
        // A table cut mid-way (no COMMIT, or an nft listing without its closing brace): the chain may be past the cut.
        if (c === undefined && !t.table.committed) continue;
        const first = refs[0];
        const appended = c?.rules ?? [];
        const related = [...refs.slice(1), ...appended].map(ruleRelated);
        const svc = serviceOfRule(ctx, first) ?? (appended[0] ? serviceOfRule(ctx, appended[0]) : undefined);
        const severity: Severity | undefined = t.restoreInput ? 'info' : undefined;
        ctx.report({
          messageId: t.restoreInput ? 'unknownJump' : 'jump',
          data: { chain: name, table: t.table.name, count: `${plural(refs.length, 'referring rule')}${appended.length ? `, ${plural(appended.length, 'rule')} appended to it` : ''}` },
          file: first.file,
          line: first.line,
          column: first.column,
          text: first.raw,
          ...serviceLabelOf(ctx, svc),
          related,
          ...(severity ? { severity } : {}),
        });
      }
      for (const c of t.table.chains) {
        if (c.builtin || c.line !== undefined || c.rules.length === 0 || t.referrers.has(c.name)) continue;
        const first = c.rules[0];
        ctx.report({
          messageId: t.restoreInput ? 'unknownAppend' : 'append',
          data: { chain: c.name, table: t.table.name, count: plural(c.rules.length, 'rule') },
          file: first.file,
          line: first.line,
          column: first.column,
          text: first.raw,
          ...serviceLabelOf(ctx, serviceOfRule(ctx, first)),
          related: c.rules.slice(1).map(ruleRelated),
          ...(t.restoreInput ? { severity: 'info' as const } : {}),
        });
      }
    }
  },
});
