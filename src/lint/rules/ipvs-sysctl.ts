import { checkKubeProxySysctls, SYSCTL_KEYS } from '../../model/sysctl.js';
import { createRule } from '../rule.js';

const FATAL = new Set<string>([SYSCTL_KEYS.ipForward, SYSCTL_KEYS.bridgeNfCallIptables]);

export default createRule({
  id: 'ipvs-sysctl',
  meta: {
    description: 'Kernel settings that break Services: ip_forward=0 or bridge-nf-call-iptables=0, and in IPVS mode net.ipv4.vs.* / ARP values known to break rolling updates.',
    severity: 'warning',
    docs: [
      'kube-proxy needs `net.ipv4.ip_forward=1` (the node forwards Service traffic to pods) and, with bridge-based',
      'CNIs, `net.bridge.bridge-nf-call-iptables=1` (bridged pod-to-pod traffic must traverse iptables, or',
      'Service DNAT replies bypass conntrack). These two are reported as **errors**.',
      '',
      'In IPVS mode: `net.ipv4.vs.conntrack=1` (IPVS connections need conntrack for masquerade);',
      '`net.ipv4.vs.conn_reuse_mode=0` makes a new connection that reuses a source port go to the old, possibly',
      'terminated, real server during rolling updates; `expire_nodest_conn=1` and `expire_quiescent_template=1`',
      'make connections to removed or weight-0 servers fail fast instead of hanging; `arp_ignore=1` and',
      '`arp_announce=2` keep the node from answering ARP for the VIPs bound to kube-ipvs0 (strictARP, needed by',
      'MetalLB in L2 mode). These are warnings.',
      '',
      '**Fix:** set the values in /etc/sysctl.d/ (kube-proxy sets the IPVS ones itself at start when it can;',
      'a value found wrong means something reset it later), and load br_netfilter. Needs a `sysctl -a` dump.',
    ].join('\n'),
    requires: ['sysctl'],
    relevant: (ctx) => ctx.modes.length > 0,
    messages: {
      value: '{{message}}',
      missing: '{{message}}',
    },
  },
  check(ctx) {
    const mode = ctx.modes.includes('ipvs') ? 'ipvs' : ctx.modes.includes('nftables') ? 'nftables' : 'iptables';
    for (const f of checkKubeProxySysctls({ values: ctx.sysctlValues }, mode)) {
      const at = ctx.snapshot.sysctls.get(f.key);
      if (!at) continue;
      ctx.report({
        messageId: 'value',
        data: { message: f.message },
        file: at.file,
        line: at.line,
        column: 1,
        text: `${f.key} = ${at.value}`,
        ...(FATAL.has(f.key) ? { severity: 'error' as const } : {}),
      });
    }
  },
});
