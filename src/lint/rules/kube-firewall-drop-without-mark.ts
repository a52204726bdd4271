import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';

/** Does this rule still test the drop mark? A match iptables could not print counts as one (it is there, unreadable). */
const testsMark = (r: { matches: readonly { kind: string; module?: string }[]; raw: string }) =>
  r.matches.some((m) => m.kind === 'mark' || (m.kind === 'unsupported' && m.module === 'mark')) || /\s-m mark\b|--mark\s/.test(r.raw);

export default createRule({
  id: 'kube-firewall-drop-without-mark',
  meta: {
    description: 'KUBE-FIREWALL\'s "dropping marked packets" DROP has lost its `-m mark` match: it drops every packet that reaches it.',
    severity: 'error',
    docs: [
      'kubelet (and kube-proxy before 1.28) writes `-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for',
      'dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP`, jumped to from INPUT and OUTPUT. A node',
      'where two iptables versions write the same nf_tables rules (the host\'s 1.8.8+ and a container\'s 1.8.7, or',
      'the reverse) can re-save the rule without the match the older one does not understand: the rule becomes',
      '`-j DROP` with only its comment, and every packet to and from the node\'s own processes is dropped (the',
      'node goes NotReady, SSH stops). The same happens when a tool does `iptables-save | iptables-restore` with',
      'the wrong binary.',
      '',
      '**Fix:** use one iptables version on the node (the host\'s, or kube-proxy/kubelet images whose iptables',
      'matches it — iptables-wrapper picks the backend, not the version); delete the broken rule',
      '(`iptables -D KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -j DROP`)',
      'and restart kubelet to rewrite it.',
      '',
      '**Example** (kubernetes/kubernetes#112477, #114549): a host with iptables 1.8.8 and a kube-proxy image with',
      '1.8.7; the rule came back as `-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked',
      'packets" -j DROP` and the node lost its network.',
    ].join('\n'),
    messages: {
      noMark: 'KUBE-FIREWALL drops "marked packets" without testing a mark: every packet that reaches it is dropped{{from}}',
    },
  },
  check(ctx) {
    for (const t of ctx.tables) {
      for (const c of t.table.chains) {
        if (c.name !== 'KUBE-FIREWALL') continue;
        for (const r of c.rules) {
          if (r.target?.kind !== 'drop') continue;
          if (!/dropping marked packets/i.test(r.comment ?? r.raw)) continue;
          if (testsMark(r)) continue;
          const callers = t.referrers.get('KUBE-FIREWALL') ?? [];
          const from = callers.length ? ` (jumped to from ${[...new Set(callers.map((x) => x.chain))].join(', ')})` : '';
          ctx.report({ messageId: 'noMark', data: { from }, file: r.file, line: r.line, column: r.column, text: r.raw, related: callers.slice(0, 5).map(ruleRelated) });
        }
      }
    }
  },
});
