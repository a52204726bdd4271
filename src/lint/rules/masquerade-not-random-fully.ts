import { createRule } from '../rule.js';
import { allRules, serviceLabelOf, serviceOfRule } from '../util.js';

export default createRule({
  id: 'masquerade-not-random-fully',
  meta: {
    description: 'A MASQUERADE (or nftables masquerade) rule without --random-fully / fully-random.',
    severity: 'warning',
    docs: [
      'When two connections from the same pod are masqueraded at the same moment, conntrack can pick the same',
      'source port for both before either is confirmed; the second packet is then dropped at insertion. For DNS',
      'over UDP (two queries, A and AAAA, sent together from the same socket) this is the well-known 5-second',
      'lookup delay. `--random-fully` (NF_NAT_RANGE_PROTO_RANDOM_FULLY) makes the port choice random and removes',
      'most of the race. kube-proxy uses it when iptables supports it; CNI plugins, ip-masq-agent and Docker',
      'often do not.',
      '',
      '**Fix:** add `--random-fully` to the agent\'s masquerade rule (flannel `--iptables-forward-rules`/newer',
      'releases, ip-masq-agent `--random-fully`, Calico `natPortRange`/`FELIX_IPTABLESNATOUTGOINGINTERFACEFILTER`…),',
      'or use NodeLocal DNSCache so pods\' DNS does not go through SNAT.',
    ].join('\n'),
    messages: {
      iptables: 'MASQUERADE without --random-fully in {{chain}}: concurrent connections can collide on a source port (5 s DNS delays)',
      nft: 'masquerade without fully-random in {{table}} {{chain}}: concurrent connections can collide on a source port (5 s DNS delays)',
    },
  },
  check(ctx) {
    for (const { r } of allRules(ctx)) {
      if (r.target?.kind !== 'masquerade' || r.target.randomFully) continue;
      ctx.report({ messageId: 'iptables', data: { chain: `${r.table}/${r.chain}` }, file: r.file, line: r.line, column: r.column, text: r.raw, ...serviceLabelOf(ctx, serviceOfRule(ctx, r)) });
    }
    for (const rs of ctx.snapshot.nft) {
      for (const t of rs.tables) {
        if (t.fromIptablesNft) continue; // the same rules are in the iptables-save dump
        for (const c of t.chains) {
          for (const r of c.rules) {
            const m = r.exprs.find((e) => e.kind === 'masquerade');
            if (!m || m.kind !== 'masquerade' || m.flags.includes('fully-random')) continue;
            ctx.report({ messageId: 'nft', data: { table: `${t.family} ${t.name}`, chain: c.name }, file: t.file, line: r.line, column: m.column, text: r.raw });
          }
        }
      }
    }
  },
});
