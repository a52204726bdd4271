import { checkKubeProxySysctls } from '../../model/sysctl.js';
import { createRule } from '../rule.js';

export default createRule({
  id: 'ipvs-sysctl',
  meta: {
    description: 'IPVS-mode kernel settings: net.ipv4.vs.* and ARP values known to break masquerade, rolling updates or L2 announcements.',
    severity: 'warning',
    docs: [
      '`ip_forward` and `bridge-nf-call-iptables` are read where the trace reads them: see `kernel-forwarding-off`',
      'and `kernel-bridge-nf-off`.',
      '',
      'In IPVS mode: `net.ipv4.vs.conntrack=1` (IPVS connections need conntrack for masquerade);',
      '`net.ipv4.vs.conn_reuse_mode=0` makes a new connection that reuses a source port go to the old, possibly',
      'terminated, real server during rolling updates; `expire_nodest_conn=1` and `expire_quiescent_template=1`',
      'make connections to removed or weight-0 servers fail fast instead of hanging; `arp_ignore=1` and',
      '`arp_announce=2` keep the node from answering ARP for the VIPs bound to kube-ipvs0 (strictARP, needed by',
      'MetalLB in L2 mode). These are warnings.',
      '',
      '**Fix:** set the values in /etc/sysctl.d/ (kube-proxy sets the IPVS ones itself at start when it can;',
      'a value found wrong means something reset it later). Needs a `sysctl -a` dump.',
    ].join('\n'),
    requires: ['sysctl'],
    relevant: (ctx) => ctx.modes.includes('ipvs'),
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
      });
    }
  },
});
