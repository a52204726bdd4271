import type { Rule } from '../../model/netfilter.js';
import { ladderShares, unrepeated } from '../../kube/resolve-iptables.js';
import { createRule } from '../rule.js';
import { jumpTarget, ruleRelated } from '../context.js';
import { lastRuleChain, serviceLabelOf } from '../util.js';

/** Relative tolerance on an endpoint's share: iptables-save prints probabilities the kernel rounded to 2^-31. */
const TOLERANCE = 1e-4;

function probabilityOf(r: Rule): number | undefined {
  for (const m of r.matches) {
    if (m.kind !== 'statistic' || m.negated) continue;
    return m.mode === 'random' ? m.probability : 1 / m.every;
  }
  return undefined;
}

export default createRule({
  id: 'probability-ladder',
  meta: {
    description: 'A KUBE-SVC/SVL chain whose statistic ladder does not give every endpoint an equal share, or leaves an endpoint unreachable.',
    severity: 'error',
    docs: [
      'kube-proxy balances a Service over its n endpoints with a ladder of `-m statistic --mode random',
      '--probability` rules: rule i (0-based) takes 1/(n-i) of what is left, and the last rule has no statistic',
      'match and takes the rest, so every endpoint gets 1/n of new connections. A ladder that does not add up',
      '(a hand-edited probability, a rule deleted or duplicated, a corrupted restore) overloads some endpoints,',
      'starves others, or lets connections fall through the chain without any DNAT (they then go to the cluster',
      'IP itself and time out). An endpoint rule after a rule without a statistic match is never reached.',
      '',
      '**Fix:** restart kube-proxy on the node so it rewrites the chain; if the rules were edited by hand or by',
      'another tool, stop that tool. One finding per chain, at the first endpoint rule whose share is wrong.',
    ].join('\n'),
    messages: {
      unequal: '{{chain}}: endpoint rule {{index}} of {{n}} gets {{share}} of new connections instead of {{want}}{{more}}',
      leftover: '{{chain}}: the ladder leaves {{left}} of new connections without an endpoint (the last endpoint rule must not have a statistic match)',
      unreachable: '{{chain}}: endpoint rule {{index}} of {{n}} is never reached: an earlier rule without a statistic match takes every packet',
    },
  },
  check(ctx) {
    for (const t of ctx.tables) {
      if (t.table.name !== 'nat') continue;
      // A table cut before COMMIT: the chain holding the last rule read may have lost the rest of its ladder.
      const cut = t.table.committed ? undefined : t.table.chains[lastRuleChain(t.table.chains)];
      for (const c of t.table.chains) {
        if (!/^KUBE-(SVC|SVL)-/.test(c.name) || c === cut) continue;
        const eps: Rule[] = [];
        // A block pasted twice is read once, as the resolver reads it (it reports the repetition).
        for (const r of unrepeated(c.rules).rules) {
          const target = jumpTarget(r);
          if (!target || !target.startsWith('KUBE-SEP-')) continue;
          if (r.matches.some((m) => m.kind === 'recent' || (m.kind === 'unsupported' && m.residue && m.module === 'recent'))) continue; // session-affinity rules
          eps.push(r);
        }
        // The nft view of iptables-nft shows some statistic matches only as `xt match statistic`: the ladder is not in the evidence.
        if (eps.length === 0 || eps.some((r) => r.matches.some((m) => m.kind === 'unsupported' && m.residue))) continue;
        const n = eps.length;
        const { shares, leftover, unreachableFrom } = ladderShares(eps.map(probabilityOf));
        const svc = serviceLabelOf(ctx, ctx.serviceOfChain(t.ruleset.file, 'nat', c.name));
        const pct = (x: number) => `${(x * 100).toFixed(4)}%`;
        const at = (r: Rule) => ({ file: r.file, line: r.line, column: r.column, text: r.raw, ...svc });
        if (unreachableFrom !== undefined) {
          const r = eps[unreachableFrom];
          const taker = eps.slice(0, unreachableFrom).reverse().find((x) => probabilityOf(x) === undefined || probabilityOf(x)! >= 1);
          ctx.report({ messageId: 'unreachable', data: { chain: c.name, index: unreachableFrom + 1, n }, ...at(r), related: taker ? [ruleRelated(taker)] : [] });
          continue;
        }
        const bad = shares.findIndex((s) => Math.abs(s * n - 1) > TOLERANCE);
        if (bad >= 0) {
          const others = shares.filter((s, i) => i > bad && Math.abs(s * n - 1) > TOLERANCE).length;
          ctx.report({
            messageId: 'unequal',
            data: { chain: c.name, index: bad + 1, n, share: pct(shares[bad]), want: pct(1 / n), more: others ? ` (and ${others} later rule${others === 1 ? '' : 's'} with it)` : '' },
            ...at(eps[bad]),
            related: eps.filter((_, i) => i !== bad).slice(0, 8).map(ruleRelated),
          });
          continue;
        }
        if (leftover * n > TOLERANCE) {
          ctx.report({ messageId: 'leftover', data: { chain: c.name, left: pct(leftover) }, ...at(eps[n - 1]) });
        }
      }
    }
  },
});
