import type { Rule } from '../../model/netfilter.js';
import { chainOwner } from '../../kube/chains.js';
import { chainTargetOf } from '../context.js';
import { sourceMode } from '../migration-util.js';
import { createRule } from '../rule.js';

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
/** KUBE-* chains the kubelet keeps (or kept): they do not go away with kube-proxy's iptables rules. */
const KUBELET = new Set(['KUBE-FIREWALL', 'KUBE-KUBELET-CANARY', 'KUBE-IPTABLES-HINT', 'KUBE-MARK-DROP']);
const isProxyChain = (name: string) => !BUILTIN.has(name) && !KUBELET.has(name) && chainOwner(name) === 'kube-proxy';
/** kube-proxy's own jumps from the built-in chains carry its comments ("kubernetes service portals", "kube-proxy firewall rules"). */
const PROXY_COMMENT = /--comment\s+"?(kubernetes|Kubernetes|kube-proxy)\b/;

/** The kube-proxy chain or ipset a rule uses (its target, or a `-m set --match-set KUBE-…`). */
function reference(r: Rule, family: 4 | 6): { what: 'chain' | 'ipset'; name: string } | undefined {
  const t = chainTargetOf(r, family);
  if (t && isProxyChain(t)) return { what: 'chain', name: t };
  for (const m of r.matches) if (m.kind === 'set' && /^KUBE-/.test(m.name)) return { what: 'ipset', name: m.name };
  return undefined;
}

/**
 * kube-proxy in nftables mode writes none of its iptables chains or ipsets and deletes the old ones
 * ("Kubernetes's IPTables Chains Are Not API", kubernetes.io blog 2022-09-07; KEP-3866).
 */
export default createRule({
  id: 'migrate-foreign-kube-references',
  meta: {
    category: 'migration',
    description: "A rule outside kube-proxy's chains jumps to one of its chains (KUBE-MARK-MASQ, KUBE-SERVICES, …) or matches its ipsets: nftables mode removes them.",
    severity: 'error',
    requires: ['iptables'],
    relevant: (ctx) => sourceMode(ctx) === 'iptables' || sourceMode(ctx) === 'ipvs',
    docs: [
      "kube-proxy's iptables chains and ipsets are not an API (\"Kubernetes's IPTables Chains Are Not API\",",
      'kubernetes.io blog, 2022-09-07): in nftables mode kube-proxy writes its rules in its own `kube-proxy` nftables',
      'tables and deletes its iptables chains and IPVS ipsets. A rule some other software wrote against them — a CNI',
      'or hostport chain doing `-j KUBE-MARK-MASQ`, a custom chain jumping to `KUBE-SERVICES`, a policy matching',
      '`--match-set KUBE-CLUSTER-IP` — loses its target: iptables-restore then refuses the other software\'s rules',
      '("Couldn\'t load target"), or the rule stops doing what it did (no masquerade, no Service dispatch), and',
      "kube-proxy's cleanup of its old chains fails while they are still referenced (KEP-3866).",
      '',
      'One finding per referencing rule, at its line. kube-proxy\'s own jumps from the built-in chains (its',
      '"kubernetes …" comments) and the kubelet\'s chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT,',
      'KUBE-MARK-DROP) are not flagged.',
      '',
      '**Fix:** update the software that wrote the rule (most have an nftables-aware release), or give it its own',
      'chain: e.g. masquerade with its own mark or `-j MASQUERADE` instead of `-j KUBE-MARK-MASQ`.',
    ].join('\n'),
    messages: {
      chain: '{{chain}} ({{owner}}) jumps to kube-proxy\'s {{target}}: nftables mode removes that chain',
      ipset: '{{chain}} ({{owner}}) matches kube-proxy\'s ipset {{target}}: nftables mode removes that set',
    },
  },
  check(ctx) {
    if (sourceMode(ctx) !== 'iptables' && sourceMode(ctx) !== 'ipvs') return;
    for (const t of ctx.tables) {
      const family = t.ruleset.family;
      for (const c of t.table.chains) {
        if (isProxyChain(c.name) || KUBELET.has(c.name)) continue;
        for (const r of c.rules) {
          const ref = reference(r, family);
          if (!ref) continue;
          if (BUILTIN.has(c.name) && PROXY_COMMENT.test(r.raw)) continue;
          ctx.report({
            messageId: ref.what,
            data: { chain: `${t.table.name}/${c.name}`, owner: chainOwner(c.name), target: ref.name },
            file: r.file,
            line: r.line,
            column: r.column,
            text: r.raw,
          });
        }
      }
    }
  },
});
