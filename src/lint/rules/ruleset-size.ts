import { createRule } from '../rule.js';

/** Above this many rules in nat KUBE-SERVICES, suggest the ipvs or nftables mode. */
export const KUBE_SERVICES_THRESHOLD = 1000;

export default createRule({
  id: 'ruleset-size',
  meta: {
    description: `iptables mode with more than ${KUBE_SERVICES_THRESHOLD} rules in KUBE-SERVICES: every new connection walks them linearly.`,
    severity: 'warning',
    docs: [
      'In iptables mode the first packet of every connection walks nat KUBE-SERVICES rule by rule until its',
      'VIP matches: on average half of the chain for a Service VIP, all of it for anything else (every',
      'connection the node forwards or makes to a non-Service address). Rule updates are also slow: kube-proxy',
      'rewrites large parts of the table on each sync, and the kernel copies the whole table (legacy backend).',
      `Above ${KUBE_SERVICES_THRESHOLD} rules (about as many Service ports) latency and sync time grow visibly.`,
      'The finding reports the counts: rules, chains, KUBE-SERVICES rules and the average walk.',
      '',
      '**Fix:** switch kube-proxy to `--proxy-mode=nftables` (Kubernetes ≥1.31, set lookups in one verdict map) or',
      '`ipvs` (hash lookup); or reduce Services (headless Services for StatefulSets do not need rules).',
    ].join('\n'),
    messages: {
      large: 'KUBE-SERVICES has {{services}} rules ({{rules}} rules in {{chains}} chains in all): a new connection to a Service walks {{avg}} rules on average, a non-Service one all {{services}}; consider the nftables or ipvs mode',
    },
  },
  check(ctx) {
    for (const rs of ctx.snapshot.rulesets) {
      const nat = rs.tables.find((t) => t.name === 'nat');
      const chain = nat?.chainsByName.get('KUBE-SERVICES');
      if (!nat || !chain) continue;
      const n = chain.rules.length;
      if (n <= KUBE_SERVICES_THRESHOLD) continue;
      // Average position of the matching rule for a Service VIP (uniform over the dispatch rules).
      const avg = ((n + 1) / 2).toFixed(0);
      const chains = rs.tables.reduce((a, t) => a + t.chains.length, 0);
      ctx.report({ messageId: 'large', data: { services: n, rules: rs.ruleCount, chains, avg }, file: rs.file, line: chain.line ?? nat.line, column: 1, text: `:KUBE-SERVICES - [0:0]` });
    }
  },
});
