import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';
import { lastRuleChain, serviceLabelOf } from '../util.js';
import { parseServiceComment } from '../../kube/comments.js';
import { servicePortName } from '../../kube/hash.js';
import type { Chain } from '../../model/netfilter.js';

/** `ns/name:port` from a chain's kube-proxy comments: a chain no hook reaches belongs to no live Service port, but still names one. */
function commentLabel(c: Chain): { service?: string } {
  for (const r of c.rules) {
    for (const text of r.comments) {
      const id = parseServiceComment(text);
      if (id) return { service: servicePortName(id.namespace, id.name, id.portName) };
    }
  }
  return {};
}

/** kube-proxy's per-Service and per-endpoint chains: each is written with rules and jumped to. */
const PER_SERVICE = /^KUBE-(SVC|SVL|EXT|FW|XLB|SEP)-[A-Z2-7]{16}$/;

export default createRule({
  id: 'orphan-chain',
  meta: {
    description: 'A KUBE-SVC/SVL/EXT/FW/XLB/SEP chain (or a kube-proxy nftables chain) that nothing jumps to, or that is declared but empty.',
    severity: 'warning',
    docs: [
      'kube-proxy writes each per-Service chain (KUBE-SVC-, KUBE-SVL-, KUBE-EXT-, KUBE-FW-, KUBE-XLB-) and each',
      'per-endpoint chain (KUBE-SEP-) together with the rules that jump to it, and deletes it (`-X`) when the',
      'Service or endpoint goes away. A chain nothing jumps to is stale state: a missed or failed sync, a',
      'crashed kube-proxy, or hand-edited rules. Its Service may be unreachable (its dispatch rule is gone)',
      'while the chain makes the dump look healthy. kube-proxy never leaves these chains empty either: an',
      'empty KUBE-SEP chain has lost its DNAT rule, an empty KUBE-SVC chain its endpoints.',
      '',
      '**Fix:** check `kubectl get endpointslices` for the Service, then restart kube-proxy on the node (a full',
      'sync rewrites every chain and deletes stale ones). If the chain belongs to no Service any more, delete it',
      'with `iptables -t nat -F CHAIN; iptables -t nat -X CHAIN`.',
      '',
      'In a table cut before COMMIT (a truncated dump) kpx reports no orphan (the jump may have been after the',
      'cut) and no empty chain whose rules would come after the last rule read: those chains are unknown.',
      'On a node whose live mode is IPVS or nftables, the chains an earlier iptables mode left behind (no hook',
      'reaches them) are said once, by stale-proxy-mode, not one finding per chain.',
    ].join('\n'),
    messages: {
      orphan: '{{chain}} ({{table}}) is not jumped to from anywhere: stale state or a missing dispatch rule',
      orphanEmpty: '{{chain}} ({{table}}) is empty and not jumped to from anywhere: stale state',
      empty: '{{chain}} ({{table}}) is declared but empty, which kube-proxy never leaves it',
      nftOrphan: 'nftables chain {{chain}} is not reached from any base chain or map element: stale state',
    },
  },
  check(ctx) {
    // nftables mode: the resolver walks kube-proxy's table from its base chains and map elements.
    for (const p of ctx.resolution.problems) {
      const ev = p.evidence[0];
      if (p.problem.code !== 'chain-unreached' || !ev) continue;
      ctx.report({ messageId: 'nftOrphan', data: { chain: p.problem.chain }, file: ev.file, line: ev.line, column: 1, text: ev.text });
    }
    // Leftovers of an earlier mode on a node whose live mode is another (IPVS, nftables) are said once, by stale-proxy-mode.
    const otherModeLive = ctx.judgement.liveModes.some((m) => m !== 'iptables') || ctx.snapshot.ipvs.some((d) => d.virtualServers.length > 0);
    const leftover = otherModeLive ? new Set(ctx.resolution.others.filter((o) => o.leftover).map((o) => o.name)) : new Set<string>();
    for (const t of ctx.tables) {
      if (t.fragment) continue;
      // A table without COMMIT was cut: a jump to any chain may have been after the cut, and the
      // chains whose rules come after the last rule read are unknown, not empty.
      const cut = t.table.committed ? undefined : lastRuleChain(t.table.chains);
      for (const c of t.table.chains) {
        if (c.builtin || !PER_SERVICE.test(c.name) || leftover.has(c.name)) continue;
        const referenced = t.referrers.has(c.name) || cut !== undefined;
        const empty = c.rules.length === 0 && (cut === undefined || t.table.chains.indexOf(c) < cut);
        if (referenced && !empty) continue;
        const line = c.line ?? c.rules[0]?.line ?? t.table.line;
        const svc = ctx.serviceOfChain(t.ruleset.file, t.table.name, c.name);
        ctx.report({
          messageId: !referenced ? (empty ? 'orphanEmpty' : 'orphan') : 'empty',
          data: { chain: c.name, table: t.table.name },
          file: t.table.file,
          line,
          column: 1,
          ...(c.line !== undefined ? { text: `:${c.name} ${c.policy ?? '-'}` } : {}),
          ...(svc ? serviceLabelOf(ctx, svc) : commentLabel(c)),
          related: referenced ? (t.referrers.get(c.name) ?? []).slice(0, 5).map(ruleRelated) : c.rules.slice(0, 5).map(ruleRelated),
        });
      }
    }
  },
});
