import { sourceMode } from '../migration-util.js';
import { createRule } from '../rule.js';

const INVALID_DROP = /--ctstate\s+INVALID\b/;

/**
 * iptables (and IPVS) mode: `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP` unless
 * nf_conntrack_tcp_be_liberal is set; nftables mode installs no such workaround
 * (kubernetes.io, "Migrating from iptables mode to nftables": "Conntrack bug workarounds").
 */
export default createRule({
  id: 'migrate-ct-invalid-drop',
  meta: {
    category: 'migration',
    description: 'kube-proxy drops conntrack-INVALID packets in KUBE-FORWARD today; nftables mode does not (use --conntrack-tcp-be-liberal if this node relies on it).',
    severity: 'warning',
    requires: ['iptables'],
    relevant: (ctx) => sourceMode(ctx) === 'iptables' || sourceMode(ctx) === 'ipvs',
    docs: [
      'Linux kernels before 6.1 can close long-lived TCP connections to Service IPs with "Connection reset by',
      'peer" (kubernetes#74839). iptables mode works around it with `-A KUBE-FORWARD -m conntrack --ctstate',
      'INVALID -j DROP` (not when `net.netfilter.nf_conntrack_tcp_be_liberal=1`). "The `nftables` mode does not',
      'install any workaround by default" (kubernetes.io, *Virtual IPs and Service Proxies*, "Migrating from',
      'iptables mode to nftables", "Conntrack bug workarounds").',
      '',
      "The finding is at the DROP rule. kube-proxy's metric `kubeproxy_iptables_ct_state_invalid_dropped_packets_total`",
      'says whether it drops anything on this node.',
      '',
      '**Fix:** if that metric is not 0, run nftables mode with `--conntrack-tcp-be-liberal` (KubeProxyConfiguration',
      '`conntrack.tcpBeLiberal: true`), which sets `nf_conntrack_tcp_be_liberal`.',
    ].join('\n'),
    messages: {
      drop: "{{table}}/{{chain}} drops packets conntrack marks INVALID; kube-proxy's nftables mode writes no such rule",
    },
  },
  check(ctx) {
    if (sourceMode(ctx) !== 'iptables' && sourceMode(ctx) !== 'ipvs') return;
    for (const t of ctx.tables) {
      for (const c of t.table.chains) {
        if (c.name !== 'KUBE-FORWARD') continue;
        for (const r of c.rules) {
          if (!INVALID_DROP.test(r.raw) || r.target?.kind !== 'drop') continue;
          ctx.report({ messageId: 'drop', data: { table: t.table.name, chain: c.name }, file: r.file, line: r.line, column: r.column, text: r.raw });
        }
      }
    }
  },
});
